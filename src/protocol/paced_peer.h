// A session's way into the server for a transport with one client that can
// be slowed down instead of refused (stdio: when toolmux stops reading, the
// client's writes wait in the pipe). Where SessionPeer hands every message on,
// PacedPeer holds the requests that take a place to run
// (McpServer::takes_a_place) while the server's call admission has no room
// for them, and hands them on in the order they came as room frees, on a
// thread of its own (the feeder). So a burst of calls is slowed down, never
// refused as busy.
//
// Everything else is handled at once on the reader's thread, held requests or
// not: the client's answers to toolmux's own requests (elicitation, sampling)
// for a running call, notifications, ping, tools/list. A
// notifications/cancelled for a held request takes it out (it gets no
// response, as a cancelled request does not). deliver() blocks the reader
// only when the held requests reach kMaxHeldMessages or kMaxHeldBytes: then
// the transport reads no more until one is handed on, and the pipe pushes
// back. A request's timeout counts from when it is handed on.
//
// deliver() is called from one thread (the reader); finish() from that
// thread too, once reading ended. The feeder starts with the first held
// request; if no thread can be had, the request is handed on at once (and
// may be refused as busy). Never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "src/base/jsonrpc.h"
#include "src/protocol/mcp_server.h"
#include "src/session/session.h"
#include "transports/server_transport.h"

namespace toolmux {

class PacedPeer final : public ServerPeer {
 public:
  // The most requests held at once, and their bytes as JSON text (a request
  // longer than that is held alone).
  static constexpr std::size_t kMaxHeldMessages = 1024;
  static constexpr std::size_t kMaxHeldBytes = std::size_t{16} << 20;

  // `stop_requested` (may be null) is looked at every kStopLook while the
  // reader waits for room: once it says true, deliver() returns, dropping the
  // request (toolmux was told to stop; its calls are cancelled, unanswered).
  static constexpr std::chrono::milliseconds kStopLook{50};
  PacedPeer(McpServer& server, std::shared_ptr<Session> session,
            std::function<bool()> stop_requested = nullptr);
  ~PacedPeer() override;  // finish(false) if not called
  PacedPeer(const PacedPeer&) = delete;
  PacedPeer& operator=(const PacedPeer&) = delete;

  const std::string& id() const override { return session_->id(); }
  bool initialized() const override { return session_->initialized(); }
  void deliver(jsonrpc::Message message, Carrier carrier) override;

  // Once reading ended: waits up to `timeout` for every held request to be
  // handed on; true when none is left.
  bool wait_until_handed_on(std::chrono::milliseconds timeout);
  // Hands nothing more on. The requests still held are answered with a
  // -32000 error saying toolmux is stopping when `answer`, else dropped
  // unanswered (toolmux was told to stop: its calls are cancelled).
  void finish(bool answer);

  // How many requests are held now.
  std::size_t held() const;

  struct State;

 private:
  McpServer& server_;
  const std::shared_ptr<Session> session_;
  const std::function<bool()> stop_requested_;
  std::shared_ptr<State> state_;
};

}  // namespace toolmux
