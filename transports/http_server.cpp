#include "transports/http_server.h"

#include <chrono>

#include <httplib.h>
#include <malloc.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>

#include "src/base/elastic_threads.h"
#include "src/base/json_text.h"
#include "src/base/jsonrpc.h"
#include "src/base/random_id.h"
#include "src/base/trace.h"
#include "transports/byte_budget.h"
#include "transports/closure_watch.h"
#include "transports/gated_http_server.h"
#include "transports/http_headers.h"
#include "transports/http_streams.h"
#include "transports/modern_http.h"

namespace toolmux {

using nlohmann::json;

namespace {

// The W3C trace context of the request's `traceparent` and `tracestate`
// headers, as sent (docs/traces.md); read only while tracing is on.
std::optional<TraceContext> incoming_trace_headers() {
  if (!tracing_on()) return std::nullopt;
  const auto parent = GatedHttpServer::header_as_sent("traceparent");
  if (parent.size() != 1) return std::nullopt;
  const auto state = GatedHttpServer::header_as_sent("tracestate");
  return parse_traceparent(parent.front(), state.size() == 1 ? state.front() : "");
}

json transport_error(std::string_view message, const json& id = nullptr) {
  return jsonrpc::make_error(id, -32000, message);
}

// A refusal's message may quote a header, whose bytes need not be UTF-8:
// each ill-formed sequence goes out as one U+FFFD (json_text, as the SSE and
// stdio writers use; a plain dump() would throw).
void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(json_text(body), "application/json");
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

// Retry-After when a session could not be stored or looked up: about when a
// store that went away is tried again (src/store/pg_connection.h backs off up to 5 s).
constexpr int kStoreRetrySeconds = 5;

// A body at least this large is a large message: see TrimAfter.
constexpr std::size_t kLargeBody = std::size_t{1} << 20;

// Gives the memory a large message took back to the system once it is freed
// (then, or at the latest when destroyed). glibc keeps what a thread frees in
// that thread's arena, and the next large message, read on another thread,
// would take memory of its own: the process would keep the peak of each.
struct TrimAfter {
  explicit TrimAfter(bool is_large) : large(is_large) {}
  TrimAfter(const TrimAfter&) = delete;
  TrimAfter& operator=(const TrimAfter&) = delete;
  ~TrimAfter() { now(); }
  void now() {
    if (large) ::malloc_trim(0);
    large = false;
  }
  bool large;
};

}  // namespace

struct HttpServer::Routes {
  HttpServer& self;

  // Which protocol a POST speaks, by its MCP-Protocol-Version header.
  enum class Era { legacy, modern, unsupported };

