#include "src/protocol/mcp_server.h"

#include <algorithm>
#include <utility>

#include "src/base/elastic_threads.h"
#include "src/base/trace.h"
#include "src/base/utf8.h"
#include "src/protocol/extensions.h"
#include "src/protocol/modern.h"
#include "src/protocol/skill_methods.h"
#include "src/protocol/tool_list_cursor.h"
#include "src/session/call_context.h"
#include "src/session/input_exchange.h"

namespace toolmux {

using jsonrpc::Message;
using nlohmann::json;

namespace {

// toolmux's own fields of a tools/call's _meta: "io.toolmux/idempotencyKey"
// (1 to 200 characters: a repeat with the same key is answered from the
// journal) and "io.toolmux/reason" (why the call is made, shown to a human
// asked to confirm it; at most 500 characters). The problem, if any.
// The trace a request continues (docs/traces.md): its _meta's traceparent
// and tracestate, else its HTTP headers'; none (a new trace) when neither
// holds a valid one.
std::optional<TraceContext> request_trace(const json& params) {
  if (params.is_object()) {
    auto meta = params.find("_meta");
    if (meta != params.end() && meta->is_object()) {
      auto parent = meta->find("traceparent");
      if (parent != meta->end() && parent->is_string()) {
        auto state = meta->find("tracestate");
        return parse_traceparent(parent->get_ref<const std::string&>(),
                                 state != meta->end() && state->is_string()
                                     ? std::string_view(state->get_ref<const std::string&>())
                                     : std::string_view());
      }
    }
  }
  if (const TraceContext* headers = incoming_header_trace()) return *headers;
  return std::nullopt;
}

std::optional<std::string> read_call_meta(const json& meta, std::string& idempotency_key,
                                          std::string& reason) {
  if (auto key = meta.find("io.toolmux/idempotencyKey"); key != meta.end()) {
    if (!key->is_string() || key->get_ref<const std::string&>().empty() ||
        utf8_length(key->get_ref<const std::string&>()) > 200) {
      return "_meta \"io.toolmux/idempotencyKey\" must be a string of 1 to 200 characters";
    }
    idempotency_key = key->get<std::string>();
  }
  if (auto given = meta.find("io.toolmux/reason"); given != meta.end()) {
    if (!given->is_string() || utf8_length(given->get_ref<const std::string&>()) > 500) {
      return "_meta \"io.toolmux/reason\" must be a string of at most 500 characters";
    }
    reason = given->get<std::string>();
  }
  return std::nullopt;
}

void respond_error(Session& session, const json& id, int code, std::string_view message,
                   json data = nullptr) {
  session.send_related(jsonrpc::make_error(id, code, message, std::move(data)), id);
}

// Adds the extensions the server declares (src/protocol/extensions.h) to
// `capabilities`, beside any it declares already; none: no "extensions".
void add_extensions(json& capabilities, const Catalog& catalog) {
  json declared = server_extensions(catalog);
  for (auto& [id, settings] : declared.items())
    capabilities["extensions"][id] = std::move(settings);
}

void respond_error(Session& session, const json& id, const JsonRpcError& e) {
  respond_error(session, id, e.code, e.message, e.data);
}

// Lists may be shared by every caller unless the operator's access rules
// name principals: then what one sees depends on who asks.
std::string list_cache_scope(const Catalog& catalog) {
  for (const auto& [principal, rule] : catalog.policy.access) {
    if (principal != "*") return "private";
  }
  return "public";
}

// Violations outside the arguments of a tools/call make the whole message
// invalid; those inside the arguments are the argument check's to report.
const JsonViolation* first_violation_outside(const std::vector<JsonViolation>& violations,
                                             std::string_view allowed_prefix) {
  for (const auto& v : violations) {
    const bool inside =
        !allowed_prefix.empty() && v.pointer.rfind(allowed_prefix, 0) == 0 &&
        (v.pointer.size() == allowed_prefix.size() || v.pointer[allowed_prefix.size()] == '/');
    if (!inside) return &v;
  }
  return nullptr;
}

}  // namespace

ServerOptions server_options_for(const ServeOptions& serve,
                                 std::shared_ptr<LazyResultStore> results) {
  ServerOptions options;
  options.page_size = serve.page_size;
  options.results = std::move(results);
  options.call_limits.max_running = serve.max_calls;
  options.call_limits.max_running_per_session = serve.max_session_calls;
  options.call_limits.max_queued = serve.max_queued_calls;
  options.call_limits.max_queued_per_session =
      serve.http ? serve.max_session_queued_calls : serve.max_queued_calls;
  return options;
}

McpServer::McpServer(std::shared_ptr<const Catalog> catalog, ServerOptions options, Logger& logger,
                     Metrics& metrics)
    : catalog_(std::move(catalog)),
      options_(std::move(options)),
      logger_(logger),
      admission_(std::make_unique<CallAdmission>(options_.call_limits, &metrics)),
      state_key_(options_.state_key ? options_.state_key
                                    : std::make_shared<const SealingKey>(SealingKey::random())),
      tasks_(std::make_unique<Tasks>(options_.tasks, logger)),
      runner_(std::make_unique<CallRunner>(
          build_call_pipeline(
              logger, metrics, running_, options_.results, options_.journal,
              [this] { return this->catalog(); }, options_.approvers),
          *admission_, [this] { return this->catalog(); }, options_.provider_timeout, logger,
          metrics, tasks_.get())) {
  // A running tools/call uses two threads (its own and its handler's, see
  // stages::deadline), any other admitted request one: the pool never needs more.
  call_threads().set_max_threads(2 * options_.call_limits.max_running);
  // The journal opens on a thread of its own (src/app/journal_for.h): the
  // sessions initialized meanwhile hear of interrupted calls once it is open.
  if (options_.journal) {
    options_.journal->on_ready([this] {
      std::vector<std::shared_ptr<Session>> open;
      {
        std::lock_guard lock(catalog_mutex_);
        for (const auto& weak : sessions_) {
          if (auto session = weak.lock()) open.push_back(std::move(session));
        }
      }
      for (const auto& session : open) tell_interrupted(session);
    });
  }
  auto bind = [this](void (McpServer::*method)(const Message&, const std::shared_ptr<Session>&)) {
    return [this, method](Message& m, const std::shared_ptr<Session>& s, Carrier) {
      (this->*method)(m, s);
    };
  };
  methods_.emplace("initialize", bind(&McpServer::initialize));
  methods_.emplace("ping", [](Message& m, const std::shared_ptr<Session>& s, Carrier) {
    s->send_related(jsonrpc::make_result(m.id, json::object()), m.id);
  });
  methods_.emplace("tools/list", bind(&McpServer::list_tools));
  methods_.emplace("tools/call", [this](Message& m, const std::shared_ptr<Session>& s,
                                        Carrier carrier) { call_tool(m, s, carrier); });
  methods_.emplace("logging/setLevel", bind(&McpServer::set_log_level));
  methods_.emplace("server/discover", bind(&McpServer::discover));
  for (const char* method : {"tasks/get", "tasks/update", "tasks/cancel"}) {
    methods_.emplace(method, bind(&McpServer::task_method));
  }
  // Served by handle_modern itself (it needs the carrying session).
  methods_.emplace("subscriptions/listen",
                   [](Message&, const std::shared_ptr<Session>&, Carrier) {});
  provider_methods_ = std::make_unique<ProviderMethods>(
      [this] { return this->catalog(); }, options_.page_size, options_.provider_timeout, logger_,
      *admission_, state_key_);
  placed_methods_.emplace("tools/call");
  for (auto& [name, handler] : provider_methods_->handlers()) {
    placed_methods_.emplace(name);
    methods_.emplace(name, [handler = handler](Message& m, const std::shared_ptr<Session>& s,
                                               Carrier) { handler(m, s); });
  }
  for (auto& [name, handler] : skill_methods([this] { return this->catalog(); })) {
    methods_.emplace(name, [handler = handler](Message& m, const std::shared_ptr<Session>& s,
                                               Carrier) { handler(m, s); });
  }
  if (catalog_->providers) catalog_->providers->connect(provider_methods_->subscriptions());
}

McpServer::~McpServer() {
  if (options_.journal) options_.journal->on_ready({});
  listeners_.end_all();
  admission_->close();
}

bool McpServer::takes_a_place(const Message& m) const {
  return m.kind == Message::Kind::request && placed_methods_.count(m.method) > 0;
}

bool McpServer::has_room_for(const Message& m, const Session& session) const {
  // A request of the 2026-07-28 protocol gets an admission key of its own
  // (Session::for_request): only the server-wide limits apply to it.
  return admission_->has_room(modern::is_modern(m) ? std::string_view() : session.admission_key());
}

void McpServer::handle(Message m, const std::shared_ptr<Session>& session, Carrier carrier) {
  switch (m.kind) {
    case Message::Kind::invalid:
      logger_.write(LogLevel::info, "invalid_message",
                    {{"session", session->label()}, {"code", m.error_code}, {"reason", m.error}});
      respond_error(*session, m.id, m.error_code, m.error);
      return;
    case Message::Kind::response:
      // The answer to a request a tool sent the client (elicitation, sampling).
      if (!session->deliver_response(m.id, m.response)) {
        logger_.write(LogLevel::debug, "unexpected_response",
                      {{"session", session->label()}, {"id", m.id}});
      }
      return;
    case Message::Kind::notification:
      handle_notification(m, session);
      return;
    case Message::Kind::request:
      handle_request(m, session, carrier);
      return;
  }
}

void McpServer::handle_request(Message& m, const std::shared_ptr<Session>& session,
                               Carrier carrier) {
  const std::string_view arguments_pointer = m.method == "tools/call" ? "/params/arguments" : "";
  if (const JsonViolation* v = first_violation_outside(m.violations, arguments_pointer)) {
    respond_error(*session, m.id, jsonrpc::kInvalidRequest,
                  "Invalid request: " + v->message + " at " + v->pointer);
    return;
  }
  // A request's span; a tools/call's is its runner's (src/pipeline/call_runner.h).
  std::optional<TraceContext> parent;
  Span span;
  if (tracing_on() && m.method != "tools/call") {
    parent = request_trace(m.params);
    span = Span::start(m.method, SpanKind::server, parent ? &*parent : nullptr);
    span.set("mcp.method.name", m.method);
    span.set("mcp.session.id", session->label());
  }
  SpanScope scope(span.context());
  if (modern::is_modern(m)) {
    handle_modern(m, session, carrier);
    return;
  }
  auto it = methods_.find(m.method);
  if (it == methods_.end() || m.method == "server/discover" || m.method == "subscriptions/listen") {
    respond_error(*session, m.id, jsonrpc::kMethodNotFound, "Method not found: " + m.method);
    return;
  }
  // Lifecycle: before initialize, only initialize and ping are served.
  if (!session->initialized() && m.method != "initialize" && m.method != "ping") {
    respond_error(*session, m.id, jsonrpc::kInvalidRequest,
                  "Session not initialized: send \"initialize\" before \"" + m.method + "\"");
    return;
  }
  // A session restored after a restart did not initialize here: it is told
  // of catalog changes from its first request on.
  if (session->initialized()) watch(session);
  try {
    it->second(m, session, carrier);
  } catch (const std::exception& e) {
    // Our own bug, not the client's: say so without details that could leak.
    logger_.write(LogLevel::error, "internal_error", {{"method", m.method}, {"what", e.what()}});
    respond_error(*session, m.id, jsonrpc::kInternalError, "Internal error");
  }
}

void McpServer::handle_modern(Message& m, const std::shared_ptr<Session>& carrier_session,
                              Carrier carrier) {
  auto meta = modern::read_meta(m);
  if (const auto* e = std::get_if<JsonRpcError>(&meta)) {
    respond_error(*carrier_session, m.id, *e);
    return;
  }
  auto it = methods_.find(m.method);
  if (!modern::has_method(m.method) || it == methods_.end()) {
    const bool legacy_only = it != methods_.end();
    respond_error(*carrier_session, m.id, jsonrpc::kMethodNotFound,
                  "Method not found: " + m.method +
                      (legacy_only ? " (the 2026-07-28 protocol has no such method; it is served "
                                     "only after initialize)"
                                   : ""));
    return;
  }
  if (m.method == "subscriptions/listen") {
    listen(m, carrier_session, std::get<RequestMeta>(std::move(meta)));
    return;
  }
  const std::string scope = m.method == "resources/read" ? "private" : list_cache_scope(*catalog());
  // What the request's calls store belongs to whoever carries it: the stdio
  // process, or the principal of an HTTP request (transports/http_sessions.h).
  auto view = Session::for_request(
      carrier_session, std::get<RequestMeta>(std::move(meta)), carrier_session->id(),
      std::make_shared<modern::ModernSink>(carrier_session, m.method, scope));
  try {
    it->second(m, view, carrier);
  } catch (const std::exception& e) {
    logger_.write(LogLevel::error, "internal_error", {{"method", m.method}, {"what", e.what()}});
    respond_error(*view, m.id, jsonrpc::kInternalError, "Internal error");
  }
}

void McpServer::discover(const Message& m, const std::shared_ptr<Session>& session) {
  json result{
      {"supportedVersions", modern::supported_versions()},
      {"capabilities",
       {{"tools", {{"listChanged", true}}},
        {"resources", {{"subscribe", true}, {"listChanged", true}}},
        {"prompts", {{"listChanged", true}}},
        {"completions", json::object()},
        {"logging", json::object()}}},
      {"instructions", server_instructions(*catalog())},
  };
  add_extensions(result["capabilities"], *catalog());
  session->send_related(jsonrpc::make_result(m.id, std::move(result)), m.id);
}

void McpServer::listen(const Message& m, const std::shared_ptr<Session>& carrier_session,
                       RequestMeta meta) {
  auto read = Listeners::read_filter(m.params);
  if (const auto* bad = std::get_if<std::string>(&read)) {
    respond_error(*carrier_session, m.id, jsonrpc::kInvalidParams, "Invalid params: " + *bad);
    return;
  }
  ListenFilter filter = std::get<ListenFilter>(std::move(read));
  auto control = carrier_session->begin_call(m.id);
  if (!control) {
    carrier_session->send_related(duplicate_request_error(m.id), m.id);
    return;
  }
  if (filter.uris.empty()) {
    open_listen(m.id, carrier_session, std::move(meta), control, filter);
    return;
  }
  // The providers of the URIs are asked to watch them first (an upstream may
  // take a while): on a call thread. A URI no provider has is left out of
  // what is agreed.
  const bool posted = call_threads().post([this, id = m.id, carrier_session, control,
                                           meta = std::move(meta),
                                           filter = std::move(filter)]() mutable {
    auto served = catalog();
    SessionCallContext context(carrier_session, control, id, nullptr,
                               "toolmux/subscriptions/listen");
    for (auto it = filter.uris.begin(); it != filter.uris.end() && !control->stop_requested();) {
      ProviderStatus watched = served->providers
                                   ? served->providers->subscribe(*it, context)
                                   : ProviderStatus(ProviderError::resource_not_found(*it));
      if (watched.ok()) {
        ++it;
        continue;
      }
      logger_.write(LogLevel::info, "listen_uri_left_out",
                    {{"session", carrier_session->label()},
                     {"uri", *it},
                     {"reason", watched.error().message}});
      it = filter.uris.erase(it);
    }
    context.finish();
    if (control->stop_requested()) {
      carrier_session->request_finished(id);  // cancelled meanwhile: no response
      carrier_session->end_call(id);
      return;
    }
    open_listen(id, carrier_session, std::move(meta), control, filter);
  });
  if (!posted) {
    carrier_session->end_call(m.id);
    respond_error(*carrier_session, m.id, jsonrpc::kServerBusy,
                  "toolmux is busy: no thread could be started for subscriptions/listen (the "
                  "system refused one); try again later");
  }
}

void McpServer::open_listen(const json& id, const std::shared_ptr<Session>& carrier_session,
                            RequestMeta meta, const std::shared_ptr<CallControl>& control,
                            const ListenFilter& filter) {
  auto listener = Session::for_request(carrier_session, std::move(meta), carrier_session->id(),
                                       std::make_shared<ListenSink>(carrier_session, id, filter));
  const bool added = listeners_.add(id, listener, control, [carrier_session, id] {
    carrier_session->request_finished(id);  // cancelled: no response
    carrier_session->end_call(id);
  });
  if (!added) {
    carrier_session->end_call(id);
    respond_error(*carrier_session, id, jsonrpc::kServerBusy,
                  "toolmux is busy: " + std::to_string(Listeners::kMaxListeners) +
                      " subscriptions/listen requests are open (the limit); try again later");
    return;
  }
  logger_.write(LogLevel::info, "listening",
                {{"session", carrier_session->label()}, {"notifications", filter.to_json()}});
  // The acknowledgment goes first; changes are told from then on.
  listener->send_related(jsonrpc::make_notification("notifications/subscriptions/acknowledged",
                                                    {{"notifications", filter.to_json()}}),
                         id);
  if (filter.tools) {
    std::lock_guard lock(catalog_mutex_);
    sessions_.push_back(listener);
  }
  auto& subscriptions = *provider_methods_->subscriptions();
  if (filter.prompts || filter.resources) subscriptions.add_session(listener);
  for (const std::string& uri : filter.uris) subscriptions.subscribe(listener, uri);
}

void McpServer::handle_notification(const Message& m, const std::shared_ptr<Session>& session) {
  if (m.method == "notifications/cancelled") {
    if (m.params.is_object() && m.params.contains("requestId")) {
      session->cancel_call(m.params["requestId"]);
    }
  } else if (m.method == "notifications/initialized") {
    // The session is usable from the initialize response on; now it is
    // ready to hear what happened while toolmux was down. While the journal
    // is still opening, its hook (see the constructor) tells it instead.
    if (options_.journal && options_.journal->ready()) tell_interrupted(session);
  } else {
    logger_.write(LogLevel::debug, "ignored_notification",
                  {{"session", session->label()}, {"method", m.method}});
  }
}

void McpServer::tell_interrupted(const std::shared_ptr<Session>& session) {
  if (!options_.journal || !options_.journal->store() || !session->wants_log(LogLevel::warning)) {
    return;
  }
  json calls = json::array();
  {
    std::lock_guard lock(interrupted_mutex_);
    const auto& interrupted = options_.journal->store()->interrupted();
    for (const JournalEntry& entry : interrupted) {
      if (entry.intent.principal != session->principal()) continue;
      if (!interrupted_told_.insert(entry.intent.call_id).second) continue;
      calls.push_back({{"callId", entry.intent.call_id},
                       {"tool", entry.intent.tool},
                       {"approver", entry.intent.approver}});
    }
  }
  if (calls.empty()) return;
  session->send({{"jsonrpc", "2.0"},
                 {"method", "notifications/message"},
                 {"params",
                  {{"level", "warning"},
                   {"logger", "toolmux"},
                   {"data",
                    {{"event", "calls_interrupted"},
                     {"message",
                      "toolmux stopped while these calls ran; each may or may not have acted, "
                      "and none was run again (toolmux journal lists them)"},
                     {"calls", std::move(calls)}}}}}});
}

void McpServer::initialize(const Message& m, const std::shared_ptr<Session>& session) {
  if (session->initialized()) {
    respond_error(*session, m.id, jsonrpc::kInvalidRequest,
                  "Invalid request: the session is already initialized");
    return;
  }
  const json& params = m.params;
  if (!params.is_object() || !params.contains("protocolVersion") ||
      !params["protocolVersion"].is_string()) {
    respond_error(*session, m.id, jsonrpc::kInvalidParams,
                  "Invalid params: initialize needs \"protocolVersion\" (a string)");
    return;
  }
  // Version negotiation: answer with the client's version when we speak it,
  // else with our latest, and let the client decide whether to go on.
  const std::string requested = params["protocolVersion"].get<std::string>();
  const std::string version =
      supported_protocol_version(requested) ? requested : kLatestProtocolVersion;
  session->set_initialized(version, params.value("capabilities", json::object()),
                           params.value("clientInfo", json::object()));
  logger_.write(LogLevel::info, "session_initialized",
                {{"session", session->label()},
                 {"protocol_version", version},
                 {"client", params.value("clientInfo", json::object()).value("name", "")}});

  watch(session);
  // listChanged: discovery adds tools to a session's list, and a catalog
  // reload or an upstream's change replaces the list.
  json result{
      {"protocolVersion", version},
      {"capabilities",
       {{"tools", {{"listChanged", true}}},
        {"logging", json::object()},
        {"resources", {{"subscribe", true}, {"listChanged", true}}},
        {"prompts", {{"listChanged", true}}},
        {"completions", json::object()}}},
      {"serverInfo", {{"name", "toolmux"}, {"title", "toolmux"}, {"version", TOOLMUX_VERSION}}},
  };
  // What the catalog serving now offers (a reload may have changed it).
  result["instructions"] = server_instructions(*catalog());
  add_extensions(result["capabilities"], *catalog());
  session->send_related(jsonrpc::make_result(m.id, std::move(result)), m.id);
}

void McpServer::watch(const std::shared_ptr<Session>& session) {
  if (!session->watch_once()) return;
  {
    std::lock_guard lock(catalog_mutex_);
    std::erase_if(sessions_, [](const std::weak_ptr<Session>& s) { return s.expired(); });
    sessions_.push_back(session);
  }
  provider_methods_->subscriptions()->add_session(session);
}

void McpServer::replace_catalog(std::shared_ptr<const Catalog> catalog) {
  std::vector<std::shared_ptr<Session>> open;
  {
    std::lock_guard lock(catalog_mutex_);
    catalog_ = std::move(catalog);
    if (catalog_->providers) catalog_->providers->connect(provider_methods_->subscriptions());
    for (const auto& weak : sessions_) {
      if (auto session = weak.lock()) open.push_back(std::move(session));
    }
    std::erase_if(sessions_, [](const std::weak_ptr<Session>& s) { return s.expired(); });
  }
  for (const auto& session : open) {
    session->send({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
  }
  // The resources and prompts come from the new catalog's providers too.
  provider_methods_->subscriptions()->resources_list_changed();
  provider_methods_->subscriptions()->prompts_list_changed();
}

void McpServer::list_tools(const Message& m, const std::shared_ptr<Session>& session) {
  const std::shared_ptr<const Catalog> catalog = this->catalog();
  // A caller sees only the tools the operator's access rules let it call.
  std::vector<const json*> visible;
  // With discovery on, the rest of the catalog joins as searches find it.
  for (const json& tool : catalog->published) {
    const std::string& name = tool["name"].get_ref<const std::string&>();
    if (catalog->policy.denial(session->principal(), name)) continue;

    // A 2026-07-28 request's list is the same for every connection: the
    // pinned tools; what a search finds is called by name.
    if (catalog->discovery && !catalog->always_listed.count(name) && !session->discovered(name)) {
      continue;
    }
    // call_tool says the worst this caller can reach through it.
    const json* own = call_tool_listing(*catalog, session->principal(), tool);
    visible.push_back(own ? own : &tool);
  }
  std::size_t offset = 0;
  if (m.params.is_object() && m.params.contains("cursor") && !m.params["cursor"].is_null()) {
    const json& cursor = m.params["cursor"];
    std::optional<std::size_t> decoded;
    if (cursor.is_string()) decoded = decode_tool_list_cursor(cursor.get<std::string>());
    if (!decoded || *decoded > visible.size()) {
      respond_error(*session, m.id, jsonrpc::kInvalidParams, "Invalid params: unknown cursor");
      return;
    }
    offset = *decoded;
  }
  const std::size_t page = options_.page_size == 0 ? visible.size() : options_.page_size;
  const std::size_t end = std::min(visible.size(), offset + page);
  json listed = json::array();
  for (std::size_t i = offset; i < end; ++i) listed.push_back(*visible[i]);
  json result{{"tools", std::move(listed)}};
  if (end < visible.size()) result["nextCursor"] = encode_tool_list_cursor(end);
  session->send_related(jsonrpc::make_result(m.id, std::move(result)), m.id);
}

void McpServer::set_log_level(const Message& m, const std::shared_ptr<Session>& session) {
  std::optional<LogLevel> level;
  if (m.params.is_object() && m.params.contains("level") && m.params["level"].is_string()) {
    level = log_level_from_name(m.params["level"].get<std::string>());
  }
  if (!level) {
    respond_error(*session, m.id, jsonrpc::kInvalidParams,
                  "Invalid params: \"level\" must be one of debug, info, notice, warning, error, "
                  "critical, alert, emergency");
    return;
  }
  session->set_log_level(*level);
  session->send_related(jsonrpc::make_result(m.id, json::object()), m.id);
}

void McpServer::task_method(const Message& m, const std::shared_ptr<Session>& session) {
  if (!tasks_negotiated(session->client_capabilities())) {
    respond_error(*session, m.id, tasks_not_negotiated(m.method));
    return;
  }
  const std::string& principal = session->principal();
  auto answer = m.method == "tasks/get"      ? tasks_->get(principal, m.params)
                : m.method == "tasks/update" ? tasks_->update(principal, m.params)
                                             : tasks_->cancel(principal, m.params);
  if (auto* e = std::get_if<JsonRpcError>(&answer)) {
    respond_error(*session, m.id, *e);
    return;
  }
  session->send_related(jsonrpc::make_result(m.id, std::get<json>(std::move(answer))), m.id);
}

void McpServer::call_tool(Message& m, const std::shared_ptr<Session>& session, Carrier carrier) {
  json& params = m.params;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    respond_error(*session, m.id, jsonrpc::kInvalidParams,
                  "Invalid params: tools/call needs \"name\" (a string)");
    return;
  }
  CallRequest request;
  request.id = m.id;
  request.name = params["name"].get<std::string>();
  if (tracing_on()) request.trace_parent = request_trace(params);
  if (params.contains("_meta") && params["_meta"].is_object()) {
    const json& meta = params["_meta"];
    request.progress_token = meta.value("progressToken", json(nullptr));
    if (auto problem = read_call_meta(meta, request.idempotency_key, request.reason)) {
      request.invalid = JsonRpcError::invalid_params(*problem);
    }
  }
  // A 2026-07-28 request asks its client through its answer (MRTR): a retry
  // brings the state and the answers.
  if (!request.invalid && session->request_meta()) {
    auto opened =
        InputExchange::open(params,
                            RequestBinding{session->principal(), "tools/call", request.name,
                                           params.value("arguments", json(nullptr))},
                            state_key_);
    if (auto* e = std::get_if<JsonRpcError>(&opened)) {
      request.invalid = std::move(*e);
    } else {
      request.exchange = std::get<std::shared_ptr<InputExchange>>(std::move(opened));
    }
  }
  // Moved, not copied: a large message's arguments are held once.
  if (auto it = params.find("arguments"); it != params.end()) {
    request.arguments.value = std::move(*it);
  }
  request.arguments.violations = violations_under(m.violations, "/params/arguments");
  runner_->run(std::move(request), session, carrier);
}

}  // namespace toolmux
