// An HTTP request through the server's real request path: toolmux's
// HttpServer (transports/http_server.h, cpp-httplib underneath) runs once per
// process on 127.0.0.1 and a free port, with one tool ("echo") and no
// tokens, and each input is written as raw bytes to a fresh TCP connection,
// whose write side is then shut (so a short body ends at once rather than
// after a read timeout); the answer is read until the server closes.
// "@SID@" in the input is replaced by the id of a session the harness opened,
// so that inputs reach past the session check.
//
// Invariants: whatever the server sends is an HTTP/1.1 status line with a
// three-digit status and headers, and a JSON body (application/json) is
// valid JSON; after each input the server still answers GET /health with 200
// within 15 s.
// Threads: the server's own (connection threads); the fuzzer's thread only
// talks to it over sockets.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "src/app/session_directory.h"
#include "src/assembly/tool_catalog.h"
#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/protocol/mcp_server.h"
#include "tests/fuzz/fuzz_check.h"
#include "transports/http_server.h"

using nlohmann::json;
using namespace toolmux;

namespace {

// Sends `request` on a new connection, shuts the write side, and returns what
// came back until the server closed (or stopped sending for `quiet_seconds`). An
// event stream is cut after its headers: it would stay open.
std::string exchange(int port, const std::string& request, int quiet_seconds = 1) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  FUZZ_CHECK(fd >= 0, "a socket");
  timeval timeout{quiet_seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  // Closed with a reset, not into TIME_WAIT: this socket shuts its write side
  // first, so each exchange would otherwise hold a local port for a minute,
  // and two exchanges per input at hundreds of inputs a second use up the
  // ephemeral ports (connect then fails) within a 30 s run.
  const linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    // libFuzzer's hang timer is a SIGALRM; when it lands during connect, the
    // connection goes on in the background (EINTR), and is waited for here
    // rather than taken for a refusal.
    bool connected = false;
    if (errno == EINTR) {
      pollfd writable{fd, POLLOUT, 0};
      int ready = 0;
      do ready = poll(&writable, 1, quiet_seconds * 1000);
      while (ready < 0 && errno == EINTR);
      int error = 0;
      socklen_t length = sizeof error;
      connected =
          ready == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    }
    if (!connected) {
      std::perror("connect");
      FUZZ_CHECK(false, "the server accepts a connection");
    }
  }
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer and close before reading everything
    sent += static_cast<std::size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string answer;
  char buffer[4096];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
    const std::size_t headers_end = answer.find("\r\n\r\n");
    if (headers_end != std::string::npos &&
        answer.substr(0, headers_end).find("text/event-stream") != std::string::npos) {
      break;
    }
  }
  close(fd);
  return answer;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The value of header `name` (lower case) in `answer`, or "".
std::string header(const std::string& answer, const std::string& name) {
  const std::string head = answer.substr(0, answer.find("\r\n\r\n"));
  const std::size_t at = lower(head).find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  std::size_t start = at + 2 + name.size() + 1;
  while (start < head.size() && head[start] == ' ') ++start;
  return head.substr(start, head.find("\r\n", start) - start);
}

// Checks one answer: a status line, headers, and a JSON body where it says so
// (an answer to HEAD has none: what follows its head answers the next request).
void check_answer(const std::string& answer, bool head_request) {
  if (answer.empty()) return;  // closed without a word: allowed (e.g. a bad request line)
  FUZZ_CHECK(answer.rfind("HTTP/1.1 ", 0) == 0, "an answer starts with an HTTP/1.1 status line");
  FUZZ_CHECK(answer.size() >= 12 && std::isdigit(static_cast<unsigned char>(answer[9])) &&
                 std::isdigit(static_cast<unsigned char>(answer[10])) &&
                 std::isdigit(static_cast<unsigned char>(answer[11])),
             "the status is three digits");
  const std::size_t headers_end = answer.find("\r\n\r\n");
  if (headers_end == std::string::npos || head_request) return;  // cut by the read timeout
  if (header(answer, "content-type").rfind("application/json", 0) != 0) return;
  if (!header(answer, "transfer-encoding").empty()) return;
  const std::string length = header(answer, "content-length");
  const std::string body = answer.substr(headers_end + 4);
  if (length.empty() || body.size() != std::stoul(length)) return;
  if (!json::accept(body)) {
    std::fprintf(stderr, "answer: %s\n", answer.substr(0, 1000).c_str());
    FUZZ_CHECK(false, "a JSON body is valid JSON");
  }
}

