#include "transports/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>

#include "src/elastic_threads.h"
#include "src/jsonrpc.h"
#include "transports/http_streams.h"

namespace toolmux {

using nlohmann::json;

namespace {

// A thread for each connection (ElasticThreads): cpp-httplib's fixed pool
// would leave connections unserved while others (open SSE streams,
// keep-alive) hold every thread. cpp-httplib deletes its task queue when it
// stops, while a thread may still wait on an idle keep-alive connection (up to
// the keep-alive timeout): the pool outlives the queue, and shutdown() waits
// for it only briefly (HttpServer then leaves the server object to process exit).
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(std::shared_ptr<ElasticThreads> pool) : pool_(std::move(pool)) {}
  void enqueue(std::function<void()> fn) override {
    // No thread to be had (the system refused one and no connection thread is
    // alive): the listening thread serves the connection itself, since `fn`
    // alone can close its socket; accepting resumes when it is done.
    auto shared = std::make_shared<std::function<void()>>(std::move(fn));
    if (!pool_->post([shared] { (*shared)(); })) (*shared)();
  }
  void shutdown() override { pool_->shutdown(std::chrono::seconds(2)); }

 private:
  std::shared_ptr<ElasticThreads> pool_;
};

json transport_error(std::string_view message, const json& id = nullptr) {
  return jsonrpc::make_error(id, -32000, message);
}

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

bool is_loopback_name(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1";
}

// "name:port" or "[v6]:port" -> the name part.
std::string_view host_name(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

bool contains_ci(std::string_view haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(a) == std::tolower(b); });
  return it != haystack.end();
}

// Compares in time that depends only on the lengths, not on where they differ.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

bool supported_protocol_version(std::string_view version) {
  return std::any_of(std::begin(kSupportedProtocolVersions), std::end(kSupportedProtocolVersions),
                     [&](const char* v) { return version == v; });
}

}  // namespace

struct HttpServer::Routes {
  HttpServer& self;

  // Host and Origin: a page on another site must not reach a local server
  // through a name that resolves to 127.0.0.1 (DNS rebinding).
  bool origin_allowed(const httplib::Request& req, std::string& why) const {
    const std::string host = req.get_header_value("Host");
    const std::string_view name = host_name(host);
    const auto& hosts = self.options_.allowed_hosts;
    const bool host_ok = is_loopback_name(name) || name == self.options_.host ||
                         std::find(hosts.begin(), hosts.end(), name) != hosts.end();
    if (!host_ok) {
      why = "Forbidden: Host \"" + host + "\" is not allowed";
      return false;
    }
    if (!req.has_header("Origin")) return true;  // not a browser
    const std::string origin = req.get_header_value("Origin");
    const auto& origins = self.options_.allowed_origins;
    if (std::find(origins.begin(), origins.end(), origin) != origins.end()) return true;
    for (std::string_view scheme : {"http://", "https://"}) {
      if (origin.rfind(scheme, 0) == 0 &&
          is_loopback_name(host_name(origin.substr(scheme.size())))) {
        return true;
      }
    }
    why = "Forbidden: Origin \"" + origin + "\" is not allowed";
    return false;
  }

