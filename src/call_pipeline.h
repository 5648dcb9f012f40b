// The tools/call pipeline: every call, whichever tool and provider it reaches,
// runs through the same chain of small, named stages. A stage is a function
// from the next handler to a handler (middleware), so each one is testable
// alone and the chain is composed in one place: build_call_pipeline().
//
//   record -> check_result -> check_arguments -> deadline -> catch_tool_exceptions -> invoke
//
// Failures of the tool (bad arguments, a throw, a timeout, a broken result)
// become isError results here; protocol errors (unknown tool, bad params) are
// the server's business and never reach the pipeline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "catalog/tool_registry.h"
#include "catalog/untrusted_json.h"
#include "src/logger.h"
#include "src/session.h"

namespace toolmux {

enum class CallOutcome {
  ok,
  tool_error,
  invalid_arguments,
  timed_out,
  cancelled,
  crashed,
  bad_result
};
std::string_view call_outcome_name(CallOutcome outcome);

struct ToolCall {
  std::string session_id;
  const RegisteredTool* tool = nullptr;  // resolved before the pipeline runs
  // Keeps `tool` alive for as long as any thread of the call runs, even one
  // abandoned after a timeout.
  std::shared_ptr<const ToolRegistry> registry;
  ParsedJson raw_arguments;              // as read at the boundary
  nlohmann::json arguments;              // set by check_arguments
  std::shared_ptr<CallControl> control;  // cancellation and deadline
  std::shared_ptr<CallContext> context;  // progress, logging, cancelled() for the handler
};

struct CallResult {
  ToolResult result;
  CallOutcome outcome = CallOutcome::ok;
};

using CallHandler = std::function<CallResult(ToolCall&)>;

// Counts tool handlers still running, including those the deadline stage
// stopped waiting for after a timeout or a cancellation, so that shutdown can
// wait for them to stop (a command tool kills its process group when told to).
// Thread-safe; shared with the handler threads, which may outlive the server.
class RunningHandlers {
 public:
  void enter();
  void leave();
  // True when none is running, waiting up to `timeout` for that.
  bool wait_until_idle(std::chrono::milliseconds timeout);

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t count_ = 0;
};
using CallStage = std::function<CallHandler(CallHandler next)>;

// Wraps `terminal` in `stages`, the first stage outermost.
CallHandler compose(const std::vector<CallStage>& stages, CallHandler terminal);

namespace stages {
// Writes one record per call to the operator's log (tool, session, duration,
// outcome, bytes returned) and a notifications/message to the client (debug for
// successes, info for error answers, warning for broken calls: bad arguments,
// a throw, a timeout, a bad result).
CallStage record(Logger& logger);
// The result boundary: text is valid UTF-8, structuredContent is present,
// bounded in depth and matches the tool's outputSchema when it declares one.
CallStage check_result();
// Runs check_arguments (catalog/argument_check.h); a failure is an isError
// result naming the argument and the rule, and the tool does not run.
CallStage check_arguments();
// Runs the rest of the chain on its own thread and returns when it finishes,
// the call is cancelled, or the tool's timeout passes ("timed out after N ms").
// An abandoned run is told to stop through its context and its result dropped;
// `running` counts it until it has really stopped.
CallStage deadline(const std::shared_ptr<RunningHandlers>& running);
// The one place where exceptions from tool code are caught.
CallStage catch_tool_exceptions();
}  // namespace stages

// Calls the tool's handler.
CallHandler invoke_tool();

// The pipeline every tools/call goes through.
CallHandler build_call_pipeline(Logger& logger, const std::shared_ptr<RunningHandlers>& running);

}  // namespace toolmux
