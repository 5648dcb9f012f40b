// The catalog file: JSON that declares command tools (and, later, aliases,
// policy and upstreams). See examples/catalog.json and the README.
//
// Loading collects every problem in the file at once, each with a JSON pointer
// to where it is; unknown fields are problems too, so a typo is caught rather
// than ignored. A file with any problem is refused whole.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "catalog/problem.h"
#include "catalog/providers/command_tools.h"
#include "catalog/tool.h"
#include "catalog/tool_registry.h"

namespace toolmux {

struct CommandTool {
  ToolSpec spec;
  CommandSpec command;
};

struct CatalogFile {
  std::vector<CommandTool> command_tools;
};

struct CatalogLoad {
  CatalogFile catalog;
  Problems problems;  // empty when the file is usable
};

// Reads and checks the file: JSON boundary, field names and types, each tool
// spec against the contract (check_tool_spec) and each command against its
// schema. A relative "cwd" is taken relative to the file's folder.
CatalogLoad load_catalog_file(const std::filesystem::path& path);

// Registers the command tools into `registry` (which may already hold built-in
// tools: a clash of names is a problem at "/tools/N/name").
Problems register_catalog(ToolRegistry& registry, const CatalogFile& catalog);

}  // namespace toolmux
