#include "src/pipeline/compose.h"

#include <utility>

#include "src/base/trace.h"

namespace toolmux {

namespace {

// While tracing is on, a span around what follows in the chain: a stage
// group's (docs/traces.md). Off, one branch.
CallStage traced(const char* name) {
  return [name](CallHandler next) -> CallHandler {
    return [name, next = std::move(next)](ToolCall& call) {
      if (!tracing_on()) return next(call);
      Span span = Span::start(name, SpanKind::internal);
      SpanScope scope(span.context());
      return next(call);
    };
  };
}

// The tool's own span: the handler the stages end in.
CallHandler traced_tool(CallHandler terminal) {
  return [terminal = std::move(terminal)](ToolCall& call) {
    if (!tracing_on()) return terminal(call);
    const std::string tool = call.tool ? call.tool->spec.name : call.requested_name;
    Span span = Span::start("execute_tool " + tool, SpanKind::internal);
    span.set("gen_ai.operation.name", std::string("execute_tool"));
    span.set("gen_ai.tool.name", tool);
    SpanScope scope(span.context());
    CallResult out = terminal(call);
    if (out.outcome != CallOutcome::ok) span.set_error(call_outcome_name(out.outcome));
    return out;
  };
}

}  // namespace

CallHandler compose(const std::vector<CallStage>& stages, CallHandler terminal) {
  CallHandler handler = std::move(terminal);
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) handler = (*it)(std::move(handler));
  return handler;
}

CallHandler compose(const CallChain& chain, CallHandler terminal) {
  std::vector<CallStage> stages;
  stages.reserve(chain.around.size() + chain.request.size() + chain.result.size() +
                 chain.handler.size() + 4);
  // Each group opens a span that lasts until its last stage has the answer back.
  stages.push_back(traced("stages around"));
  stages.insert(stages.end(), chain.around.begin(), chain.around.end());
  stages.push_back(traced("stages request"));
  stages.insert(stages.end(), chain.request.begin(), chain.request.end());
  // The first result stage sees the handler's answer first: it is innermost.
  stages.push_back(traced("stages result"));
  stages.insert(stages.end(), chain.result.rbegin(), chain.result.rend());
  stages.push_back(traced("stages handler"));
  stages.insert(stages.end(), chain.handler.begin(), chain.handler.end());
  return compose(stages, traced_tool(std::move(terminal)));
}

}  // namespace toolmux
