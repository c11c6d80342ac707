#include "io/xdmf.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

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

// `text` with XML's five special characters escaped, for an attribute value or element text.
std::string xml_escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

fs::path xdmf_path_for(const fs::path& h5_path) {
  fs::path xmf = h5_path;
  xmf.replace_extension(".xmf");
  return xmf;
}

void write_xdmf_series(const fs::path& h5_path, const XdmfSeries& series) {
  // Relative, so that the pair can be moved together; escaped, since any name is a valid file name.
  const std::string file = xml_escaped(h5_path.filename().string());
  const int precision = series.precision == Precision::Single ? 4 : 8;
  const std::size_t rank = series.dataset.size();
  std::vector<std::int64_t> mesh;  // the dataset's dimensions but the image axis
  for (std::size_t k = 0; k < rank; ++k) {
    if (k != series.image_axis) mesh.push_back(series.dataset[k]);
  }
  // A run's image is a plane: a 3-D mesh one cell deep, (z, y, x) = (1, rows, cols), puts it in
  // the XY plane (x across columns, y across rows), where ParaView's default camera looks; a 2-D
  // mesh would lie in its YZ plane. The hyperslab of one image has the same shape. Row 0 is at
  // the top, as in the PNGs: y starts at rows - 1 and steps by -1.
  std::string origin = "0 0 0", spacing = "1 1 1";
  if (mesh.size() == 2) {
    origin = "0 " + std::to_string(mesh[0] - 1) + " 0";
    spacing = "1 -1 1";
    mesh.insert(mesh.begin(), 1);
  }
  const std::string mesh_dims = joined(mesh);
  std::vector<std::int64_t> dataset = series.dataset;
  dataset[series.image_axis] = series.images;
  std::vector<std::int64_t> stride(rank, 1), count = dataset;
  count[series.image_axis] = 1;

  // Written beside the final name and renamed over it: a reader (ParaView polling a running file)
  // sees the old companion or the new one, never half of one, and a symbolic link at the final
  // name is replaced, not followed. Streamed, so memory does not grow with the images.
  const fs::path xmf = xdmf_path_for(h5_path);
  const fs::path partial = xmf.string() + ".partial-" + std::to_string(::getpid());
  std::ofstream x(partial, std::ios::trunc);
  if (!x) {
    throw std::runtime_error("cannot create " + partial.string() + ": " + std::strerror(errno));
  }
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
      << "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << mesh_dims
      << "\" />\n"
      << "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      << "          <DataItem Dimensions=\"3\" Format=\"XML\">" << origin << "</DataItem>\n"
      << "          <DataItem Dimensions=\"3\" Format=\"XML\">" << spacing << "</DataItem>\n"
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
  x.flush();
  const int write_error = x ? 0 : errno;
  x.close();
  if (write_error != 0 || !x) {
    std::error_code ignored;
    fs::remove(partial, ignored);
    throw std::runtime_error("cannot write " + xmf.string() + ": " +
                             std::strerror(write_error != 0 ? write_error : EIO));
  }
  if (std::rename(partial.c_str(), xmf.c_str()) != 0) {
    const int error = errno;
    std::error_code ignored;
    fs::remove(partial, ignored);
    throw std::runtime_error("cannot replace " + xmf.string() + ": " + std::strerror(error));
  }
}

}  // namespace grayscott::io
