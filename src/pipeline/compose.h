// Composing stages into one handler. compose(stages, terminal) wraps
// `terminal` in `stages`, the first stage outermost: a call goes through them
// in the order listed and their results come back in the reverse order.
//
// compose(chain, terminal) does the same for stages grouped by what they work
// on, each group listed in the order its stages act: `around` sees the call
// and its final answer; `request` decides on the call before anything runs;
// `handler` runs the tool; `result` works on what the handler answered, on its
// way back, the first listed seeing it first. The chain is
// around, request, result (reversed), handler, terminal.
//
// Pure functions; the handler returned holds the stages and `terminal`.
#pragma once

#include <vector>

#include "src/pipeline/call.h"

namespace toolmux {

CallHandler compose(const std::vector<CallStage>& stages, CallHandler terminal);

struct CallChain {
  std::vector<CallStage> around;
  std::vector<CallStage> request;
  std::vector<CallStage> handler;
  std::vector<CallStage> result;
};

CallHandler compose(const CallChain& chain, CallHandler terminal);

}  // namespace toolmux
