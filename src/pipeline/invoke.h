// The end of the chain: calls the tool's handler with the checked arguments
// and the call's context, and answers what it returns (CallResult::answered).
// Exceptions pass through (catch_tool_exceptions takes them). Needs `tool`
// (resolve_tool) and `arguments` (check_arguments), else
// CallResult::out_of_order(); `context` is the caller's to set.
#pragma once

#include "src/pipeline/call.h"

namespace toolmux {

CallHandler invoke_tool();

}  // namespace toolmux
