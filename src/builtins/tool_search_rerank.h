// tool_search asking the client's model to order its candidates (issue 15,
// "the client's model"): one sampling/createMessage request, built and read
// by catalog/search_rerank.h, sent through the call's CallContext.
//
// Nothing is sent unless the client declared the sampling capability (a
// legacy client at initialize, a 2026-07-28 client in the request's own
// capabilities). A legacy client's answer is awaited at most the settings'
// timeout, and never past the call's deadline less a margin, so that the
// search can still answer in its own order: a refusal, an error, a timeout
// or an answer that names no order all come back as an outcome without an
// order, never as an error of the call. A 2026-07-28 client gets the question
// in an input_required result; the retry runs the search again, which asks
// the same question (the search and the request built from it are
// deterministic) and gets the answer at once.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/search_rerank.h"
#include "catalog/tool.h"
#include "src/builtins/tool_search.h"

namespace toolmux {

// Whether the client of `context` declared the sampling capability.
bool client_declares_sampling(const CallContext& context);

// Asks the client's model to choose among `tools` (published tools, best
// first) for `query`. Called on the call's own thread; returns once the
// client answered, the wait ended or (2026-07-28) the question was put aside
// for the input_required result, when context.cancelled() is true and what
// the handler returns is discarded.
RerankOutcome ask_client_to_rerank(CallContext& context, const SearchRerankSettings& settings,
                                   const ToolSearchQuery& query,
                                   const std::vector<const nlohmann::json*>& tools);

}  // namespace toolmux