  // The principal the request's bearer token maps to; "local" without auth.
  std::optional<std::string> principal(const httplib::Request& req) const {
    if (self.options_.tokens.empty()) return "local";
    const std::string auth = req.get_header_value("Authorization");
    constexpr std::string_view kBearer = "Bearer ";
    if (auth.size() <= kBearer.size() ||
        !std::equal(kBearer.begin(), kBearer.end(), auth.begin(),
                    [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      return std::nullopt;
    }
    const std::string_view presented = std::string_view(auth).substr(kBearer.size());
    // Every token is compared, so the time taken does not say which matched.
    std::optional<std::string> found;
    for (const auto& [token, who] : self.options_.tokens) {
      if (same_secret(presented, token)) found = who;
    }
    return found;
  }

  void unauthorized(httplib::Response& res, std::string_view why) const {
    res.set_header("WWW-Authenticate", "Bearer realm=\"toolmux\"");
    reply(res, 401, transport_error(why));
  }

  // The checks every request to the MCP endpoint passes; false when `res` is
  // already the answer.
  bool admit(const httplib::Request& req, httplib::Response& res, std::string& principal_out) {
    std::string why;
    if (!origin_allowed(req, why)) {
      self.logger_.write(LogLevel::warning, "http_refused", {{"status", 403}, {"reason", why}});
      reply(res, 403, transport_error(why));
      return false;
    }
    auto principal_name = principal(req);
    if (!principal_name) {
      self.logger_.write(LogLevel::warning, "http_refused",
                         {{"status", 401}, {"reason", "missing or unknown bearer token"}});
      unauthorized(res, req.has_header("Authorization")
                            ? "Unauthorized: the bearer token is not valid"
                            : "Unauthorized: this server needs an Authorization: Bearer token");
      return false;
    }
    if (req.has_header("MCP-Protocol-Version")) {
      const std::string version = req.get_header_value("MCP-Protocol-Version");
      if (!supported_protocol_version(version)) {
        reply(res, 400,
              transport_error("Bad Request: unsupported MCP-Protocol-Version \"" + version +
                              "\" (supported: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25)"));
        return false;
      }
    }
    principal_out = *principal_name;
    return true;
  }

  std::shared_ptr<Session> session_for(const httplib::Request& req, httplib::Response& res,
                                       const std::string& principal) {
    const std::string id = req.get_header_value("Mcp-Session-Id");
    if (id.empty()) {
      reply(res, 400, transport_error("Bad Request: the Mcp-Session-Id header is missing"));
      return nullptr;
    }
    auto session = self.sessions_.find(id, principal);
    if (!session) {
      reply(res, 404, transport_error("Not Found: no such session (it may have ended)"));
    }
    return session;
  }

  static std::shared_ptr<SessionStreams> streams_of(const Session& session) {
    return std::dynamic_pointer_cast<SessionStreams>(session.owned_sink());
  }

  // Writes the stream at `cursor` as SSE until it ends, the connection
  // drops, or the server stops. While it is open the session does not idle out.
  void stream(httplib::Response& res, const Session& session,
              std::shared_ptr<SessionStreams> streams, StreamCursor cursor) {
    struct Writer {
      std::string session_id;
      std::shared_ptr<SessionStreams> streams;
      StreamCursor cursor;
      bool primed = false;
    };
    auto writer = std::make_shared<Writer>(Writer{session.id(), std::move(streams), cursor});
    self.sessions_.hold(session.id());
    ++self.open_streams_;
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, writer](std::size_t, httplib::DataSink& sink) {
          std::string out;
          if (!writer->primed) {
            // An id before anything else, so the client can resume this
            // stream from here; retry says when to reconnect.
            writer->primed = true;
            out = "id: " + format_event_id(writer->cursor.stream, writer->cursor.after_seq) +
                  "\nretry: 1000\ndata: \n\n";
            return sink.write(out.data(), out.size());
          }
          auto next =
              writer->streams->next(writer->cursor, std::chrono::seconds(15), self.stopping_);
          for (const auto& e : next.events) {
            out += "id: " + format_event_id(e.stream, e.seq) + "\ndata: " + e.data + "\n\n";
          }
          if (out.empty() && !next.end) out = ": keep-alive\n\n";
          if (!out.empty() && !sink.write(out.data(), out.size())) return false;
          if (!next.events.empty()) {
            writer->cursor.after_seq = next.events.back().seq;
            writer->streams->delivered(writer->cursor);
          }
          if (next.end) sink.done();
          return true;
        },
        [this, writer](bool) {
          writer->streams->detach(writer->cursor.stream);
          self.sessions_.release(writer->session_id);
          --self.open_streams_;
        });
  }

  enum class Body { read, too_large, unreadable };

