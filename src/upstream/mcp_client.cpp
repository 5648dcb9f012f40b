#include "src/upstream/mcp_client.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "catalog/tool_result_shape.h"
#include "src/base/json_text.h"
#include "src/base/jsonrpc.h"
#include "src/base/trace.h"
#include "src/base/utf8.h"
#include "src/upstream/input_rounds.h"

namespace toolmux {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// How often a wait looks at its call's cancellation when the call's context
// has no stop token to wake it.
constexpr std::chrono::milliseconds kCancelPoll{20};

std::string error_text(const json& error) {
  std::string text = error.is_object() && error.contains("message") && error["message"].is_string()
                         ? error["message"].get<std::string>()
                         : error.dump();
  if (error.is_object() && error.contains("code")) text += " (code " + error["code"].dump() + ")";
  return text;
}

// parse_message's reason without its JSON-RPC error name: "not JSON: ... at byte 7".
std::string refusal_reason(std::string reason) {
  for (std::string_view prefix : {"Parse error: ", "Invalid request: ", "Invalid params: "}) {
    if (reason.rfind(prefix, 0) == 0) return reason.substr(prefix.size());
  }
  return reason;
}

// The boundary violations of a response, as one reason naming the first.
std::string violations_reason(const std::vector<JsonViolation>& violations) {
  const JsonViolation& v = violations.front();
  std::string reason = (v.pointer.empty() ? std::string("/") : v.pointer) + ": " + v.message;
  if (violations.size() > 1) {
    reason += " (and " + std::to_string(violations.size() - 1) + " more)";
  }
  return reason;
}

// `data` for toolmux's own log: whole when short, else the start of its JSON text.
json logged_data(const json& data) {
  std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= McpClient::kMaxLoggedData) return data;
  text.resize(McpClient::kMaxLoggedData);
  return text + "...";
}

}  // namespace

std::shared_ptr<McpClient> McpClient::create(std::string name,
                                             std::unique_ptr<ClientTransport> transport,
                                             Logger& logger, Events events) {
  std::shared_ptr<McpClient> client(
      new McpClient(std::move(name), std::move(transport), logger, std::move(events)));
  // The callbacks hold no owning reference: the destructor closes the
  // transport, after which no callback runs.
  McpClient* raw = client.get();
  raw->transport_->start([raw](std::string_view text) { raw->on_message(text); },
                         [raw](const std::string& reason) { raw->on_closed(reason); },
                         [raw](const std::string& reason) { raw->on_unreadable({}, reason); });
  return client;
}

McpClient::McpClient(std::string name, std::unique_ptr<ClientTransport> transport, Logger& logger,
                     Events events)
    : name_(std::move(name)),
      transport_(std::move(transport)),
      logger_(logger),
      events_(std::move(events)) {}

McpClient::~McpClient() {
  transport_->close();
  report_dropped_logs(log_limit_.flush(), nullptr);
}

bool McpClient::gone() const {
  std::lock_guard lock(mutex_);
  return gone_;
}

std::string McpClient::closed_reason() {
  std::unique_lock lock(mutex_);
  if (!gone_) return "";
  answered_.wait_for(lock, std::chrono::milliseconds(200),
                     [this] { return !gone_reason_.empty(); });
  return gone_reason_.empty() ? "has gone" : gone_reason_;
}

std::string McpClient::gone_reason() { return "upstream \"" + name_ + "\" " + closed_reason(); }

void McpClient::send(const json& message) { transport_->send(json_text(message)); }

void McpClient::on_closed(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    gone_ = true;
    gone_reason_ = reason.empty() ? "has gone" : reason;
    listen_id_ = 0;  // the subscription went with it
    listen_ended_ = nullptr;
  }
  answered_.notify_all();
  if (events_.on_closed) events_.on_closed(reason);
}

ProtocolEra McpClient::era() const { return modern_ ? ProtocolEra::modern : ProtocolEra::legacy; }

std::string McpClient::protocol_version() const {
  std::lock_guard lock(mutex_);
  return protocol_version_;
}

std::string McpClient::legacy_reason() const {
  std::lock_guard lock(mutex_);
  return legacy_reason_;
}

McpClient::Outcome McpClient::request(const std::string& method, json params,
                                      Clock::time_point deadline, CallContext* context) {
  if (modern_) return modern_request(method, std::move(params), deadline, context);
  return send_request(method, std::move(params), deadline, context);
}

