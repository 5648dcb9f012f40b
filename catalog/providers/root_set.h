// Path containment for the filesystem tools: the set of roots a caller may
// touch, and the only way to turn a caller's path into an open file.
//
// Roots are canonicalised and opened once (O_PATH | O_DIRECTORY). A caller's
// path is first mapped lexically onto a root (resolve): "." and empty segments
// are dropped, ".." that would climb above the root is refused, and an
// absolute path is accepted only when it lies inside a root. With more than one
// root, the first segment names the root (its folder's basename, "-2", "-3"...
// for duplicates) and "." is the list of roots. The kernel then opens the
// remaining relative path beneath the root's descriptor with openat2 and
// RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, so no symlink (absolute or relative)
// can lead outside; symlinks that stay inside are followed. When openat2 is not
// available (ENOSYS) the opened file's real path is checked against the root's
// canonical path instead.
//
// Error messages name paths as the caller gave them or relative to a root,
// never as absolute host paths. Thread-safe after construction.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/problem.h"
#include "src/base/status.h"
#include "src/base/unique_fd.h"

namespace toolmux {

// Where a caller's path leads, before anything is opened.
struct Location {
  static constexpr std::size_t kRootList = static_cast<std::size_t>(-1);

  std::size_t root = kRootList;  // index into RootSet::names(); kRootList for the list of roots
  std::string relative;          // below the root, normalised ("a/b"); "" is the root itself
  std::string display;           // how results name it: "a/b", "." (single root) or "name/a/b"
  // The path ended in "/": it names a folder, and a file there is refused (as
  // the kernel refuses "a.txt/").
  bool names_folder = false;

  bool is_root_list() const { return root == kRootList; }
  bool is_root() const { return !is_root_list() && relative.empty(); }
};

// A file opened beneath a root, with what fstat said about it.
struct OpenedFile {
  UniqueFd fd;
  struct stat st {};
};

class RootSet {
 public:
  // Canonicalises and opens every root; returns null with problems (a root
  // that does not exist or is not a directory, or no root at all).
  static std::optional<RootSet> open(const std::vector<std::filesystem::path>& roots,
                                     Problems& problems);

  RootSet(RootSet&&) = default;
  RootSet& operator=(RootSet&&) = default;

  std::size_t size() const { return roots_.size(); }
  bool multiple() const { return roots_.size() > 1; }
  // Root names in root order (the first path segment when there are several).
  std::vector<std::string> names() const;
  const std::string& name(std::size_t root) const { return roots_[root].name; }
  int root_fd(std::size_t root) const { return roots_[root].fd.get(); }

  // How results name `relative` (normalised, "" = the root) below `root`.
  std::string display(std::size_t root, std::string_view relative) const;

  // Failures below are a Status whose message() is the sentence the tools
  // show: not_found when the path does not exist, invalid_argument when the
  // path is refused (outside the roots, the wrong kind of file), io_error when
  // the filesystem says no (permissions, a file that changed meanwhile).

  // Maps a caller's path onto a root without touching the filesystem, or
  // fails with e.g. `path "../etc/passwd" is outside the allowed roots`. ""
  // means ".".
  Result<Location> resolve(std::string_view path) const;

  // Opens `location` with O_PATH beneath its root and fstats it. A final
  // symlink is followed when `follow_final`, otherwise the link itself is
  // opened. Errors: `"x.txt" does not exist`, `path "link" points outside the
  // allowed roots`, ... The list of roots cannot be opened.
  Result<OpenedFile> open_path(const Location& location, bool follow_final) const;

  // Opens a regular file for reading (O_PATH first, so a FIFO or device is
  // never opened; then reopened O_RDONLY and checked to be the same file).
  // `"x" is a directory` / `"x" is not a regular file or directory` otherwise.
  Result<OpenedFile> open_regular_file(const Location& location) const;

  // Opens a directory for reading its entries (O_RDONLY | O_DIRECTORY).
  Result<OpenedFile> open_directory(const Location& location) const;

  // Opens a directory below `root` for creating entries in it; with
  // `create_missing`, missing directories on the way are made. `relative` is
  // normalised ("" = the root).
  Result<OpenedFile> open_directory_for_writing(std::size_t root, std::string_view relative,
                                                bool create_missing) const;

  // For tests: behave as if openat2 were missing (ENOSYS), using the
  // realpath-prefix check instead. Process-wide.
  static void force_openat2_fallback_for_testing(bool on);

 private:
  struct Root {
    std::string name;
    std::filesystem::path canonical;  // absolute, no symlinks
    std::filesystem::path given;      // absolute, lexically normal, as configured
    UniqueFd fd;                      // O_PATH | O_DIRECTORY
  };
  RootSet() = default;

  // resolve() without setting names_folder.
  Result<Location> resolve_segments(std::string_view path) const;

  // openat2(root, relative, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), or
  // the fallback; -1 with errno set (EXDEV: would leave the root).
  int open_beneath(std::size_t root, const std::string& relative, int flags) const;
  // The fallback: open with O_PATH, check the real path is inside the root,
  // reopen that very file with `flags`; -1 with EXDEV when it is outside.
  int open_by_real_path(std::size_t root, const std::string& relative, int flags) const;
  // The failure of an open that set `err`. For EXDEV it tells a symlink whose
  // target is absolute (refused by RESOLVE_BENEATH even when it stays inside)
  // from one that really leads out.
  Status open_error(const Location& location, int err, bool follow_final = true) const;

  std::vector<Root> roots_;
};

// Quotes text for a message: "a \"b\"", with control characters and bytes
// that are not UTF-8 escaped (\u001b, \xff).
std::string quote_path(std::string_view text);

// A file name made safe to show on one line and in JSON: bytes that are not
// UTF-8 and control characters become U+FFFD.
std::string printable_name(std::string_view name);

// Reopens an O_PATH descriptor of a regular file for reading, through
// /proc/self/fd, and checks it is still that regular file. -1 with errno set
// when /proc is not available or the file changed.
int reopen_regular_for_reading(int path_fd, const struct stat& expected);

}  // namespace toolmux
