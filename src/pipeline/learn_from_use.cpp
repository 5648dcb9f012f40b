#include "src/pipeline/learn_from_use.h"

#include <utility>

#include "src/builtins/result_tools.h"
#include "src/builtins/search_clicks.h"
#include "src/builtins/tool_search.h"

namespace toolmux::stages {

CallStage learn_from_use() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool || !call.arguments) {
        return CallResult::out_of_order("learn_from_use", call.tool ? "arguments" : "tool",
                                        call.tool ? "check_arguments" : "resolve_tool");
      }
      SearchClicks* clicks = call.catalog ? call.catalog->search_clicks.get() : nullptr;
      if (!clicks) return next(call);
      const std::string& name = call.tool->spec.name;
      const std::string caller =
          SearchClicks::caller_key(call.session_id, call.principal, call.modern);
      if (name == kToolSearch) {
        CallResult out = next(call);
        if (out.outcome == CallOutcome::ok)
          clicks->searched(caller, search_terms(*call.arguments), answered_tools(out.result));
        return out;
      }
      // Reading a stored result is part of using the tool that stored it.
      if (name != kReadToolResult) clicks->called(caller, name);
      return next(call);
    };
  };
}

}  // namespace toolmux::stages
