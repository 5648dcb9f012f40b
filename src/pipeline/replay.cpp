#include "src/pipeline/replay.h"

#include <utility>

#include "src/base/digest.h"

namespace toolmux::stages {

CallStage replay(std::shared_ptr<const CallJournal> journal) {
  return [journal = std::move(journal)](CallHandler next) -> CallHandler {
    return [journal, next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("replay", "tool", "resolve_tool");
      if (!call.arguments)
        return CallResult::out_of_order("replay", "arguments", "check_arguments");
      if (call.idempotency_key.empty() || call.tool->side_effect == SideEffect::read_only ||
          !journal->store()) {
        return next(call);
      }
      const auto entry = journal->store()->find_by_key(call.principal, call.idempotency_key);
      if (!entry) return next(call);
      const std::string key = json_quoted(call.idempotency_key);
      if (entry->intent.tool != call.tool->spec.name ||
          entry->intent.arguments_digest != json_digest(*call.arguments)) {
        return CallResult::denied(tool_label(call) + " did not run: idempotency key " + key +
                                  " was used for another call (" +
                                  (entry->intent.tool != call.tool->spec.name
                                       ? "of tool " + json_quoted(entry->intent.tool)
                                       : std::string("with other arguments")) +
                                  "); a key names one call, so use a new key for a new call");
      }
      if (entry->outcome_pending) {
        return CallResult::denied(
            tool_label(call) + " did not run: the call with idempotency key " + key +
            " ended, but its outcome is not in toolmux's journal yet (the store cannot be "
            "reached; toolmux keeps the outcome and writes it when the store is back). "
            "Outcome pending: ask again later, and it will be answered from the journal");
      }
      if (!entry->outcome) {
        return CallResult::denied(tool_label(call) +
                                  " did not run: the call with idempotency key " + key +
                                  " is still running; ask again once it has ended");
      }
      const bool finished = *entry->outcome == "ok" || *entry->outcome == "tool_error";
      if (finished && (entry->result_too_large || !entry->result.is_object())) {
        return CallResult::denied(tool_label(call) +
                                  " did not run again: the call with "
                                  "idempotency key " +
                                  key + " ended (" + *entry->outcome +
                                  ") but its result was too large to keep for replay");
      }
      if (!finished) {
        // It did not finish (interrupted by toolmux stopping, timed out,
        // cancelled, ...) and may or may not have acted: it runs again only
        // because the client asked again, under the earlier call's id, so
        // that the tool can recognise its earlier attempt.
        call.call_id = entry->intent.call_id;
        if (call.context) call.context->set_call_id(call.call_id);
        return next(call);
      }
      call.confirmation = "replayed";
      call.call_id = entry->intent.call_id;
      ToolResult recorded;
      recorded.content = entry->result.value("content", nlohmann::json::array());
      recorded.structured_content =
          entry->result.value("structuredContent", nlohmann::json(nullptr));
      recorded.is_error = entry->result.value("isError", false);
      // The same result as the first time, said to be a replay.
      recorded.meta = entry->result.value("_meta", nlohmann::json::object());
      if (!recorded.meta.is_object()) recorded.meta = nlohmann::json::object();
      recorded.meta["io.toolmux/replayed"] = true;
      CallResult out = CallResult::answered(std::move(recorded));
      out.replayed = true;
      return out;
    };
  };
}

}  // namespace toolmux::stages
