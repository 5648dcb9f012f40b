// The server side of an MCP transport: how toolmux, as an MCP server, reads
// its clients' messages and answers them. Two kinds: stdio, one client for the
// process (transports/stdio_transport.h), and Streamable HTTP, many sessions
// (transports/http_server.h). The counterpart of transports/client_transport.h.
// A transport moves messages; src/protocol/mcp_server.h speaks the protocol.
//
// What a transport does with what it reads: it frames the bytes (a line; an
// HTTP body), refuses what is over its size limit, parses the text with
// jsonrpc::parse_message and JsonLimits, and hands the message to the server's
// one entry point, ServerPeer::deliver, for the session it belongs to. What a
// transport must answer in its own terms (HTTP: a status code) it answers
// itself; what it can answer in the protocol's (stdio: a JSON-RPC error on the
// stream) it delivers as a Kind::invalid message, which the server answers.
//
// Contract, for every implementation:
// - ServerPeer (the server's side of one session, implemented above the
//   transports) is called by the transport on the thread that read the
//   message. deliver() returns once the message is handled, handed on or
//   held (a peer that paces its one client may block the reader while it
//   holds too much: src/protocol/paced_peer.h, so that the pipe pushes back): with
//   Carrier::hand_off a request that takes time (tools/call) goes to a thread
//   of the server's, so the reader goes on reading (stdio: pings and
//   cancellations must get through while a tool runs); with Carrier::carry the
//   calling thread, which would wait for the answer anyway (an HTTP
//   connection), may run it to its end. deliver() never throws. The transport
//   holds a peer by shared_ptr for as long as it reads for that session.
// - MessageSink (where the server's messages to one session go, implemented by
//   the transport) is owned by the session (src/session/session.h) it was made
//   for, and may outlive the transport's reading loop (a call abandoned past
//   its deadline answers late). send() is called from any thread,
//   concurrently: from the reader's (answers given at once) and from calls'
//   threads; it writes each message whole, in the order it was called on one
//   thread, and returns without waiting for the peer to read it (stdio: a
//   write on the pipe; HTTP: an append to the stream it belongs to). Once the
//   peer has gone, messages are dropped. None of its members throws.
#pragma once

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "src/base/jsonrpc.h"

namespace toolmux {

// Protocol versions of the legacy era this server speaks, oldest first: what
// initialize negotiates and what the MCP-Protocol-Version header may say.
inline constexpr const char* kSupportedProtocolVersions[] = {"2024-11-05", "2025-03-26",
                                                             "2025-06-18", "2025-11-25"};
inline constexpr const char* kLatestProtocolVersion = "2025-11-25";

inline bool supported_protocol_version(std::string_view version) {
  return std::any_of(std::begin(kSupportedProtocolVersions), std::end(kSupportedProtocolVersions),
                     [&](const char* v) { return version == v; });
}

// "2024-11-05, 2025-03-26, ...", for error messages.
inline std::string supported_protocol_versions_text() {
  std::string text;
  for (const char* v : kSupportedProtocolVersions)
    text += (text.empty() ? "" : ", ") + std::string(v);
  return text;
}

// The answer to a request whose id is already in use by a request of the
// same session still open (JSON-RPC ids must be unique among open requests).
inline nlohmann::json duplicate_request_error(const nlohmann::json& id) {
  return jsonrpc::make_error(
      id, jsonrpc::kInvalidRequest,
      "Invalid request: a request with id " + id.dump() + " is already in flight");
}

// Where a session's outgoing messages go. `related_request` is the id of the
// client request the message belongs to (its response, or progress, log
// messages and requests sent while serving it), null for messages of the
// session as a whole such as list_changed. A transport with one channel
// (stdio) ignores it; Streamable HTTP uses it to pick the stream.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void send(const nlohmann::json& message, const nlohmann::json& related_request) = 0;
  // send() for a message the caller gives away (an answer built for it): a
  // sink that changes what it sends (the 2026-07-28 era's ModernSink) changes
  // it in place instead of copying it first.
  virtual void send_owned(nlohmann::json&& message, const nlohmann::json& related_request) {
    send(message, related_request);
  }
  // The request ended without a response (it was cancelled).
  virtual void request_finished(const nlohmann::json& /*request_id*/) {}
  // A tool asks to end the connection that carries its request's messages now;
  // the client reconnects to get the rest (SSE polling). Nothing to do on stdio.
  virtual void close_request_stream(const nlohmann::json& /*request_id*/) {}
  // The session has ended: whatever the transport holds open for it closes.
  virtual void session_ended() {}
  // Another instance stored events for the session (a shared store): a stream
  // waiting for them looks now.
  virtual void look_again() {}
};

// Whether the thread that delivers a message may run the request it carries
// to its end (see the contract above): hand_off, no; carry, yes (a Streamable
// HTTP connection, which waits for the answer anyway); reader, only a call of
// a tool whose spec says runs_on_reader (the stdio reader, which goes back to
// reading pings and cancellations: it keeps only calls that answer at once).
enum class Carrier { hand_off, carry, reader };

// One session as its transport sees it: the way into the server.
class ServerPeer {
 public:
  virtual ~ServerPeer() = default;
  virtual const std::string& id() const = 0;
  // initialize has been answered with success: the session is in use.
  virtual bool initialized() const = 0;
  // The server's one entry point: handles `message` (of any kind, Kind::invalid
  // included: answered with its error) from this session.
  virtual void deliver(jsonrpc::Message message, Carrier carrier) = 0;
};

}  // namespace toolmux