  // Host and Origin: a page on another site must not reach a local server
  // through a name that resolves to 127.0.0.1 (DNS rebinding).
  // A repeated Host never gets here (refused_before_body: 400); a repeated
  // Origin is refused whatever its values: which one a check reads is the
  // attacker's choice, and a browser sends one.
  bool origin_allowed(const httplib::Request& req, std::string& why) const {
    const std::string host = http_headers::value(req.headers, "Host");
    const std::string_view name = host_name(host);
    const auto& hosts = self.options_.allowed_hosts;
    const bool host_ok = is_loopback_name(name) || name == self.options_.host ||
                         std::find(hosts.begin(), hosts.end(), name) != hosts.end();
    if (!host_ok) {
      why = "Forbidden: Host \"" + host + "\" is not allowed";
      return false;
    }
    if (!http_headers::has(req.headers, "Origin")) return true;  // not a browser
    if (http_headers::count(req.headers, "Origin") > 1) {
      why = "Forbidden: the Origin header is repeated";
      return false;
    }
    const std::string origin = http_headers::value(req.headers, "Origin");
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

  // Who sent a request: a principal, and the scopes of its OAuth token.
  struct Caller {
    std::string principal;
    std::vector<std::string> scopes;
    bool oauth = false;  // by an OAuth access token: its scopes count
  };
  // Why a request has no caller: no token, a token refused (`why` says what
  // was wrong with it, safely), or a token that could not be checked now.
  struct Refusal {
    bool presented = false;
    bool unavailable = false;
    std::string why;
  };

  bool authenticating() const { return !self.options_.tokens.empty() || self.options_.oauth; }

  // The caller the request's bearer token names; "local" without auth.
  std::optional<Caller> caller(const httplib::Request& req, Refusal& refusal) const {
    if (!authenticating()) return Caller{"local", {}, false};
    const std::string auth = http_headers::value(req.headers, "Authorization");
    constexpr std::string_view kBearer = "Bearer ";
    if (auth.size() <= kBearer.size() ||
        !std::equal(kBearer.begin(), kBearer.end(), auth.begin(),
                    [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      refusal.presented = http_headers::has(req.headers, "Authorization");
      refusal.why = refusal.presented ? "the Authorization header is not a Bearer token" : "";
      return std::nullopt;
    }
    refusal.presented = true;
    const std::string_view presented = std::string_view(auth).substr(kBearer.size());
    // Every token is compared, so the time taken does not say which matched.
    std::optional<std::string> found;
    for (const auto& [token, who] : self.options_.tokens) {
      if (same_secret(presented, token)) found = who;
    }
    if (found) return Caller{*found, {}, false};
    if (!self.options_.oauth) {
      refusal.why = "the bearer token is not valid";
      return std::nullopt;
    }
    auto grant = self.options_.oauth->verify(presented);
    if (!grant.ok()) {
      refusal.unavailable = grant.status().code() == Status::Code::kUnavailable;
      refusal.why = grant.status().message();
      return std::nullopt;
    }
    return Caller{std::move(grant->subject), std::move(grant->scopes), true};
  }

  // A Bearer challenge (RFC 6750 section 3): where the resource's metadata
  // is, the scope to ask for, and what was wrong with the token given.
  std::string challenge(std::string_view error, std::string_view description,
                        std::string_view scope) const {
    if (!self.options_.oauth) return "Bearer realm=\"toolmux\"";
    auto quoted = [](std::string_view text) {
      std::string out = "\"";
      for (char c : text) {
        if (c == '"' || c == '\\') out.push_back('\\');
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out.push_back(c);
      }
      return out + "\"";
    };
    std::string out = "Bearer resource_metadata=" + quoted(self.options_.oauth->metadata_url());
    if (!scope.empty()) out += ", scope=" + quoted(scope);
    if (!error.empty()) out += ", error=" + quoted(error);
    if (!description.empty()) out += ", error_description=" + quoted(description);
    return out;
  }

  void unauthorized(httplib::Response& res, const Refusal& refusal, std::string_view what) const {
    if (refusal.unavailable) {
      res.set_header("Retry-After", "5");
      reply(res, 503,
            transport_error("Service Unavailable: the bearer token cannot be checked now (" +
                            refusal.why + "); retry shortly"));
      return;
    }
    res.set_header("WWW-Authenticate", challenge(refusal.presented ? "invalid_token" : "",
                                                 refusal.why, self.options_.challenge_scope));
    const std::string why =
        refusal.presented
            ? "Unauthorized: " +
                  (refusal.why.empty() ? std::string("the bearer token is not valid") : refusal.why)
            : "Unauthorized: " + std::string(what) + " needs an Authorization: Bearer token";
    reply(res, 401, transport_error(why));
  }

  // The checks every request to the MCP endpoint passes; false when `res` is
  // already the answer.
  bool admit(const httplib::Request& req, httplib::Response& res, Caller& caller_out) {
    std::string why;
    if (!origin_allowed(req, why)) {
      self.logger_.write(LogLevel::warning, "http_refused", {{"status", 403}, {"reason", why}});
      reply(res, 403, transport_error(why));
      return false;
    }
    Refusal refusal;
    auto found = caller(req, refusal);
    if (!found) {
      self.logger_.write(
          LogLevel::warning, "http_refused",
          {{"status", refusal.unavailable ? 503 : 401},
           {"reason", refusal.why.empty() ? std::string("missing bearer token") : refusal.why}});
      unauthorized(res, refusal, "this server");
      return false;
    }
    caller_out = std::move(*found);
    return true;
  }
  bool admit(const httplib::Request& req, httplib::Response& res, std::string& principal_out) {
    Caller found;
    if (!admit(req, res, found)) return false;
    principal_out = std::move(found.principal);
    return true;
  }

  // A request the caller's OAuth scopes do not reach: 403 with the scope it
  // needs (RFC 6750 insufficient_scope), so the client can step up. False
  // when it may go on.
  bool scope_refused(const Caller& who, const jsonrpc::Message& m, httplib::Response& res) const {
    if (!who.oauth || !self.options_.scope_needed) return false;
    const auto needed = self.options_.scope_needed(m.method, m.params, who.scopes);
    if (!needed) return false;
    const std::string why =
        needed->empty() ? std::string("Forbidden: no scope this server knows allows this request")
                        : "Forbidden: this request needs the scope \"" + *needed +
                              "\", which the bearer token does not have";
    self.logger_.write(LogLevel::warning, "http_refused",
                       {{"status", 403}, {"reason", "insufficient scope"}, {"scope", *needed}});
    res.set_header("WWW-Authenticate", challenge("insufficient_scope", why, *needed));
    reply(res, 403, transport_error(why, m.id));
    return true;
  }

  // The Protected Resource Metadata: public, for any origin to read.
  void resource_metadata(httplib::Response& res) const {
    res.set_header("Access-Control-Allow-Origin", "*");
    res.set_header("Cache-Control", "max-age=300");
    reply(res, 200, self.options_.oauth->metadata());
  }

  // GET and DELETE are of the legacy era only: a version it does not speak
  // is refused (400; 405 for 2026-07-28, which has only POST). False when
  // `res` is already the answer.
  bool legacy_version_refused(const httplib::Request& req, httplib::Response& res) const {
    if (!http_headers::has(req.headers, "MCP-Protocol-Version")) return false;
    const std::string version = http_headers::value(req.headers, "MCP-Protocol-Version");
    if (version == modern_http::kVersion) {
      res.set_header("Allow", "POST");
      reply(res, 405,
            transport_error("Method Not Allowed: the 2026-07-28 protocol has no " + req.method +
                            "; POST each request"));
      return true;
    }
    if (supported_protocol_version(version)) return false;
    reply(res, 400,
          transport_error("Bad Request: unsupported MCP-Protocol-Version \"" + version +
                          "\" (supported: " + supported_protocol_versions_text() + ", " +
                          modern_http::kVersion + ")"));
    return true;
  }

  HttpSession session_for(const httplib::Request& req, httplib::Response& res,
                          const std::string& principal) {
    const std::string id = http_headers::value(req.headers, "Mcp-Session-Id");
    if (id.empty()) {
      reply(res, 400, transport_error("Bad Request: the Mcp-Session-Id header is missing"));
      return {};
    }
    HttpSession session = self.sessions_.find(id, principal);
    if (!session && !session.unavailable.empty()) {
      // A 404 would tell the client to drop a session that may well exist.
      self.logger_.write(LogLevel::warning, "session_unavailable",
                         {{"reason", session.unavailable}});
      res.set_header("Retry-After", std::to_string(kStoreRetrySeconds));
      reply(res, 503,
            transport_error("Service Unavailable: the session cannot be looked up now (the "
                            "session store is not answering); send the request again in " +
                            std::to_string(kStoreRetrySeconds) + " seconds"));
    } else if (!session) {
      reply(res, 404, transport_error("Not Found: no such session (it may have ended)"));
    }
    return session;
  }

  // Writes the stream at `cursor` as SSE until it ends, the connection
  // drops, or the server stops. While it is open the session does not idle
  // out. A 2026-07-28 stream (`modern`) is not resumable: its events carry
  // no ids, it has no priming event, and it belongs to no session; `watch`
  // (its client going away cancels its request) is kept while it is written.
  void stream(httplib::Response& res, const HttpSession& session, StreamCursor cursor,
              bool modern = false, ClosureWatch::Watch watch = {}) {
    struct Writer {
      std::string session_id;
      std::shared_ptr<SessionStreams> streams;
      StreamCursor cursor;
      bool modern = false;
      ClosureWatch::Watch watch;
      bool primed = false;
    };
    auto writer = std::make_shared<Writer>(
        Writer{session.peer->id(), session.streams, cursor, modern, std::move(watch)});
    if (!modern) self.sessions_.hold(writer->session_id);
    ++self.open_streams_;
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    // Proxies (nginx) would hold events back otherwise.
    if (modern) res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, writer](std::size_t, httplib::DataSink& sink) {
          std::string out;
          if (!writer->primed && !writer->modern) {
            // An id before anything else, so the client can resume this
            // stream from here; retry says when to reconnect.
            writer->primed = true;
            out = "id: " + format_event_id(writer->cursor.stream, writer->cursor.after_seq) +
                  "\nretry: 1000\ndata: \n\n";
            return sink.write(out.data(), out.size());
          }
          auto next = writer->streams->next(writer->cursor, std::chrono::seconds(15),
                                            self.stopping_.get_token());
          for (const auto& e : next.events) {
            if (!writer->modern) out += "id: " + format_event_id(e.stream, e.seq) + "\n";
            out += "data: " + e.data + "\n\n";
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
          writer->watch.reset();  // before the connection goes on to its next request
          writer->streams->detach(writer->cursor.stream);
          if (!writer->modern) self.sessions_.release(writer->session_id);
          --self.open_streams_;
        });
  }

  enum class Body { read, too_large, unreadable };

  // Reads the body, at most max_body_bytes of it: past that it stops reading
  // (the gate drains the rest without a thread, and closes the connection).
  // cpp-httplib would read a chunked body whole into memory, however large,
  // and inflates a compressed one (Content-Encoding) as it reads: stopping
  // also stops the inflating of a compression bomb.
  Body read_body(const httplib::Request& req, httplib::Response& res,
                 const httplib::ContentReader& read, std::string& body) const {
    // A multipart body would go to a parser for form fields: not read (415).
    if (req.is_multipart_form_data()) return Body::unreadable;
    const std::size_t limit = self.options_.max_body_bytes;
    bool over = false;
    const bool complete = read([&](const char* data, std::size_t size) {
      if (size > limit - body.size()) {
        over = true;
        std::string().swap(body);
        return false;
      }
      body.append(data, size);
      return true;
    });
    if (complete) GatedHttpServer::note_body_read();
    if (over || res.status == 413) return Body::too_large;
    return complete ? Body::read : Body::unreadable;
  }

  std::string too_large_message() const {
    return "Payload Too Large: the request body is over the limit of " +
           std::to_string(self.options_.max_body_bytes) + " bytes";
  }

  // Before routing, with only the head read: what can be refused without the
  // body is refused now, the gate then draining what the client still sends.
  // cpp-httplib reads a body into memory unbounded for a method it has no
  // handler for: those are refused here; a Content-Length over the limit
  // would be read (and dropped) to its end before the 413.
  bool refused_before_body(const httplib::Request& req, httplib::Response& res) {
    // RFC 9112 section 3.2: a request with more than one Host field is 400,
    // on every path (/health too): the Host check would read only the first.
    if (http_headers::count(req.headers, "Host") > 1) {
      const std::string why = "Bad Request: the Host header is repeated (RFC 9112 section 3.2)";
      self.logger_.write(LogLevel::warning, "http_refused", {{"status", 400}, {"reason", why}});
      reply(res, 400, transport_error(why));
      return true;
    }
    constexpr std::string_view kMethods[] = {"GET",   "HEAD",   "POST",   "PUT",
                                             "PATCH", "DELETE", "OPTIONS"};
    if (std::find(std::begin(kMethods), std::end(kMethods), req.method) == std::end(kMethods)) {
      reply(res, 501, transport_error("Not Implemented: the method " + req.method));
      return true;
    }
    if (!http_headers::has(req.headers, "Content-Length")) return false;
    const std::string text = http_headers::value(req.headers, "Content-Length");
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
      reply(res, 400,
            transport_error("Bad Request: Content-Length \"" + text + "\" is not a number"));
      return true;
    }
    // 19 digits or more (10^18 bytes and up) are over any limit.
    if (text.size() < 19 && std::stoull(text) <= self.options_.max_body_bytes) return false;
    std::string principal;
    if (req.path == self.options_.path &&
        (!admit(req, res, principal) ||
         (req.method != "POST" && legacy_version_refused(req, res)))) {
      return true;
    }
    reply(res, 413,
          transport_error("Payload Too Large: the request body is " + text +
                          " bytes, over the limit of " +
                          std::to_string(self.options_.max_body_bytes)));
    return true;
  }

  void post(const httplib::Request& req, httplib::Response& res,
            const httplib::ContentReader& content_reader) {
    // Everything the head can tell is checked before the body is read.
    Caller who;
    if (!admit(req, res, who)) return;
    const std::string& principal = who.principal;
    const std::string content_type = http_headers::value(req.headers, "Content-Type");
    if (!contains_ci(content_type, "application/json")) {
      reply(res, 415,
            transport_error("Unsupported Media Type: POST a JSON-RPC message as "
                            "Content-Type: application/json"));
      return;
    }
    const std::string accept = http_headers::value(req.headers, "Accept");
    if (!accept.empty() && !contains_ci(accept, "application/json") &&
        !contains_ci(accept, "text/event-stream") && !contains_ci(accept, "*/*")) {
      reply(res, 406,
            transport_error("Not Acceptable: the client must accept application/json "
                            "and text/event-stream"));
      return;
    }
    // The era is the header's: 2026-07-28 is served statelessly (a session
    // the request names is ignored); a version toolmux does not speak is
    // answered -32022 once the body tells the request's id; none, or a
    // legacy one, is the legacy era.
    const std::vector<std::string> versions =
        GatedHttpServer::header_as_sent("MCP-Protocol-Version");
    Era era = Era::legacy;
    if (!versions.empty() && versions.front() == modern_http::kVersion) {
      era = Era::modern;
    } else if (!versions.empty() && !supported_protocol_version(versions.front())) {
      era = Era::unsupported;
    }
    const bool names_session =
        era == Era::legacy && http_headers::has(req.headers, "Mcp-Session-Id");
    HttpSession session;
    if (names_session) {
      session = session_for(req, res, principal);
      if (!session) return;
    }
    // The body's share of the budget, held until the parsed message is
    // handed on: bodies read and parsed at once stay within it. A Content-
    // Length is at most max_body_bytes by now; a chunked body may be that.
    // An encoded (compressed) body may inflate up to max_body_bytes too.
    const bool sized = http_headers::has(req.headers, "Content-Length") &&
                       !http_headers::has(req.headers, "Content-Encoding");
    const bool chunked =
        contains_ci(http_headers::value(req.headers, "Transfer-Encoding"), "chunked");
    const std::size_t share = sized && !chunked
                                  ? std::stoull(http_headers::value(req.headers, "Content-Length"))
                                  : self.options_.max_body_bytes;
    if (!self.budget_->acquire(share, self.options_.budget_wait)) {
      ++self.busy_refusals_;
      res.set_header("Retry-After", "1");
      reply(res, 503,
            transport_error("Service Unavailable: " + std::to_string(self.budget_->capacity()) +
                            " bytes of request bodies are being read and parsed (the limit); "
                            "retry shortly"));
      return;
    }
    TrimAfter trim(share >= kLargeBody);  // declared first: runs after the rest is freed
    ByteBudget::Hold held(*self.budget_, share);
    jsonrpc::Message m;
    {
      std::string body;
      if (sized && !chunked) body.reserve(share);
      const Body got = read_body(req, res, content_reader, body);
      if (got == Body::too_large) {
        reply(res, 413, transport_error(too_large_message()));
        return;
      }
      if (got == Body::unreadable) {
        if (GatedHttpServer::body_timed_out()) {
          const auto seconds = self.options_.body_timeout.count();
          reply(res, 408,
                transport_error("Request Timeout: the request body did not arrive within " +
                                std::to_string(seconds) + " s"));
          return;
        }
        reply(res, 400, transport_error("Bad Request: the request body could not be read"));
        return;
      }
      m = jsonrpc::parse_message(body, self.options_.json_limits);
    }  // the text goes once parsed
    if (m.kind == jsonrpc::Message::Kind::invalid) {
      reply(res, 400, jsonrpc::make_error(m.id, m.error_code, m.error));
      return;
    }
    const bool request = m.kind == jsonrpc::Message::Kind::request;
    if (request && scope_refused(who, m, res)) return;
    if (era == Era::unsupported) {
      const JsonRpcError e = modern_http::unsupported_version(versions.front());
      reply(res, 400, jsonrpc::make_error(request ? m.id : json(), e.code, e.message, e.data));
      return;
    }
    // Stopping: no new work (a request on a connection kept alive from before
    // would start a call during the drain), but notifications and responses
    // still reach the calls being drained (cancellation, elicitation answers).
    if (self.stopping_.stop_requested() && request) {
      reply(res, 503, transport_error("Service Unavailable: the server is shutting down", m.id));
      return;
    }
    if (era == Era::modern) {
      post_modern(res, principal, std::move(m), versions, held, trim);
      return;
    }
    // A request the body says is 2026-07-28 must say so in its header too:
    // an intermediary may have routed it by the header.
    if (request && modern_http::body_is_modern(m)) {
      const json& body_version = m.params["_meta"][modern_http::kProtocolVersionKey];
      const std::string why =
          versions.empty()
              ? "the MCP-Protocol-Version header is missing (it must be the body's _meta "
                "protocol version, " +
                    body_version.dump(-1, ' ', false, json::error_handler_t::replace) + ")"
              : "MCP-Protocol-Version header value \"" + versions.front() +
                    "\" does not match body value _meta[\"" + modern_http::kProtocolVersionKey +
                    "\"] " + body_version.dump(-1, ' ', false, json::error_handler_t::replace);
      reply(
          res, 400,
          jsonrpc::make_error(m.id, modern_http::kHeaderMismatch, "Header mismatch: " + why,
                              {{"header", "MCP-Protocol-Version"},
                               {"headerValue", versions.empty() ? json() : json(versions.front())},
                               {"bodyValue", body_version}}));
      return;
    }
    bool created = false;
    if (!names_session && m.kind == jsonrpc::Message::Kind::request && m.method == "initialize") {
      session = self.sessions_.create(principal);
      if (!session) {
        res.set_header("Retry-After", "60");
        reply(res, 503, transport_error("Service Unavailable: too many open sessions", m.id));
        return;
      }
      created = true;
    } else if (!session) {
      session = session_for(req, res, principal);  // 400: no Mcp-Session-Id
      if (!session) return;
    }
    SessionStreams& streams = *session.streams;
    if (m.kind != jsonrpc::Message::Kind::request) {
      held.release();
      session.peer->deliver(std::move(m), Carrier::hand_off);
      res.status = 202;
      return;
    }
    // The exchange is open before the server sees the request, so that its
    // answer, however soon it comes, finds the connection waiting for it.
    auto exchange = streams.open_exchange(m.id);
    if (!exchange) {
      reply(res, 400, duplicate_request_error(m.id));
      return;
    }
    // Handed on: what the call keeps is the server's (the server moves the
    // arguments out of the message); its share of the budget goes now. The
    // connection's thread runs the request: it waits for the answer anyway.
    const json id = m.id;
    held.release();
    IncomingTraceScope traced(incoming_trace_headers());
    session.peer->deliver(std::move(m), Carrier::carry);
    trim.now();
    auto decision = streams.await_decision(exchange);
    if (created) {
      if (!session.peer->initialized()) {
        self.sessions_.end(session.peer->id(), principal);  // initialize failed
      } else if (const Status kept = self.sessions_.keep(session.peer->id()); !kept.ok()) {
        // An id that was never stored would get 404 at every request, even
        // once the store is back: no id, and the client tries again.
        self.sessions_.end(session.peer->id(), principal);
        self.logger_.write(LogLevel::warning, "session_not_stored", {{"reason", kept.message()}});
        res.set_header("Retry-After", std::to_string(kStoreRetrySeconds));
        reply(res, 503,
              transport_error("Service Unavailable: the session could not be stored (the "
                              "session store is not answering); send initialize again in " +
                                  std::to_string(kStoreRetrySeconds) + " seconds",
                              id));
        return;
      } else {
        res.set_header("Mcp-Session-Id", session.peer->id());
      }
    }
    switch (decision.kind) {
      case SessionStreams::Decision::Kind::json_body:
        res.status = 200;
        res.set_content(decision.body, "application/json");
        return;
      case SessionStreams::Decision::Kind::sse:
        stream(res, session, decision.cursor);
        return;
      case SessionStreams::Decision::Kind::none:
        if (self.stopping_.stop_requested()) {
          // Cancelled by the shutdown: a client waiting for the response
          // would otherwise wait until its own timeout.
          reply(res, 503,
                transport_error("Service Unavailable: the server stopped before the request "
                                "finished",
                                id));
          return;
        }
        // Cancelled by the client (no response is sent for it), or the session ended.
        res.status = 202;
        return;
    }
  }

  // A message of the 2026-07-28 protocol, read and parsed: a request whose
  // headers agree with it is served on a carrier of its own (no session),
  // its answer JSON or SSE as it takes shape; its client going away cancels
  // it. A notification has no session to go to: accepted, and dropped.
  void post_modern(httplib::Response& res, const std::string& principal, jsonrpc::Message m,
                   const std::vector<std::string>& versions, ByteBudget::Hold& held,
                   TrimAfter& trim) {
    if (m.kind == jsonrpc::Message::Kind::notification) {
      res.status = 202;
      return;
    }
    if (m.kind != jsonrpc::Message::Kind::request) {
      reply(res, 400,
            jsonrpc::make_error(m.id, jsonrpc::kInvalidRequest,
                                "Invalid request: a client of the 2026-07-28 protocol sends no "
                                "responses (answers to input requests go in the retried "
                                "request's inputResponses)"));
      return;
    }
    const modern_http::SentHeaders sent{versions, GatedHttpServer::header_as_sent("Mcp-Method"),
                                        GatedHttpServer::header_as_sent("Mcp-Name")};
    std::optional<JsonRpcError> refused = modern_http::check_request(sent, m);
    if (!refused && m.method == "tools/call" && self.options_.param_headers_of) {
      static const json kNoArguments;
      // check_request saw params is an object (it holds _meta).
      const auto name = m.params.find("name");
      const auto arguments = m.params.find("arguments");
      if (name != m.params.end() && name->is_string()) {
        refused = modern_http::check_param_headers(
            self.options_.param_headers_of(name->get_ref<const std::string&>()),
            arguments == m.params.end() ? kNoArguments : *arguments,
            [](const std::string& header) { return GatedHttpServer::header_as_sent(header); });
      }
    }
    if (refused) {
      reply(res, 400, jsonrpc::make_error(m.id, refused->code, refused->message, refused->data));
      return;
    }
    const HttpSession carrier = self.sessions_.carrier(principal);
    const std::shared_ptr<SessionStreams> streams = carrier.streams;
    auto exchange = streams->open_exchange(m.id);  // its streams are its own: never taken
    const json id = m.id;
    // Closing the connection cancels the request, and nothing more is sent
    // for it: its call is stopped, and its exchange ends, which frees this
    // thread if it waits for the answer.
    auto gone = std::make_shared<std::atomic<bool>>(false);
    auto cancel = [peer = carrier.peer, id] {
      jsonrpc::Message cancelled;
      cancelled.kind = jsonrpc::Message::Kind::notification;
      cancelled.method = "notifications/cancelled";
      cancelled.params = {{"requestId", id}, {"reason", "the client closed the response stream"}};
      peer->deliver(std::move(cancelled), Carrier::hand_off);
    };
    ClosureWatch::Watch watch =
        self.closures_->watch(GatedHttpServer::current_socket(), [cancel, gone, streams, id] {
          gone->store(true);
          cancel();
          streams->request_finished(id);
        });
    held.release();
    IncomingTraceScope traced(incoming_trace_headers());
    carrier.peer->deliver(std::move(m), Carrier::carry);
    // A call handed to a thread of its own is registered by now: one the
    // client left before it began is cancelled now.
    if (gone->load()) cancel();
    trim.now();
    auto decision = streams->await_decision(exchange);
    switch (decision.kind) {
      case SessionStreams::Decision::Kind::json_body:
        watch.reset();
        res.status = modern_http::status_for(decision.error_code);
        res.set_content(decision.body, "application/json");
        return;
      case SessionStreams::Decision::Kind::sse:
        stream(res, carrier, decision.cursor, true, std::move(watch));
        return;
      case SessionStreams::Decision::Kind::none:
        watch.reset();
        if (self.stopping_.stop_requested()) {
          reply(res, 503,
                transport_error("Service Unavailable: the server stopped before the request "
                                "finished",
                                id));
          return;
        }
        res.status = 202;  // its client has gone: nobody reads this
        return;
    }
  }

  void get(const httplib::Request& req, httplib::Response& res) {
    std::string principal;
    if (!admit(req, res, principal) || legacy_version_refused(req, res)) return;
    if (self.stopping_.stop_requested()) {
      reply(res, 503, transport_error("Service Unavailable: the server is shutting down"));
      return;
    }
    const std::string accept = http_headers::value(req.headers, "Accept");
    if (!contains_ci(accept, "text/event-stream")) {
      reply(res, 406,
            transport_error("Not Acceptable: GET opens an SSE stream; accept text/event-stream"));
      return;
    }
    const HttpSession session = session_for(req, res, principal);
    if (!session) return;
    SessionStreams& streams = *session.streams;
    std::optional<StreamCursor> cursor;
    if (http_headers::has(req.headers, "Last-Event-ID")) {
      cursor = streams.resume(http_headers::value(req.headers, "Last-Event-ID"));
      if (!cursor) {
        reply(res, 400,
              transport_error("Bad Request: Last-Event-ID names no stream of this "
                              "session"));
        return;
      }
    } else {
      cursor = streams.attach_standalone();
      if (!cursor) {
        reply(res, 409,
              transport_error("Conflict: this session's stream is already open elsewhere"));
        return;
      }
    }
    stream(res, session, *cursor);
  }

  // POST, PUT or PATCH anywhere else: 405 at the endpoint, 404 elsewhere.
  // Registered with a content reader, which it does not call: cpp-httplib
  // would read the body into memory, a chunked one whole. The body is left
  // unread; the gate drains it and closes the connection.
  void elsewhere(const httplib::Request& req, httplib::Response& res) {
    if (req.path == self.options_.path) {
      res.set_header("Allow", "GET, POST, DELETE");
      reply(res, 405, transport_error("Method Not Allowed: use POST, GET or DELETE"));
    } else {
      reply(res, 404, transport_error("Not Found"));
    }
  }

  void del(const httplib::Request& req, httplib::Response& res) {
    std::string principal;
    if (!admit(req, res, principal) || legacy_version_refused(req, res)) return;
    const HttpSession session = session_for(req, res, principal);
    if (!session) return;
    self.sessions_.end(session.peer->id(), principal);
    res.status = 200;
  }

  // /status and /status.json: the endpoint's admission, then (with tokens)
  // the principals the operator named. False when `res` is already the answer.
  bool status_admitted(const httplib::Request& req, httplib::Response& res) {
    std::string principal;
    if (!admit(req, res, principal)) return false;
    // What the page reads may be going away with the server.
    if (self.stopping_.stop_requested()) {
      reply(res, 503, transport_error("Service Unavailable: the server is shutting down"));
      return false;
    }
    const auto& allowed = self.options_.status_principals;
    if (!authenticating() ||
        std::find(allowed.begin(), allowed.end(), principal) != allowed.end()) {
      return true;
    }
    const std::string why = "Forbidden: principal \"" + principal +
                            "\" may not see the status page (serve --status-principal)";
    self.logger_.write(LogLevel::warning, "http_refused", {{"status", 403}, {"reason", why}});
    reply(res, 403, transport_error(why));
    return false;
  }

  // Headers every status answer carries: it is the operator's, never cached
  // or framed, and read as what it says it is.
  static void status_headers(httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
  }

  void status_page(const httplib::Request& req, httplib::Response& res) {
    if (!status_admitted(req, res)) return;
    const std::string nonce = random_id(18);
    std::string page = self.options_.status_page;
    for (auto at = page.find(kStatusNonce); at != std::string::npos;
         at = page.find(kStatusNonce, at + nonce.size())) {
      page.replace(at, kStatusNonce.size(), nonce);
    }
    status_headers(res);
    res.set_header("Content-Security-Policy", status_page_policy(nonce));
    res.set_content(page, "text/html; charset=utf-8");
  }

  void status_json(const httplib::Request& req, httplib::Response& res) {
    if (!status_admitted(req, res)) return;
    status_headers(res);
    res.set_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
    reply(res, 200, self.options_.status_snapshot());
  }

  void metrics(const httplib::Request& req, httplib::Response& res) {
    // The same Host and Origin rules as the endpoint: a page on another site
    // must not read them through DNS rebinding either.
    std::string why;
    if (!origin_allowed(req, why)) {
      reply(res, 403, transport_error(why));
      return;
    }
    Refusal refusal;
    if (!caller(req, refusal)) {
      unauthorized(res, refusal, "/metrics");
      return;
    }
    const GateStats gate = self.http_->gate_stats();
    std::ostringstream out;
    out << self.metrics_.render_prometheus() << "# HELP toolmux_http_sessions Open HTTP sessions.\n"
        << "# TYPE toolmux_http_sessions gauge\n"
        << "toolmux_http_sessions " << self.sessions_.count() << "\n"
        << "# HELP toolmux_http_streams Open SSE streams.\n"
        << "# TYPE toolmux_http_streams gauge\n"
        << "toolmux_http_streams " << self.open_streams_.load() << "\n"
        << "# HELP toolmux_http_connections Open HTTP connections (waiting or being served).\n"
        << "# TYPE toolmux_http_connections gauge\n"
        << "toolmux_http_connections " << gate.open << "\n"
        << "# HELP toolmux_http_connections_waiting Connections waiting for a request head or "
           "closing, holding no thread.\n"
        << "# TYPE toolmux_http_connections_waiting gauge\n"
        << "toolmux_http_connections_waiting " << gate.waiting << "\n"
        << "# HELP toolmux_http_refused_total Connections and requests the limits refused or cut "
           "off, by reason.\n"
        << "# TYPE toolmux_http_refused_total counter\n";
    const std::pair<const char*, std::uint64_t> refused[] = {
        {"connections", gate.refused_connections},
        {"client_connections", gate.refused_client_connections},
        {"header_timeout", gate.header_timeouts},
        {"head_too_large", gate.heads_too_large},
        {"body_timeout", self.http_->body_timeouts()},
        {"busy", self.busy_refusals_.load()}};
    for (const auto& [reason, count] : refused) {
      out << "toolmux_http_refused_total{reason=\"" << reason << "\"} " << count << "\n";
    }
    res.set_content(out.str(), "text/plain; version=0.0.4");
  }
};

HttpServer::HttpServer(HttpSessions& sessions, Metrics& metrics, Logger& logger,
                       HttpOptions options)
    : threads_(std::make_shared<ElasticThreads>(options.max_connections)),
      closures_(std::make_unique<ClosureWatch>()),
      sessions_(sessions),
      metrics_(metrics),
      logger_(logger),
      options_(std::move(options)) {
  GatedHttpServer::Limits limits;
  limits.gate.max_connections = options_.max_connections;
  limits.gate.max_connections_per_client = options_.max_connections_per_client;
  limits.gate.header_timeout = options_.header_timeout;
  limits.gate.idle_timeout = std::chrono::seconds(30);  // the keep-alive timeout below
  limits.body_timeout = options_.body_timeout;
  http_ = std::make_unique<GatedHttpServer>(limits, threads_);
  budget_ = std::make_unique<ByteBudget>(
      options_.body_budget_bytes > 0 ? options_.body_budget_bytes : 2 * options_.max_body_bytes);

  auto routes = std::make_shared<Routes>(Routes{*this});
  const std::string& path = options_.path;
  http_->set_pre_routing_handler([routes](const httplib::Request& q, httplib::Response& r) {
    return routes->refused_before_body(q, r) ? httplib::Server::HandlerResponse::Handled
                                             : httplib::Server::HandlerResponse::Unhandled;
  });
  // A client waiting for "100 Continue" is refused before it sends the body.
  http_->set_expect_100_continue_handler([routes](const httplib::Request& q, httplib::Response& r) {
    return routes->refused_before_body(q, r) ? r.status : 100;
  });
  // The POST handler reads the body itself (Routes::read_body), to bound it;
  // DELETE and the rest never read one.
  http_->Post(path, [routes](const httplib::Request& q, httplib::Response& r,
                             const httplib::ContentReader& read) { routes->post(q, r, read); });
  http_->Get(path,
             [routes](const httplib::Request& q, httplib::Response& r) { routes->get(q, r); });
  http_->Delete(path, [routes](const httplib::Request& q, httplib::Response& r,
                               const httplib::ContentReader&) { routes->del(q, r); });
  if (options_.oauth) {
    auto metadata = [routes](const httplib::Request&, httplib::Response& r) {
      routes->resource_metadata(r);
    };
    http_->Get(options_.oauth->metadata_path(), metadata);
    if (options_.oauth->metadata_path() != "/.well-known/oauth-protected-resource") {
      http_->Get("/.well-known/oauth-protected-resource", metadata);
    }
  }
  http_->Get("/health", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("{\"status\":\"ok\"}", "application/json");
  });
  http_->Get("/metrics",
             [routes](const httplib::Request& q, httplib::Response& r) { routes->metrics(q, r); });
  if (options_.status_snapshot) {
    http_->Get("/status", [routes](const httplib::Request& q, httplib::Response& r) {
      routes->status_page(q, r);
    });
    // Patterns are regular expressions: the dot is escaped.
    http_->Get("/status\\.json", [routes](const httplib::Request& q, httplib::Response& r) {
      routes->status_json(q, r);
    });
  }
  // After the routes above: patterns are tried in the order they were added.
  const auto elsewhere = [routes](const httplib::Request& q, httplib::Response& r,
                                  const httplib::ContentReader&) { routes->elsewhere(q, r); };
  http_->Post(".*", elsewhere);
  http_->Put(".*", elsewhere);
  http_->Patch(".*", elsewhere);
  http_->Delete(".*", elsewhere);

