// The sessions the Streamable HTTP transport serves, as it needs them: made by
// initialize, found again by their Mcp-Session-Id, ended by DELETE. They are
// kept above the transport (src/app/session_directory.h, on SessionManager),
// which also ends them when idle and keeps them across a restart. And the
// carrier of one request of the 2026-07-28 protocol, which has no session.
//
// A session belongs to the principal that created it: find() and end() treat
// another principal's session as unknown. Every member may be called from any
// thread, concurrently (each request's connection thread); none throws.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "src/base/status.h"
#include "transports/http_streams.h"
#include "transports/server_transport.h"

namespace toolmux {

// One session: the way into the server, and the streams its messages go on
// (the session's MessageSink). Both null when there is no such session.
struct HttpSession {
  std::shared_ptr<ServerPeer> peer;
  std::shared_ptr<SessionStreams> streams;
  // Only from find() without a session: why it cannot be told whether the
  // session exists (its store cannot be reached); "" when it does not exist.
  std::string unavailable;
  explicit operator bool() const { return peer != nullptr; }
};

class HttpSessions {
 public:
  virtual ~HttpSessions() = default;

  // A new session for `principal`; empty when the limit of sessions is reached.
  // Nothing else finds it until keep().
  virtual HttpSession create(const std::string& principal) = 0;
  // After the initialize that opened the session made by create(): keeps it
  // (where it outlives a restart, and where other instances find it), before
  // its id goes to the client. The store's Status when it cannot: the
  // session is then to be ended and its client told to retry, never given
  // the id (every later request would get 404).
  virtual Status keep(const std::string& id) = 0;
  // The session with `id` if it exists and is `principal`'s; marks it used.
  // Without one, `unavailable` says when that cannot be told now.
  virtual HttpSession find(const std::string& id, const std::string& principal) = 0;
  // Ends the session (its calls are cancelled, its streams closed). False
  // when find() would not have found it.
  virtual bool end(const std::string& id, const std::string& principal) = 0;
  // A connection of the session that stays open (its SSE stream) keeps it
  // from idling out: hold() when it opens, release() when it closes.
  virtual void hold(const std::string& id) = 0;
  virtual void release(const std::string& id) = 0;
  // Sessions open now (for /metrics).
  virtual std::size_t count() const = 0;

  // A carrier for one request of the 2026-07-28 protocol from `principal`:
  // a session of its own that is never registered, so nothing finds it
  // again, counts it, keeps it, idles it out or ends it (what its calls store
  // outlives it). Its id, "principal:" + principal, keys what those calls
  // store (offloaded results): over HTTP they belong to the bearer token's
  // principal; without tokens every client is "local", and a result belongs
  // to whoever holds its unguessable id. Its streams carry that request's
  // answer. Never empty.
  virtual HttpSession carrier(const std::string& principal) = 0;
};

}  // namespace toolmux
