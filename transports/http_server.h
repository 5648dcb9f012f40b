// Streamable HTTP (MCP 2025-11-25, legacy era) over cpp-httplib: one endpoint
// (POST, GET, DELETE), plus /health for probes and /metrics (Prometheus text).
//
// What it checks before a message reaches the server, in order: Host and
// Origin against the allow-lists (DNS rebinding: 403), the bearer token when
// tokens are configured (401 with WWW-Authenticate), MCP-Protocol-Version
// (400 when unsupported), the body size (413; a body is never held in memory
// past max_body_bytes, chunked or not), the session (400 when missing, 404
// when unknown, ended, or another principal's). Sessions live in a
// SessionManager, streams in each session's SessionStreams.
//
// Each connection is served on a thread of its own (threads come and go with
// the connections, up to max_connections), so open SSE streams never hold up
// requests.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/logger.h"
#include "src/mcp_server.h"
#include "src/metrics.h"
#include "src/session_manager.h"

namespace httplib {
class Server;
}

namespace toolmux {

class ElasticThreads;

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (port() says which)
  std::string path = "/mcp";
  // Host header values (name, without port) accepted besides the loopback names.
  std::vector<std::string> allowed_hosts;
  // Origin values accepted besides loopback origins (http[s]://localhost|127.0.0.1|[::1][:port]).
  std::vector<std::string> allowed_origins;
  std::size_t max_body_bytes = std::size_t{16} << 20;
  // Bearer token -> principal. Empty: no authentication, every client is "local".
  std::map<std::string, std::string> tokens;
  std::size_t max_connections = 1024;
};

class HttpServer {
 public:
  HttpServer(McpServer& server, SessionManager& sessions, Metrics& metrics, Logger& logger,
             HttpOptions options);
  ~HttpServer();

  // Binds the address; false with `error` set when it cannot.
  bool bind(std::string& error);
  int port() const { return port_; }
  // Serves until stop(); returns false if listening failed.
  bool run();
  // Stops accepting and ends open streams; run() returns. Any thread.
  void stop();
  std::size_t open_streams() const { return open_streams_.load(); }
  // Connection threads still alive (idle keep-alive connections included).
  std::size_t connection_threads() const;

 private:
  std::unique_ptr<httplib::Server> http_;
  std::shared_ptr<ElasticThreads> threads_;
  McpServer& server_;
  SessionManager& sessions_;
  Metrics& metrics_;
  Logger& logger_;
  HttpOptions options_;
  int port_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> open_streams_{0};

  struct Routes;
  friend struct Routes;
};

// Reads "principal=token" entries (one per line, or separated by commas; '#'
// starts a comment) into token -> principal. False with `error` naming the
// entry when one is malformed or a token repeats.
bool parse_tokens(const std::string& text, std::map<std::string, std::string>& tokens,
                  std::string& error);

}  // namespace toolmux