McpClient::Outcome McpClient::modern_request(const std::string& method, json params,
                                             Clock::time_point deadline, CallContext* context) {
  const std::string who = "upstream \"" + name_ + "\"";
  // What the upstream may ask: what the calling client can answer.
  const json capabilities =
      context ? relayed_capabilities(context->client_capabilities()) : relayed_capabilities();
  const bool log_debug = server_capabilities_.contains("logging");
  if (!params.is_object()) params = json::object();
  for (int round = 0;; ++round) {
    json sent = params;
    add_modern_meta(sent, capabilities, log_debug);
    Outcome outcome = send_request(method, std::move(sent), deadline, context);
    if (!outcome.result || !outcome.result->is_object()) return outcome;
    const json type = outcome.result->value("resultType", json("complete"));
    // A task (the tasks extension) is call_tool's to follow.
    if (type == "complete" || (type == "task" && method == "tools/call")) return outcome;
    auto refuse = [&](const std::string& why) {
      return Outcome{std::nullopt, Failure::invalid, who + " answered " + method + " with " + why,
                     nullptr};
    };
    if (type != "input_required") {
      return refuse("resultType " + type.dump() + ", which toolmux does not know");
    }
    // MRTR's supported requests (basic/patterns/mrtr.mdx).
    if (method != "tools/call" && method != "prompts/get" && method != "resources/read") {
      return refuse(
          "input_required, which MCP allows only on tools/call, prompts/get and "
          "resources/read");
    }
    if (context == nullptr) return refuse("input_required, with no client to ask");
    if (round >= kMaxInputRounds) {
      const std::string why = who + " still asked for input after " +
                              std::to_string(kMaxInputRounds) + " rounds of " + method +
                              "; toolmux relays at most " + std::to_string(kMaxInputRounds);
      return {std::nullopt, Failure::error, why,
              json{{"code", jsonrpc::kInternalError}, {"message", why}}};
    }
    Result<InputRequired> required = read_input_required(*outcome.result);
    if (!required.ok()) {
      return refuse("an input_required result MCP does not allow: " + required.message());
    }
    logger_.write(LogLevel::info, "upstream_input_required",
                  {{"upstream", name_},
                   {"method", method},
                   {"round", round + 1},
                   {"questions", required->requests.size()}});
    InputAnswers answers = answer_input_requests(*required, *context, name_);
    if (answers.kind == InputAnswers::Kind::pending) {
      // The client answers in a retry of its own call, which runs this again.
      return {std::nullopt, Failure::cancelled,
              method + " to upstream \"" + name_ +
                  "\" waits for its client's input, which comes with a retry of the call",
              nullptr};
    }
    if (context->cancelled()) {
      // The upstream answered: whatever the client did, it is not the
      // upstream's failure (the breaker counts it neither way).
      const bool timed_out = Clock::now() >= deadline;
      return {std::nullopt, Failure::cancelled,
              method + " to upstream \"" + name_ + "\" " +
                  (timed_out ? "timed out" : "was cancelled") +
                  " while its client was asked for input",
              nullptr};
    }
    if (answers.kind == InputAnswers::Kind::failed) {
      return {std::nullopt, Failure::error, answers.error.value("message", std::string()),
              answers.error};
    }
    // The retry: the original params, this round's answers and the upstream's
    // own state, exactly as it came (and none when it sent none).
    params["inputResponses"] = std::move(answers.responses);
    if (required->request_state) {
      params["requestState"] = *required->request_state;
    } else {
      params.erase("requestState");
    }
  }
}

