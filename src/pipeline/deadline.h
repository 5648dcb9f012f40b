// The deadline stage (handler): runs the rest of the chain on a thread of its
// own (call_threads()) and returns when that finishes, the call is cancelled
// (a cancelled answer) or aborted (stopped: toolmux is exiting), or the tool's
// timeout, counted from when the call was received, passes (timed_out, "timed
// out after N ms"; an answer that comes after the deadline is late too). It
// sets the call's deadline on its CallControl first. An abandoned run is told
// to stop through its context and its result dropped; `running` counts it
// until it has really stopped, and it keeps the call's place. When no thread
// can be had, the call is answered stopped and next is not called. Needs
// `tool` (resolve_tool before it), else CallResult::out_of_order().
#pragma once

#include <memory>

#include "src/pipeline/call.h"
#include "src/pipeline/running_handlers.h"

namespace toolmux::stages {

CallStage deadline(const std::shared_ptr<RunningHandlers>& running);

}  // namespace toolmux::stages