  // Small messages must not wait for delayed ACKs (Nagle).
  http_->set_tcp_nodelay(true);
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_keep_alive_max_count(100000);
  http_->set_keep_alive_timeout(30);
  http_->set_socket_options([this](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd_ = sock;
  });
  http_->on_handler_exception([this](const std::string& what) {
    logger_.write(LogLevel::error, "http_handler_threw", {{"error", what}});
  });
  http_->set_error_handler([this](const httplib::Request&, httplib::Response& res) {
    // cpp-httplib's own 413 (it refused a body) has no body yet; ours have.
    if (res.status == 413 && res.body.empty()) {
      reply(res, 413, transport_error(Routes{*this}.too_large_message()));
    }
  });
}

HttpServer::~HttpServer() {
  // A connection thread still running uses the server object: leave it to
  // process exit rather than free it under the thread.
  if (threads_->threads() > 0) {
    static_cast<void>(http_.release());
    static_cast<void>(closures_.release());
  }
}

Status HttpServer::bind() {
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
  } else {
    port_ = http_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    return Status::io_error("cannot listen on " + options_.host + ":" +
                            std::to_string(options_.port) +
                            " (address in use, or not an address of this machine?)");
  }
  // cpp-httplib listens with a backlog of 5; connection bursts need more.
  if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
  return http_->start();
}

