// The memory this process may still take, for the checks made before a state, a batch or a
// picture is allocated (a refusal naming the bytes, rather than a crash once memory runs out).
#pragma once

#include <cstdint>
#include <filesystem>

namespace grayscott::io {

// /proc/meminfo's MemAvailable (free pages where it is missing), at most the memory limit of this
// process's control group and of the groups above it (cgroup v2's memory.max, v1's
// memory.limit_in_bytes: a container's, a batch job's); UINT64_MAX where nothing says.
std::uint64_t available_memory();

// The smallest memory limit of the control group `cgroup_file` (a /proc/PID/cgroup) names and of
// the groups above it, under the hierarchies mounted at `root` (/sys/fs/cgroup); UINT64_MAX where
// none is set. Apart from available_memory so that a test can give it a made-up hierarchy.
std::uint64_t cgroup_memory_limit(const std::filesystem::path& cgroup_file,
                                  const std::filesystem::path& root);

}  // namespace grayscott::io
