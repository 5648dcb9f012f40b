// The replay stage (handler group, after check_arguments, before confirm): a
// call to a tool that is not read_only, carrying an idempotency key (_meta
// "io.toolmux/idempotencyKey") that its principal used before, is answered
// from the journal instead of running again:
// - the same tool and validated arguments, with an outcome: the recorded
//   result, marked _meta "io.toolmux/replayed": true, with no confirmation
//   asked and nothing run;
// - other arguments or another tool: denied (a key names one call);
// - still running: denied (retry when it has ended);
// - ended without finishing (interrupted by toolmux stopping, timed out,
//   cancelled, crashed, or a 2026-07-28 call that asked its client): it runs
//   again, because the client asked again (never by itself), under the same
//   call id so that the tool can recognise its earlier attempt; a guarded one
//   is confirmed again first.
// Without a journal the key is not used (the call runs as any other).
#pragma once

#include <memory>

#include "src/pipeline/call.h"
#include "src/pipeline/call_journal.h"

namespace toolmux::stages {

CallStage replay(std::shared_ptr<const CallJournal> journal);

}  // namespace toolmux::stages
