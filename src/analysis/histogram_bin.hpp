// The bin of a value in a histogram of equal bins, written once for the host's statistics
// (analysis/measure.cpp) and a device's (the CUDA backend's reduction kernel).
#pragma once

#include "model/host_device.hpp"

namespace grayscott::analysis {

// The bin numpy.histogram finds for a value of type Real among `bins` equal bins over [low, high]:
// edge i is low + i (high - low) / bins as numpy.linspace rounds it (a product, then a sum), then
// rounded to Real (a float32 array's edges are float32); bin i holds edge(i) <= x < edge(i + 1).
// Values below the range and NaN fall in the first bin, values above it in the last. Found by a
// product (a division per value costs more than the rest of the statistics), then put right
// against the edges, which the product can miss by an ulp. No branches, so that a host loop over
// values vectorises.
template <class Real>
GRAYSCOTT_HD int histogram_bin(Real value, int bins, double low, double high) {
  const double x = static_cast<double>(value);
  const double step = (high - low) / bins, scale = bins / (high - low);
  const int last = bins - 1;
  const auto edge = [&](int i) {
    return static_cast<double>(static_cast<Real>(static_cast<double>(i) * step + low));
  };
  const double position = (x - low) * scale;
  // NaN falls in the first bin: the comparison is false.
  const double above = position > 0.0 ? position : 0.0;
  int bin = static_cast<int>(above < last ? above : static_cast<double>(last));
  bin -= static_cast<int>((x < edge(bin)) & (bin > 0));
  bin += static_cast<int>((x >= edge(bin + 1)) & (bin < last));
  return bin;
}

}  // namespace grayscott::analysis
