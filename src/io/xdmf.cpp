#include "io/xdmf.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

// Values separated by spaces.
std::string joined(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k > 0) text += ' ';
    text += std::to_string(values[k]);
  }
  return text;
}

}  // namespace

fs::path xdmf_path_for(const fs::path& h5_path) {
  fs::path xmf = h5_path;
  xmf.replace_extension(".xmf");
  return xmf;
}

void write_xdmf_series(const fs::path& h5_path, const XdmfSeries& series) {
  const std::string file = h5_path.filename().string();  // relative: the pair can be moved together
  const int precision = series.precision == Precision::Single ? 4 : 8;
  const std::size_t rank = series.dataset.size();
  std::vector<std::int64_t> mesh;  // the dataset's dimensions but the image axis
  for (std::size_t k = 0; k < rank; ++k) {
    if (k != series.image_axis) mesh.push_back(series.dataset[k]);
  }
  const bool volume = mesh.size() == 3;
  const std::string mesh_dims = joined(mesh);
  std::vector<std::int64_t> dataset = series.dataset;
  dataset[series.image_axis] = series.images;
  std::vector<std::int64_t> stride(rank, 1), count = dataset;
  count[series.image_axis] = 1;

  std::ostringstream x;
  x << "<?xml version=\"1.0\" ?>\n"
    << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
    << "<Xdmf Version=\"3.0\">\n  <Domain>\n"
    << "    <Grid Name=\"" << series.name
    << "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (std::int64_t i = 0; i < series.images; ++i) {
    std::vector<std::int64_t> start(rank, 0);
    start[series.image_axis] = i;
    x << "      <Grid Name=\"image " << i << "\" GridType=\"Uniform\">\n"
      << "        <Time Value=\""
      << static_cast<double>((i + 1) * series.steps_per_image) * series.dt << "\" />\n"
      << "        <Topology TopologyType=\"" << (volume ? "3DCoRectMesh" : "2DCoRectMesh")
      << "\" Dimensions=\"" << mesh_dims << "\" />\n"
      << "        <Geometry GeometryType=\"" << (volume ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY")
      << "\">\n"
      << "          <DataItem Dimensions=\"" << mesh.size() << "\" Format=\"XML\">"
      << (volume ? "0 0 0" : "0 0") << "</DataItem>\n"
      << "          <DataItem Dimensions=\"" << mesh.size() << "\" Format=\"XML\">"
      << (volume ? "1 1 1" : "1 1") << "</DataItem>\n"
      << "        </Geometry>\n";
    for (const char* field : {"u", "v"}) {
      if ((field[0] == 'u' && !series.fields.u) || (field[0] == 'v' && !series.fields.v)) continue;
      x << "        <Attribute Name=\"" << field << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        << "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"" << mesh_dims
        << "\" Type=\"HyperSlab\">\n"
        << "            <DataItem Dimensions=\"3 " << rank << "\" Format=\"XML\">" << joined(start)
        << " " << joined(stride) << " " << joined(count) << "</DataItem>\n"
        << "            <DataItem Dimensions=\"" << joined(dataset)
        << "\" NumberType=\"Float\" Precision=\"" << precision << "\" Format=\"HDF\">" << file
        << ":/" << field << "</DataItem>\n"
        << "          </DataItem>\n        </Attribute>\n";
    }
    x << "      </Grid>\n";
  }
  x << "    </Grid>\n  </Domain>\n</Xdmf>\n";
  const fs::path xmf = xdmf_path_for(h5_path);
  std::ofstream out(xmf);
  out << x.str();
  if (!out) throw std::runtime_error("cannot write " + xmf.string());
}

}  // namespace grayscott::io
