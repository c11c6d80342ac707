#include "io/files/xdmf.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "io/files/output_path.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

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

std::string companion_remedy(const fs::path& h5_path, std::string_view kind) {
  return " (the " + std::string(kind) + "'s file is whole; grayscott repair " + h5_path.string() +
         " writes its .xmf once there is room)";
}

void remove_companion_of_replaced(const std::filesystem::path& h5_path) {
  std::error_code ignored;
  const fs::path companion = xdmf_path_for(h5_path);
  // Only what --force may replace (check_replaceable refused anything else before).
  const fs::file_status status = fs::symlink_status(companion, ignored);
  if (!fs::is_regular_file(status) && !fs::is_symlink(status)) return;
  // One that cannot go (immutable, append-only) is said before the new file takes the name: the
  // old file and its companion stay as they were.
  std::error_code error;
  if (!fs::remove(companion, error) && error) {
    throw InvalidInput("output companion " + companion.string() + " cannot be replaced (" +
                       error.message() + "): " + h5_path.string() + " and " + companion.string() +
                       " are left as they were");
  }
}

void refuse_to_replace_what_is_no_companion(const fs::path& h5_path, const std::string& who) {
  const fs::path companion = xdmf_path_for(h5_path);
  std::error_code ignored;
  const fs::file_status status = fs::symlink_status(companion, ignored);
  if (!fs::exists(status)) return;
  std::string start, what;
  if (fs::is_regular_file(status)) {
    std::ifstream in(companion, std::ios::binary);
    start.resize(512);
    in.read(start.data(), static_cast<std::streamsize>(start.size()));
    start.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    if (start.starts_with("<?xml") && start.find("<Xdmf") != std::string::npos) {
      if (!refuses_replacement(companion)) return;
      what = std::string("a companion that cannot be replaced (") + std::strerror(EPERM) + ")";
    }
  }
  if (what.empty()) {
    what = fs::is_symlink(status)        ? "a link"
           : fs::is_regular_file(status) ? "not an XDMF companion"
                                         : special_file_kind(status.type());
  }
  throw InvalidInput(who + " writes " + h5_path.string() + "'s companion as " + companion.string() +
                     ", which is " + what + ": move it away first");
}

namespace {

// One grid of one image: a mesh one cell deep, (z, y, x) = (1, rows, cols), in the XY plane (x
// across columns, y across rows), where ParaView's default camera looks (a 2-D mesh would lie in
// its YZ plane); row 0 at the top, as in the PNGs: y starts at rows - 1 and steps by -1. XDMF
// gives ORIGIN_DXDYDZ in z, y, x order. A volume's mesh is (depth, rows, cols), its planes at
// z = 0, 1, ... (plane 0 nearest ParaView's default camera's back), each as a plane's. The values
// lie at the nodes, a volume's image in the file's order (plane after plane, each row-major),
// which is XDMF's for Dimensions "depth rows cols".
void append_grid(std::string& out, const std::string& file, const XdmfGridInfo& grid,
                 const std::string& name, std::int64_t z, const ImagePlaces& places) {
  char text[512];
  std::snprintf(text, sizeof text,
                "<Grid Name=\"%s\" GridType=\"Uniform\">"
                "<Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"%lld %lld %lld\"/>"
                "<Geometry GeometryType=\"ORIGIN_DXDYDZ\">"
                "<DataItem Dimensions=\"3\" Format=\"XML\">%lld %lld 0</DataItem>"
                "<DataItem Dimensions=\"3\" Format=\"XML\">1 -1 1</DataItem></Geometry>",
                name.c_str(), static_cast<long long>(grid.depth), static_cast<long long>(grid.rows),
                static_cast<long long>(grid.cols), static_cast<long long>(z),
                static_cast<long long>(grid.rows - 1));
  out += text;
  const int precision = grid.precision == Precision::Single ? 4 : 8;
  for (const auto& [field, place] : {std::pair{"u", places.u}, std::pair{"v", places.v}}) {
    if (!place) continue;
    std::snprintf(text, sizeof text,
                  "<Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">"
                  "<DataItem Dimensions=\"%lld %lld %lld\" NumberType=\"Float\" "
                  "Precision=\"%d\" Format=\"Binary\" Endian=\"Little\" Seek=\"%llu\">",
                  field, static_cast<long long>(grid.depth), static_cast<long long>(grid.rows),
                  static_cast<long long>(grid.cols), precision,
                  static_cast<unsigned long long>(*place));
    out += text;
    out += file;
    out += "</DataItem></Attribute>";
  }
  out += "</Grid>";
}

std::string time_element(const XdmfGridInfo& grid, std::int64_t image) {
  char text[64];
  std::snprintf(text, sizeof text, "<Time Value=\"%.17g\"/>",
                static_cast<double>((image + 1) * grid.steps_per_image) * grid.dt);
  return text;
}

}  // namespace

