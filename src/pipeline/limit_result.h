// The limit_result stage (result): the catalog's result limits applied to the
// whole answer next returns (src/pipeline/result_limiter.h): text, image and
// audio data and embedded resources over the offload threshold go to
// `results` (a notice with a result id stays; null or failing, nothing is
// stored and a warning is logged to the client), text over the character
// limit is cut with a marker, and what one response carries stays within
// max_response_bytes. Sets bytes_produced (before the limits), truncated and
// offloaded. A cancelled answer and read_tool_result's pages (bounded
// already) pass unlimited. Needs `tool` (resolve_tool before it), else
// CallResult::out_of_order().
#pragma once

#include <memory>

#include "src/pipeline/call.h"
#include "src/store/lazy_result_store.h"

namespace toolmux::stages {

CallStage limit_result(std::shared_ptr<LazyResultStore> results);

}  // namespace toolmux::stages
