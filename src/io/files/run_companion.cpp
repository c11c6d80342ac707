// The run file's XDMF companion written from the file as it stands (`grayscott repair`); the
// writer keeps its own up to date as images arrive.
#include <optional>

#include "io/files/hdf5.hpp"
#include "io/files/reader.hpp"
#include "io/files/run_file.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

XdmfGridInfo xdmf_grid_of(const RunMetadata& meta) {
  const Problem& p = meta.problem;
  return {p.grid.rows, p.grid.cols, meta.steps_per_image, p.params.dt, p.precision, p.grid.depth};
}

bool write_xdmf(const fs::path& h5_path, const RunMetadata& meta, std::int64_t images) {
  h5::silence_library_errors();
  h5::Id file(open_for_reading(h5_path), H5Fclose, "open " + h5_path.string());
  std::vector<ImagePlaces> places;
  h5::Id u, v;
  std::optional<h5::ImageLocator> u_places, v_places;
  const int image_axes = meta.problem.grid.volume() ? 3 : 2;
  if (meta.fields.u) {
    u = h5::Id(H5Dopen2(file, "u", H5P_DEFAULT), H5Dclose, "open /u");
    u_places.emplace(u, image_axes);
  }
  if (meta.fields.v) {
    v = h5::Id(H5Dopen2(file, "v", H5P_DEFAULT), H5Dclose, "open /v");
    v_places.emplace(v, image_axes);
  }
  for (std::int64_t i = 0; i < images; ++i) {
    const hsize_t leading[1] = {static_cast<hsize_t>(i)};
    ImagePlaces place;
    if (u_places) place.u = u_places->image_offset(leading);
    if (v_places) place.v = v_places->image_offset(leading);
    places.push_back(place);
  }
  XdmfCompanion companion(h5_path, "grayscott",
                          [&, grid = xdmf_grid_of(meta)](std::int64_t i) {
                            return xdmf_run_step(h5_path, grid, i,
                                                 places[static_cast<std::size_t>(i)]);
                          });
  return companion.write(images);
}

}  // namespace grayscott::io