  // Reads the body, keeping at most max_body_bytes of it; the rest is read and
  // dropped, so the connection stays in step with the client. cpp-httplib
  // 0.11 refuses a Content-Length over the limit (413 in res.status) but
  // would read a chunked body whole into memory, however large.
  Body read_body(const httplib::Request& req, httplib::Response& res,
                 const httplib::ContentReader& read, std::string& body) const {
    // A multipart body would go to a parser for form fields: not read (415).
    if (req.is_multipart_form_data()) return Body::unreadable;
    const std::size_t limit = self.options_.max_body_bytes;
    bool over = false;
    const bool complete = read([&](const char* data, std::size_t size) {
      if (!over && size <= limit - body.size()) {
        body.append(data, size);
      } else if (!over) {
        over = true;
        std::string().swap(body);
      }
      return true;
    });
    if (over || res.status == 413) return Body::too_large;
    return complete ? Body::read : Body::unreadable;
  }

  void post(const httplib::Request& req, httplib::Response& res,
            const httplib::ContentReader& content_reader) {
    std::string body;
    const Body got = read_body(req, res, content_reader, body);
    std::string principal;
    if (!admit(req, res, principal)) return;
    if (got == Body::too_large) {
      reply(res, 413, transport_error("Payload Too Large: the request body is over the limit"));
      return;
    }
    const std::string content_type = req.get_header_value("Content-Type");
    if (!contains_ci(content_type, "application/json")) {
      reply(res, 415,
            transport_error("Unsupported Media Type: POST a JSON-RPC message as "
                            "Content-Type: application/json"));
      return;
    }
    const std::string accept = req.get_header_value("Accept");
    if (!accept.empty() && !contains_ci(accept, "application/json") &&
        !contains_ci(accept, "text/event-stream") && !contains_ci(accept, "*/*")) {
      reply(res, 406,
            transport_error("Not Acceptable: the client must accept application/json "
                            "and text/event-stream"));
      return;
    }
    if (got == Body::unreadable) {
      reply(res, 400, transport_error("Bad Request: the request body could not be read"));
      return;
    }
    jsonrpc::Message m = jsonrpc::parse_message(body, self.server_.json_limits());
    if (m.kind == jsonrpc::Message::Kind::invalid) {
      reply(res, 400, jsonrpc::make_error(m.id, m.error_code, m.error));
      return;
    }
    // Stopping: no new work (a request on a connection kept alive from before
    // would start a call during the drain), but notifications and responses
    // still reach the calls being drained (cancellation, elicitation answers).
    if (self.stopping_ && m.kind == jsonrpc::Message::Kind::request) {
      reply(res, 503, transport_error("Service Unavailable: the server is shutting down", m.id));
      return;
    }
    std::shared_ptr<Session> session;
    bool created = false;
    if (!req.has_header("Mcp-Session-Id") && m.kind == jsonrpc::Message::Kind::request &&
        m.method == "initialize") {
      session = self.sessions_.create(principal);
      if (!session) {
        res.set_header("Retry-After", "60");
        reply(res, 503, transport_error("Service Unavailable: too many open sessions", m.id));
        return;
      }
      created = true;
    } else {
      session = session_for(req, res, principal);
      if (!session) return;
    }
    auto streams = streams_of(*session);
    if (m.kind != jsonrpc::Message::Kind::request) {
      self.server_.handle(m, session);
      res.status = 202;
      return;
    }
    auto exchange = streams->open_exchange(m.id);
    if (!exchange) {
      reply(res, 400,
            jsonrpc::make_error(
                m.id, jsonrpc::kInvalidRequest,
                "Invalid request: a request with id " + m.id.dump() + " is already in flight"));
      return;
    }
    self.server_.handle(m, session);
    auto decision = streams->await_decision(exchange);
    if (created) {
      if (session->initialized()) {
        res.set_header("Mcp-Session-Id", session->id());
      } else {
        self.sessions_.end(session->id(), principal);  // initialize failed
      }
    }
    switch (decision.kind) {
      case SessionStreams::Decision::Kind::json_body:
        res.status = 200;
        res.set_content(decision.body, "application/json");
        return;
      case SessionStreams::Decision::Kind::sse:
        stream(res, *session, streams, decision.cursor);
        return;
      case SessionStreams::Decision::Kind::none:
        if (self.stopping_) {
          // Cancelled by the shutdown: a client waiting for the response
          // would otherwise wait until its own timeout.
          reply(res, 503,
                transport_error("Service Unavailable: the server stopped before the request "
                                "finished",
                                m.id));
          return;
        }
        // Cancelled by the client (no response is sent for it), or the session ended.
        res.status = 202;
        return;
    }
  }

