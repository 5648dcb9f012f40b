// Streamable HTTP over cpp-httplib: one endpoint (POST, GET, DELETE), plus
// /health for probes and /metrics (Prometheus text). Both protocol eras on
// it: the legacy one (2025-11-25 and before: sessions made by initialize,
// named by Mcp-Session-Id) and the 2026-07-28 one (transports/modern_http.h:
// a POST whose MCP-Protocol-Version says so, served statelessly).
//
// What it checks before a message reaches the server, in order, all but the
// last before reading the body: a repeated Host (400 on every path, RFC 9112
// section 3.2), Host and Origin against the allow-lists (DNS rebinding: 403,
// a repeated Origin too; /metrics too), the bearer token when tokens are configured
// (401 with WWW-Authenticate), the Content-Length (413, as soon as the head
// is read), the session when a legacy request names one (404 when unknown,
// ended, or another principal's), a share of the body budget (503 with
// Retry-After when the bodies being read and parsed already fill it), then
// the body (413 past max_body_bytes, chunked or not: never held in memory
// past it; 408 when slower than body_timeout) and its JSON (at most
// JsonLimits::max_values values). Then the era: an MCP-Protocol-Version
// toolmux does not speak is 400 with -32022 (data.supported, .requested); a
// request whose _meta names the 2026-07-28 protocol without the header saying
// so is 400 with -32020.
//
// Legacy: a request without a session must be an initialize (400); its
// session's id goes out only once HttpSessions::keep has stored it, else the
// answer is 503 with Retry-After and no id (the store is not answering). A message
// that passes is delivered to its session's ServerPeer (transports/
// server_transport.h): a request with Carrier::carry, so the connection's
// thread, which waits for the answer anyway, runs it; notifications and
// responses are answered 202. Sessions are kept above the transport
// (HttpSessions), streams in each session's SessionStreams.
//
// 2026-07-28: the request's Mcp-Method, Mcp-Name and MCP-Protocol-Version must
// agree with its body (400 with -32020 naming the header and both values;
// -32602 when _meta lacks the protocol version or the client capabilities).
// It is carried like a legacy request, by a carrier of its own
// (HttpSessions::carrier); no session id is minted or read. Its answer is
// JSON (404 for -32601, 400 for -32020, -32021, -32022, else 200) or an SSE
// stream without event ids; its client closing the connection while it is
// served cancels it (ClosureWatch), and nothing more is sent for it. A
// notification is answered 202 (there is no session to give it to), a
// response 400. GET and DELETE stay legacy (405 with MCP-Protocol-Version
// 2026-07-28).
//
// The operator's status page (/status, /status.json: HttpOptions) passes the
// same Host, Origin and token checks as the endpoint (Routes::admit), then,
// with tokens, the list of principals who may see it.
//
// Connections (GatedHttpServer): one waiting for a request head holds no
// thread; a request is served on a thread of its own (threads come and go,
// up to max_connections), so open SSE streams never hold up requests. Limits
// on connections in all and per client address, and on the time a head may
// take, are the gate's (ConnectionGate); refusals are counted in /metrics.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/base/status.h"
#include "src/base/untrusted_json.h"
#include "transports/http_sessions.h"
#include "transports/modern_http_headers.h"
#include "transports/oauth_resource.h"

