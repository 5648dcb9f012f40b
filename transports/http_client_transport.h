// The Streamable HTTP client transport (MCP 2025-11-25, the legacy era with
// sessions, and 2026-07-28 requests beside it): toolmux as the client of an
// upstream MCP server reached at a URL.
// See transports/client_transport.h for the contract every transport keeps.
//
// Each send() is one POST of its own, made on a thread of its own, so send()
// returns at once (false when it cannot be sent: the transport is closed, no
// thread can be had, or too many notifications and responses are under way). What comes back is
// handed to on_message: an application/json body (a batch array message by message), or each
// "message" event of a text/event-stream as it arrives (progress while a call
// runs). A request's event stream that breaks before its response came is
// resumed with GET and Last-Event-ID when the server gave event ids (spec
// "Resumability and Redelivery"), a bounded number of times.
//
// The Mcp-Session-Id of the initialize response is sent on every later
// request, and MCP-Protocol-Version once set_protocol_version() told it. Once
// notifications/initialized has been accepted, a GET stream is held open for
// messages the server sends unprompted (list_changed, and requests it relates
// to no request); 405 means the server offers none; when it drops it is
// reopened with Last-Event-ID, with backoff, while the transport is open.
// Legacy requests sent after notifications/initialized wait (at most 2 s, or
// connect_timeout when shorter, and only once) until that stream is answered,
// so the server never has something to send on it before it exists.
//
// Failures: HTTP 404 to a request that carried the session id means the
// session is gone, and a POST that cannot connect means the server is:
// both call on_closed, with a reason naming the URL. Any other HTTP error, a
// body over max_message_bytes or a stream that ends for good without the
// answer, for a request: on_message gets a JSON-RPC error response for its id
// (code -32000, the message names the HTTP status, data.httpStatus holds it),
// so the caller never waits for an answer that will not come; for a
// notification or a response: on_warning.
//
// A 2026-07-28 request (its params._meta names its protocol version) goes
// without the session: its POST carries MCP-Protocol-Version, Mcp-Method and
// Mcp-Name taken from its body (transports/modern_http_headers.h); an HTTP
// error whose body is a JSON-RPC error is that request's answer, as the
// server gave it (-32022 with the versions it supports); its event stream is
// not resumed; and end_request_stream() closes it, which cancels it.
//
// Header values (they may hold secrets) never appear in messages, warnings
// or describe(); neither do credentials or the query of the URL.
//
// close() stops every request in flight, DELETEs the session (a 405 is
// fine), and joins the transport's threads; it may be called from inside a
// callback. Callbacks are never run two at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/base/status.h"
#include "transports/client_transport.h"
#include "transports/http_authorizer.h"

namespace toolmux {

struct HttpClientOptions {
  std::string url;  // http://host[:port]/path or https://... (transports/url.h); user:password@
                    // becomes Basic auth
  // Sent on every request (secrets already resolved, e.g. Authorization: Bearer ...).
  std::vector<std::pair<std::string, std::string>> headers;
  std::size_t max_message_bytes = std::size_t{64} << 20;  // one body or one SSE event, at most
  std::chrono::milliseconds connect_timeout{10000};
  // Notifications and responses (to the server's own requests, e.g. ping)
  // POSTed at once, each on a thread; past it send() refuses them (false).
  // Requests are bounded by toolmux's call limits instead.
  std::size_t max_notifications_in_flight = 64;
  // What went wrong with no message to tell it through (a notification
  // refused, the GET stream failing). Called from the transport's threads,
  // never two at a time with other callbacks; may be empty.
  std::function<void(const std::string& warning)> on_warning;
  // Holds the credentials when the server asks for authorization (MCP
  // authorization: transports/oauth_client.h); null = none. Its
  // authorization() goes on every request; a POST refused with 401, or 403
  // and a Bearer challenge, is handed to challenged() and sent again while it
  // says ok, at most kMaxAuthorizationRetries times, else it fails with
  // challenged()'s reason.
  std::shared_ptr<HttpAuthorizer> authorizer;
};

class HttpClientTransport final : public ClientTransport {
 public:
  // How often one POST is sent again after its authorization was refused
  // (a step-up that never satisfies the server ends here).
  static constexpr int kMaxAuthorizationRetries = 3;

  // An invalid_argument Status when the URL is not an http:// or https:// URL.
  static Result<std::unique_ptr<HttpClientTransport>> create(HttpClientOptions options);
  ~HttpClientTransport() override;
  HttpClientTransport(const HttpClientTransport&) = delete;
  HttpClientTransport& operator=(const HttpClientTransport&) = delete;

  // on_dropped is never called: a request whose answer is over the limit
  // gets an error response for its id instead (above).
  void start(OnMessage on_message, OnClosed on_closed, OnDropped on_dropped = nullptr) override;
  bool send(const std::string& text) override;
  // Its headers go only with a 2026-07-28 request (whose body names its version).
  bool send_with_headers(const std::string& text,
                         const std::vector<std::pair<std::string, std::string>>& headers) override;
  void close() override;
  void set_protocol_version(const std::string& version) override;
  // Stops the POST of 2026-07-28 request `id` (closing its response stream is
  // its cancellation); false for any other request.
  bool end_request_stream(std::int64_t id) override;
  // scheme://host:port/path: no credentials, no query.
  std::string describe() const override;

  // The session id the server gave (empty before initialize was answered, or
  // when the server keeps no sessions).
  std::string session_id() const;

 private:
  struct State;
  explicit HttpClientTransport(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;  // shared with the transport's threads
};

}  // namespace toolmux
