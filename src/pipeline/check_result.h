// The check_result stage (result): the boundary for what a tool returns.
// next's answer passes unchanged when its content blocks are well-formed MCP,
// its text is valid UTF-8, it can be written as JSON, nothing is nested deeper
// than 256 levels, and structuredContent is an object that matches the tool's
// outputSchema when it declares one (and is present then, unless the answer
// is an error). Otherwise the answer becomes a bad_result isError result
// naming the tool and what is wrong; text that is not UTF-8 is carried along
// as base64 so nothing the tool said is lost. A cancelled answer passes
// unchecked. Needs `tool` (resolve_tool before it), else
// CallResult::out_of_order().
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage check_result();

}  // namespace toolmux::stages
