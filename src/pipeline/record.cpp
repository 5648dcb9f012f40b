#include "src/pipeline/record.h"

#include <chrono>
#include <cstdint>
#include <utility>

#include "src/base/redact.h"
#include "src/base/trace.h"
#include "src/pipeline/journal.h"
#include "src/pipeline/result_limiter.h"

namespace toolmux::stages {

namespace {

bool answered(CallOutcome outcome) {
  return outcome == CallOutcome::ok || outcome == CallOutcome::tool_error ||
         outcome == CallOutcome::cancelled || outcome == CallOutcome::input_required;
}

}  // namespace

CallStage record(Logger& logger, Metrics& metrics, std::shared_ptr<const CallJournal> journal) {
  return [&logger, &metrics, journal = std::move(journal)](CallHandler next) -> CallHandler {
    return [&logger, &metrics, journal, next = std::move(next)](ToolCall& call) {
      const auto start = std::chrono::steady_clock::now();
      // The started record, paired with the ended one by call_id (replay may
      // give the call its first run's id on the way: the ended one keeps this).
      const std::string call_id = call.call_id;
      // With tracing on, both records name the trace (docs/traces.md).
      const TraceContext* trace = current_trace();
      const std::string trace_id =
          trace ? hex_id(trace->trace_id.data(), trace->trace_id.size()) : std::string();
      if (logger.enabled(LogLevel::info)) {
        LogFields started;
        started.add("call_id", call_id)
            .add("tool", redact(call.requested_name))
            .add("owner", call.principal)
            .add("session", call.session_label);
        if (trace) started.add("trace_id", trace_id);
        logger.write_batched(LogLevel::info, "tool_call_started", started);
      }
      // Every call leaves an audit record: while none can be written or
      // kept (the store unreachable and its spool full), none runs.
      Status writable = journal && journal->ready() && journal->store()
                            ? journal->store()->writable()
                            : Status::ok_status();
      // A call that is not journaled (a read) whose tool came to something
      // other than what its caller was told (src/pipeline/deadline.h) gets a
      // second audit record when it ends; the journal stage replaces this for
      // a mutation.
      call.on_late_end = [journal, start](const ToolCall& ran, const CallResult& late) {
        if (!journal || !journal->ready() || !journal->store()) return;
        const double late_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        (void)journal->store()->audit(audit_record(ran, late, late_seconds));
      };
      CallResult out = writable.ok() ? next(call)
                                     : CallResult::stopped(
                                           "toolmux did not run the call: its audit trail "
                                           "cannot be written now: " +
                                           writable.message());
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::string tool = recorded_tool_name(call);
      // The names a client makes up are not series of their own: /metrics
      // stays bounded by the catalog, however many it sends.
      CallRecord record{call.tool ? tool : std::string(kUnknownToolLabel),
                        std::string(call_outcome_name(out.outcome)),
                        seconds,
                        out.bytes_produced,
                        result_payload_bytes(out.result),
                        out.truncated,
                        out.offloaded};
      metrics.record_call(record);
      if (journal && journal->store() && !call.audited) {
        if (Status audited = journal->store()->audit(audit_record(call, out, seconds));
            !audited.ok()) {
          logger.write(LogLevel::error, "audit_failed",
                       {{"tool", tool}, {"reason", audited.message()}});
        }
      }
      // A tool that answers with an error did its job; a call that broke
      // (bad arguments, a throw, a timeout, a bad result) deserves attention.
      const LogLevel record_level = answered(out.outcome) ? LogLevel::info : LogLevel::warning;
      if (logger.enabled(record_level)) {
        LogFields ended;
        if (trace) ended.add("trace_id", trace_id);
        logger.write_batched(record_level, "tool_call",
                             ended.add("call_id", call_id)
                                 .add("tool", tool)
                                 .add("owner", call.principal)
                                 .add("session", call.session_label)
                                 .add("outcome", record.outcome)
                                 .add_milliseconds("duration_ms", seconds * 1000.0)
                                 .add("bytes_produced", std::uint64_t{record.bytes_produced})
                                 .add("bytes_returned", std::uint64_t{record.bytes_returned})
                                 .add("truncated", record.truncated)
                                 .add("offloaded", record.offloaded));
      }
      if (out.outcome != CallOutcome::cancelled && out.outcome != CallOutcome::input_required &&
          call.context) {
        const LogLevel level = out.outcome == CallOutcome::ok           ? LogLevel::debug
                               : out.outcome == CallOutcome::tool_error ? LogLevel::info
                                                                        : LogLevel::warning;
        // Asked first: most clients take no debug messages, and the data is a tree.
        if (call.context->logs(level)) {
          call.context->log(level,
                            {{"event", "tool_call"}, {"tool", tool}, {"outcome", record.outcome}});
        }
      }
      return out;
    };
  };
}

}  // namespace toolmux::stages