McpClient::Outcome McpClient::send_request(const std::string& method, json params,
                                           Clock::time_point deadline, CallContext* context) {
  auto pending = std::make_shared<Pending>(method);
  pending->context = context;
  std::int64_t id = 0;
  bool gone_before = false;
  {
    std::lock_guard lock(mutex_);
    gone_before = gone_;
    if (!gone_before) {
      id = next_id_++;
      pending_[id] = pending;
    }
  }
  // (gone_reason may wait for the child's exit: never under mutex_.)
  if (gone_before) return {std::nullopt, Failure::gone, gone_reason(), nullptr};
  if (context) params["_meta"]["progressToken"] = id;
  // The call's id, so that the upstream can recognise a repeated attempt.
  if (context && !context->call_id().empty() && method == "tools/call") {
    params["_meta"]["io.toolmux/callId"] = context->call_id();
  }
  // A 2026-07-28 tools/call carries its x-mcp-header arguments as headers too (SEP-2243).
  std::vector<std::pair<std::string, std::string>> headers;
  // The trace goes on in the upstream: W3C trace context in _meta and, over
  // HTTP, in the headers (docs/traces.md).
  if (const TraceContext* trace = current_trace(); trace && params.is_object()) {
    std::string parent = format_traceparent(*trace);
    headers.emplace_back("traceparent", parent);
    params["_meta"]["traceparent"] = std::move(parent);
    if (!trace->state.empty()) {
      headers.emplace_back("tracestate", trace->state);
      params["_meta"]["tracestate"] = trace->state;
    }
  }
  if (modern_ && method == "tools/call" && params.is_object()) {
    std::lock_guard lock(mutex_);
    const json tool = params.value("name", json());
    if (auto it = param_headers_.find(tool.is_string() ? tool.get<std::string>() : "");
        it != param_headers_.end()) {
      headers = param_headers(it->second, params.value("arguments", json()));
    }
  }
  json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  if (!transport_->send_with_headers(json_text(message), headers)) {
    // It cannot be written to: it has gone, or is going, whatever the reader
    // has seen so far.
    {
      std::lock_guard lock(mutex_);
      pending_.erase(id);
      gone_ = true;
    }
    answered_.notify_all();
    return {std::nullopt, Failure::gone, gone_reason(), nullptr};
  }

  // Woken by the answer, the upstream going, the call's cancellation (its
  // stop token; registered before the lock is taken, as a callback for a call
  // stopped already runs at once and takes the lock), or the deadline. Only a
  // context without a stop token is looked at every kCancelPoll.
  const std::stop_token stop = context ? context->stop_token() : std::stop_token();
  std::stop_callback wake(stop, [this] {
    std::lock_guard guard(mutex_);
    answered_.notify_all();
  });
  std::unique_lock lock(mutex_);
  bool stopped = false;
  while (!pending->response && pending->refused.empty() && !gone_) {
    if (Clock::now() >= deadline || (context && context->cancelled())) {
      stopped = true;
      break;
    }
    if (stop.stop_possible()) {
      answered_.wait_until(lock, deadline);
    } else {
      answered_.wait_for(lock, kCancelPoll);
    }
  }
  const bool alone = context && only_call_locked() == pending;
  pending_.erase(id);
  const bool is_gone = gone_ && !pending->response && pending->refused.empty();
  lock.unlock();
  // What the upstream asked the client for this call is moot now: the call's
  // answer never waits for the client's.
  end_relays(*pending);
  if (context) {
    // The end of the call a flood came with: its count is told now, not
    // whenever the next log message comes.
    if (const std::uint64_t dropped = log_limit_.flush(); dropped > 0) {
      report_dropped_logs(dropped, alone ? context : nullptr);
    }
  }
  if (stopped) {
    const bool cancelled = context && context->cancelled() && Clock::now() < deadline;
    const bool input_pending = pending->input_pending;
    logger_.write(LogLevel::info, "upstream_request_cancelled",
                  {{"upstream", name_},
                   {"method", method},
                   {"request", id},
                   {"reason", input_pending ? "its client answers in a retry of the call"
                              : cancelled   ? "cancelled"
                                            : "timed out"}});
    // initialize is never cancelled (MCP cancellation utility); the upstream is
    // then left out anyway. Nor is the probe: a legacy server that kept silent
    // knows no request before initialize. A 2026-07-28 request over
    // Streamable HTTP is cancelled by closing its stream.
    if (method != "initialize" && !transport_->end_request_stream(id) &&
        method != "server/discover") {
      send(jsonrpc::make_notification(
          "notifications/cancelled",
          {{"requestId", id},
           {"reason", cancelled ? "cancelled by toolmux's client" : "timed out"}}));
    }
    if (input_pending) {
      return {std::nullopt, Failure::cancelled,
              method + " to upstream \"" + name_ +
                  "\" was stopped: its client answers the upstream's question in a retry of "
                  "the call",
              nullptr};
    }
    if (cancelled) {
      return {std::nullopt, Failure::cancelled,
              method + " to upstream \"" + name_ + "\" was cancelled", nullptr};
    }
    return {std::nullopt, Failure::timed_out, method + " to upstream \"" + name_ + "\" timed out",
            nullptr};
  }
  if (is_gone) return {std::nullopt, Failure::gone, gone_reason(), nullptr};
  if (!pending->refused.empty()) return {std::nullopt, Failure::invalid, pending->refused, nullptr};
  const json& response = *pending->response;
  if (response.contains("error")) {
    return {std::nullopt, Failure::error,
            "upstream \"" + name_ + "\" answered " + method +
                " with an error: " + error_text(response["error"]),
            response["error"]};
  }
  return {response["result"], Failure::none, "", nullptr};
}

Status McpClient::connect(std::chrono::milliseconds timeout,
                          std::chrono::milliseconds probe_timeout, bool probe) {
  std::string legacy_reason = "it spoke a legacy version when it last ran";
  if (probe) {
    const ProbeVerdict verdict = discover(probe_timeout);
    if (verdict.kind == ProbeVerdict::Kind::modern) return Status::ok_status();
    if (verdict.kind == ProbeVerdict::Kind::refused) return Status::unavailable(verdict.reason);
    legacy_reason = verdict.reason;
  }
  json refused;
  Status initialized = handshake(timeout, refused);
  if (!initialized.ok() && supports_modern(refused)) {
    // A modern server after all, which did not answer the probe in time (or
    // was taken for a legacy one when it last ran).
    const ProbeVerdict verdict = discover(timeout);
    if (verdict.kind == ProbeVerdict::Kind::modern) return Status::ok_status();
    return Status::unavailable(verdict.kind == ProbeVerdict::Kind::refused ? verdict.reason
                                                                           : initialized.message());
  }
  if (initialized.ok()) {
    std::lock_guard lock(mutex_);
    legacy_reason_ = legacy_reason;
  }
  return initialized;
}

void McpClient::keep_instructions(const json& result) {
  instructions_.clear();
  if (!result.is_object()) return;
  const auto it = result.find("instructions");
  if (it == result.end() || !it->is_string()) return;
  const auto& text = it->get_ref<const std::string&>();
  std::size_t end = std::min(text.size(), kMostInstructions);
  while (end > 0 && end < text.size() && is_utf8_continuation(text[end])) --end;
  instructions_ = text.substr(0, end);
}

