// The verify_confirmation stage (handler group, the last check before the
// journal and the tool): a call the operator's policy guards runs only with a
// confirmation that exists, was accepted, belongs to this invocation (the
// same tool and validated arguments) and to the same principal, and carries an
// approver and a rationale within ConfirmPolicy's bounds. It decides from the
// policy again rather than trusting that the confirm stage ran, so a chain
// composed without it, or a call whose arguments changed after it, is denied
// instead of running unconfirmed.
//
// Then it spends the confirmation: an answer that came in a 2026-07-28 retry
// (Confirmation::answer_id) lets its tool run once. The same retry sent again
// (the same requestState and answer), through this process or any other that
// shares `journal`'s store, is denied, saying that the confirmation was used
// already; when the store cannot say whether it was, the call does not run
// either (stopped, naming why).
#pragma once

#include <memory>

#include "src/pipeline/call.h"
#include "src/pipeline/call_journal.h"

namespace toolmux::stages {

CallStage verify_confirmation(std::shared_ptr<const CallJournal> journal);

}  // namespace toolmux::stages