std::size_t HttpServer::connection_threads() const { return threads_->threads(); }

bool HttpServer::run() {
  run_started_ = true;
  if (stop_called_) return true;  // stopped before it listened
  const bool listened = http_->listen_after_bind();
  run_ended_ = true;
  return listened;
}

void HttpServer::stop() {
  stop_called_ = true;
  stopping_.request_stop();   // wakes the SSE writers waiting for events
  if (!run_started_) return;  // run() sees stop_called_ and does not listen
  // cpp-httplib's stop() does nothing until its listen loop runs, so a stop
  // just after run() began (a SIGTERM right after "serving") was lost and
  // the server listened on. Repeat it until it has taken effect.
  for (;;) {
    const bool listening = http_->is_running();
    http_->stop();
    if (listening || run_ended_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string status_page_policy(std::string_view nonce) {
  const std::string own = "'nonce-" + std::string(nonce) + "'";
  return "default-src 'none'; script-src " + own + "; style-src " + own +
         "; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
         "frame-ancestors 'none'";
}

Status parse_tokens(const std::string& text, std::map<std::string, std::string>& tokens) {
  std::string error;
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
      if (!take(entry)) return Status::invalid_argument(std::move(error));
      entry.clear();
      in_comment = false;
    } else {
      in_comment |= c == '#';
      entry += c;
    }
  }
  if (!take(entry)) return Status::invalid_argument(std::move(error));
  return Status::ok_status();
}

}  // namespace toolmux
