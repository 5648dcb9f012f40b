// call_tool: the built-in tool that reaches any catalog tool by name, so that
// a client that ignores list changes can still call the tools a search found.
//
// The pipeline's unwrap_call_tool stage unwraps it: the named tool then goes
// through every stage (aliases, access rules, argument checks, limits,
// records) exactly as if it had been called directly. call_tool's own handler
// is never reached.
#pragma once

#include "catalog/tool_registry.h"
#include "src/base/problem.h"

namespace toolmux {

inline constexpr const char* kCallTool = "call_tool";

Problems register_call_tool(ToolRegistry& registry);

}  // namespace toolmux
