// The verify_confirmation stage (handler group, the last check before the
// journal and the tool): a call the operator's policy guards runs only with a
// confirmation that exists, was accepted, belongs to this invocation (the
// same tool and validated arguments) and to the same principal, and carries an
// approver and a rationale within ConfirmPolicy's bounds. It decides from the
// policy again rather than trusting that the confirm stage ran, so a chain
// composed without it, or a call whose arguments changed after it, is denied
// instead of running unconfirmed.
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage verify_confirmation();

}  // namespace toolmux::stages