ProbeVerdict McpClient::discover(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  json params = json::object();
  add_modern_meta(params, relayed_capabilities(), false);
  Outcome outcome = send_request("server/discover", params, deadline, nullptr);
  // -32022 naming 2026-07-28 among the supported versions: the version toolmux
  // sent is one the server takes, so it is sent once more (basic/versioning.mdx:
  // a client retries with a version from data.supported).
  if (outcome.failure == Failure::error && supports_modern(outcome.error_object)) {
    outcome = send_request("server/discover", std::move(params), deadline, nullptr);
  }
  if (outcome.failure == Failure::gone) return {ProbeVerdict::Kind::refused, outcome.error};
  const json result = outcome.result ? *outcome.result : json();
  const json error = outcome.failure == Failure::error ? outcome.error_object : json();
  ProbeVerdict verdict = judge_probe(name_, result, error, outcome.error);
  if (verdict.kind != ProbeVerdict::Kind::modern) return verdict;
  const json capabilities = result.value("capabilities", json::object());
  server_capabilities_ = capabilities.is_object() ? capabilities : json::object();
  const json meta = result.value("_meta", json::object());
  const json info = meta.is_object() ? meta.value(kMetaServerInfo, json()) : json();
  server_info_ = info.is_object() ? info : json::object();
  keep_instructions(result);
  {
    std::lock_guard lock(mutex_);
    protocol_version_ = kModernProtocolVersion;
  }
  modern_ = true;
  return verdict;
}

Status McpClient::initialize(std::chrono::milliseconds timeout) {
  json refused;
  return handshake(timeout, refused);
}

Status McpClient::handshake(std::chrono::milliseconds timeout, json& error) {
  // Elicitation and sampling are relayed to the calling client (which may
  // still refuse them); roots are not offered.
  json params = {{"protocolVersion", kLegacyProtocolVersion},
                 {"capabilities",
                  {{"elicitation", json::object()},
                   {"sampling", json::object()},
                   {"extensions", {{kTasksExtensionName, json::object()}}}}},
                 {"clientInfo", {{"name", "toolmux"}, {"version", TOOLMUX_VERSION}}}};
  Outcome outcome = send_request("initialize", std::move(params), Clock::now() + timeout, nullptr);
  if (outcome.failure == Failure::error) error = outcome.error_object;
  if (!outcome.result) return Status::unavailable(outcome.error);
  if (!outcome.result->is_object()) {
    return Status::unavailable("upstream \"" + name_ +
                               "\" answered initialize with something else than an object");
  }
  server_info_ = outcome.result->value("serverInfo", json::object());
  keep_instructions(*outcome.result);
  server_capabilities_ = outcome.result->value("capabilities", json::object());
  const json version = outcome.result->value("protocolVersion", json());
  if (version.is_string()) {
    transport_->set_protocol_version(version.get<std::string>());
    std::lock_guard lock(mutex_);
    protocol_version_ = version.get<std::string>();
  }
  send(jsonrpc::make_notification("notifications/initialized", json::object()));
  if (server_capabilities_.contains("logging")) {
    // Every level: toolmux filters each relayed message at its calling
    // client's own level (many servers send nothing below their default
    // until asked).
    Outcome set =
        send_request("logging/setLevel", {{"level", "debug"}}, Clock::now() + timeout, nullptr);
    if (!set.result) {
      logger_.write(LogLevel::warning, "upstream_set_log_level_failed",
                    {{"upstream", name_}, {"reason", set.error}});
    }
  }
  return Status::ok_status();
}

Result<std::vector<json>> McpClient::list_tools(std::chrono::milliseconds timeout) {
  std::vector<json> tools;
  const auto deadline = Clock::now() + timeout;
  json cursor;
  // A bound on pages, so an upstream that repeats a cursor cannot loop us.
  for (int page = 0; page < 10000; ++page) {
    json params = json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    Outcome outcome = request("tools/list", std::move(params), deadline, nullptr);
    if (!outcome.result) return Status::unavailable(outcome.error);
    const json& result = *outcome.result;
    if (!result.is_object() || !result.contains("tools") || !result["tools"].is_array()) {
      return Status::unavailable("upstream \"" + name_ +
                                 "\" answered tools/list without a tools array");
    }
    for (const json& tool : result["tools"]) {
      if (modern_ && !accept_param_headers(tool)) continue;
      tools.push_back(tool);
    }
    auto next = result.find("nextCursor");
    if (next == result.end() || !next->is_string()) return tools;
    cursor = *next;
  }
  return Status::unavailable("upstream \"" + name_ +
                             "\" kept answering tools/list with more pages");
}

bool McpClient::accept_param_headers(const json& tool) {
  const json name_value = tool.is_object() ? tool.value("name", json()) : json();
  const std::string name = name_value.is_string() ? name_value.get<std::string>() : "";
  auto declared =
      declared_param_headers(tool.is_object() ? tool.value("inputSchema", json()) : json());
  if (!declared.ok()) {
    logger_.write(LogLevel::warning, "upstream_tool_left_out",
                  {{"upstream", name_}, {"tool", name}, {"reason", declared.message()}});
    return false;
  }
  std::lock_guard lock(mutex_);
  if (declared.value().empty()) {
    param_headers_.erase(name);
  } else {
    param_headers_[name] = std::move(declared).value();
  }
  return true;
}

