// The check_result stage (result): the boundary for what a tool returns.
// next's answer passes unchanged when its content blocks are well-formed MCP,
// its text is valid UTF-8, it can be written as JSON, nothing is nested deeper
// than 256 levels, and structuredContent is an object that matches the tool's
// outputSchema when it declares one (and is present then, unless the answer
// is an error). Otherwise the answer becomes a bad_result isError result
// naming the tool and what is wrong, with what the tool returned beside it so
// that nothing it said is lost: text that is not UTF-8 as base64, anything
// else as the result's JSON text in a second text block (json_text: ill-formed
// UTF-8 elsewhere as U+FFFD, a number that is not finite as null; the reason
// says where they were). A cancelled answer passes
// unchecked. Needs `tool` (resolve_tool before it), else
// CallResult::out_of_order().
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage check_result();

}  // namespace toolmux::stages
