// The built-in filesystem tools, confined to a set of roots.
//
// read_text_file, list_directory, find_files, search_file_contents and
// get_file_info are read_only; write_text_file is local_mutation and is
// registered only when writes are allowed. Every path a caller gives is
// resolved beneath a root and refused if it would leave it ("..", an absolute
// path elsewhere, a symlink pointing out, a special file). Results name paths
// relative to their root, never as absolute host paths, in a stable order, and
// hold nothing that changes from run to run.
#pragma once

#include <filesystem>
#include <vector>

#include "catalog/tool_registry.h"
#include "src/base/problem.h"

namespace toolmux {

struct FilesystemToolOptions {
  std::vector<std::filesystem::path> roots;  // must exist; at least one
  bool allow_writes = false;
};

// Registers the tools into `registry`; returns problems (a root that does not
// exist or is not a directory) and registers nothing then.
Problems register_filesystem_tools(ToolRegistry& registry, const FilesystemToolOptions& options);

}  // namespace toolmux