namespace {

// A failure's error.type on the upstream call's span.
std::string failure_type(McpClient::Failure failure) {
  switch (failure) {
    case McpClient::Failure::none:
      return "none";
    case McpClient::Failure::gone:
      return "upstream_gone";
    case McpClient::Failure::timed_out:
      return "timed_out";
    case McpClient::Failure::cancelled:
      return "cancelled";
    case McpClient::Failure::error:
      return "jsonrpc_error";
    case McpClient::Failure::invalid:
      return "invalid_result";
    case McpClient::Failure::unavailable:
      return "upstream_unavailable";
    case McpClient::Failure::task_failed:
      return "task_failed";
  }
  return "unknown";
}

}  // namespace

McpClient::Outcome McpClient::call_tool(const std::string& tool, const json& arguments,
                                        CallContext& context) {
  // The upstream call's span: the upstream's own spans are its children.
  Span span = tracing_on() ? Span::start("tools/call " + tool, SpanKind::client) : Span();
  SpanScope scope(span.context());
  if (span.active()) {
    span.set("mcp.method.name", std::string("tools/call"));
    span.set("gen_ai.tool.name", tool);
    span.set("gen_ai.operation.name", std::string("execute_tool"));
    span.set("toolmux.upstream", name_);
  }
  Outcome outcome = request("tools/call", {{"name", tool}, {"arguments", arguments}},
                            context.deadline(), &context);
  if (outcome.result && outcome.result->is_object() &&
      outcome.result->value("resultType", "") == "task") {
    outcome = follow_task(*outcome.result, context);
  }
  if (!outcome.result) {
    span.set_error(failure_type(outcome.failure));
    return outcome;
  }
  if (!outcome.result->is_object()) {
    return {std::nullopt, Failure::invalid,
            "upstream \"" + name_ + "\" answered tools/call with something else than an object",
            nullptr};
  }
  // The same shape a native tool's result must have (the call pipeline's
  // check_result): relayed as it came, a broken one would reach the client.
  if (const Result<ToolResult> read = read_tool_result(*outcome.result); !read.ok()) {
    return {std::nullopt, Failure::invalid,
            "upstream \"" + name_ +
                "\" answered tools/call with a result MCP does not allow: " + read.message(),
            nullptr};
  }
  return outcome;
}

McpClient::Outcome McpClient::follow_task(const json& created, CallContext& context) {
  const json* id = created.contains("taskId") ? &created["taskId"] : nullptr;
  if (!id || !id->is_string() || id->get_ref<const std::string&>().empty()) {
    return {std::nullopt, Failure::invalid,
            "upstream \"" + name_ + "\" answered tools/call with a task without a taskId", nullptr};
  }
  const std::string task_id = id->get<std::string>();
  // The client's own task (ids are toolmux's): the call goes on as one when
  // the client negotiated tasks, else it waits for the upstream's end.
  context.start_task();
  const auto interval = std::chrono::milliseconds(
      std::clamp<std::int64_t>(created.value("pollIntervalMs", std::int64_t{500}), 50, 5000));
  // The upstream's questions, each put to the client on a thread of its own
  // (a client may answer them one at a time), the answer sent on with
  // tasks/update. At most kMaxAskedQuestions at once.
  constexpr std::size_t kMaxAskedQuestions = 16;
  std::mutex asked_mutex;
  std::set<std::string> asked;
  std::vector<std::jthread> askers;
  auto ask = [&](const std::string& key, const json& question) {
    askers.emplace_back([this, &context, task_id, key, question](const std::stop_token& stop) {
      ClientAnswer answer = context.ask_client(question.value("method", ""),
                                               question.value("params", json::object()), stop, key);
      if (!answer.result) return;
      request("tasks/update", {{"taskId", task_id}, {"inputResponses", {{key, *answer.result}}}},
              context.deadline(), nullptr);
    });
  };
  Outcome last;
  for (;;) {
    const auto wake = std::min(Clock::now() + interval, context.deadline());
    while (!context.cancelled() && Clock::now() < wake) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (context.cancelled()) {
      // Ended upstream too, within a second: the answer is not awaited long.
      request("tasks/cancel", {{"taskId", task_id}}, Clock::now() + std::chrono::seconds(1),
              nullptr);
      return {std::nullopt, Failure::cancelled,
              "the call ended before upstream \"" + name_ + "\"'s task did", nullptr};
    }
    last = request("tasks/get", {{"taskId", task_id}}, context.deadline(), nullptr);
    if (!last.result) return last;
    const json& task = *last.result;
    const std::string status = task.is_object() ? task.value("status", "") : "";
    if (status == "completed") {
      if (!task.contains("result")) break;
      return {task["result"], Failure::none, "", nullptr};
    }
    if (status == "failed") {
      const json error = task.value("error", json::object());
      return {std::nullopt, Failure::task_failed,
              "upstream \"" + name_ + "\"'s task failed: " +
                  (error.is_object() ? error.value("message", std::string("no reason given"))
                                     : std::string("no reason given")),
              error};
    }
    if (status == "cancelled") {
      return {std::nullopt, Failure::task_failed, "upstream \"" + name_ + "\" cancelled its task",
              nullptr};
    }
    if (status == "input_required" && task.contains("inputRequests") &&
        task["inputRequests"].is_object()) {
      for (const auto& [key, question] : task["inputRequests"].items()) {
        std::lock_guard lock(asked_mutex);
        if (asked.size() >= kMaxAskedQuestions || !question.is_object()) continue;
        if (asked.insert(key).second) ask(key, question);
      }
    } else if (status != "working" && status != "input_required") {
      break;
    }
  }
  return {std::nullopt, Failure::invalid,
          "upstream \"" + name_ + "\" answered tasks/get with something else than a task", nullptr};
}

