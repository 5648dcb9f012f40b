#include "src/pipeline/call.h"

#include <utility>

#include "src/base/digest.h"
#include "src/base/jsonrpc.h"
#include "src/base/redact.h"

namespace toolmux {

std::string_view call_outcome_name(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::ok:
      return "ok";
    case CallOutcome::tool_error:
      return "tool_error";
    case CallOutcome::unknown_tool:
      return "unknown_tool";
    case CallOutcome::denied:
      return "denied";
    case CallOutcome::invalid_arguments:
      return "invalid_arguments";
    case CallOutcome::timed_out:
      return "timed_out";
    case CallOutcome::cancelled:
      return "cancelled";
    case CallOutcome::crashed:
      return "crashed";
    case CallOutcome::bad_result:
      return "bad_result";
    case CallOutcome::stopped:
      return "stopped";
    case CallOutcome::input_required:
      return "input_required";
    case CallOutcome::internal_error:
      return "internal_error";
  }
  return "unknown";
}

void set_outcome_meta(ToolResult& result, CallOutcome outcome) {
  if (!result.meta.is_object()) result.meta = nlohmann::json::object();
  result.meta[std::string(kOutcomeMetaKey)] = call_outcome_name(outcome);
}

bool carries_result(const CallResult& out) {
  return !out.protocol_error && out.outcome != CallOutcome::cancelled &&
         out.outcome != CallOutcome::input_required;
}

CallResult CallResult::answered(ToolResult result) {
  const CallOutcome outcome = result.is_error ? CallOutcome::tool_error : CallOutcome::ok;
  return {std::move(result), outcome};
}

CallResult CallResult::unknown_tool(std::string message) {
  return {ToolResult::error(std::move(message)), CallOutcome::unknown_tool};
}

CallResult CallResult::invalid_arguments(std::string message) {
  return {ToolResult::error(std::move(message)), CallOutcome::invalid_arguments};
}

CallResult CallResult::denied(std::string message) {
  return {ToolResult::error(std::move(message)), CallOutcome::denied};
}

CallResult CallResult::timed_out(std::string message) {
  return {ToolResult::error(std::move(message)), CallOutcome::timed_out};
}

CallResult CallResult::crashed(std::string message) {
  return {ToolResult::error(std::move(message)), CallOutcome::crashed};
}

CallResult CallResult::bad_result(std::string message) {
  return {ToolResult::error(std::move(message)), CallOutcome::bad_result};
}

CallResult CallResult::bad_result(ToolResult error) {
  error.is_error = true;
  return {std::move(error), CallOutcome::bad_result};
}

CallResult CallResult::input_required() {
  return {ToolResult::error("The call asked its client a question; it is answered with the "
                            "question, and the client retries it with the answer."),
          CallOutcome::input_required};
}

CallResult CallResult::stopped(std::string message) {
  return {ToolResult::error(std::move(message)), CallOutcome::stopped};
}

CallResult CallResult::cancelled() {
  return {ToolResult::error("cancelled"), CallOutcome::cancelled};
}

CallResult CallResult::rejected(CallOutcome outcome, JsonRpcError error) {
  CallResult out{ToolResult::error(error.message), outcome};
  out.protocol_error = std::move(error);
  return out;
}

CallResult CallResult::out_of_order(std::string_view stage, std::string_view missing,
                                    std::string_view set_by) {
  std::string message = "Internal error: the call pipeline is composed out of order: ";
  message += std::string(stage) + " found no " + std::string(missing) + ", which " +
             std::string(set_by) + " sets when it runs before " + std::string(stage);
  return rejected(CallOutcome::internal_error,
                  JsonRpcError{jsonrpc::kInternalError, message, nullptr});
}

std::string json_quoted(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string tool_label(const ToolCall& call) { return "Tool " + json_quoted(call.tool->spec.name); }

std::string recorded_tool_name(const ToolCall& call) {
  return call.tool ? call.tool->spec.name : redact(call.requested_name);
}

std::string invocation_digest(const ToolCall& call) {
  return json_digest({{"tool", call.tool ? call.tool->spec.name : call.requested_name},
                      {"arguments", call.arguments ? *call.arguments : nlohmann::json()}});
}

}  // namespace toolmux
