// The journal stage (handler group, just before the tool runs): a call to a
// tool that is not read_only is written down before it runs (its intent:
// call id, tool, class, a digest of its validated arguments, principal,
// session, approver, rationale, idempotency key), synced, and its outcome
// after, with its result (for replay) and its audit record in one atomic
// batch. If the intent cannot be written the tool does not run. A call still
// without an outcome when toolmux dies is found interrupted at the next start
// (src/store/journal_store.h) and never re-run by toolmux.
//
// With journaling off (serve --no-journal) calls pass through; while the
// journal is unavailable (it could not be opened) they do not run.
#pragma once

#include <memory>

#include "src/pipeline/call.h"
#include "src/pipeline/call_journal.h"

namespace toolmux::stages {

CallStage journal(std::shared_ptr<const CallJournal> journal);

// The audit record of `call`, answered with `out` after `seconds` (argument
// values redacted). Shared with the record stage.
AuditRecord audit_record(const ToolCall& call, const CallResult& out, double seconds);

}  // namespace toolmux::stages
