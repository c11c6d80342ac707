// XDMF 3 companions (NAME.xmf beside NAME.h5) that let ParaView and VisIt open a run or a sweep
// as a time series: one uniform grid per image, whose fields are hyperslabs of the HDF5 datasets.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace grayscott::io {

std::filesystem::path xdmf_path_for(const std::filesystem::path& h5_path);

// Images stored along one axis of the datasets /u and /v.
struct XdmfSeries {
  std::string name;                   // the temporal collection's name
  std::vector<std::int64_t> dataset;  // the datasets' dimensions
  std::size_t image_axis = 0;         // the axis that counts images
  std::int64_t images = 0;            // images in the series (from index 0)
  std::int64_t steps_per_image = 1;   // image i holds the state after (i + 1) * this steps
  double dt = 1;                      // model time per step
  FieldSet fields;
  Precision precision = Precision::Single;
};

// Writes NAME.xmf: image i is the dataset with the image axis fixed at i, on a co-rectilinear
// mesh of the remaining dimensions (2D for a run, 3D for a sweep), at time
// (i + 1) * steps_per_image * dt. Refers to the HDF5 file by its name, so the two can move
// together.
void write_xdmf_series(const std::filesystem::path& h5_path, const XdmfSeries& series);

}  // namespace grayscott::io
