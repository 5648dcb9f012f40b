// The deadline stage (handler). It sets the call's deadline on its
// CallControl first: the tool's timeout, counted from when the call was
// received. A tool whose spec says returns_by_deadline runs the rest of the
// chain on this thread; what it answers after the deadline is timed_out, and
// a call cancelled or aborted meanwhile ends so as below. Any other tool runs
// the rest of the chain on a thread of its own (call_threads()), and the
// stage returns when that finishes, the call is cancelled
// (a cancelled answer) or aborted (stopped: toolmux is exiting), or the
// deadline passes (timed_out, "timed out after N ms"; an answer that comes
// after the deadline is late too). An abandoned run is told
// to stop through its context and its answer goes to nobody; `running` counts
// it until it has really stopped, and it keeps the call's place. What the
// tool came to is recorded all the same: when a run it stopped waiting for
// ends, or when the tool's answer is not the one its caller gets (it came
// late, or the call was cancelled meanwhile), the stage calls the call's
// on_late_end with the tool's own answer and sets ends_late. When no thread
// can be had, the call is answered stopped and next is not called. Needs
// `tool` (resolve_tool before it), else CallResult::out_of_order().
#pragma once

#include <memory>

#include "src/pipeline/call.h"
#include "src/pipeline/running_handlers.h"

namespace toolmux::stages {

CallStage deadline(const std::shared_ptr<RunningHandlers>& running);

}  // namespace toolmux::stages