std::shared_ptr<Catalog> echo_catalog() {
  auto registry = std::make_shared<ToolRegistry>();
  ToolSpec spec;
  spec.name = "echo";
  spec.description = "Returns its text.";
  spec.input_schema = {
      {"type", "object"},
      {"properties", {{"text", {{"type", "string"}, {"description", "The text to return."}}}}},
      {"required", {"text"}}};
  spec.side_effect = "read_only";
  spec.timeout = std::chrono::milliseconds(2000);
  const Problems problems = registry->add(spec, [](const json& args, CallContext&) {
    return ToolResult::text(args.at("text").get<std::string>());
  });
  FUZZ_CHECK(problems.empty(), "the echo tool registers");
  auto catalog = std::make_shared<Catalog>();
  for (const auto& tool : registry->tools()) catalog->published.push_back(tool->descriptor);
  catalog->registry = std::move(registry);
  return catalog;
}

// The server, started on first use and left running until the process ends.
struct Harness {
  Harness() {
    std::signal(SIGPIPE, SIG_IGN);
    server = std::make_unique<McpServer>(echo_catalog(), ServerOptions{}, logger, metrics);
    SessionLimits limits;
    limits.max_sessions = 64;
    sessions = std::make_unique<SessionDirectory>(*server, limits, nullptr, nullptr, logger);
    HttpOptions options;
    options.max_body_bytes = 64 * 1024;
    options.max_connections = 64;
    http = std::make_unique<HttpServer>(*sessions, metrics, logger, options);
    FUZZ_CHECK(http->bind().ok(), "the server binds 127.0.0.1");
    std::thread([this] { http->run(); }).detach();
    open_session();
  }

  void open_session() {
    const std::string body =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
        R"("capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}})";
    const std::string answer =
        exchange(http->port(),
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 "Accept: application/json, text/event-stream\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body,
                 10);
    session_id = header(answer, "mcp-session-id");
  }

  std::FILE* log = std::fopen("/dev/null", "w");
  Logger logger{log, LogLevel::emergency};
  Metrics metrics;
  std::unique_ptr<McpServer> server;
  std::unique_ptr<SessionDirectory> sessions;
  std::unique_ptr<HttpServer> http;
  std::string session_id;
};

Harness& harness() {
  static Harness* instance = new Harness();  // never destroyed: threads may still use it
  return *instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Harness& h = harness();
  std::string request(toolmux::fuzz::as_text(data, size));
  bool uses_session = false;
  for (std::size_t at = request.find("@SID@"); at != std::string::npos;
       at = request.find("@SID@", at)) {
    request.replace(at, 5, h.session_id);
    at += h.session_id.size();
    uses_session = true;
  }
  // cpp-httplib answers HEAD as GET, without the body.
  const bool head_request = request.rfind("HEAD ", 0) == 0;
  check_answer(exchange(h.http->port(), request), head_request);
  // The server lives: it answers /health with 200 within 15 s (under the
  // run's 20 s hang limit). Not always at the first try: a run of some
  // minutes saw an empty answer, rarely, not reproduced by the input alone
  // (a connection refused at the limit of 64 can lose its 503 to a reset);
  // each retry is logged.
  const std::string probe = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  for (;;) {
    const std::string health = exchange(h.http->port(), probe, 5);
    if (health.rfind("HTTP/1.1 200", 0) == 0) break;
    std::fprintf(stderr, "/health answered: %s\n(%zu connection threads, %zu open streams)\n",
                 health.substr(0, 300).c_str(), h.http->connection_threads(),
                 h.http->open_streams());
    FUZZ_CHECK(std::chrono::steady_clock::now() < deadline,
               "the server still answers /health with 200 within 15 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // A DELETE may have ended the harness's session, or a lone session expired.
  if (uses_session && request.find("DELETE") != std::string::npos) h.open_session();
  return 0;
}
