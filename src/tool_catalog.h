// Assembles the tools a server offers: the built-in filesystem tools, then the
// catalog file's command tools. Used by `serve` and by `check`, so both judge a
// catalog file the same way.
#pragma once

#include <memory>

#include "catalog/problem.h"
#include "catalog/tool_registry.h"
#include "src/cli.h"

namespace toolmux {

// Null with problems when anything is wrong; problems from the catalog file
// carry pointers into it, problems from the command line start with "--root".
std::shared_ptr<ToolRegistry> build_tool_registry(const ServeOptions& options, Problems& problems);

}  // namespace toolmux
