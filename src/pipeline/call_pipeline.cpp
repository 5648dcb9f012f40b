#include "src/pipeline/call_pipeline.h"

#include <utility>

#include "src/pipeline/authorize.h"
#include "src/pipeline/call_hooks.h"
#include "src/pipeline/catch_tool_exceptions.h"
#include "src/pipeline/check_arguments.h"
#include "src/pipeline/check_result.h"
#include "src/pipeline/compose.h"
#include "src/pipeline/confirm.h"
#include "src/pipeline/deadline.h"
#include "src/pipeline/invoke.h"
#include "src/pipeline/journal.h"
#include "src/pipeline/learn_from_use.h"
#include "src/pipeline/limit_result.h"
#include "src/pipeline/outcome_meta.h"
#include "src/pipeline/reauthorize.h"
#include "src/pipeline/record.h"
#include "src/pipeline/redact_result.h"
#include "src/pipeline/replay.h"
#include "src/pipeline/spotlight.h"
#include "src/pipeline/unwrap_call_tool.h"
#include "src/pipeline/verify_confirmation.h"

namespace toolmux {

CallHandler build_call_pipeline(Logger& logger, Metrics& metrics,
                                const std::shared_ptr<RunningHandlers>& running,
                                std::shared_ptr<LazyResultStore> results,
                                std::shared_ptr<const CallJournal> journal,
                                stages::CatalogSource serving, Approvers approvers) {
  if (!journal) journal = std::make_shared<const CallJournal>();
  CallChain chain;
  // Around: sees every call whole, however it ends; the embedding program's
  // after hook sees it too (and a throw of it becomes the answer); every
  // error result gets its outcome in _meta before record sees the final answer.
  chain.around = {stages::record(logger, metrics, journal), stages::outcome_meta(),
                  stages::after_hook()};
  // Request: which tool the call reaches and whether the caller may call it.
  // Their answers are short (a name, clipped, and a rule), so they come before
  // the result stages.
  chain.request = {stages::unwrap_call_tool(), stages::resolve_tool(), stages::authorize()};
  // Handler: the tool's own contract and run: its arguments checked against
  // its schema (an answer that can be as long as the arguments, hence inside
  // the result stages' limits); a repeat answered from the journal; a guarded
  // call confirmed by a human, then authorized again by the catalog serving
  // once the answer came (a freeze may have come while the human took their
  // time), and its confirmation checked again at the last moment and spent; a
  // mutation's intent journaled; then the tool run on a thread under its
  // deadline, its exceptions caught. A call that got past its
  // checks teaches tool_search (a search, or a click on one), with what
  // tool_search answered before the result stages cut or stored it. The
  // embedding program's before hook decides on the checked call before
  // anything else does (what it rewrites is checked again); its middleware
  // wraps the tool itself, on the tool's thread, under its deadline.
  chain.handler = {stages::check_arguments(),
                   stages::before_hook(),
                   stages::learn_from_use(),
                   stages::replay(journal),
                   stages::confirm(approvers),
                   stages::reauthorize(std::move(serving)),
                   stages::verify_confirmation(journal),
                   stages::journal(journal),
                   stages::deadline(running),
                   stages::call_middleware(),
                   stages::catch_tool_exceptions()};
  // Result: what the handler answered, judged first (as the tool gave it),
  // then its secrets redacted, an untrusted tool's text marked as data, and
  // last cut or offloaded: a secret is never cut in two or stored, and
  // toolmux's notices stay outside the markers.
  chain.result = {stages::check_result(), stages::redact_result(), stages::spotlight(),
                  stages::limit_result(std::move(results))};
  return compose(chain, invoke_tool());
}

}  // namespace toolmux
