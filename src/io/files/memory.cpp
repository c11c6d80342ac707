#include "io/files/memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

// The first number in `path` after `key` (e.g. "MemAvailable:"), times `scale`; nullopt when
// the file or the key is missing or the value is not a number (cgroup v2's "max").
std::optional<std::uint64_t> read_number(const fs::path& path, const std::string& key,
                                         std::uint64_t scale) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    std::uint64_t value = 0;
    if (fields >> value) return value * scale;
    return std::nullopt;
  }
  return std::nullopt;
}

// The smallest limit in `file_name` of the group `group` ("/a/b", under `hierarchy`) and of its
// ancestors, those that exist there (a container may see its own group as the root).
std::uint64_t smallest_limit(const fs::path& hierarchy, const std::string& group,
                             const std::string& file_name) {
  std::uint64_t limit = UINT64_MAX;
  fs::path relative = fs::path(group).relative_path();
  while (true) {
    if (const auto value = read_number(hierarchy / relative / file_name, "", 1))
      limit = std::min(limit, *value);
    if (relative.empty()) break;
    relative = relative.parent_path();
  }
  return limit;
}

}  // namespace

std::uint64_t cgroup_memory_limit(const fs::path& cgroup_file, const fs::path& root) {
  std::uint64_t limit = UINT64_MAX;
  std::ifstream in(cgroup_file);
  std::string line;
  while (std::getline(in, line)) {
    // "0::/PATH" (v2), "N:memory:/PATH" or "N:cpu,memory:/PATH" (v1).
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string group = line.substr(second + 1);
    if (controllers.empty()) {
      limit = std::min(limit, smallest_limit(root, group, "memory.max"));
      continue;
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');) {
      if (name == "memory") {
        limit = std::min(limit, smallest_limit(root / controllers, group, "memory.limit_in_bytes"));
      }
    }
  }
  return limit;
}

std::uint64_t available_memory() {
  std::uint64_t available = 0;
  if (const auto meminfo = read_number("/proc/meminfo", "MemAvailable:", 1024)) {
    available = *meminfo;
  } else {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    available = pages > 0 && page > 0
                    ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
                    : UINT64_MAX;  // unknown: let the allocation decide
  }
  // A container's or a batch job's limit is not in /proc/meminfo. What the group already uses is
  // partly page cache it would give back, so only the limit itself bounds the estimate.
  return std::min(available, cgroup_memory_limit("/proc/self/cgroup", "/sys/fs/cgroup"));
}

}  // namespace grayscott::io
