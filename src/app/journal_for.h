// The journal of mutations and the audit trail `toolmux serve` runs with
// (src/store/journal_store.h, src/pipeline/call_journal.h).
#pragma once

#include <memory>

#include "src/assembly/serve_options.h"
#include "src/base/logger.h"
#include "src/pipeline/call_journal.h"

namespace toolmux {

// Opens the journal in the data directory, on a thread of its own (the
// client's first answers do not wait for it; what needs it does), unless
// serve runs with
// --no-journal (then a journal with no store: calls are neither journaled nor
// audited, and a warning says so). Each call an earlier process left
// interrupted is logged as a warning ("call_interrupted": call id, tool,
// principal, approver, when it started); none is re-run. When the store
// cannot be opened an error says why, and calls that would be journaled are
// refused while this process runs.
std::shared_ptr<const CallJournal> journal_for(const ServeOptions& options, Logger& logger);

}  // namespace toolmux