std::string xdmf_run_step(const fs::path& h5_path, const XdmfGridInfo& grid, std::int64_t image,
                          const ImagePlaces& places) {
  // Relative, so that the pair can be moved together; escaped, since any name is a valid file name.
  const std::string file = xml_escaped(h5_path.filename().string());
  std::string out;
  out.reserve(512);
  append_grid(out, file, grid, "image " + std::to_string(image), 0, places);
  // The time goes inside the grid, after its opening tag.
  out.insert(out.find('>') + 1, time_element(grid, image));
  out += '\n';
  return out;
}

std::string xdmf_sweep_step(const fs::path& h5_path, const XdmfGridInfo& grid, std::int64_t image,
                            const std::vector<ImagePlaces>& members) {
  const std::string file = xml_escaped(h5_path.filename().string());
  std::string out = "<Grid Name=\"image " + std::to_string(image) +
                    "\" GridType=\"Collection\" CollectionType=\"Spatial\">" +
                    time_element(grid, image) + "\n";
  for (std::size_t m = 0; m < members.size(); ++m) {
    if (!members[m].u && !members[m].v) continue;  // never written (a sweep stopped early)
    // Members stacked along z: a plane's one cell apart, a volume's with one empty plane between.
    const std::int64_t z = static_cast<std::int64_t>(m) * (grid.depth > 1 ? grid.depth + 1 : 1);
    append_grid(out, file, grid, "member " + std::to_string(m), z, members[m]);
    out += '\n';
  }
  out += "</Grid>\n";
  return out;
}

