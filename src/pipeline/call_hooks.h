// The stages that run the hooks of a program that embeds toolmux
// (CallHooks, src/assembly/native.h; the catalog the call runs against holds
// them), one at each fixed point of the chain (src/pipeline/call_pipeline.h):
//
// - before_hook (handler, right after check_arguments): gives the hook the
//   checked call; refuse answers a denied isError result and stops the call;
//   rewrite checks the new arguments as check_arguments does the client's
//   (the operator's fixed values, "unknownArguments", the input schema and
//   its defaults) and passes the call on with them, or answers
//   invalid_arguments. Needs `tool` and `arguments`, else out_of_order.
// - call_middleware (handler, right before catch_tool_exceptions: on the
//   tool's thread, under its deadline): the middleware wraps the rest of the
//   chain; its result replaces the tool's when the tool answered (ok or
//   tool_error); a crash, a question or a cancellation stands. Needs `tool`.
// - after_hook (around, inside record and outcome_meta: its own error gets
//   its outcome in _meta): gives the hook the call's duration, outcome,
//   sizes, truncation and offload, as record then audits them. Runs for
//   every call.
//
// A hook that throws is answered with a crashed isError result naming the
// hook ("Tool \"x\": the before hook failed: what"); the server goes on.
// Exceptions from the tool itself are catch_tool_exceptions' to catch.
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage before_hook();
CallStage call_middleware();
CallStage after_hook();

}  // namespace toolmux::stages
