// The confirm stage (handler group, after check_arguments): a call the
// operator's policy guards (policy.confirm: by default destructive and
// remote_mutation tools) does not run until a human confirms this one
// invocation. The client is asked with elicitation/create: a legacy-era client
// gets the request while the call waits (at most policy.confirm.timeout, then
// the tool's own timeout starts again); a 2026-07-28 client gets it in an
// input_required result and retries the call with the answer (MRTR). The
// question shows the action, the tool's class, the validated arguments
// (redacted), the reason the caller gave and the caller, and asks for a yes
// and a rationale. The approver is never a name typed into the answer: it is
// the identity the server knows (see Approvers).
//
// A decline, a cancel, an answer without a yes or a rationale, a
// client that did not declare elicitation or could not be asked: the call
// is denied (an isError result naming the policy rule) and the tool does not
// run. Sets call.confirmation and, on a yes, call.confirmed, with the
// answer's id when it came in a retry (ClientAnswer::answer_id), which
// verify_confirmation spends. The question's key among a 2026-07-28 request's
// questions is kConfirmationKey (src/session/input_exchange.h), which refuses
// an answer to it that no question of toolmux asked for.
#pragma once

#include "src/pipeline/call.h"
#include "src/session/input_exchange.h"

namespace toolmux {

// Who approves a confirmation, by what the server knows of its callers.
enum class Approvers {
  // stdio: the caller is the person at this machine, whom the operating
  // system knows: the approver is the login name of the user toolmux runs as
  // (local_user_name()); no name is asked, and none typed counts.
  local_user,
  // HTTP with bearer tokens or OAuth: the caller's authenticated principal
  // approves (the token's holder); no name is asked, and none typed counts.
  authenticated,
  // HTTP without authentication: nobody can be told apart, so no guarded
  // call runs (the caller is told to use tokens or OAuth).
  nobody,
};

// The login name of the user this process runs as (its effective user id's
// passwd entry), or "uid N" when the system has no name for it.
std::string local_user_name();

}  // namespace toolmux

namespace toolmux::stages {

CallStage confirm(Approvers approvers = Approvers::local_user);

}  // namespace toolmux::stages
