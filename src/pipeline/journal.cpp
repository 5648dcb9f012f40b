#include "src/pipeline/journal.h"

#include <chrono>
#include <utility>

#include "src/base/digest.h"
#include "src/base/json_text.h"
#include "src/base/redact.h"

namespace toolmux::stages {

AuditRecord audit_record(const ToolCall& call, const CallResult& out, double seconds) {
  AuditRecord record;
  record.time = std::chrono::system_clock::now();
  record.call_id = call.call_id;
  record.principal = call.principal;
  record.session = call.session_label;
  record.tool = recorded_tool_name(call);
  if (call.tool) record.side_effect = std::string(side_effect_name(call.tool->side_effect));
  // The validated arguments when the call got that far (those the schema's
  // defaults filled in apart), else what was sent.
  const nlohmann::json& arguments = call.arguments ? *call.arguments : call.raw_arguments.value;
  if (call.filled_arguments.is_object() && arguments.is_object()) {
    nlohmann::json sent = arguments;
    for (const auto& [name, value] : call.filled_arguments.items()) sent.erase(name);
    record.arguments = redact_json(sent);
    record.defaults = redact_json(call.filled_arguments);
  } else {
    record.arguments = arguments.is_null() ? arguments : redact_json(arguments);
  }
  record.confirmation = call.confirmation;
  if (call.confirmed) {
    record.approver = call.confirmed->approver;
    record.rationale = call.confirmed->rationale;
  }
  record.outcome = std::string(call_outcome_name(out.outcome));
  record.duration_ms = to_the_microsecond(seconds * 1000.0);
  record.idempotency_key = redact(call.idempotency_key);
  return record;
}

namespace {

// Records the outcome of the journaled `call`, answered `out` after `seconds`,
// with its audit record: what the tool answered is kept for replay; a call
// that asked its client a question (input_required) ran no further than
// asking. In `lent` (begun) when given: committed with the tool's change.
Status finish(JournalStore& store, const ToolCall& call, const CallResult& out, double seconds,
              LentTransaction* lent = nullptr) {
  const bool answered = out.outcome == CallOutcome::ok || out.outcome == CallOutcome::tool_error;
  const nlohmann::json result = answered ? out.result.to_json() : nlohmann::json(nullptr);
  const std::string outcome(call_outcome_name(out.outcome));
  AuditRecord record = audit_record(call, out, seconds);
  return lent ? store.finish_in(*lent, call.call_id, outcome, result, record)
              : store.finish(call.call_id, outcome, result, record);
}

// finish(), committing the tool's change in `lent` with it when the tool
// made one there and its answer stands (ok, or an error of its own); rolled
// back otherwise. When the commit fails, nothing of the change stays and `out`
// becomes the error that says so, finished alone; when nobody can tell
// whether it committed, `out` says that and the entry is left without an
// outcome (a failed Status: the call is audited apart).
Status finish_with_change(JournalStore& store, const ToolCall& call, CallResult& out,
                          double seconds, LentTransaction* lent) {
  if (!lent || !lent->begun()) return finish(store, call, out, seconds);
  if (out.outcome != CallOutcome::ok && out.outcome != CallOutcome::tool_error) {
    lent->roll_back();
    return finish(store, call, out, seconds);
  }
  Status committed = finish(store, call, out, seconds, lent);
  if (committed.ok()) return committed;
  if (lent->fate_unknown()) {
    out = CallResult::stopped(tool_label(call) +
                              ": toolmux cannot tell whether its change was committed (the store "
                              "was lost during the commit: " +
                              committed.message() + "); the journal's entry of call " +
                              call.call_id + " will say, once toolmux can tell");
    return committed;
  }
  out = CallResult::stopped(
      tool_label(call) +
      ": its change was not committed, so nothing changed: " + committed.message());
  return finish(store, call, out, seconds);
}

}  // namespace

CallStage journal(std::shared_ptr<const CallJournal> journal) {
  return [journal = std::move(journal)](CallHandler next) -> CallHandler {
    return [journal, next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("journal", "tool", "resolve_tool");
      if (!call.arguments)
        return CallResult::out_of_order("journal", "arguments", "check_arguments");
      if (call.tool->side_effect == SideEffect::read_only) return next(call);
      const std::shared_ptr<JournalStore>& store = journal->store();  // waits for the open
      if (!store) {
        if (journal->unavailable().empty()) return next(call);  // journaling is off
        return CallResult::stopped(tool_label(call) +
                                   " did not run: toolmux's journal, which records every call "
                                   "that changes something before it runs, is unavailable: " +
                                   journal->unavailable());
      }
      const auto start = std::chrono::steady_clock::now();
      JournalIntent intent;
      intent.call_id = call.call_id;
      intent.tool = call.tool->spec.name;
      intent.side_effect = std::string(side_effect_name(call.tool->side_effect));
      intent.arguments_digest = json_digest(*call.arguments);
      intent.principal = call.principal;
      intent.session = call.session_label;
      if (call.confirmed) {
        intent.approver = call.confirmed->approver;
        intent.rationale = call.confirmed->rationale;
      }
      intent.idempotency_key = call.idempotency_key;
      intent.started = std::chrono::system_clock::now();
      if (Status begun = store->begin(intent); !begun.ok()) {
        return CallResult::stopped(
            tool_label(call) +
            " did not run: toolmux could not journal it first: " + begun.message());
      }
      auto seconds_since_start = [start] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
      // A native tool may make its change in the store's transaction, to
      // commit with the outcome (catalog/store_transaction.h).
      std::shared_ptr<LentTransaction> lent = store->lend_transaction();
      if (lent && call.context) call.context->set_store_transaction(lent);
      // A run its caller stopped waiting for (a timeout, a cancellation)
      // finishes its entry when it ends, with what it came to: the entry
      // stays running until then, so a retry with its key is not run again
      // meanwhile, and is answered from the journal after.
      call.on_late_end = [store, lent, seconds_since_start](const ToolCall& ran,
                                                            const CallResult& late) {
        CallResult recorded = late;
        (void)finish_with_change(*store, ran, recorded, seconds_since_start(), lent.get());
      };
      CallResult out = next(call);
      call.on_late_end = nullptr;
      if (call.ends_late) {
        // What the caller was told goes in the audit trail beside it.
        call.audited = store->audit(audit_record(call, out, seconds_since_start())).ok();
        return out;
      }
      call.audited = finish_with_change(*store, call, out, seconds_since_start(), lent.get()).ok();
      return out;
    };
  };
}

}  // namespace toolmux::stages
