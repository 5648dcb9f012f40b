#include "src/pipeline/confirm.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include "src/base/redact.h"
#include "src/base/utf8.h"

namespace toolmux {

std::string local_user_name() {
  const uid_t uid = geteuid();
  passwd entry{};
  passwd* found = nullptr;
  std::array<char, 4096> buffer{};
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
      found->pw_name != nullptr && found->pw_name[0] != '\0') {
    return found->pw_name;
  }
  return "uid " + std::to_string(uid);
}

}  // namespace toolmux

namespace toolmux::stages {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxShownArgumentBytes = 2000;

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

// Who approves: the signed-in caller, or the local user.
std::string approver_of(const ToolCall& call, Approvers approvers) {
  return approvers == Approvers::authenticated ? call.principal : local_user_name();
}

// The question put to the human: what will run, for whom, and why.
json confirmation_request(const ToolCall& call, Approvers approvers) {
  const ToolSpec& spec = call.tool->spec;
  std::string message = "Confirm this call before it runs.\n\nTool: " + spec.name + " (" +
                        std::string(side_effect_name(call.tool->side_effect)) + ")";
  if (!spec.title.empty()) message += " - " + redact(spec.title);
  const std::string caller = call.principal.empty() ? "(unknown)" : call.principal;
  message += "\nCaller: " + redact(caller);
  // A 2026-07-28 request has no session: its carrier's label is new for every
  // request, and the question must read the same when the client retries with
  // the answer (its digest matches the two).
  if (!call.session_label.empty() && !call.modern) message += ", session " + call.session_label;
  const std::string arguments = redact_json(call.arguments ? *call.arguments : json::object())
                                    .dump(2, ' ', false, json::error_handler_t::replace);
  message += "\nArguments: " + clip_for_message(arguments, kMaxShownArgumentBytes);
  message += "\nReason given: " +
             (call.reason.empty() ? std::string("(none)") : clip_for_message(redact(call.reason)));
  const json properties = {{"approve",
                            {{"type", "boolean"},
                             {"title", "Run this call"},
                             {"description", "Yes runs the tool once with the arguments shown."}}},
                           {"rationale",
                            {{"type", "string"},
                             {"title", "Why"},
                             {"minLength", 1},
                             {"maxLength", ConfirmPolicy::kMaxRationaleChars}}}};
  // The approver is the identity the server knows: nothing to type, nothing
  // to forge.
  message +=
      "\n\nThe tool runs only if you approve, once, for exactly these arguments. You "
      "approve as " +
      redact(approver_of(call, approvers)) +
      (approvers == Approvers::authenticated ? ", the signed-in caller"
                                             : ", the user toolmux runs as on this machine") +
      "; say why you approve or decline. Both are kept in toolmux's audit trail.";
  const json schema = {
      {"type", "object"}, {"properties", properties}, {"required", {"approve", "rationale"}}};
  // No "mode": form is the default, and clients before 2025-11-25 know no other.
  return {{"message", std::move(message)}, {"requestedSchema", schema}};
}

std::string rule_note(const std::string& rule) { return " (policy rule " + rule + ")"; }

}  // namespace

CallStage confirm(Approvers approvers) {
  return [approvers](CallHandler next) -> CallHandler {
    return [approvers, next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("confirm", "tool", "resolve_tool");
      if (!call.arguments)
        return CallResult::out_of_order("confirm", "arguments", "check_arguments");
      const auto rule = call.catalog->policy.confirm.rule_for(call.principal, call.tool->spec.name,
                                                              call.tool->side_effect);
      if (!rule) return next(call);
      const std::string needs =
          tool_label(call) + " did not run: it needs a human's confirmation" + rule_note(*rule);
      if (approvers == Approvers::nobody) {
        call.confirmation = "unavailable";
        return CallResult::denied(
            needs +
            ", and this server cannot tell who would approve it: it takes no bearer tokens. "
            "Ask the operator to serve with --tokens-file or --auth-issuer, or call it over "
            "stdio.");
      }
      if (!call.context || !call.context->client_capabilities().contains("elicitation")) {
        call.confirmation = "unavailable";
        return CallResult::denied(
            needs +
            ", and this client cannot ask for one: it did not declare the elicitation "
            "capability. Call it from a client that can ask its user, or ask the "
            "operator to change policy.confirm.");
      }
      // A person may take a while: the wait has its own bound, and the tool
      // gets its whole timeout once the answer is in.
      const auto asked_at = std::chrono::steady_clock::now();
      call.control->set_deadline(asked_at + call.catalog->policy.confirm.timeout);
      ClientAnswer answer = call.context->ask_client(
          "elicitation/create", confirmation_request(call, approvers), {}, kConfirmationKey);
      if (answer.pending) {
        call.confirmation = "asked";
        return CallResult::input_required();
      }
      call.control->set_deadline(std::chrono::steady_clock::now() + call.tool->spec.timeout);
      if (!answer.result || !answer.result->is_object()) {
        call.confirmation = "unavailable";
        return CallResult::denied(
            needs + ", and asking the client failed: " + clip_for_message(answer.error));
      }
      const json& result = *answer.result;
      const std::string action = result.value("action", "");
      if (action == "decline" || action == "cancel") {
        call.confirmation = action == "decline" ? "declined" : "cancelled";
        return CallResult::denied(tool_label(call) + " did not run: the confirmation was " +
                                  call.confirmation + rule_note(*rule) + ".");
      }
      const json content = result.value("content", json::object());
      const bool approved = action == "accept" && content.is_object() &&
                            content.value("approve", json()).is_boolean() &&
                            content["approve"].get<bool>();
      // Whatever name the answer holds, the identity the server knows approves.
      const std::string approver = approver_of(call, approvers);
      const std::string rationale =
          content.is_object() && content.value("rationale", json()).is_string()
              ? redact(trimmed(content["rationale"].get<std::string>()))
              : "";
      if (!approved) {
        call.confirmation = "declined";
        return CallResult::denied(tool_label(call) +
                                  " did not run: the confirmation did not approve it" +
                                  rule_note(*rule) + ".");
      }
      std::string missing;
      if (approver.empty()) {
        missing = "no approver (the caller is not signed in)";
      } else if (utf8_length(approver) > ConfirmPolicy::kMaxApproverChars) {
        missing = "an approver's name longer than " +
                  std::to_string(ConfirmPolicy::kMaxApproverChars) + " characters";
      } else if (rationale.empty()) {
        missing = "no rationale";
      } else if (utf8_length(rationale) > ConfirmPolicy::kMaxRationaleChars) {
        missing = "a rationale longer than " + std::to_string(ConfirmPolicy::kMaxRationaleChars) +
                  " characters";
      }
      if (!missing.empty()) {
        call.confirmation = "declined";
        return CallResult::denied(tool_label(call) + " did not run: the confirmation came with " +
                                  missing + rule_note(*rule) + ".");
      }
      call.confirmation = "accepted";
      call.confirmed = Confirmation{invocation_digest(call), call.principal, redact(approver),
                                    rationale, answer.answer_id};
      return next(call);
    };
  };
}

}  // namespace toolmux::stages
