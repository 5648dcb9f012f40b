// The client side of an MCP transport: how toolmux, as the client of an
// upstream MCP server, moves JSON-RPC messages to and from it. Two kinds:
// a child process over stdio (transports/stdio_child_transport.h) and a
// Streamable HTTP endpoint (transports/http_client_transport.h). A transport
// moves text only; src/upstream/mcp_client.h speaks the protocol over it.
//
// Contract, for every implementation:
// - start() is called once, before send(). on_message is called with the text
//   of each message the server sends, in the order it sent them on one
//   stream, from the transport's own threads (never from inside send() on
//   the caller's thread, so a caller may hold its locks while sending).
//   on_closed is called once, when the connection has gone for good (the
//   child exited, the HTTP session was lost); no on_message follows it.
//   on_dropped (may be empty) is called, on the same threads and in the same
//   order as on_message, for a message that came but could not be handed
//   over (over the transport's size limit), with why; the caller cannot tell
//   which request it answered.
// - send() may be called from any thread, concurrently. It returns once the
//   message is on its way (for HTTP: handed to a request of its own, whose
//   response is delivered through on_message later); false when the
//   connection has gone, and then the message was not sent.
// - close() ends the connection (stops the child; ends the HTTP session) and
//   returns once no callback runs or will run. Idempotent; the destructor
//   calls it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toolmux {

class ClientTransport {
 public:
  using OnMessage = std::function<void(std::string_view text)>;
  using OnClosed = std::function<void(const std::string& reason)>;
  using OnDropped = std::function<void(const std::string& reason)>;

  virtual ~ClientTransport() = default;

  virtual void start(OnMessage on_message, OnClosed on_closed, OnDropped on_dropped = nullptr) = 0;
  virtual bool send(const std::string& text) = 0;
  // send() with HTTP headers of the message's own (a 2026-07-28 tools/call's
  // Mcp-Param-* headers: transports/modern_http_headers.h). A transport that
  // has no headers sends the text alone.
  virtual bool send_with_headers(const std::string& text,
                                 const std::vector<std::pair<std::string, std::string>>& headers) {
    static_cast<void>(headers);
    return send(text);
  }
  virtual void close() = 0;

  // Told once initialize has been answered: the protocol version the two
  // agreed on (HTTP sends it in MCP-Protocol-Version on every later request).
  // A 2026-07-28 request carries its version in its own _meta instead.
  virtual void set_protocol_version(const std::string& /*version*/) {}

  // Ends the response stream of request `id` when the transport carries the
  // request on a stream of its own whose closing cancels it: a 2026-07-28
  // request over Streamable HTTP (basic/patterns/cancellation.mdx). True when
  // it did (nothing more of it is handed over); false when there is no such
  // stream (stdio, a legacy request), and the caller sends
  // notifications/cancelled. May be called from any thread.
  virtual bool end_request_stream(std::int64_t /*id*/) { return false; }

  // What it is, for log lines and error messages: "stdio: npx ..." or the URL.
  virtual std::string describe() const = 0;
};

}  // namespace toolmux