  void get(const httplib::Request& req, httplib::Response& res) {
    std::string principal;
    if (!admit(req, res, principal)) return;
    if (self.stopping_) {
      reply(res, 503, transport_error("Service Unavailable: the server is shutting down"));
      return;
    }
    const std::string accept = req.get_header_value("Accept");
    if (!contains_ci(accept, "text/event-stream")) {
      reply(res, 406,
            transport_error("Not Acceptable: GET opens an SSE stream; accept text/event-stream"));
      return;
    }
    auto session = session_for(req, res, principal);
    if (!session) return;
    auto streams = streams_of(*session);
    std::optional<StreamCursor> cursor;
    if (req.has_header("Last-Event-ID")) {
      cursor = streams->resume(req.get_header_value("Last-Event-ID"));
      if (!cursor) {
        reply(res, 400,
              transport_error("Bad Request: Last-Event-ID names no stream of this "
                              "session"));
        return;
      }
    } else {
      cursor = streams->attach_standalone();
      if (!cursor) {
        reply(res, 409,
              transport_error("Conflict: this session's stream is already open elsewhere"));
        return;
      }
    }
    stream(res, *session, streams, *cursor);
  }

  // POST, PUT or PATCH anywhere else: 405 at the endpoint, 404 elsewhere,
  // after the body is read the bounded way (cpp-httplib would read a chunked
  // one whole before answering).
  void elsewhere(const httplib::Request& req, httplib::Response& res,
                 const httplib::ContentReader& content_reader) {
    std::string body;
    read_body(req, res, content_reader, body);
    if (req.path == self.options_.path) {
      res.set_header("Allow", "GET, POST, DELETE");
      reply(res, 405, transport_error("Method Not Allowed: use POST, GET or DELETE"));
    } else {
      reply(res, 404, transport_error("Not Found"));
    }
  }

  void del(const httplib::Request& req, httplib::Response& res) {
    std::string principal;
    if (!admit(req, res, principal)) return;
    auto session = session_for(req, res, principal);
    if (!session) return;
    self.sessions_.end(session->id(), principal);
    res.status = 200;
  }

  void metrics(const httplib::Request& req, httplib::Response& res) {
    if (!principal(req)) {
      unauthorized(res, "Unauthorized: /metrics needs a bearer token");
      return;
    }
    std::ostringstream out;
    out << self.metrics_.render_prometheus() << "# HELP toolmux_http_sessions Open HTTP sessions.\n"
        << "# TYPE toolmux_http_sessions gauge\n"
        << "toolmux_http_sessions " << self.sessions_.count() << "\n"
        << "# HELP toolmux_http_streams Open SSE streams.\n"
        << "# TYPE toolmux_http_streams gauge\n"
        << "toolmux_http_streams " << self.open_streams_.load() << "\n";
    res.set_content(out.str(), "text/plain; version=0.0.4");
  }
};