namespace toolmux {

class ByteBudget;
class ClosureWatch;
class ElasticThreads;
class GatedHttpServer;

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (port() says which)
  std::string path = "/mcp";
  // Host header values (name, without port) accepted besides the loopback names.
  std::vector<std::string> allowed_hosts;
  // Origin values accepted besides loopback origins (http[s]://localhost|127.0.0.1|[::1][:port]).
  std::vector<std::string> allowed_origins;
  std::size_t max_body_bytes = std::size_t{16} << 20;
  // Bearer token -> principal. Empty, with no `oauth` either: no
  // authentication, every client is "local".
  std::map<std::string, std::string> tokens;
  // OAuth 2.1 access tokens (the MCP authorization specification), checked
  // by this resource server when set, beside `tokens`: the token's subject is
  // the principal. Its Protected Resource Metadata (RFC 9728) is served at
  // its well-known path and at "/.well-known/oauth-protected-resource"; a 401
  // names it in WWW-Authenticate (resource_metadata, and `challenge_scope`).
  // A token that cannot be checked because its issuer does not answer gets
  // 503 with Retry-After, not 401.
  std::shared_ptr<OAuthResource> oauth;
  std::string challenge_scope;
  // For a caller with an OAuth token: the scope a request (its method and
  // params) needs that the token's scopes lack, or nullopt. Such a request
  // is answered 403 with WWW-Authenticate error="insufficient_scope" and that
  // scope, so that the client can ask for it (step-up), before it reaches
  // the server. Unset: every scope may do everything the access rules let.
  std::function<std::optional<std::string>(std::string_view method, const nlohmann::json& params,
                                           const std::vector<std::string>& scopes)>
      scope_needed;
  // For a 2026-07-28 tools/call: the x-mcp-header parameters (SEP-2243) of
  // the tool it names, whose Mcp-Param-* headers must then agree with its
  // arguments (modern_http::check_param_headers; else 400 and -32020 before
  // the request reaches the server). Unset, or none for the tool: no such
  // header is checked. Called on connection threads, concurrently.
  std::function<std::vector<ParamHeader>(std::string_view tool)> param_headers_of;
  // Connections open at once (waiting for a request or being served), in all
  // and from one client address; one more is answered 503 with Retry-After.
  std::size_t max_connections = 1024;
  std::size_t max_connections_per_client = 256;
  // A request head must arrive within header_timeout (of its first byte, or
  // of the connection opening); its body within body_timeout after it.
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds body_timeout{60};
  // Bytes of request bodies read and parsed at once, across all requests (a
  // parsed message takes several times its size). 0: 2 * max_body_bytes.
  std::size_t body_budget_bytes = 0;
  // How long a request waits for its share of that budget before 503.
  std::chrono::milliseconds budget_wait{5000};
  // What a message body may hold (jsonrpc::parse_message).
  JsonLimits json_limits;
  // The operator's status page: GET /status answers `status_page` (HTML; each
  // occurrence of kStatusNonce becomes the response's CSP nonce), GET
  // /status.json what `status_snapshot` returns. Both are admitted as the
  // endpoint is (Host and Origin, then the bearer token); with tokens, only
  // the principals in `status_principals` see them, and the others get 403.
  // Not served (404) while status_snapshot is empty.
  std::string status_page;
  std::function<nlohmann::json()> status_snapshot;
  std::vector<std::string> status_principals;
};

// Stands in status_page for the nonce its inline <script> and <style> carry.
inline constexpr std::string_view kStatusNonce = "{{TOOLMUX_NONCE}}";
// The Content-Security-Policy of the status page with `nonce`: nothing from
// anywhere but the page's own inline script and style (with that nonce) and
// fetches of its own origin.
std::string status_page_policy(std::string_view nonce);

class HttpServer {
 public:
  // `sessions`, `metrics` and `logger` must outlive every connection thread.
  HttpServer(HttpSessions& sessions, Metrics& metrics, Logger& logger, HttpOptions options);
  ~HttpServer();

  // Binds the address and starts the connection gate: io_error saying why
  // when either cannot be done.
  Status bind();
  int port() const { return port_; }
  // Serves until stop(); returns false if listening failed.
  bool run();
  // Stops accepting and ends open streams; run() returns. Any thread.
  void stop();
  std::size_t open_streams() const { return open_streams_.load(); }
  // Connection threads still alive (idle keep-alive connections included).
  std::size_t connection_threads() const;

 private:
  std::unique_ptr<ByteBudget> budget_;  // before http_: outlives the threads serving requests
  std::atomic<std::uint64_t> busy_refusals_{0};
  std::shared_ptr<ElasticThreads> threads_;
  // Before http_, like budget_: the requests being served watch with it.
  std::unique_ptr<ClosureWatch> closures_;
  std::unique_ptr<GatedHttpServer> http_;
  HttpSessions& sessions_;
  Metrics& metrics_;
  Logger& logger_;
  HttpOptions options_;
  int port_ = 0;
  int listen_fd_ = -1;
  // Requested by stop(): new requests are refused, SSE writers end.
  std::stop_source stopping_;
  // run() has begun / stop() has been called (seq_cst: each side stores its
  // own flag, then reads the other's, so that a stop is never lost).
  std::atomic<bool> run_started_{false};
  std::atomic<bool> run_ended_{false};
  std::atomic<bool> stop_called_{false};
  std::atomic<std::size_t> open_streams_{0};

  struct Routes;
  friend struct Routes;
};

// Reads "principal=token" entries (one per line, or separated by commas; '#'
// starts a comment) into token -> principal, added to what `tokens` holds.
// invalid_argument naming the entry when one is malformed or a token repeats
// (`tokens` then holds the entries before it).
Status parse_tokens(const std::string& text, std::map<std::string, std::string>& tokens);

}  // namespace toolmux
