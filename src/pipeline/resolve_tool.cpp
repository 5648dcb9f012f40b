#include "src/pipeline/resolve_tool.h"

#include <utility>

#include "src/base/jsonrpc.h"
#include "src/base/utf8.h"
#include "src/builtins/call_tool.h"
#include "src/builtins/tool_name_suggestions.h"

namespace toolmux {

const RegisteredTool* reached_tool(const Catalog& catalog, const std::string& requested_name,
                                   const nlohmann::json& arguments) {
  std::string_view name = catalog.aliases.canonical_tool(requested_name);
  // call_tool runs with the timeout of the tool it calls (unwrap_call_tool).
  if (name == kCallTool && arguments.is_object() && arguments.contains("name") &&
      arguments["name"].is_string()) {
    const std::string_view inner =
        catalog.aliases.canonical_tool(arguments["name"].get_ref<const std::string&>());
    if (inner != kCallTool) name = inner;
  }
  return catalog.registry->find(name);
}

namespace stages {

CallStage resolve_tool() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      const Catalog& catalog = *call.catalog;
      const std::string_view canonical = catalog.aliases.canonical_tool(call.requested_name);
      if (canonical == kCallTool) {
        return CallResult::out_of_order("resolve_tool", "unwrapped call_tool call",
                                        "unwrap_call_tool");
      }
      call.tool = catalog.registry->find(canonical);
      if (call.tool) return next(call);

      auto suggestions = suggest_tool_names(*catalog.registry, call.requested_name, 3);
      // The name is the caller's: quote its start only.
      std::string message = "Unknown tool: " + json_quoted(clip_for_message(call.requested_name)) +
                            clipped_size_note(call.requested_name) + ".";
      if (!suggestions.empty()) {
        message += " Did you mean";
        for (std::size_t i = 0; i < suggestions.size(); ++i) {
          message += (i == 0 ? " " : ", ") + json_quoted(suggestions[i]);
        }
        message += "?";
      }
      message += " tools/list shows every tool this server offers.";
      // Through call_tool the request itself was fine: the tool it named is
      // what was unknown, which is call_tool's answer to give.
      if (catalog.policy.unknown_tool == UnknownToolAnswer::protocol_error && !call.via_call_tool) {
        nlohmann::json data{{"unknownTool", call.requested_name}, {"suggestions", suggestions}};
        return CallResult::rejected(
            CallOutcome::unknown_tool,
            JsonRpcError{jsonrpc::kInvalidParams, std::move(message), std::move(data)});
      }
      return CallResult::unknown_tool(std::move(message));
    };
  };
}

}  // namespace stages

}  // namespace toolmux
