// Whether a simulation's state fits in the memory it would live in, checked before it is
// allocated: a refusal naming the bytes, rather than a crash once the memory runs out.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/engine.hpp"
#include "engine/registry.hpp"
#include "model/model.hpp"

namespace grayscott::pipeline {

// The memory a state of `backend` lives in that is free now: the device's, or the host's available
// memory (this process's control group's limit where it is lower); 0 where it cannot be told.
std::uint64_t available_memory_for(const Backend& backend, int device);

// Throws OutOfMemory, naming the bytes needed and the bytes available, when `members` states of
// `problem` (two buffers of u and v each) exceed the memory of the backend `options` choose: the
// host's available memory, or the device's free memory. `blocks_here` 0: the whole grid in this
// process. From 1: `problem` is the largest block (halos included) of a grid split over MPI ranks,
// that many of which live in this memory (the node's ranks in its host memory; on a device, this
// rank's alone, since how many ranks share it cannot be told where each sees only its own).
// `images_held`: whole fields of that grid the run holds in host memory beside the state (the
// images on their way to the file, see held_images): counted with the state on the host, or
// against the host's memory beside a device's state.
void check_state_fits(const Problem& problem, std::size_t members, const EngineOptions& options,
                      int blocks_here = 0, int images_held = 0);

// The host memory check of a run whose state is allocated already (a Simulation's): `images_held`
// fields of `members` states of `problem` (of `blocks_here` blocks, as above) beside it. Throws
// OutOfMemory.
void check_images_fit(const Problem& problem, std::size_t members, int images_held,
                      int blocks_here = 0);

// The fields a run holds in host memory beside its state, at most, where its images carry the
// fields `carried` (those written; u and v where the statistics are measured from the images
// rather than from the state, as over MPI ranks): two images, one filled while the writer writes
// the other (pipeline/image_loop.hpp), one of them a checkpoint's (u and v; a run's last image is
// one); v's previous image when the statistics measure its change; and, while a per-image
// callback (`watched`) runs, a copy of the field the images do not carry (to tell a write into
// the state).
int held_images(FieldSet carried, bool statistics, bool watched = false);

}  // namespace grayscott::pipeline
