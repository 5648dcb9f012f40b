// What travels through the tools/call pipeline: the call (ToolCall), its
// answer (CallResult, built only by its named constructors), and the two
// function types the chain is made of: a CallHandler answers a call, a
// CallStage wraps the next handler into one that does a little more
// (middleware). Stages and their order: src/pipeline/call_pipeline.h.
//
// A ToolCall is owned by whoever runs the chain and is changed in place by the
// stages, one thread at a time (the deadline stage hands a copy to the thread
// it starts). A stage that needs what an earlier stage sets (`tool`,
// `arguments`) checks it is there and otherwise answers
// CallResult::out_of_order(): a wrongly composed chain is a bug of toolmux,
// answered as a JSON-RPC internal error, never a crash.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "catalog/tool_registry.h"
#include "src/assembly/tool_catalog.h"
#include "src/base/jsonrpc_error.h"
#include "src/base/untrusted_json.h"
#include "src/session/call_admission.h"
#include "src/session/session.h"

namespace toolmux {

enum class CallOutcome {
  ok,
  tool_error,
  unknown_tool,
  denied,
  invalid_arguments,
  timed_out,
  cancelled,
  crashed,
  bad_result,
  stopped,         // toolmux stopped the call (it exits), or had no thread to run it on
  input_required,  // it asked a 2026-07-28 client a question: answered with the question
  internal_error   // the pipeline was composed out of order (a bug of toolmux)
};
std::string_view call_outcome_name(CallOutcome outcome);

// A human's yes to one invocation, as the confirm stage took it; checked
// again just before the tool runs (verify_confirmation).
struct Confirmation {
  std::string invocation;  // invocation_digest() of the call it confirms
  std::string principal;   // whose call it confirms
  std::string approver;    // who confirmed: never empty
  std::string rationale;   // redacted, at most ConfirmPolicy::kMaxRationaleChars characters
  // The answer's id (ClientAnswer::answer_id), spent by verify_confirmation so
  // that the same retry sent again does not run the tool again; empty for an
  // answer given live (legacy elicitation), which cannot come again.
  std::string answer_id{};
};

struct ToolCall;
struct CallResult;

// Records what a run came to when its caller was told otherwise (it timed
// out, or was cancelled, while the tool went on): called with the run's copy
// of the call and the tool's own answer, on the thread that ran it.
using LateEndFn = std::function<void(const ToolCall&, const CallResult&)>;

// The _meta key of an error result that names how its call ended, e.g.
// {"io.toolmux/outcome": "timed_out"}, so that a client can branch on it.
inline constexpr std::string_view kOutcomeMetaKey = "io.toolmux/outcome";
// Sets result.meta[kOutcomeMetaKey] to call_outcome_name(outcome), making
// meta an object when it is not one.
void set_outcome_meta(ToolResult& result, CallOutcome outcome);

struct ToolCall {
  std::string session_id;      // owner of what the call stores
  std::string session_label;   // for logs (the id itself is a secret)
  std::string principal;       // whom the access rules apply to
  bool modern = false;         // a request of the 2026-07-28 protocol
  std::string requested_name;  // as the client sent it (may be an alias); the
                               // tool call_tool names once unwrap_call_tool ran
  // The catalog the call runs against; keeps `tool` alive for as long as any
  // thread of the call runs, even one abandoned after a timeout.
  std::shared_ptr<const Catalog> catalog;
  bool via_call_tool = false;               // set by unwrap_call_tool
  const RegisteredTool* tool = nullptr;     // set by resolve_tool
  ParsedJson raw_arguments;                 // as read at the boundary
  std::optional<nlohmann::json> arguments;  // set by check_arguments
  // The arguments among them that the tool's schema defaults filled in, by
  // name (ArgumentCheck::filled; null = none was): the audit tells them
  // from those sent.
  nlohmann::json filled_arguments;
  std::shared_ptr<CallControl> control;  // cancellation and deadline
  std::shared_ptr<CallContext> context;  // progress, logging, cancelled() for the handler
  // When toolmux read the request: the tool's timeout counts from then, time
  // spent waiting for a place to run included.
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
  // toolmux's id of the call: in its journal entry and audit record, and given
  // to the tool (CallContext::call_id) so it can recognise an earlier attempt.
  std::string call_id;
  // _meta "io.toolmux/idempotencyKey": a repeat with the same key is answered
  // from the journal ("" = none).
  std::string idempotency_key;
  // Why the model or client makes the call (_meta "io.toolmux/reason", or
  // call_tool's "reason"), shown to the human asked to confirm it; "" = none.
  std::string reason;
  // For the audit record: "not_required", "accepted", "declined", "cancelled",
  // "unavailable" or "replayed"; and the confirmation itself once given.
  std::string confirmation = "not_required";
  std::optional<Confirmation> confirmed;
  // The journal stage wrote the call's audit record with its outcome, in one
  // batch: the record stage writes none.
  bool audited = false;
  // Set before the tool runs by the stage that keeps the call's records (the
  // journal stage for a mutation, else the record stage); called by the
  // deadline stage with the tool's own answer when the caller is told
  // otherwise: a run it stopped waiting for when that run ends at last, or
  // an answer that came too late. Never called for a call that asked its
  // client a question.
  LateEndFn on_late_end;
  // Set by the deadline stage when it called, or handed to a run it stopped
  // waiting for, on_late_end: the call's real outcome is (or will be)
  // recorded by it, and the caller's answer is recorded beside it.
  bool ends_late = false;
  // The call's place among the running calls, held by every thread of the call
  // (an abandoned handler's too); null when the call was not admitted through one.
  std::shared_ptr<const CallPlace> place;
};

// The answer to a call. Built by the named constructors below, one per way a
// call ends; the stages then only adjust the limit fields.
struct CallResult {
  // What the tool answered: ok, or tool_error when `result` says isError.
  static CallResult answered(ToolResult result);
  // An isError result with `message`, the tool not having run (or its answer
  // dropped), for each outcome toolmux decides.
  static CallResult unknown_tool(std::string message);
  static CallResult invalid_arguments(std::string message);
  static CallResult denied(std::string message);
  static CallResult timed_out(std::string message);
  static CallResult crashed(std::string message);
  static CallResult bad_result(std::string message);
  static CallResult bad_result(ToolResult error);  // an error that carries more blocks
  static CallResult stopped(std::string message);
  // The call was cancelled: the client gets no response.
  static CallResult cancelled();
  // The handler asked a 2026-07-28 client a question (CallControl::
  // input_requested): the call is answered with its questions
  // (SessionCallContext::input_exchange), whatever the handler returned.
  static CallResult input_required();
  // Answered with the JSON-RPC error `error` instead of a result; `result`
  // holds the same message as an isError result, for the record.
  static CallResult rejected(CallOutcome outcome, JsonRpcError error);
  // `stage` found `missing` unset, which `set_by` sets when it runs before:
  // the chain was composed out of order. A -32603 internal error naming them.
  static CallResult out_of_order(std::string_view stage, std::string_view missing,
                                 std::string_view set_by);