ToolResult McpClient::tool_result(const Outcome& outcome) {
  // The upstream needs a capability the calling client did not declare: the
  // client gets the same protocol error (-32021) and what is missing, not a
  // tool error, so that it can tell (catch_tool_exceptions answers it).
  if (outcome.failure == Failure::error && outcome.error_object.is_object() &&
      outcome.error_object.value("code", 0) == kMissingRequiredClientCapabilityCode) {
    json missing = json::object();
    if (const auto data = outcome.error_object.find("data");
        data != outcome.error_object.end() && data->is_object()) {
      if (auto required = data->find("requiredCapabilities");
          required != data->end() && required->is_object()) {
        missing = *required;
      }
    }
    throw MissingClientCapability(std::move(missing), outcome.error);
  }
  // No usable answer: an error in toolmux's words (not spotlighted as data).
  auto failed = [](std::string message) {
    ToolResult error = ToolResult::error(std::move(message));
    error.from_toolmux = true;
    return error;
  };
  // No answer of the tool's: the calling client's task fails too.
  if (outcome.failure == Failure::task_failed) throw std::runtime_error(outcome.error);
  if (!outcome.result) return failed(outcome.error);
  Result<ToolResult> read = read_tool_result(*outcome.result);
  // call_tool has checked it; a result from elsewhere is refused the same way.
  if (!read.ok()) return failed("the result does not have MCP's shape: " + read.message());
  return std::move(read).value();
}

void McpClient::on_message(std::string_view text) {
  jsonrpc::Message message = jsonrpc::parse_message(text);
  switch (message.kind) {
    case jsonrpc::Message::Kind::response: {
      if (!message.violations.empty()) {
        // The boundary would repair it (a repeated key dropped, bad bytes
        // replaced): relayed so, the caller would get something else than
        // what the upstream said, without knowing.
        const std::string reason = violations_reason(message.violations);
        int failed = 0;
        {
          std::lock_guard lock(mutex_);
          failed = refuse_locked(message.id, reason);
        }
        answered_.notify_all();
        logger_.write(LogLevel::warning, "upstream_invalid_message",
                      {{"upstream", name_}, {"error", reason}, {"failed_requests", failed}});
        break;
      }
      if (!message.id.is_number_integer()) break;
      const std::int64_t id = message.id.get<std::int64_t>();
      std::unique_lock lock(mutex_);
      if (id == listen_id_ && listen_id_ != 0) {
        // The subscription's only answer: it has ended.
        lock.unlock();
        const json& error = message.response.value("error", json());
        if (error.is_null()) {
          listen_ended(id, "upstream \"" + name_ + "\" ended its subscriptions/listen", false);
        } else {
          const json code = error.is_object() ? error.value("code", json()) : json();
          listen_ended(id,
                       "upstream \"" + name_ +
                           "\" answered subscriptions/listen with an error: " + error_text(error),
                       code == jsonrpc::kMethodNotFound || code == jsonrpc::kInvalidParams);
        }
        break;
      }
      auto it = pending_.find(id);
      if (it == pending_.end()) break;  // late, after a cancellation or timeout
      it->second->response = std::move(message.response);
      answered_.notify_all();
      break;
    }
    case jsonrpc::Message::Kind::notification:
      on_notification(message.method, message.params);
      break;
    case jsonrpc::Message::Kind::request:
      on_request(message.id, message.method, message.params);
      break;
    case jsonrpc::Message::Kind::invalid:
      on_unreadable(text, refusal_reason(message.error));
      break;
  }
}

void McpClient::on_unreadable(std::string_view text, const std::string& reason) {
  const jsonrpc::MessageHeader header = jsonrpc::scan_message_header(text);
  int failed = 0;
  // A request or notification that went wrong answers nothing; anything
  // else may be the answer to any request in flight.
  if (!header.has_method) {
    std::lock_guard lock(mutex_);
    failed = refuse_locked(header.id, reason);
  }
  if (failed > 0) answered_.notify_all();
  logger_.write(LogLevel::warning, "upstream_invalid_message",
                {{"upstream", name_}, {"error", reason}, {"failed_requests", failed}});
}

