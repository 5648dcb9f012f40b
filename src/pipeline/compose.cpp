#include "src/pipeline/compose.h"

#include <utility>

namespace toolmux {

CallHandler compose(const std::vector<CallStage>& stages, CallHandler terminal) {
  CallHandler handler = std::move(terminal);
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) handler = (*it)(std::move(handler));
  return handler;
}

CallHandler compose(const CallChain& chain, CallHandler terminal) {
  std::vector<CallStage> stages;
  stages.reserve(chain.around.size() + chain.request.size() + chain.result.size() +
                 chain.handler.size());
  stages.insert(stages.end(), chain.around.begin(), chain.around.end());
  stages.insert(stages.end(), chain.request.begin(), chain.request.end());
  // The first result stage sees the handler's answer first: it is innermost.
  stages.insert(stages.end(), chain.result.rbegin(), chain.result.rend());
  stages.insert(stages.end(), chain.handler.begin(), chain.handler.end());
  return compose(stages, std::move(terminal));
}

}  // namespace toolmux