  ToolResult result;
  CallOutcome outcome = CallOutcome::ok;
  // When set, the call is answered with this JSON-RPC error instead of `result`.
  std::optional<JsonRpcError> protocol_error;
  // What the tool said, before limits: text, binary data and structuredContent
  // bytes (result_payload_bytes).
  std::size_t bytes_produced = 0;
  bool truncated = false;
  bool offloaded = false;
  bool replayed = false;  // answered from the journal (the replay stage): the tool did not run

 private:
  CallResult(ToolResult r, CallOutcome o) : result(std::move(r)), outcome(o) {}
};

// Whether the call is answered with `out.result`: it was not cancelled, and
// no question (input_required) or JSON-RPC error goes out instead. What the
// stages that change a result work on.
bool carries_result(const CallResult& out);

using CallHandler = std::function<CallResult(ToolCall&)>;
using CallStage = std::function<CallHandler(CallHandler next)>;

// What a confirmation is bound to: a digest of the tool's canonical name and
// the call's validated arguments (resolve_tool and check_arguments have run).
std::string invocation_digest(const ToolCall& call);

// "Tool \"name\"", the name of the tool `call` reached (resolve_tool has run),
// quoted as JSON: how every message about a tool starts.
std::string tool_label(const ToolCall& call);
// The name the audit record, the metrics and the log give `call`: the tool's
// canonical name, or when it reached none the name as requested, redacted
// (src/base/redact.h): a client may send anything as a name, a token too.
std::string recorded_tool_name(const ToolCall& call);
// `s` as a JSON string, invalid UTF-8 replaced.
std::string json_quoted(std::string_view s);

}  // namespace toolmux
