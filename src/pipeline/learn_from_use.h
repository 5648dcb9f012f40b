// The learn_from_use stage (handler, after check_arguments): what tool_search
// learns from use (src/builtins/search_clicks.h). A call of tool_search that
// answered with tools is remembered for its caller (its session, or its
// principal for a 2026-07-28 request): its terms and the tools it answered
// with. A call of any other tool but read_tool_result, by that caller, is a
// click on the searches that answered with it, recorded in the search memory.
// The tool is the one resolve_tool found (an alias's or call_tool's target),
// named as tool_search reports it; the call counts once it got this far (its
// tool allowed, its arguments valid), whatever it then answers. Does nothing
// when the call's catalog does not learn (Catalog::search_clicks is null).
// Passes every call on and returns next's answer unchanged. Needs `tool` and
// `arguments` (check_arguments before it), else CallResult::out_of_order().
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage learn_from_use();

}  // namespace toolmux::stages
