// Walking folder trees beneath the roots of the filesystem tools (find_files,
// search_file_contents): which folders a search starts from, and a
// depth-first walk that never follows a symbolic link.
//
// A walk visits each folder's entries in bytewise name order, so its results
// do not change from run to run. It is bounded: folders more than
// WalkLimits::max_depth below the start are not entered, and the walk stops
// after looking at WalkLimits::max_entries entries; both are noted, as is a
// folder that could not be read. It checks the call's cancellation before
// each entry. A FileWalker is used by one thread, for one call.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "catalog/providers/root_set.h"
#include "catalog/tool.h"
#include "src/base/status.h"

namespace toolmux {

// Entry names of an open directory (without "." and ".."), sorted bytewise.
// Takes its own duplicate of `dir_fd`. False with `err` (an errno value) set
// when the folder cannot be read.
bool read_directory_names(int dir_fd, std::vector<std::string>& names, int& err);

// One entry met by a walk. Valid during the visit only.
struct WalkEntry {
  int dir_fd;               // the folder holding it
  const std::string& raw;   // its name on disk
  std::string search_path;  // relative to the search folder (what globs see)
  std::string display;      // relative to the root, as results show it
  const struct stat& st;    // lstat: a symlink is not followed
};

struct WalkLimits {
  std::size_t max_depth = 128;        // folders below the search folder
  std::size_t max_entries = 1000000;  // entries looked at per walk
};

class FileWalker {
 public:
  using Visit = std::function<bool(const WalkEntry&)>;  // false: stop

  explicit FileWalker(CallContext& context, WalkLimits limits = {})
      : context_(context), limits_(limits) {}

  // Visits every entry below `dir_fd` that is not a folder (a symlink to a
  // folder is such an entry: it is not entered). `search_prefix` and
  // `display_prefix` are put in front of the entries' paths. False when
  // stopped: by `visit`, cancellation or the entry limit. May be called again
  // for another start; the entry limit counts across calls.
  bool walk(int dir_fd, const std::string& search_prefix, const std::string& display_prefix,
            const Visit& visit);

  bool cancelled() const { return cancelled_; }
  // What it could not look at, one sentence each, e.g. `could not read folder
  // "a": Permission denied`, `stopped after looking at 1000000 entries;
  // narrow the path`.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  bool walk_folder(int dir_fd, const std::string& search_prefix, const std::string& display_prefix,
                   std::size_t depth, const Visit& visit);

  CallContext& context_;
  const WalkLimits limits_;
  std::vector<std::string> notes_;
  std::size_t entries_ = 0;
  bool cancelled_ = false;
};

// A folder a search starts from: open, with the prefixes its entries get.
struct SearchStart {
  UniqueFd fd;
  std::string display_prefix;  // "" for a single root itself
  std::string search_prefix;   // "" below the folder the caller named
};

// The folders a search at `location` covers: that folder, or every root (in
// name order) for the list of roots. Fails as RootSet::open_directory does.
Result<std::vector<SearchStart>> search_starts(const RootSet& roots, const Location& location);

}  // namespace toolmux
