// The journal of mutations and the audit trail `toolmux serve` runs with
// (src/store/journal_store.h, src/pipeline/call_journal.h).
#pragma once

#include <memory>
#include <string>

#include "src/assembly/serve_options.h"
#include "src/base/logger.h"
#include "src/pipeline/call_journal.h"
#include "src/store/pg_store.h"

namespace toolmux {

// Opens the journal in the data directory, or in `shared` when given (serve
// --store postgresql: every instance's journal and audit trail in one
// database, this one's entries and records marked with `instance_id`), on a
// thread of its own (the
// client's first answers do not wait for it; what needs it does), unless
// serve runs with
// --no-journal (then a journal with no store: calls are neither journaled nor
// audited, and a warning says so). Each call an earlier process left
// interrupted is logged as a warning ("call_interrupted": call id, tool,
// principal, approver, when it started); none is re-run. When the store
// cannot be opened an error says why (where it is: a folder, or PostgreSQL's
// host, port and database), and calls that would be journaled are
// refused while this process runs.
std::shared_ptr<const CallJournal> journal_for(const ServeOptions& options, Logger& logger,
                                               std::shared_ptr<PgStore> shared = nullptr,
                                               const std::string& instance_id = {});

}  // namespace toolmux