int McpClient::refuse_locked(const json& id, const std::string& reason) {
  const std::string who = "upstream \"" + name_ + "\"";
  if (!id.is_null()) {
    if (!id.is_number_integer()) return 0;
    auto it = pending_.find(id.get<std::int64_t>());
    if (it == pending_.end() || it->second->response) return 0;  // late, or answered already
    it->second->refused =
        who + " answered " + it->second->method + " with a message toolmux refuses: " + reason;
    return 1;
  }
  int failed = 0;
  for (auto& [request_id, pending] : pending_) {
    if (pending->response || !pending->refused.empty()) continue;
    pending->refused = who + " sent a message toolmux cannot read while " + pending->method +
                       " waited for its answer (" + reason +
                       "); it may have been that answer, so the request fails";
    ++failed;
  }
  return failed;
}

void McpClient::end_relays(Pending& pending) {
  pending.relay_stop.request_stop();
  std::unique_lock use(pending.use);
  pending.context = nullptr;
  pending.relays_done.wait(use, [&] { return pending.relays == 0; });
}

std::shared_ptr<McpClient::Pending> McpClient::only_call() {
  std::lock_guard lock(mutex_);
  return only_call_locked();
}

std::shared_ptr<McpClient::Pending> McpClient::only_call_locked() {
  std::shared_ptr<Pending> found;
  for (const auto& [id, pending] : pending_) {
    if (!pending->context) continue;
    if (found) return nullptr;
    found = pending;
  }
  return found;
}

void McpClient::listen(json filter, ListenEnded on_end) {
  end_listen();
  std::int64_t id = 0;
  {
    std::lock_guard lock(mutex_);
    if (gone_) return;
    id = next_id_++;
    listen_id_ = id;
    listen_ended_ = std::move(on_end);
  }
  json params = {{"notifications", std::move(filter)}};
  add_modern_meta(params, relayed_capabilities(), false);
  logger_.write(LogLevel::info, "upstream_listen",
                {{"upstream", name_}, {"request", id}, {"notifications", params["notifications"]}});
  json message = {{"jsonrpc", "2.0"},
                  {"id", id},
                  {"method", "subscriptions/listen"},
                  {"params", std::move(params)}};
  // Not sent: the transport has gone, and on_closed says so.
  static_cast<void>(transport_->send(json_text(message)));
}

void McpClient::end_listen() {
  std::int64_t id = 0;
  {
    std::lock_guard lock(mutex_);
    id = listen_id_;
    listen_id_ = 0;
    listen_ended_ = nullptr;
    if (gone_) return;
  }
  if (id == 0) return;
  // Closing its stream ends it (Streamable HTTP); on stdio, the cancellation
  // names it (basic/patterns/subscriptions.mdx, "Cancellation").
  if (!transport_->end_request_stream(id)) {
    send(jsonrpc::make_notification(
        "notifications/cancelled",
        {{"requestId", id}, {"reason", "toolmux no longer listens on this subscription"}}));
  }
}

void McpClient::listen_ended(std::int64_t id, const std::string& why, bool refused) {
  ListenEnded tell;
  {
    std::lock_guard lock(mutex_);
    if (id == 0 || id != listen_id_) return;
    listen_id_ = 0;
    tell = std::move(listen_ended_);
    listen_ended_ = nullptr;
  }
  if (tell) tell(why, refused);
}

void McpClient::on_notification(const std::string& method, const json& params) {
  // A notification of a subscription: only the current one's count
  // (subscriptionId is the listen request's id).
  const json meta = params.is_object() ? params.value("_meta", json()) : json();
  const json subscription = meta.is_object() ? meta.value(kMetaSubscriptionId, json()) : json();
  if (!subscription.is_null()) {
    std::int64_t current = 0;
    {
      std::lock_guard lock(mutex_);
      current = listen_id_;
    }
    if (current == 0 || subscription != current) return;  // one toolmux has ended
    if (method == "notifications/subscriptions/acknowledged") {
      logger_.write(LogLevel::info, "upstream_listening",
                    {{"upstream", name_},
                     {"request", current},
                     {"notifications", params.value("notifications", json())}});
      return;
    }
  }
  if (method == "notifications/cancelled" && params.is_object()) {
    // A server ends a subscription on stdio so; it cancels nothing else of ours.
    const json request = params.value("requestId", json());
    if (request.is_number_integer()) {
      listen_ended(request.get<std::int64_t>(),
                   "upstream \"" + name_ + "\" cancelled its subscriptions/listen", false);
    }
    return;
  }
  if (method == "notifications/progress" && params.is_object()) {
    const json token = params.value("progressToken", json());
    const json progress = params.value("progress", json());
    if (!token.is_number_integer() || !progress.is_number()) return;
    std::shared_ptr<Pending> pending;
    {
      std::lock_guard lock(mutex_);
      auto it = pending_.find(token.get<std::int64_t>());
      if (it != pending_.end()) pending = it->second;
    }
    if (!pending) return;
    std::lock_guard use(pending->use);
    if (!pending->context) return;
    std::optional<double> total;
    if (params.contains("total") && params["total"].is_number())
      total = params["total"].get<double>();
    const json message = params.value("message", json());
    pending->context->report_progress(progress.get<double>(), total,
                                      message.is_string() ? message.get<std::string>() : "");
  } else if (method == "notifications/message" && params.is_object()) {
    on_log_message(params);
  } else {
    logger_.write(LogLevel::debug, "upstream_notification",
                  {{"upstream", name_}, {"method", method}});
    if (events_.on_notification) events_.on_notification(method, params);
  }
}

