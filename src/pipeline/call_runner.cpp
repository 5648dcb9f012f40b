#include "src/pipeline/call_runner.h"

#include <atomic>
#include <thread>
#include <utility>

#include "src/base/elastic_threads.h"
#include "src/base/random_id.h"
#include "src/pipeline/resolve_tool.h"

namespace toolmux {

using nlohmann::json;

namespace {

void reply_error(Session& session, const json& id, const JsonRpcError& e) {
  session.send_related(jsonrpc::make_error(id, e.code, e.message, e.data), id);
}

// The call's outcome on its span: error.type for one that did not answer.
void end_call_span(Span& span, const CallResult& out) {
  if (!span.active()) return;
  span.set("toolmux.outcome", std::string(call_outcome_name(out.outcome)));
  span.set("toolmux.result.bytes_produced", static_cast<std::int64_t>(out.bytes_produced));
  span.set_flag("toolmux.result.truncated", out.truncated);
  span.set_flag("toolmux.result.offloaded", out.offloaded);
  const bool answered = out.outcome == CallOutcome::ok || out.outcome == CallOutcome::cancelled ||
                        out.outcome == CallOutcome::input_required;
  if (out.protocol_error) {
    span.set("rpc.jsonrpc.error_code", static_cast<std::int64_t>(out.protocol_error->code));
    span.set_error(std::to_string(out.protocol_error->code), out.protocol_error->message);
  } else if (!answered) {
    span.set_error(call_outcome_name(out.outcome));
  }
}

}  // namespace

// One admitted call, shared by its start and its drop (one of them runs).
struct CallRunner::Admitted {
  std::shared_ptr<Session> session;
  std::shared_ptr<SessionCallContext> context;
  std::shared_ptr<CallControl> control;
  json id;
  std::string name;  // as requested
  std::chrono::milliseconds timeout{};
  bool may_carry = false;
  // Only the submitting thread, inside CallAdmission::submit, sees it true:
  // a start then is a place given at once.
  std::atomic<bool> submitting{true};
  std::thread::id submitter = std::this_thread::get_id();
  std::shared_ptr<TaskRun> task;  // null: the call cannot become a task
  // While tracing is on: the trace the call continues, and when it arrived.
  std::optional<TraceContext> trace_parent;
  std::uint64_t received_ns = 0;
};

CallRunner::CallRunner(CallHandler pipeline, CallAdmission& admission,
                       std::function<std::shared_ptr<const Catalog>()> catalog,
                       std::chrono::milliseconds unknown_tool_timeout, Logger& logger,
                       Metrics& metrics, Tasks* tasks)
    : pipeline_(std::move(pipeline)),
      admission_(admission),
      catalog_(std::move(catalog)),
      unknown_tool_timeout_(unknown_tool_timeout),
      logger_(logger),
      metrics_(metrics),
      tasks_(tasks) {}

bool CallRunner::may_carry(Carrier carrier, const CallRequest& request, const Session& session,
                           const Catalog& catalog, const RegisteredTool* reached) {
  switch (carrier) {
    case Carrier::carry:
      return request.progress_token.is_null() && !session.client_may_be_asked();
    case Carrier::reader:
      return reached != nullptr && reached->spec.runs_on_reader &&
             !catalog.policy.confirm.rule_for(session.principal(), reached->spec.name,
                                              reached->side_effect);
    case Carrier::hand_off:
      return false;
  }
  return false;
}

void CallRunner::run(CallRequest request, const std::shared_ptr<Session>& session,
                     Carrier carrier) {
  // begin
  auto control = session->begin_call(request.id);
  if (!control) {
    session->send_related(duplicate_request_error(request.id), request.id);
    return;
  }
  if (request.invalid) {
    reply_error(*session, request.id, *request.invalid);
    session->end_call(request.id);
    return;
  }
  auto context =
      std::make_shared<SessionCallContext>(session, control, request.id, request.progress_token,
                                           "toolmux/" + request.name, std::move(request.exchange));
  ToolCall call;
  call.session_id = session->id();
  call.session_label = session->label();
  call.principal = session->principal();
  call.modern = session->request_meta() != nullptr;
  call.requested_name = request.name;
  call.catalog = catalog_();
  call.call_id = random_id(16);
  context->set_call_id(call.call_id);
  call.idempotency_key = std::move(request.idempotency_key);
  call.reason = std::move(request.reason);
  call.raw_arguments = std::move(request.arguments);
  call.control = control;
  call.context = context;
  // The tool's timeout counts from now: a call that waits for a place to run
  // is answered by then all the same.
  const RegisteredTool* reached =
      reached_tool(*call.catalog, request.name, call.raw_arguments.value);
  const auto timeout = reached ? reached->spec.timeout : unknown_tool_timeout_;
  control->set_deadline(call.received + timeout);
  // A tool that supports tasks: its call may become one when the client
  // negotiated them, and must when the tool requires it.
  std::shared_ptr<TaskRun> task;
  if (reached && reached->spec.task_support != TaskSupport::forbidden && tasks_) {
    if (tasks_negotiated(session->client_capabilities())) {
      task = tasks_->link(session, request.id, control, reached->spec.name);
      context->set_task(task);
    } else if (reached->spec.task_support == TaskSupport::required) {
      context->finish();
      record_unrun(*session, reached->spec.name, "refused", "the client did not negotiate tasks");
      reply_error(*session, request.id,
                  tasks_not_negotiated("Tool " + json_quoted(reached->spec.name) +
                                       " runs only as a task: it"));
      session->end_call(request.id);
      return;
    }
  }

  // admit
  auto admitted = std::make_shared<Admitted>();
  admitted->session = session;
  admitted->context = context;
  admitted->control = control;
  admitted->id = request.id;
  admitted->name = request.name;
  admitted->timeout = timeout;
  // A call that may become a task answers before it ends: not on a thread
  // that holds its answer until the end.
  admitted->may_carry = !task && may_carry(carrier, request, *session, *call.catalog, reached);
  admitted->task = std::move(task);
  if (tracing_on()) {
    admitted->trace_parent = std::move(request.trace_parent);
    admitted->received_ns = unix_nanos();
  }
  CallAdmission::Call place_request;
  place_request.session = session->admission_key();
  place_request.control = control;
  place_request.start = [this, admitted,
                         call = std::move(call)](std::shared_ptr<const CallPlace> place) mutable {
    call.place = std::move(place);
    const bool at_once =
        admitted->submitting.load() && std::this_thread::get_id() == admitted->submitter;
    // A call that waited in the queue is judged by the catalog serving now:
    // a write freeze (or an access rule) that came meanwhile refuses it.
    if (!at_once) call.catalog = catalog_();
    start(std::move(call), admitted, admitted->may_carry && at_once);
  };
  place_request.drop = [this, admitted](const std::string& busy) { drop(*admitted, busy); };
  const CallAdmission::Decision decision = admission_.submit(std::move(place_request));
  admitted->submitting.store(false);
  if (decision.verdict == CallAdmission::Verdict::refused) {
    context->finish();
    record_unrun(*session, request.name, "refused", decision.refusal);
    reply_error(*session, request.id, {jsonrpc::kServerBusy, decision.refusal, nullptr});
    session->end_call(request.id);
  }
}

void CallRunner::start(ToolCall call, const std::shared_ptr<Admitted>& admitted, bool here) {
  if (here) {
    // The delivering thread waits for the answer anyway: it runs the call.
    call.control->set_carried();
    answer(call, *admitted);
    return;
  }
  // On a thread of its own, so that the session's reader goes on reading
  // (pings, cancellations, other calls) while the tool runs.
  const bool posted = call_threads().post(
      [this, admitted, call = std::move(call)]() mutable { answer(call, *admitted); });
  if (posted) return;
  // The job, and with it the call's place, is gone already.
  admitted->context->finish();
  const std::string why =
      "toolmux is busy: no thread could be started for the call (the system refused one); try "
      "again later";
  record_unrun(*admitted->session, "", "refused", why);
  reply_error(*admitted->session, admitted->id, {jsonrpc::kServerBusy, why, nullptr});
  admitted->session->end_call(admitted->id);
}

void CallRunner::answer(ToolCall& call, const Admitted& admitted) {
  // The request's span (MCP's semantic conventions): from its arrival to its reply.
  Span span;
  if (admitted.received_ns != 0 && tracing_on()) {
    span = Span::start("tools/call " + admitted.name, SpanKind::server,
                       admitted.trace_parent ? &*admitted.trace_parent : nullptr,
                       admitted.received_ns);
    span.set("mcp.method.name", std::string("tools/call"));
    span.set("gen_ai.operation.name", std::string("execute_tool"));
    span.set("gen_ai.tool.name", admitted.name);
    span.set("mcp.session.id", call.session_label);
    span.set("jsonrpc.request.id",
             admitted.id.is_string() ? admitted.id.get<std::string>() : admitted.id.dump());
  }
  SpanScope scope(span.context());
  CallResult out = pipeline_(call);
  end_call_span(span, out);
  admitted.context->finish();
  if (admitted.task && admitted.task->promoted()) {
    // The client was answered with the task, and the request ended then.
    admitted.task->finish(out);
    return;
  }
  Session& session = *admitted.session;
  const json& id = admitted.id;
  if (out.outcome == CallOutcome::input_required && admitted.context->input_exchange()) {
    auto asked = admitted.context->input_exchange()->input_required_result();
    if (const auto* e = std::get_if<JsonRpcError>(&asked)) {
      reply_error(session, id, *e);
    } else {
      session.send_related(jsonrpc::make_result(id, std::get<json>(std::move(asked))), id);
    }
  } else if (out.protocol_error) {
    reply_error(session, id, *out.protocol_error);
  } else if (out.outcome != CallOutcome::cancelled) {
    session.send_related(jsonrpc::make_result(id, std::move(out.result).to_json()), id);
  } else {
    session.request_finished(id);  // a cancelled request gets no response
  }
  session.end_call(id);
}

void CallRunner::drop(const Admitted& admitted, const std::string& busy) {
  admitted.context->finish();
  Session& session = *admitted.session;
  if (admitted.control->cancelled()) {
    session.request_finished(admitted.id);  // a cancelled request gets no response
  } else {
    const bool expired = !admitted.control->aborted() && admitted.control->expired();
    const std::string text =
        "Tool " + json_quoted(admitted.name) +
        (expired ? " timed out after " + std::to_string(admitted.timeout.count()) +
                       " ms waiting for a place to run; toolmux was busy: " + busy
                 : " did not run: toolmux is exiting");
    const CallOutcome outcome = expired ? CallOutcome::timed_out : CallOutcome::stopped;
    record_unrun(session, admitted.name, call_outcome_name(outcome), text);
    ToolResult result = ToolResult::error(text);
    set_outcome_meta(result, outcome);
    session.send_related(jsonrpc::make_result(admitted.id, std::move(result).to_json()),
                         admitted.id);
  }
  session.end_call(admitted.id);
}

void CallRunner::record_unrun(const Session& session, const std::string& tool,
                              std::string_view outcome, const std::string& reason) {
  // Refusals are counted by CallAdmission; the calls that waited in vain are
  // calls of their tool, like those that ran.
  if (!tool.empty() && outcome != "refused") {
    metrics_.record_call(CallRecord{tool, std::string(outcome), 0, 0, 0, false, false});
  }
  logger_.write(LogLevel::warning, "call_not_run",
                {{"session", session.label()},
                 {"method", "tools/call"},
                 {"tool", tool},
                 {"outcome", outcome},
                 {"reason", reason}});
}

}  // namespace toolmux
