#include "src/pipeline/verify_confirmation.h"

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "src/base/utf8.h"
#include "src/session/input_exchange.h"

namespace toolmux::stages {

namespace {

// What is wrong with the call's confirmation, every problem at once
// ("; " between them), or "" when it holds.
std::string confirmation_problem(const ToolCall& call) {
  if (!call.confirmed) return "there is no confirmation";
  const Confirmation& c = *call.confirmed;
  std::string problems;
  auto add = [&problems](std::string_view problem) {
    if (!problems.empty()) problems += "; ";
    problems += problem;
  };
  if (call.confirmation != "accepted") add("the confirmation was not accepted");
  if (c.invocation != invocation_digest(call)) {
    add("the confirmation is for another invocation (the tool or its arguments differ)");
  }
  if (c.principal != call.principal) add("the confirmation belongs to another principal");
  if (c.approver.empty()) add("the confirmation names no approver");
  if (c.rationale.empty()) add("the confirmation gives no rationale");
  if (utf8_length(c.approver) > ConfirmPolicy::kMaxApproverChars) {
    add("the confirmation's approver is over " + std::to_string(ConfirmPolicy::kMaxApproverChars) +
        " characters");
  }
  if (utf8_length(c.rationale) > ConfirmPolicy::kMaxRationaleChars) {
    add("the confirmation's rationale is over " +
        std::to_string(ConfirmPolicy::kMaxRationaleChars) + " characters");
  }
  return problems;
}

}  // namespace

CallStage verify_confirmation(std::shared_ptr<const CallJournal> journal) {
  return [journal = std::move(journal)](CallHandler next) -> CallHandler {
    return [journal, next = std::move(next)](ToolCall& call) {
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
      const std::string& token = call.confirmed->answer_id;
      if (token.empty()) return next(call);  // answered live: it cannot come again
      // Kept for as long as the requestState it came in can be sent back.
      const Result<bool> spent =
          journal->spend(token, std::chrono::system_clock::now() + InputExchange::kStateLifetime);
      if (!spent.ok()) {
        return CallResult::stopped(tool_label(call) +
                                   " did not run: toolmux could not record that its confirmation "
                                   "is used, so it cannot tell whether it was used before: " +
                                   spent.message());
      }
      if (!*spent) {
        call.confirmation = "reused";
        return CallResult::denied(
            tool_label(call) +
            " did not run: this confirmation was already used, and a confirmation lets a tool "
            "run once (policy rule " +
            *rule +
            "). Call it again without \"requestState\" and \"inputResponses\" to be asked "
            "again.");
      }
      return next(call);
    };
  };
}

}  // namespace toolmux::stages
