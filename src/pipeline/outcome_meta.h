// The outcome_meta stage (around, inside record): every error result says how
// its call ended in _meta, {"io.toolmux/outcome": "<outcome>"}
// (call_outcome_name: tool_error, timed_out, denied, invalid_arguments,
// crashed, bad_result, stopped, unknown_tool, ...), so that a client can
// branch on it instead of reading prose. A result that is not an error never
// carries the key, whatever the tool put there. Answers that are not results
// (cancelled, input_required, a JSON-RPC error) pass unchanged.
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage outcome_meta();

}  // namespace toolmux::stages