namespace {

void write_all(int fd, const char* data, std::size_t bytes, const fs::path& path) {
  while (bytes > 0) {
    const ssize_t n = ::write(fd, data, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
    }
    data += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

// Copies the first `bytes` of `from` into `to` (at its current end). False where `from` is not
// what is expected (`expected_size` bytes, a regular file) or cannot be read.
bool copy_prefix(const fs::path& from, std::uint64_t bytes, std::uint64_t expected_size, int to,
                 const fs::path& to_path) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return false;
  struct stat st {};
  bool ok = ::fstat(in, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<std::uint64_t>(st.st_size) == expected_size;
  std::uint64_t left = ok ? bytes : 0;
  bool in_kernel = true;
  std::vector<char> buffer;
  while (ok && left > 0) {
    if (in_kernel) {
      const ssize_t n = ::copy_file_range(in, nullptr, to, nullptr, left, 0);
      if (n > 0) {
        left -= static_cast<std::uint64_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        in_kernel = false;  // another file system, or no support: copy through a buffer
        continue;
      }
      if (n < 0 && errno != 0) {
        const int error = errno;
        ::close(in);
        throw std::runtime_error("cannot write " + to_path.string() + ": " + std::strerror(error));
      }
      ok = false;  // the file ended early
      break;
    }
    buffer.resize(1 << 20);
    const ssize_t n = ::read(in, buffer.data(), std::min<std::uint64_t>(buffer.size(), left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    write_all(to, buffer.data(), static_cast<std::size_t>(n), to_path);
    left -= static_cast<std::uint64_t>(n);
  }
  ::close(in);
  return ok;
}

// Reads `file` on from where it stands and tells whether its next bytes are `expected`.
bool next_bytes_are(int file, const std::string& expected, std::vector<char>& buffer) {
  std::size_t compared = 0;
  while (compared < expected.size()) {
    buffer.resize(std::min<std::size_t>(expected.size() - compared, 1 << 20));
    const ssize_t n = ::read(file, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (std::memcmp(buffer.data(), expected.data() + compared, static_cast<std::size_t>(n)) != 0)
      return false;
    compared += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

XdmfCompanion::XdmfCompanion(const fs::path& h5_path, std::string collection_name,
                             std::function<std::string(std::int64_t)> step_text)
    : xmf_(xdmf_path_for(h5_path)), step_text_(std::move(step_text)) {
  header_ =
      "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      "<Xdmf Version=\"3.0\">\n<Domain>\n<Grid Name=\"" +
      xml_escaped(collection_name) + "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  footer_ = "</Grid>\n</Domain>\n</Xdmf>\n";
}

bool XdmfCompanion::lists_exactly(std::int64_t steps, std::uint64_t& listed_bytes) const {
  const int in = ::open(xmf_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return false;
  struct stat st {};
  bool same = ::fstat(in, &st) == 0 && S_ISREG(st.st_mode);
  std::vector<char> buffer;
  std::uint64_t bytes = header_.size();
  same = same && next_bytes_are(in, header_, buffer);
  for (std::int64_t i = 0; same && i < steps; ++i) {
    const std::string step = step_text_(i);
    same = next_bytes_are(in, step, buffer);
    bytes += step.size();
  }
  same = same && next_bytes_are(in, footer_, buffer) &&
         static_cast<std::uint64_t>(st.st_size) == bytes + footer_.size();
  ::close(in);
  if (same) listed_bytes = bytes;
  return same;
}

bool XdmfCompanion::write(std::int64_t steps) {
  // A companion that already lists exactly these steps (a file being repaired or continued whose
  // .xmf is current) is left as it is: nothing written, so a read-only copy needs no write.
  std::uint64_t current_bytes = 0;
  if (listed_ == 0 && lists_exactly(steps, current_bytes)) {
    listed_ = steps;
    listed_bytes_ = current_bytes;
    return false;
  }
  const fs::path partial = partial_name(xmf_, std::to_string(::getpid()));
  int out = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (out < 0) {
    throw std::runtime_error("cannot write " + xmf_.string() + ": " + std::strerror(errno));
  }
  try {
    std::int64_t from = 0;
    std::uint64_t bytes = 0;
    if (listed_ > 0 && steps >= listed_ &&
        copy_prefix(xmf_, listed_bytes_, listed_bytes_ + footer_.size(), out, xmf_)) {
      from = listed_, bytes = listed_bytes_;
    } else {
      if (::ftruncate(out, 0) != 0 || ::lseek(out, 0, SEEK_SET) != 0) {
        throw std::runtime_error("cannot write " + xmf_.string() + ": " + std::strerror(errno));
      }
      write_all(out, header_.data(), header_.size(), xmf_);
      bytes = header_.size();
    }
    std::string text;
    for (std::int64_t i = from; i < steps; ++i) {
      text += step_text_(i);
      if (text.size() >= (1u << 20) || i + 1 == steps) {
        write_all(out, text.data(), text.size(), xmf_);
        bytes += text.size();
        text.clear();
      }
    }
    write_all(out, footer_.data(), footer_.size(), xmf_);
    const int closed = ::close(out);
    out = -1;
    if (closed != 0) {
      throw std::runtime_error("cannot write " + xmf_.string() + ": " + std::strerror(errno));
    }
    if (std::rename(partial.c_str(), xmf_.c_str()) != 0) {
      throw std::runtime_error("cannot replace " + xmf_.string() + ": " + std::strerror(errno));
    }
    listed_ = steps;
    listed_bytes_ = bytes;
    return true;
  } catch (...) {
    if (out >= 0) ::close(out);
    std::error_code ignored;
    fs::remove(partial, ignored);
    throw;
  }
}

}  // namespace grayscott::io
