// The tools/call pipeline: every call, whichever tool and provider it reaches,
// runs through the same chain of small, named stages. A stage is a function
// from the next handler to a handler (middleware), so each one is testable
// alone, and the chain is composed in one place: build_call_pipeline().
//
//   record -> resolve_tool -> authorize -> limit_result -> check_result
//     -> check_arguments -> deadline -> catch_tool_exceptions -> invoke
//
// Stages further out see the result later: check_result judges what the tool
// returned before limit_result cuts or offloads it, and record sees the final
// answer. Failures of the tool (bad arguments, a throw, a timeout, a broken
// result, a denial) become isError results; the only protocol error a stage
// produces is an unknown tool name, when the policy says so.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "catalog/tool_registry.h"
#include "src/assembly/tool_catalog.h"
#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/base/untrusted_json.h"
#include "src/session/call_admission.h"
#include "src/session/session.h"
#include "src/store/lazy_result_store.h"

namespace toolmux {

enum class CallOutcome {
  ok,
  tool_error,
  unknown_tool,
  denied,
  invalid_arguments,
  timed_out,
  cancelled,
  crashed,
  bad_result,
  stopped  // toolmux stopped the call (it exits), or had no thread to run it on
};
std::string_view call_outcome_name(CallOutcome outcome);

struct ToolCall {
  std::string session_id;      // owner of what the call stores
  std::string session_label;   // for logs (the id itself is a secret)
  std::string principal;       // whom the access rules apply to
  std::string requested_name;  // as the client sent it (may be an alias)
  // The catalog the call runs against; keeps `tool` alive for as long as any
  // thread of the call runs, even one abandoned after a timeout.
  std::shared_ptr<const Catalog> catalog;
  const RegisteredTool* tool = nullptr;  // set by resolve_tool
  ParsedJson raw_arguments;              // as read at the boundary
  nlohmann::json arguments;              // set by check_arguments
  std::shared_ptr<CallControl> control;  // cancellation and deadline
  std::shared_ptr<CallContext> context;  // progress, logging, cancelled() for the handler
  // When toolmux read the request: the tool's timeout counts from then, time
  // spent waiting for a place to run included.
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
  // The call's place among the running calls, held by every thread of the call
  // (an abandoned handler's too); null when the call was not admitted through one.
  std::shared_ptr<const CallPlace> place;
};

// The timeout of the tool a call of `requested_name` with `arguments` reaches
// (through aliases, and through call_tool to the tool it names), or nullopt
// when it reaches none. For the deadline of a call before it runs.
std::optional<std::chrono::milliseconds> tool_timeout(const Catalog& catalog,
                                                      const std::string& requested_name,
                                                      const nlohmann::json& arguments);

struct ProtocolError {
  int code = 0;
  std::string message;
  nlohmann::json data;
};

struct CallResult {
  ToolResult result;
  CallOutcome outcome = CallOutcome::ok;
  // When set, the call is answered with this JSON-RPC error instead of `result`.
  std::optional<ProtocolError> protocol_error;
  // What the tool said, before limits: text, binary data and structuredContent
  // bytes (result_payload_bytes).
  std::size_t bytes_produced = 0;
  bool truncated = false;
  bool offloaded = false;
};

using CallHandler = std::function<CallResult(ToolCall&)>;
using CallStage = std::function<CallHandler(CallHandler next)>;

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

// Wraps `terminal` in `stages`, the first stage outermost.
CallHandler compose(const std::vector<CallStage>& stages, CallHandler terminal);

namespace stages {
// Writes one record per call to the operator's log (tool, owner, session,
// duration, outcome, bytes produced and returned, truncated, offloaded),
// counts it in `metrics`, and sends the client a notifications/message (debug
// for successes, info for error answers, warning for broken calls).
CallStage record(Logger& logger, Metrics& metrics);
// Finds the tool by name or alias. An unknown name is answered with the
// closest names: a -32602 error, or an isError result if the policy says so.
CallStage resolve_tool();
// The operator's access rules for the caller's principal; a denial is an
// isError result naming the rule.
CallStage authorize();
// Result limits on the whole result (src/pipeline/result_limiter.h): text, image and
// audio data and embedded resources over the offload threshold go to the
// result store (a notice with a result id stays), text over the character
// limit is cut with a marker, and what one response carries stays within
// max_response_bytes. read_tool_result's pages are exempt: they are bounded
// already.
CallStage limit_result(std::shared_ptr<LazyResultStore> results);
// The result boundary: content blocks are well-formed, text is valid UTF-8
// (else an error that carries the bytes, base64), structuredContent is
// present, bounded in depth and matches the tool's outputSchema when it
// declares one.
CallStage check_result();
// The JSON boundary, then the operator's argument policy (argument aliases,
// defaults, fixed values), then the input schema; a failure is an isError
// result naming the argument and the rule, and the tool does not run.
CallStage check_arguments();
// Runs the rest of the chain on its own thread and returns when it finishes,
// the call is cancelled or aborted, or the tool's timeout, counted from when
// the call was received, passes ("timed out after N ms"). An abandoned run is
// told to stop through its context and its result dropped; `running` counts it
// until it has really stopped, and it keeps the call's place. When no thread
// can be had, the call is answered with an error and the tool does not run.
CallStage deadline(const std::shared_ptr<RunningHandlers>& running);
// The one place where exceptions from tool code are caught.
CallStage catch_tool_exceptions();
}  // namespace stages

// Calls the tool's handler.
CallHandler invoke_tool();

// The pipeline every tools/call goes through.
CallHandler build_call_pipeline(Logger& logger, Metrics& metrics,
                                const std::shared_ptr<RunningHandlers>& running,
                                std::shared_ptr<LazyResultStore> results);

}  // namespace toolmux
