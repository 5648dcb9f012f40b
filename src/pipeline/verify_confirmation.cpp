#include "src/pipeline/verify_confirmation.h"

#include <utility>

#include "src/base/utf8.h"

namespace toolmux::stages {

namespace {

// What is wrong with the call's confirmation, or "" when it holds.
std::string confirmation_problem(const ToolCall& call) {
  if (!call.confirmed) return "there is no confirmation";
  const Confirmation& c = *call.confirmed;
  if (call.confirmation != "accepted") return "the confirmation was not accepted";
  if (c.invocation != invocation_digest(call)) {
    return "the confirmation is for another invocation (the tool or its arguments differ)";
  }
  if (c.principal != call.principal) return "the confirmation belongs to another principal";
  if (c.approver.empty()) return "the confirmation names no approver";
  if (c.rationale.empty()) return "the confirmation gives no rationale";
  if (utf8_length(c.rationale) > ConfirmPolicy::kMaxRationaleChars ||
      utf8_length(c.approver) > ConfirmPolicy::kMaxApproverChars) {
    return "the confirmation's approver or rationale is too long";
  }
  return "";
}

}  // namespace

CallStage verify_confirmation() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool)
        return CallResult::out_of_order("verify_confirmation", "tool", "resolve_tool");
      if (!call.arguments) {
        return CallResult::out_of_order("verify_confirmation", "arguments", "check_arguments");
      }
      const auto rule = call.catalog->policy.confirm.rule_for(call.principal, call.tool->spec.name,
                                                              call.tool->side_effect);
      if (!rule) return next(call);
      if (std::string problem = confirmation_problem(call); !problem.empty()) {
        return CallResult::denied(tool_label(call) + " did not run: " + problem + " (policy rule " +
                                  *rule + ")");
      }
      return next(call);
    };
  };
}

}  // namespace toolmux::stages
