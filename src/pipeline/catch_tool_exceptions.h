// The catch_tool_exceptions stage (handler): the one place where exceptions
// from tool code are caught. Passes the call on; an exception becomes a
// crashed isError result, "Tool \"name\" failed: what()", except
// MissingClientCapability (catalog/tool.h): the JSON-RPC error -32021 naming
// the capabilities the client lacks. Needs `tool`
// (resolve_tool before it), else CallResult::out_of_order().
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage catch_tool_exceptions();

}  // namespace toolmux::stages
