// The one owner of a tools/call below the protocol layer. McpServer::call_tool
// reads the request (its name, arguments and _meta, a 2026-07-28 request's
// questions and answers) into a CallRequest and hands it here; from then on
// the runner alone takes the call through its steps, in this order:
//
//   begin    the request id is registered with the session (Session::begin_call),
//            which is what a cancellation finds; an id already in flight is refused
//   admit    CallAdmission gives it a place now, a place later, or refuses it (busy)
//   run      on the thread that delivered it (it carries the call) or on a call
//            thread (call_threads(): the one hand-off, when there is one)
//   pipeline the stages of src/pipeline/call_pipeline.h, then the tool
//   reply    the result, the call's questions (input required), a JSON-RPC error,
//            or nothing for a cancelled call; for a call that became a task
//            (src/pipeline/tasks.h), the task was the reply, and the result
//            is the task's
//
// Every way out, a refusal and a drop from the queue included, replies (or
// stays silent for a cancelled call) and ends the request with the session
// (Session::end_call) exactly once. A call that does not run is logged
// ("call_not_run") and counted as a call of its tool, except a refusal, which
// CallAdmission counts.
//
// Whether the delivering thread may carry the call (Carrier, from the
// transport): a connection that waits for the answer anyway (Carrier::carry)
// carries a call unless it may need its client while it runs (it asked for
// progress, or the client may be asked a question): what it sends then would
// wait for the call's end. The stdio reader (Carrier::reader) carries only a
// call to a tool whose spec says runs_on_reader and that no policy.confirm
// rule makes a human confirm: the reader must be free to read the answer. In
// either case only when a place is free at once; a call that waited in the
// queue goes to a call thread, and is judged by the catalog serving when it
// starts (a write freeze that came meanwhile refuses it).
//
// Thread-safe; run() may be called from any thread. The runner must outlive
// the CallAdmission's close() and every call it started.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "src/assembly/tool_catalog.h"
#include "src/base/jsonrpc_error.h"
#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/base/trace.h"
#include "src/base/untrusted_json.h"
#include "src/pipeline/call.h"
#include "src/pipeline/tasks.h"
#include "src/session/call_admission.h"
#include "src/session/call_context.h"
#include "src/session/input_exchange.h"
#include "src/session/session.h"
#include "transports/server_transport.h"

namespace toolmux {

// A tools/call as the protocol layer read it.
struct CallRequest {
  nlohmann::json id;
  std::string name;  // as the client sent it: may be an alias
  // Moved out of the message (a large message's arguments are held once),
  // with the boundary's violations inside them, which the argument check reports.
  ParsedJson arguments;
  nlohmann::json progress_token;  // _meta progressToken; null = none
  std::string idempotency_key;    // _meta "io.toolmux/idempotencyKey"; "" = none
  std::string reason;             // _meta "io.toolmux/reason"; "" = none
  // A 2026-07-28 request's questions and answers (src/session/input_exchange.h);
  // null for a legacy session's call.
  std::shared_ptr<InputExchange> exchange;
  // What the protocol layer refused in it (a bad _meta field, a requestState
  // that does not open): answered with this error once the id is registered,
  // so that an id already in flight is told so instead.
  std::optional<JsonRpcError> invalid;
  // The W3C trace the call continues (its _meta's, else its HTTP headers');
  // read only while tracing is on (src/base/trace.h).
  std::optional<TraceContext> trace_parent;
};

class CallRunner {
 public:
  // `pipeline` answers an admitted call (build_call_pipeline); `catalog` is
  // the catalog serving now; `unknown_tool_timeout` is the deadline of a call
  // that reaches no tool (it is answered at once, all the same); `tasks`
  // links the calls that may become tasks (null: none may).
  CallRunner(CallHandler pipeline, CallAdmission& admission,
             std::function<std::shared_ptr<const Catalog>()> catalog,
             std::chrono::milliseconds unknown_tool_timeout, Logger& logger, Metrics& metrics,
             Tasks* tasks = nullptr);
  CallRunner(const CallRunner&) = delete;
  CallRunner& operator=(const CallRunner&) = delete;

  // Takes `request` of `session` through begin, admit, run, pipeline and reply.
  // Returns once the call is answered when this thread carries it, else once
  // it was handed to a call thread, queued or refused.
  void run(CallRequest request, const std::shared_ptr<Session>& session, Carrier carrier);

 private:
  struct Admitted;  // what the admit step hands to run and to drop

  // Whether the delivering thread may carry a call to `reached` (null: no tool).
  static bool may_carry(Carrier carrier, const CallRequest& request, const Session& session,
                        const Catalog& catalog, const RegisteredTool* reached);
  // The run step: on this thread when `here`, else on a call thread.
  void start(ToolCall call, const std::shared_ptr<Admitted>& admitted, bool here);
  // The pipeline and the reply.
  void answer(ToolCall& call, const Admitted& admitted);
  // The reply of a call that left the queue without running.
  void drop(const Admitted& admitted, const std::string& busy);
  // Logs and counts a call that ended without running: `outcome` is
  // "refused" (counted by CallAdmission, not here) or a CallOutcome's name.
  void record_unrun(const Session& session, const std::string& tool, std::string_view outcome,
                    const std::string& reason);

  CallHandler pipeline_;
  CallAdmission& admission_;
  std::function<std::shared_ptr<const Catalog>()> catalog_;
  std::chrono::milliseconds unknown_tool_timeout_;
  Logger& logger_;
  Metrics& metrics_;
  Tasks* tasks_;
};

}  // namespace toolmux
