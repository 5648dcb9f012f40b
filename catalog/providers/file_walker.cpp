#include "catalog/providers/file_walker.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace toolmux {

namespace {

std::string join_path(const std::string& prefix, std::string_view name) {
  if (prefix.empty()) return std::string(name);
  return prefix + "/" + std::string(name);
}

}  // namespace

bool read_directory_names(int dir_fd, std::vector<std::string>& names, int& err) {
  names.clear();
  const int dup_fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) {
    err = errno;
    return false;
  }
  DIR* dir = ::fdopendir(dup_fd);
  if (dir == nullptr) {
    err = errno;
    ::close(dup_fd);
    return false;
  }
  // The duplicate shares its offset with `dir_fd`: start from the beginning.
  ::rewinddir(dir);
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      err = errno;
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  if (err != 0) return false;
  std::sort(names.begin(), names.end());
  return true;
}

bool FileWalker::walk(int dir_fd, const std::string& search_prefix,
                      const std::string& display_prefix, const Visit& visit) {
  return walk_folder(dir_fd, search_prefix, display_prefix, 0, visit);
}

// Recursion is bounded by limits_.max_depth (each level holds one open
// descriptor and one name list).
bool FileWalker::walk_folder(int dir_fd, const std::string& search_prefix,
                             const std::string& display_prefix, std::size_t depth,
                             const Visit& visit) {
  std::vector<std::string> names;
  int err = 0;
  if (!read_directory_names(dir_fd, names, err)) {
    notes_.push_back("could not read folder " +
                     quote_path(display_prefix.empty() ? "." : display_prefix) + ": " +
                     std::strerror(err));
    return true;
  }
  for (const std::string& name : names) {
    if (context_.cancelled()) {
      cancelled_ = true;
      return false;
    }
    if (++entries_ > limits_.max_entries) {
      notes_.push_back("stopped after looking at " + std::to_string(limits_.max_entries) +
                       " entries; narrow the path");
      return false;
    }
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished
    const std::string shown = printable_name(name);
    const WalkEntry entry{dir_fd, name, join_path(search_prefix, shown),
                          join_path(display_prefix, shown), st};
    if (!S_ISDIR(st.st_mode)) {
      if (!visit(entry)) return false;
      continue;
    }
    if (depth + 1 > limits_.max_depth) {
      notes_.push_back("did not look inside " + quote_path(entry.display) + ": more than " +
                       std::to_string(limits_.max_depth) + " folders deep");
      continue;
    }
    UniqueFd child(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child) {
      notes_.push_back("could not read folder " + quote_path(entry.display) + ": " +
                       std::strerror(errno));
      continue;
    }
    if (!walk_folder(child.get(), entry.search_path, entry.display, depth + 1, visit)) {
      return false;
    }
  }
  return true;
}

Result<std::vector<SearchStart>> search_starts(const RootSet& roots, const Location& location) {
  std::vector<SearchStart> starts;
  if (location.is_root_list()) {
    std::vector<std::size_t> order(roots.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return roots.name(a) < roots.name(b); });
    for (const std::size_t i : order) {
      Result<OpenedFile> dir = roots.open_directory(Location{i, "", roots.name(i)});
      if (!dir.ok()) return dir.status();
      starts.push_back({std::move(dir->fd), roots.name(i), roots.name(i)});
    }
    return starts;
  }
  Result<OpenedFile> dir = roots.open_directory(location);
  if (!dir.ok()) return dir.status();
  starts.push_back({std::move(dir->fd), location.display == "." ? "" : location.display, ""});
  return starts;
}

}  // namespace toolmux
