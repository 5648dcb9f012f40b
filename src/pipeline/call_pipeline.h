// The tools/call pipeline: every call, whichever tool and provider it reaches,
// runs through the same chain of small, named stages, one file each in
// src/pipeline/ (a stage is a function from the next handler to a handler:
// src/pipeline/call.h), composed in this one place, by group:
//
//   around:  record -> outcome_meta -> after_hook
//   request: unwrap_call_tool -> resolve_tool -> authorize
//   handler: check_arguments -> before_hook -> learn_from_use -> replay ->
//            confirm -> reauthorize -> verify_confirmation -> journal ->
//            deadline -> call_middleware -> catch_tool_exceptions -> invoke
//   result:  check_result -> redact_result -> spotlight -> limit_result
//            (in the order they see the answer)
//
// so a call runs record, outcome_meta, after_hook, unwrap_call_tool,
// resolve_tool, authorize, limit_result, spotlight, redact_result,
// check_result, check_arguments, before_hook, learn_from_use, replay, confirm,
// reauthorize, verify_confirmation, journal, deadline, call_middleware,
// catch_tool_exceptions, invoke, and
// its answer comes back the other way:
// check_result judges what the tool returned, as it returned it;
// redact_result then replaces secrets (and the personal data the tool's spec
// names), before anything can cut a secret in two or store it; spotlight
// marks an untrusted tool's text as data before
// limit_result cuts or offloads it, so that toolmux's own truncation and
// offload notices stay outside the markers (a cut may drop the closing
// marker; the notice after it says the text was cut) and a stored result
// keeps them; outcome_meta names the outcome of every error result in
// _meta, and record sees the final answer. before_hook, call_middleware and
// after_hook run the embedding program's hooks (src/pipeline/call_hooks.h).
// Failures of the tool (bad arguments, a throw, a timeout, a broken result, a
// denial) become isError results; the only protocol errors are an unknown
// tool name, when the policy says so, and a chain composed out of order (an
// internal error).
//
// This header is what the server needs: build_call_pipeline, the call types,
// RunningHandlers and reached_tool.
#pragma once

#include <memory>

#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/pipeline/call.h"
#include "src/pipeline/call_journal.h"
#include "src/pipeline/confirm.h"
#include "src/pipeline/reauthorize.h"
#include "src/pipeline/resolve_tool.h"
#include "src/pipeline/running_handlers.h"
#include "src/store/lazy_result_store.h"

namespace toolmux {

// The pipeline every tools/call goes through. `logger` and `metrics` must
// outlive it; `running` counts the handlers it starts; offloaded results go to
// `results` (null: nothing is offloaded); calls are journaled and audited in
// `journal`, where confirmations are spent too (null: neither, and spent
// confirmations are kept in this pipeline's memory); a call that waited for a
// human's confirmation is authorized again by the catalog `serving` gives then
// (null: not again).
CallHandler build_call_pipeline(Logger& logger, Metrics& metrics,
                                const std::shared_ptr<RunningHandlers>& running,
                                std::shared_ptr<LazyResultStore> results,
                                std::shared_ptr<const CallJournal> journal = nullptr,
                                stages::CatalogSource serving = nullptr,
                                Approvers approvers = Approvers::local_user);

}  // namespace toolmux
