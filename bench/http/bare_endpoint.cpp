// The ceiling of the HTTP benchmark: a bare cpp-httplib endpoint that parses
// each POSTed JSON-RPC body with nlohmann::json and answers a request with
// the CallToolResult toolmux's `test_simple_text` returns. No MCP logic: no
// session, no header checks, no pipeline; `initialize` gets a fixed session id
// so that the driver treats all three servers alike, and a notification gets
// 202.
//
// Tuned as transports/http_server.cpp is: TCP_NODELAY (without it Nagle's
// algorithm against delayed ACKs holds every small answer ~40 ms), enough
// threads for every connection (cpp-httplib's default pool of 8 leaves all
// but 8 keep-alive connections unserved), long keep-alive, and a listen
// backlog of SOMAXCONN instead of cpp-httplib's 5.
//
// Usage: bare_endpoint [--port N] [--threads N]   (127.0.0.1; port 0 = any free)
// Writes one JSON line {"event":"serving","url":...} to stderr when it listens.
#include <httplib.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace {

using nlohmann::json;

constexpr const char* kText = "This is a simple text response for testing.";

void answer(const httplib::Request& req, httplib::Response& res) {
  const json message = json::parse(req.body, nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    res.status = 400;
    res.set_content(
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})",
        "application/json");
    return;
  }
  if (!message.contains("id")) {  // a notification
    res.status = 202;
    return;
  }
  json result;
  if (message.value("method", "") == "initialize") {
    result = {{"protocolVersion", message["params"].value("protocolVersion", "2025-06-18")},
              {"capabilities", {{"tools", json::object()}}},
              {"serverInfo", {{"name", "bare_endpoint"}, {"version", "0"}}}};
    res.set_header("Mcp-Session-Id", "bare");
  } else {
    result = {{"content", json::array({{{"type", "text"}, {"text", kText}}})}};
  }
  const json response = {{"jsonrpc", "2.0"}, {"id", message["id"]}, {"result", std::move(result)}};
  res.set_content(response.dump(), "application/json");
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  std::size_t threads = 128;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view arg = argv[i];
    if (arg == "--port") {
      port = std::atoi(argv[i + 1]);
    } else if (arg == "--threads") {
      threads = static_cast<std::size_t>(std::atoi(argv[i + 1]));
    } else {
      std::cerr << "usage: bare_endpoint [--port N] [--threads N]\n";
      return 2;
    }
  }

  httplib::Server server;
  server.Post("/mcp", answer);
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(100000);
  server.set_keep_alive_timeout(30);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  int listen_fd = -1;
  server.set_socket_options([&listen_fd](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd = sock;
  });
  port = port == 0 ? server.bind_to_any_port("127.0.0.1")
                   : (server.bind_to_port("127.0.0.1", port) ? port : -1);
  if (port <= 0) {
    std::cerr << "bare_endpoint: cannot listen\n";
    return 1;
  }
  if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  std::cerr << json{{"event", "serving"},
                    {"url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"}}
                   .dump()
            << std::endl;
  return server.listen_after_bind() ? 0 : 1;
}