void McpClient::on_log_message(const json& params) {
  const LogRateLimit::Verdict verdict = log_limit_.admit();
  if (verdict.report > 0) {
    auto pending = only_call();
    if (!pending) {
      report_dropped_logs(verdict.report, nullptr);
    } else {
      std::lock_guard use(pending->use);
      report_dropped_logs(verdict.report, pending->context);
    }
  }
  if (!verdict.pass) return;
  const json level_name = params.value("level", json("info"));
  const LogLevel level =
      log_level_from_name(level_name.is_string() ? level_name.get<std::string>() : "")
          .value_or(LogLevel::info);
  const json data = params.value("data", json());
  logger_.write(
      std::min(level, LogLevel::info), "upstream_log",
      {{"upstream", name_}, {"level", log_level_name(level)}, {"data", logged_data(data)}});
  if (auto pending = only_call()) {
    std::lock_guard use(pending->use);
    if (pending->context) pending->context->log(level, data);
  }
}

void McpClient::report_dropped_logs(std::uint64_t dropped, CallContext* context) {
  if (dropped == 0) return;
  const std::string message =
      log_limit_.drop_summary(dropped, "log messages from upstream \"" + name_ + "\"");
  logger_.write(LogLevel::warning, "upstream_log_dropped",
                {{"upstream", name_}, {"dropped", dropped}, {"message", message}});
  if (context) {
    context->log(LogLevel::warning, {{"event", "upstream_log_dropped"},
                                     {"upstream", name_},
                                     {"dropped", dropped},
                                     {"message", "toolmux " + message}});
  }
}

void McpClient::on_request(const json& id, const std::string& method, const json& params) {
  auto answer = [this, id](const json& message) { send(message); };
  if (method == "ping") return answer(jsonrpc::make_result(id, json::object()));
  if (method != "elicitation/create" && method != "sampling/createMessage") {
    return answer(jsonrpc::make_error(id, jsonrpc::kMethodNotFound,
                                      "toolmux does not offer " + method + " to its upstreams"));
  }
  auto self = weak_from_this().lock();  // null while the client is being destroyed
  auto pending = self ? only_call() : nullptr;
  if (!pending) {
    return answer(jsonrpc::make_error(
        id, jsonrpc::kInternalError,
        method + " reached toolmux while it relayed no call, or several, to this server: it "
                 "cannot tell which client to ask"));
  }
  bool too_many = false;
  {
    std::lock_guard lock(mutex_);
    too_many = relayed_requests_ >= kMaxRelayedRequests;
    if (!too_many) ++relayed_requests_;
  }
  if (too_many) {
    return answer(jsonrpc::make_error(
        id, jsonrpc::kInternalError,
        "toolmux relays at most " + std::to_string(kMaxRelayedRequests) +
            " requests from an upstream to its client at once; " + method + " was refused"));
  }
  // The client's answer may take long: wait for it on a thread of its own so
  // that the upstream's other messages keep flowing. It holds the call's
  // context only through `relays`, which the call's end waits for after
  // stopping the wait (end_relays).
  auto relay = [self, pending, id, method, params, answer] {
    CallContext* context = nullptr;
    {
      std::lock_guard use(pending->use);
      if (pending->context) {
        context = pending->context;
        ++pending->relays;
      }
    }
    ClientAnswer reply{std::nullopt, "the call has already ended"};
    if (context) {
      reply = context->ask_client(method, params, pending->relay_stop.get_token());
      if (reply.pending) {
        // A 2026-07-28 client: it gets the question in its call's answer and
        // retries the call, which asks the upstream again. This call is
        // stopped (the wait for the upstream ends now, cancelling it there).
        pending->input_pending = true;
        reply.error = "toolmux's client answers " + method +
                      " in a retry of its call (2026-07-28 protocol); this call is cancelled";
      }
      {
        std::lock_guard use(pending->use);
        --pending->relays;
      }
      pending->relays_done.notify_all();
    }
    json fields = {
        {"upstream", self->name_}, {"method", method}, {"answered", reply.result.has_value()}};
    if (reply.pending) fields["answered_in_retry"] = true;
    self->logger_.write(LogLevel::info, "upstream_client_request", fields);
    answer(reply.result ? jsonrpc::make_result(id, *reply.result)
                        : jsonrpc::make_error(id, jsonrpc::kInternalError, reply.error));
    std::lock_guard lock(self->mutex_);
    --self->relayed_requests_;
  };
  try {
    std::thread(std::move(relay)).detach();
  } catch (const std::system_error&) {
    {
      std::lock_guard lock(mutex_);
      --relayed_requests_;
    }
    answer(jsonrpc::make_error(id, jsonrpc::kInternalError,
                               "toolmux has no thread to relay " + method + " with"));
  }
}

}  // namespace toolmux
