// The record stage (around the whole chain): one record per call in the
// operator's log (call id, tool, owner, session, duration, outcome, bytes
// produced and returned, truncated, offloaded), and at debug level a
// tool_call_started record before the call runs (call id, tool as requested,
// redacted, owner, session), the call counted in the metrics, and a
// notifications/message to the client (debug for successes, info for error
// answers, warning for broken calls; none for a cancelled call). Argument
// values never reach either. Passes every call on and returns next's answer
// unchanged. It also appends the call's audit record to the journal's store
// (src/store/journal_store.h), unless the journal stage wrote it with the
// call's outcome. `logger` and `metrics` must outlive the handler; both are
// thread-safe.
#pragma once

#include <memory>

#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/pipeline/call.h"
#include "src/pipeline/call_journal.h"

namespace toolmux::stages {

// The tool label /metrics counts a call that reached no tool under.
inline constexpr const char* kUnknownToolLabel = "(unknown tool)";

CallStage record(Logger& logger, Metrics& metrics,
                 std::shared_ptr<const CallJournal> journal = nullptr);

}  // namespace toolmux::stages