HttpServer::HttpServer(McpServer& server, SessionManager& sessions, Metrics& metrics,
                       Logger& logger, HttpOptions options)
    : http_(std::make_unique<httplib::Server>()),
      server_(server),
      sessions_(sessions),
      metrics_(metrics),
      logger_(logger),
      options_(std::move(options)) {
  auto routes = std::make_shared<Routes>(Routes{*this});
  const std::string& path = options_.path;
  // The POST handler reads the body itself (Routes::read_body), to bound it.
  http_->Post(path, [routes](const httplib::Request& q, httplib::Response& r,
                             const httplib::ContentReader& read) { routes->post(q, r, read); });
  http_->Get(path,
             [routes](const httplib::Request& q, httplib::Response& r) { routes->get(q, r); });
  http_->Delete(path,
                [routes](const httplib::Request& q, httplib::Response& r) { routes->del(q, r); });
  http_->Get("/health", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("{\"status\":\"ok\"}", "application/json");
  });
  http_->Get("/metrics",
             [routes](const httplib::Request& q, httplib::Response& r) { routes->metrics(q, r); });
  // After the routes above: patterns are tried in the order they were added.
  const auto elsewhere = [routes](const httplib::Request& q, httplib::Response& r,
                                  const httplib::ContentReader& read) {
    routes->elsewhere(q, r, read);
  };
  http_->Post(".*", elsewhere);
  http_->Put(".*", elsewhere);
  http_->Patch(".*", elsewhere);

  // Small messages must not wait for delayed ACKs (Nagle).
  http_->set_tcp_nodelay(true);
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_keep_alive_max_count(100000);
  http_->set_keep_alive_timeout(30);
  threads_ = std::make_shared<ElasticThreads>(options_.max_connections);
  http_->new_task_queue = [threads = threads_] { return new ConnectionThreads(threads); };
  http_->set_socket_options([this](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd_ = sock;
  });
  http_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == 413) {
      reply(res, 413, transport_error("Payload Too Large: the request body is over the limit"));
    }
  });
}

HttpServer::~HttpServer() {
  // A connection thread still running uses the server object: leave it to
  // process exit rather than free it under the thread.
  if (threads_->threads() > 0) static_cast<void>(http_.release());
}

bool HttpServer::bind(std::string& error) {
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
  } else {
    port_ = http_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    error = "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
            " (address in use, or not an address of this machine?)";
    return false;
  }
  // cpp-httplib listens with a backlog of 5; connection bursts need more.
  if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
  return true;
}

std::size_t HttpServer::connection_threads() const { return threads_->threads(); }

bool HttpServer::run() { return http_->listen_after_bind(); }

void HttpServer::stop() {
  stopping_ = true;
  http_->stop();
}

bool parse_tokens(const std::string& text, std::map<std::string, std::string>& tokens,
                  std::string& error) {
  std::string entry;
  std::size_t number = 0;
  auto trim = [](std::string_view part) {
    const auto first = part.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return std::string();
    const auto last = part.find_last_not_of(" \t\r");
    return std::string(part.substr(first, last - first + 1));
  };
  auto take = [&](std::string item) {
    ++number;
    if (auto hash = item.find('#'); hash != std::string::npos) item.erase(hash);
    item = trim(item);
    if (item.empty()) return true;
    // "bob = token" means the token without the spaces around '='.
    const auto eq = item.find('=');
    std::string principal = eq == std::string::npos ? "" : trim(item.substr(0, eq));
    std::string token = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
    if (principal.empty() || token.empty()) {
      error = "token entry " + std::to_string(number) + " is not principal=token";
      return false;
    }
    if (token.size() < 16) {
      error = "the token of \"" + principal + "\" is shorter than 16 characters";
      return false;
    }
    if (!tokens.emplace(std::move(token), principal).second) {
      error = "the token of \"" + principal + "\" is also another principal's";
      return false;
    }
    return true;
  };
  // A comment runs to the end of its line, commas in it included.
  bool in_comment = false;
  for (char c : text) {
    if (c == '\n' || (c == ',' && !in_comment)) {
      if (!take(entry)) return false;
      entry.clear();
      in_comment = false;
    } else {
      in_comment |= c == '#';
      entry += c;
    }
  }
  return take(entry);
}

}  // namespace toolmux
