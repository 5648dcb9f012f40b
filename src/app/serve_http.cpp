#include "src/app/serve_http.h"

#include <pthread.h>
#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <thread>

#include "catalog/skills.h"
#include "src/app/journal_for.h"
#include "src/app/oauth_scopes.h"
#include "src/app/session_directory.h"
#include "src/app/state_key.h"
#include "src/app/status_board.h"
#include "src/app/telemetry_for.h"
#include "src/base/file_io.h"
#include "src/base/redact.h"
#include "src/protocol/mcp_server.h"
#include "src/session/session_manager.h"
#include "src/store/pg_session_store.h"
#include "src/store/session_store.h"
#include "transports/http_server.h"

namespace toolmux {
namespace {

constexpr std::size_t kMaxTokensFileBytes = std::size_t{1} << 20;

// Tokens come from a file or the environment, never the command line (where
// any user of the machine could read them in the process list).
// invalid_argument (io_error for an unreadable file) naming where the bad
// entry came from.
Status load_tokens(const ServeOptions& options, std::map<std::string, std::string>& tokens) {
  if (!options.tokens_file.empty()) {
    // Only a regular file, of a bounded size: a FIFO named by mistake is
    // refused at once, never waited on.
    Result<std::string> text = read_regular_file(options.tokens_file, kMaxTokensFileBytes);
    if (!text.ok()) return Status::io_error("the tokens file: " + text.message());
    if (Status parsed = parse_tokens(*text, tokens); !parsed.ok()) {
      return Status::invalid_argument(options.tokens_file.string() + ": " + parsed.message());
    }
  }
  if (const char* env = std::getenv("TOOLMUX_TOKENS"); env && *env) {
    if (Status parsed = parse_tokens(env, tokens); !parsed.ok()) {
      return Status::invalid_argument("TOOLMUX_TOKENS: " + parsed.message());
    }
  }
  // Every token is a secret: it never appears in a result or a log line.
  for (const auto& [token, principal] : tokens) register_secret(token);
  return Status::ok_status();
}

// The OAuth resource server of --auth-issuer and --resource-url, in `http`;
// ok with none when neither is given. invalid_argument saying what is wrong
// with them (one without the other, a URL that is not HTTPS off loopback, an
// unreadable introspection secret).
// What the command line says of OAuth, over the catalog file's "authorization":
// its issuers are added to the file's; its resource URL, scopes and
// introspection client, when given, replace the file's.
AuthorizationSettings authorization_for(const ServeOptions& options, const Catalog& catalog) {
  AuthorizationSettings settings = catalog.authorization;
  for (const auto& issuer : options.auth_issuers) {
    if (std::find(settings.issuers.begin(), settings.issuers.end(), issuer) ==
        settings.issuers.end()) {
      settings.issuers.push_back(issuer);
    }
  }
  if (!options.resource_url.empty()) settings.resource = options.resource_url;
  if (!options.auth_scopes.empty()) settings.scopes = options.auth_scopes;
  if (!options.introspection_client_id.empty()) {
    settings.introspection_client = options.introspection_client_id;
  }
  return settings;
}

Status oauth_for(const ServeOptions& options, const AuthorizationSettings& settings,
                 HttpOptions& http) {
  if (settings.issuers.empty() && settings.resource.empty()) {
    if (!settings.scopes.empty() || !settings.introspection_client.empty()) {
      return Status::invalid_argument(
          "OAuth scopes and an introspection client need issuers (--auth-issuer) and a "
          "resource URL (--resource-url)");
    }
    return Status::ok_status();
  }
  OAuthResourceOptions oauth;
  oauth.issuers = settings.issuers;
  oauth.resource = settings.resource;
  for (const auto& [scope, classes] : settings.scopes) oauth.scopes_supported.push_back(scope);
  if (!settings.introspection_client.empty()) {
    oauth.introspection_client_id = settings.introspection_client;
    if (!options.introspection_secret_file.empty()) {
      auto text = read_regular_file(options.introspection_secret_file, std::size_t{64} * 1024);
      if (!text.ok())
        return Status::invalid_argument("the introspection secret file: " + text.message());
      std::string secret = *text;
      while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
      oauth.introspection_client_secret = secret;
    } else if (const char* env = std::getenv("TOOLMUX_INTROSPECTION_SECRET"); env && *env) {
      oauth.introspection_client_secret = env;
    } else {
      return Status::invalid_argument(
          "--introspection-client needs its secret: --introspection-secret-file or "
          "$TOOLMUX_INTROSPECTION_SECRET");
    }
    register_secret(oauth.introspection_client_secret);
  }
  if (Status checked = check_oauth_resource_options(oauth); !checked.ok()) return checked;
  http.oauth = std::make_shared<OAuthResource>(std::move(oauth));
  return Status::ok_status();
}

}  // namespace

sigset_t block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

int serve_http(CatalogHost& host, const ServeStores& stores, const ServeOptions& options,
               Logger& logger) {
  // Signals are taken by one thread with sigwait; every thread started from
  // here on inherits the blocked mask.
  const sigset_t stop_signals = block_stop_signals();

  HttpOptions http;
  http.host = options.http_host;
  http.port = options.http_port;
  http.path = options.http_path;
  http.allowed_hosts = options.allowed_hosts;
  http.allowed_origins = options.allowed_origins;
  http.max_body_bytes = options.max_message_bytes;
  http.max_connections = options.max_connections;
  http.max_connections_per_client = options.max_connections_per_client;
  http.header_timeout = std::chrono::seconds(options.header_timeout_seconds);
  http.body_timeout = std::chrono::seconds(options.body_timeout_seconds);
  if (Status loaded = load_tokens(options, http.tokens); !loaded.ok()) {
    logger.write(LogLevel::error, "refusing_to_start", {{"reason", loaded.message()}});
    return 2;
  }
  const AuthorizationSettings authorization = authorization_for(options, *host.current());
  if (Status oauth = oauth_for(options, authorization, http); !oauth.ok()) {
    logger.write(LogLevel::error, "refusing_to_start", {{"reason", oauth.message()}});
    return 2;
  }

  const std::filesystem::path data_dir =
      options.data_dir.empty() ? default_data_dir() : options.data_dir;
  // With a shared store, every instance finds every legacy session.
  Result<std::unique_ptr<SessionStore>> opened = Status::io_error("no session store");
  if (!stores.shared) {
    opened = SessionStore::open(data_dir);
  } else if (auto pg = PgSessionStore::open(stores.shared, logger); pg.ok()) {
    // A stream open on another instance hears of the events stored here.
    if (stores.cluster) (*pg)->set_append_notice(stores.instance_id);
    opened = std::unique_ptr<SessionStore>(std::move(*pg));
  } else {
    opened = pg.status();
  }
  if (!opened.ok()) {
    logger.write(LogLevel::error, "refusing_to_start", {{"reason", opened.message()}});
    return 2;
  }
  std::unique_ptr<SessionStore> store = std::move(opened).value();

  Metrics metrics;
  // Spans and metrics over OTLP, while serving (--otlp-endpoint).
  auto telemetry = telemetry_for(options, metrics, logger);
  if (!telemetry.ok()) {
    logger.write(LogLevel::error, "refusing_to_start", {{"reason", telemetry.message()}});
    return 2;
  }
  const std::unique_ptr<OtlpExporter> exporter = std::move(telemetry).value();
  // These are left to process exit when a connection thread outlives the
  // drain (see the end): held by pointer, not on the stack.
  const std::shared_ptr<const Catalog> catalog = host.current();
  ServerOptions server_options = server_options_for(options, stores.results);
  server_options.state_key = state_key_for(options, stores.shared.get(), logger);
  server_options.tasks = stores.tasks;
  server_options.journal = journal_for(options, logger, stores.shared, stores.instance_id);
  // Over HTTP a guarded call is approved by an authenticated principal, or not at all.
  server_options.approvers =
      !http.tokens.empty() || http.oauth ? Approvers::authenticated : Approvers::nobody;
  // The status page reads the audit trail from the same store.
  std::shared_ptr<const CallJournal> journal = server_options.journal;
  auto server_holder =
      std::make_unique<McpServer>(catalog, std::move(server_options), logger, metrics);
  McpServer& server = *server_holder;
  // A reload or an upstream's change: served from then on, clients told.
  const int listener = host.add_listener(
      [&server](std::shared_ptr<const Catalog> next) { server.replace_catalog(std::move(next)); });
  struct Unlisten {
    CatalogHost& host;
    int id;
    ~Unlisten() { host.remove_listener(id); }
  } unlisten{host, listener};

  SessionLimits limits;
  limits.max_sessions = options.max_sessions;
  limits.idle_timeout = std::chrono::seconds(options.session_idle_seconds);
  auto sessions_holder =
      std::make_unique<SessionDirectory>(server, limits, store.get(), stores.results, logger);
  SessionManager& sessions = sessions_holder->manager();
  if (stores.cluster) {
    // A session ended here is forgotten by the others at once, and theirs here.
    sessions.set_end_listener(
        [cluster = stores.cluster](const std::string& id) { cluster->session_ended(id); });
    stores.cluster->set_session_forgetter(
        [&sessions](const std::string& digest) { sessions.forget_ended_elsewhere(digest); });
    stores.cluster->set_session_waker(
        [&sessions](const std::string& digest) { sessions.look_again_elsewhere(digest); });
  }

  http.json_limits = server.json_limits();
  auto status_holder =
      std::make_unique<StatusBoard>(host, *sessions_holder, journal, StatusLimits{},
                                    stores.instance_id, stores.shared ? "postgresql" : "rocksdb");
  http.status_page = std::string(status_page_html());
  http.status_snapshot = [board = status_holder.get()] { return board->snapshot(); };
  http.status_principals = options.status_principals;
  if (http.oauth && !authorization.scopes.empty()) {
    http.challenge_scope = connect_scope(scope_grants(authorization.scopes));
    http.scope_needed = [&host, grants = scope_grants(authorization.scopes)](
                            std::string_view method, const nlohmann::json& params,
                            const std::vector<std::string>& scopes) {
      return scope_needed(*host.current(), grants, method, params, scopes);
    };
  }
  // A tool's Mcp-Param-* headers (SEP-2243) are checked against the catalog
  // being served; an alias or an unknown name has none to check.
  http.param_headers_of = [&host](std::string_view name) -> std::vector<ParamHeader> {
    const std::shared_ptr<const Catalog> now = host.current();
    const RegisteredTool* tool = now->registry->find(name);
    if (!tool) return {};
    const auto schema = tool->descriptor.find("inputSchema");
    if (schema == tool->descriptor.end()) return {};
    auto declared = declared_param_headers(*schema);
    return declared.ok() ? std::move(declared).value() : std::vector<ParamHeader>{};
  };
  auto http_holder = std::make_unique<HttpServer>(*sessions_holder, metrics, logger, http);
  HttpServer& http_server = *http_holder;
  if (Status bound = http_server.bind(); !bound.ok()) {
    logger.write(LogLevel::error, "refusing_to_start", {{"reason", bound.message()}});
    return 2;
  }
  const bool loopback = http.host == "127.0.0.1" || http.host == "localhost" || http.host == "::1";
  std::string shown_host =
      http.host.find(':') != std::string::npos ? "[" + http.host + "]" : http.host;
  nlohmann::json serving{
      {"transport", "http"},
      {"url", "http://" + shown_host + ":" + std::to_string(http_server.port()) + http.path},
      {"auth", http.oauth            ? (http.tokens.empty() ? "oauth" : "oauth+bearer")
               : http.tokens.empty() ? "none"
                                     : "bearer"},
      {"tools", catalog->registry->tools().size()},
      {"sessions", sessions.count()}};
  if (catalog->skills) serving["skills"] = catalog->skills->listing();
  logger.write(LogLevel::info, "serving", serving);
  const bool authenticating = !http.tokens.empty() || http.oauth;
  if (!authenticating && !http.status_principals.empty()) {
    logger.write(LogLevel::warning, "status_principals_unused",
                 {{"reason",
                   "--status-principal names principals, but without bearer tokens every "
                   "client is \"local\" and may see the status page"}});
  }
  if (!loopback && !authenticating) {
    logger.write(LogLevel::warning, "no_auth",
                 {{"reason", "listening beyond this machine without bearer tokens"}});
  }

  std::thread signal_waiter([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    logger.write(LogLevel::info, "stopping",
                 {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
    http_server.stop();
  });

  const bool listened = http_server.run();
  if (!listened) {
    // run() returned without a signal: wake the waiter so it can be joined
    // (the signal is blocked in every thread, so sigwait takes it).
    kill(getpid(), SIGTERM);
  }
  signal_waiter.join();
  // Listens end at once (with their result); other calls may finish.
  server.end_listens();

  // Running calls get the grace period to finish, then are cancelled.
  const auto grace = std::chrono::seconds(options.shutdown_grace_seconds);
  const auto until = std::chrono::steady_clock::now() + grace;
  bool drained = true;
  // The sessions', and the calls of 2026-07-28 requests still being served.
  for (const auto& session : sessions_holder->all()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    drained &= session->wait_for_calls(std::max(left, std::chrono::milliseconds(0)));
  }
  if (!drained) {
    for (const auto& session : sessions_holder->all()) session->cancel_all_calls();
    for (const auto& session : sessions_holder->all()) {
      session->wait_for_calls(std::chrono::seconds(2));
    }
  }
  server.wait_for_running_tools(std::chrono::seconds(2));
  if (stores.cluster) {
    // The link is stopped after this returns; the sessions may outlive it
    // (below): neither reaches the other from here on.
    stores.cluster->set_session_forgetter({});
    stores.cluster->set_session_waker({});
    sessions.set_end_listener({});
  }
  store->flush();
  logger.write(LogLevel::info, "stopped", {{"calls_drained", drained}});
  if (http_server.connection_threads() > 0) {
    // A thread still waits on a kept-alive connection (it ends within the
    // keep-alive timeout): a request arriving there must not find the server
    // freed, so everything it can reach stays until the process exits.
    static_cast<void>(http_holder.release());
    static_cast<void>(status_holder.release());
    static_cast<void>(sessions_holder.release());
    static_cast<void>(server_holder.release());
    static_cast<void>(store.release());
  }
  return listened ? 0 : 1;
}

}  // namespace toolmux
