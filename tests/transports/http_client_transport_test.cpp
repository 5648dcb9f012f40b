// HttpClientTransport against toolmux's own Streamable HTTP server, run in
// this process on a free port; and, for what that server never sends or
// shows (a fixed body, the headers of a request), against small servers on
// raw sockets.
#include "transports/http_client_transport.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "src/app/session_directory.h"
#include "src/protocol/mcp_server.h"
#include "src/session/session_manager.h"
#include "tests/support/eventually.h"
#include "tests/support/test_tools.h"
#include "transports/http_server.h"
#include "transports/http_streams.h"

using namespace toolmux;
using namespace toolmux::testing;
using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kToken = "the-right-token-0123456789";

// The test tools plus: steps {n} (n progress reports 20 ms apart, then
// "stepped"), parted {} (progress, then it ends the connection of its stream,
// then more progress and "parted"), until_cancelled {} (runs up to 10 s).
std::shared_ptr<ToolRegistry> upstream_registry() {
  auto registry = make_test_registry();
  REQUIRE(registry
              ->add(spec("steps", object_schema({{"n", {{"type", "integer"}}}}, {"n"})),
                    [](const json& args, CallContext& ctx) {
                      const int n = args["n"].get<int>();
                      for (int i = 1; i <= n; ++i) {
                        ctx.report_progress(i, n, "step");
                        std::this_thread::sleep_for(20ms);
                      }
                      return ToolResult::text("stepped");
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("parted", object_schema(), 5000),
                    [](const json&, CallContext& ctx) {
                      ctx.report_progress(1, 2, "before");
                      std::this_thread::sleep_for(50ms);
                      ctx.release_stream();
                      std::this_thread::sleep_for(100ms);
                      ctx.report_progress(2, 2, "after");
                      return ToolResult::text("parted");
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("until_cancelled", object_schema(), 20000),
                    [](const json&, CallContext& ctx) {
                      const auto until = Clock::now() + 10s;
                      ctx.report_progress(1, std::nullopt, "running");
                      while (!ctx.cancelled() && Clock::now() < until) {
                        std::this_thread::sleep_for(5ms);
                      }
                      return ToolResult::text("ended");
                    })
              .empty());
  return registry;
}

// toolmux's HTTP server with the tools above, on 127.0.0.1 and a free port.
struct TestUpstream {
  explicit TestUpstream(std::map<std::string, std::string> tokens = {}) {
    server = std::make_unique<McpServer>(make_test_catalog(upstream_registry()), ServerOptions{},
                                         logger, metrics);
    sessions =
        std::make_unique<SessionDirectory>(*server, SessionLimits{}, nullptr, nullptr, logger);
    HttpOptions options;
    options.tokens = std::move(tokens);
    http = std::make_unique<HttpServer>(*sessions, metrics, logger, options);
    const toolmux::Status bound = http->bind();
    INFO(bound.message());
    REQUIRE(bound.ok());
    runner = std::thread([this] { http->run(); });
  }
  ~TestUpstream() {
    http->stop();
    runner.join();
    for (const auto& s : sessions->manager().all()) s->cancel_all_calls();
    for (const auto& s : sessions->manager().all()) s->wait_for_calls(2s);
    server->wait_for_running_tools(2s);
    std::fclose(log_file);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(http->port()) + "/mcp"; }

  std::FILE* log_file = std::tmpfile();
  Logger logger{log_file, LogLevel::debug};
  Metrics metrics;
  std::unique_ptr<McpServer> server;
  std::unique_ptr<SessionDirectory> sessions;
  std::unique_ptr<HttpServer> http;
  std::thread runner;
};

// What the transport hands over, for tests to wait on.
struct Received {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<json> messages;
  std::optional<std::string> closed;
  int closed_calls = 0;

  void start(HttpClientTransport& transport) {
    transport.start(
        [this](std::string_view text) {
          std::lock_guard lock(mutex);
          messages.push_back(json::parse(text));
          changed.notify_all();
        },
        [this](const std::string& reason) {
          std::lock_guard lock(mutex);
          closed = reason;
          ++closed_calls;
          changed.notify_all();
        });
  }

  // The response to `id` (null if none came within `timeout`).
  json response(const json& id, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex);
    json found;
    changed.wait_for(lock, timeout, [&] {
      for (const auto& m : messages) {
        if (m.contains("id") && m["id"] == id && !m.contains("method")) {
          found = m;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  std::optional<std::string> wait_closed(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex);
    changed.wait_for(lock, timeout, [&] { return closed.has_value(); });
    return closed;
  }

  bool wait_for(const std::string& method, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [&] {
      for (const auto& m : messages) {
        if (m.value("method", "") == method) return true;
      }
      return false;
    });
  }

  // The methods of what came, a response as "response <id>".
  std::vector<std::string> sequence() {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    for (const auto& m : messages) {
      out.push_back(m.contains("method") ? m["method"].get<std::string>()
                                         : "response " + m["id"].dump());
    }
    return out;
  }

  std::size_t count() {
    std::lock_guard lock(mutex);
    return messages.size();
  }
};

std::string request(const json& id, const std::string& method, json params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}}
      .dump();
}

std::string call(const json& id, const std::string& tool, json arguments = json::object()) {
  return request(
      id, "tools/call",
      {{"name", tool}, {"arguments", std::move(arguments)}, {"_meta", {{"progressToken", id}}}});
}

std::unique_ptr<HttpClientTransport> make_transport(HttpClientOptions options) {
  auto transport = HttpClientTransport::create(std::move(options));
  INFO(transport.message());
  REQUIRE(transport.ok());
  return std::move(transport).value();
}

std::unique_ptr<HttpClientTransport> make_transport(const std::string& url) {
  HttpClientOptions options;
  options.url = url;
  return make_transport(std::move(options));
}

// initialize, then notifications/initialized; the initialize response.
json initialize(HttpClientTransport& transport, Received& received) {
  REQUIRE(transport.send(request("init", "initialize",
                                 {{"protocolVersion", "2025-11-25"},
                                  {"capabilities", json::object()},
                                  {"clientInfo", {{"name", "test"}, {"version", "1"}}}})));
  json r = received.response("init");
  REQUIRE(r.contains("result"));
  transport.set_protocol_version(r["result"]["protocolVersion"]);
  REQUIRE(transport.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  return r;
}

// A transport that has initialized a session with a TestUpstream.
struct Connected {
  Connected() {
    received.start(*transport);
    initialize(*transport, received);
  }
  TestUpstream upstream;
  std::unique_ptr<HttpClientTransport> transport = make_transport(upstream.url());
  Received received;
};

// A port on 127.0.0.1 where nothing listens.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

}  // namespace

TEST_CASE("initialize gives the session id, and tools/list comes back as one JSON body") {
  TestUpstream upstream;
  auto transport = make_transport(upstream.url());
  Received received;
  received.start(*transport);
  CHECK(transport->session_id().empty());
  json init = initialize(*transport, received);
  CHECK(init["result"]["serverInfo"]["name"] == "toolmux");
  const std::string session = transport->session_id();
  CHECK(session.size() >= 16);
  CHECK(upstream.sessions->manager().find(session, "local") != nullptr);

  REQUIRE(transport->send(request(2, "tools/list")));
  json list = received.response(2);
  REQUIRE(list.contains("result"));
  std::vector<std::string> names;
  for (const auto& t : list["result"]["tools"]) names.push_back(t["name"]);
  CHECK(std::find(names.begin(), names.end(), "steps") != names.end());
  CHECK_FALSE(received.closed);
}

TEST_CASE_METHOD(
    Connected,
    "a call answered over SSE delivers its progress first, in order, then the response") {
  REQUIRE(transport->send(call(7, "steps", {{"n", 3}})));
  json r = received.response(7);
  REQUIRE(r.contains("result"));
  CHECK(r["result"]["content"][0]["text"] == "stepped");
  const auto seq = received.sequence();
  const std::vector<std::string> expected = {"response \"init\"", "notifications/progress",
                                             "notifications/progress", "notifications/progress",
                                             "response 7"};
  CHECK(seq == expected);
  std::vector<double> progress;
  {
    std::lock_guard lock(received.mutex);
    for (const auto& m : received.messages) {
      if (m.value("method", "") == "notifications/progress") {
        progress.push_back(m["params"]["progress"]);
      }
    }
  }
  CHECK(progress == std::vector<double>{1, 2, 3});
}

TEST_CASE_METHOD(Connected,
                 "a request's stream the server ends early is resumed with Last-Event-ID") {
  const auto before = Clock::now();
  REQUIRE(transport->send(call(8, "parted")));
  json r = received.response(8, 10s);
  REQUIRE(r.contains("result"));
  CHECK(r["result"]["content"][0]["text"] == "parted");
  // The server's stream said "retry: 1000": the client waited that long to resume.
  CHECK(Clock::now() - before >= 1s);
  // Both progress reports came, once each, before the response.
  const auto seq = received.sequence();
  const std::vector<std::string> expected = {"response \"init\"", "notifications/progress",
                                             "notifications/progress", "response 8"};
  CHECK(seq == expected);
}

TEST_CASE_METHOD(Connected, "the GET stream brings what the server sends unprompted") {
  auto session = upstream.sessions->manager().find(transport->session_id(), "local");
  REQUIRE(session);
  // Until the GET stream is attached, the event waits on the server for it.
  session->send(jsonrpc::make_notification("notifications/tools/list_changed", nullptr));
  CHECK(received.wait_for("notifications/tools/list_changed"));
}

TEST_CASE_METHOD(Connected, "a session the server ended is reported through on_closed, once") {
  REQUIRE(upstream.sessions->manager().end(transport->session_id(), "local"));
  transport->send(request(3, "tools/list"));
  auto reason = received.wait_closed();
  REQUIRE(reason);
  CHECK_THAT(*reason, Catch::Contains("expired"));
  CHECK_THAT(*reason, Catch::Contains("404"));
  CHECK_THAT(*reason, Catch::Contains(upstream.url()));
  CHECK(received.response(3, 200ms).is_null());
  CHECK_FALSE(transport->send(request(4, "tools/list")));
  std::this_thread::sleep_for(100ms);
  std::lock_guard lock(received.mutex);
  CHECK(received.closed_calls == 1);
}

TEST_CASE("a server that cannot be reached is reported through on_closed, naming the URL") {
  const std::string url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/mcp";
  auto transport = make_transport(url);
  Received received;
  received.start(*transport);
  REQUIRE(transport->send(request("init", "initialize", {{"protocolVersion", "2025-11-25"}})));
  auto reason = received.wait_closed();
  REQUIRE(reason);
  CHECK_THAT(*reason, Catch::Contains("cannot reach " + url));
  CHECK(received.count() == 0);
}

TEST_CASE("configured headers go with every request: the right bearer token is let in") {
  TestUpstream upstream(std::map<std::string, std::string>{{kToken, "alice"}});
  HttpClientOptions options;
  options.url = upstream.url();
  options.headers = {{"Authorization", std::string("Bearer ") + kToken}};
  auto transport = make_transport(options);
  Received received;
  received.start(*transport);
  initialize(*transport, received);
  CHECK(upstream.sessions->manager().find(transport->session_id(), "alice") != nullptr);
  REQUIRE(transport->send(request(2, "tools/list")));
  CHECK(received.response(2).contains("result"));
}

TEST_CASE("an HTTP error to a request becomes its error response, naming the status") {
  SECTION("a wrong bearer token: 401") {
    TestUpstream upstream(std::map<std::string, std::string>{{kToken, "alice"}});
    HttpClientOptions options;
    options.url = upstream.url();
    options.headers = {{"Authorization", "Bearer the-wrong-token-000000000"}};
    auto transport = make_transport(options);
    Received received;
    received.start(*transport);
    REQUIRE(transport->send(request("init", "initialize", {{"protocolVersion", "2025-11-25"}})));
    json r = received.response("init");
    REQUIRE(r.contains("error"));
    const std::string message = r["error"]["message"];
    CHECK_THAT(message, Catch::Contains("HTTP 401 Unauthorized"));
    CHECK_THAT(message, Catch::Contains(upstream.url()));
    CHECK_THAT(message, !Catch::Contains("the-wrong-token"));
    CHECK(r["error"]["data"]["httpStatus"] == 401);
    CHECK_FALSE(received.closed);
  }
  SECTION("no such endpoint: 404 without a session is not a lost session") {
    TestUpstream upstream;
    auto transport =
        make_transport("http://127.0.0.1:" + std::to_string(upstream.http->port()) + "/elsewhere");
    Received received;
    received.start(*transport);
    REQUIRE(transport->send(request(1, "initialize", {{"protocolVersion", "2025-11-25"}})));
    json r = received.response(1);
    REQUIRE(r.contains("error"));
    CHECK_THAT(r["error"]["message"].get<std::string>(), Catch::Contains("HTTP 404"));
    CHECK_FALSE(received.closed);
  }
}

TEST_CASE("a notification the server refuses is a warning, not a message") {
  TestUpstream upstream;
  HttpClientOptions options;
  options.url = upstream.url();
  std::mutex mutex;
  std::vector<std::string> warnings;
  options.on_warning = [&](const std::string& w) {
    std::lock_guard lock(mutex);
    warnings.push_back(w);
  };
  auto transport = make_transport(options);
  Received received;
  received.start(*transport);
  // No session yet: the server answers 400.
  REQUIRE(transport->send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  REQUIRE(eventually([&] {
    std::lock_guard lock(mutex);
    return !warnings.empty();
  }));
  std::lock_guard lock(mutex);
  CHECK_THAT(warnings[0], Catch::Contains("HTTP 400"));
  CHECK(received.count() == 0);
}

TEST_CASE_METHOD(
    Connected,
    "close() returns promptly while a call runs, ends the session, and nothing follows") {
  const std::string session = transport->session_id();
  REQUIRE(transport->send(call(5, "until_cancelled")));
  REQUIRE(received.wait_for("notifications/progress"));
  const auto before = Clock::now();
  transport->close();
  CHECK(Clock::now() - before < 1s);
  const std::size_t count = received.count();
  CHECK_FALSE(transport->send(request(6, "tools/list")));
  std::this_thread::sleep_for(100ms);
  CHECK(received.count() == count);
  CHECK_FALSE(received.closed);
  CHECK(upstream.sessions->manager().find(session, "local") == nullptr);  // DELETE ended it
  transport->close();                                                     // again: nothing happens
}

TEST_CASE("close() may be called from inside a callback") {
  TestUpstream upstream;
  auto transport = make_transport(upstream.url());
  std::mutex mutex;
  std::condition_variable changed;
  bool closed_inside = false;
  transport->start(
      [&](std::string_view) {
        transport->close();
        std::lock_guard lock(mutex);
        closed_inside = true;
        changed.notify_all();
      },
      [](const std::string&) {});
  REQUIRE(transport->send(request(1, "initialize", {{"protocolVersion", "2025-11-25"}})));
  std::unique_lock lock(mutex);
  CHECK(changed.wait_for(lock, 5s, [&] { return closed_inside; }));
  CHECK_FALSE(transport->send(request(2, "tools/list")));
}

TEST_CASE("the URL is checked, and describe() shows it without credentials or query") {
  HttpClientOptions options;
  options.url = "ftp://example.com/mcp";
  auto refused = HttpClientTransport::create(options);
  CHECK_FALSE(refused.ok());
  CHECK_THAT(refused.message(), Catch::Contains("http:// or https://"));
  options.url = "http://example.com:99999/mcp";
  CHECK_FALSE(HttpClientTransport::create(options).ok());
  options.url = "http://:80/mcp";
  CHECK_FALSE(HttpClientTransport::create(options).ok());

  options.url = "https://user:s3cret@mcp.example.com/v1/mcp?key=s3cret#top";
  auto transport = HttpClientTransport::create(options);
  REQUIRE(transport.ok());
  CHECK((*transport)->describe() == "https://mcp.example.com/v1/mcp");
  options.url = "http://[::1]:8931";
  transport = HttpClientTransport::create(options);
  REQUIRE(transport.ok());
  CHECK((*transport)->describe() == "http://[::1]:8931/");
}

TEST_CASE("notifications and responses POSTed at once are bounded: past the limit send() refuses") {
  // A server that takes connections (into its backlog) and never answers:
  // every POST made to it stays under way.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 1024) == 0);
  socklen_t size = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
  auto transport =
      make_transport("http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/mcp");
  Received received;
  received.start(*transport);
  // As when an upstream pings toolmux again and again: an answer each.
  int accepted = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string pong =
        json{{"jsonrpc", "2.0"}, {"id", "ping-" + std::to_string(i)}, {"result", json::object()}}
            .dump();
    accepted += transport->send(pong) ? 1 : 0;
  }
  CHECK(accepted == 64);  // HttpClientOptions::max_notifications_in_flight
  // Requests are not held back by them.
  CHECK(transport->send(request(1, "ping")));
  ::close(listener);  // the held connections are reset: the POSTs end
  transport->close();
}

namespace {

// A server on 127.0.0.1 that answers every request with `body` as
// application/json, whatever was asked: for what toolmux's own server never
// sends.
class FixedAnswerServer {
 public:
  explicit FixedAnswerServer(std::string body) : body_(std::move(body)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    socklen_t size = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FixedAnswerServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

 private:
  void serve() {
    while (true) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      // Read the request's head and body (Content-Length), then answer.
      std::string request;
      char chunk[4096];
      std::size_t needed = std::string::npos;
      while (request.size() < needed) {
        const ssize_t n = ::read(client, chunk, sizeof chunk);
        if (n <= 0) break;
        request.append(chunk, static_cast<std::size_t>(n));
        const auto head_end = request.find("\r\n\r\n");
        if (head_end == std::string::npos) continue;
        const auto length_at = request.find("Content-Length: ");
        const std::size_t length =
            length_at == std::string::npos ? 0 : std::stoul(request.substr(length_at + 16));
        needed = head_end + 4 + length;
      }
      const std::string response =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
          std::to_string(body_.size()) + "\r\nConnection: close\r\n\r\n" + body_;
      for (std::size_t sent = 0; sent < response.size();) {
        const ssize_t n = ::write(client, response.data() + sent, response.size() - sent);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      ::close(client);
    }
  }

  std::string body_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("a batch body nested deep is handed over member by member, as it came") {
  // Deeper than any recursion could follow: the body is split, not rebuilt.
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  const std::string first = R"({"jsonrpc":"2.0","id":1,"result":{"deep":)" + deep + "}}";
  const std::string second = R"({"jsonrpc":"2.0","method":"notifications/message"})";
  FixedAnswerServer server("[" + first + ", " + second + "]");
  auto transport = make_transport(server.url());
  // The texts as they come (parsed, they would be copied with recursion).
  std::mutex mutex;
  std::vector<std::string> texts;
  transport->start(
      [&](std::string_view text) {
        std::lock_guard lock(mutex);
        texts.emplace_back(text);
      },
      [](const std::string&) {});
  REQUIRE(transport->send(request(1, "tools/list")));
  REQUIRE(eventually(
      [&] {
        std::lock_guard lock(mutex);
        return texts.size() == 2;
      },
      10s));
  transport->close();
  CHECK(texts[0] == first);
  CHECK(texts[1] == second);
}

// --- 2026-07-28 requests (basic/transports/streamable-http.mdx) ---

namespace {

// A server on 127.0.0.1 that records each request (its head and body) and
// answers it as `answer` says: a whole HTTP response, or nullopt to hold an
// event stream open until the client closes it (then `closed` counts it).
// Each connection on a thread of its own.
class RecordingServer {
 public:
  struct Request {
    std::map<std::string, std::string> headers;  // names lowercased
    json body;
  };
  using Answer = std::function<std::optional<std::string>(const Request&)>;

  explicit RecordingServer(Answer answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    socklen_t size = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~RecordingServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    acceptor_.join();
    {
      std::lock_guard lock(mutex_);
      for (int client : clients_) ::shutdown(client, SHUT_RDWR);
    }
    for (auto& t : connections_) t.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

  std::vector<Request> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  int closed() {
    std::lock_guard lock(mutex_);
    return closed_;
  }

  static std::string response(int status, const std::string& reason, const std::string& body) {
    return "HTTP/1.1 " + std::to_string(status) + " " + reason +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  }

 private:
  void accept_loop() {
    while (true) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      std::lock_guard lock(mutex_);
      clients_.push_back(client);
      connections_.emplace_back([this, client] { serve(client); });
    }
  }

  void serve(int client) {
    std::string raw;
    char chunk[4096];
    std::size_t needed = std::string::npos;
    std::size_t head_end = std::string::npos;
    while (raw.size() < needed) {
      const ssize_t n = ::read(client, chunk, sizeof chunk);
      if (n <= 0) break;
      raw.append(chunk, static_cast<std::size_t>(n));
      head_end = raw.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      std::size_t length = 0;
      std::istringstream lines(raw.substr(0, head_end));
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind("Content-Length: ", 0) == 0) length = std::stoul(line.substr(16));
      }
      needed = head_end + 4 + length;
    }
    Request request;
    if (head_end != std::string::npos) {
      std::istringstream lines(raw.substr(0, head_end));
      std::string line;
      std::getline(lines, line);  // the request line
      while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        request.headers[name] = line.substr(colon + 2);
      }
      request.body = json::parse(raw.substr(head_end + 4), nullptr, false);
    }
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    const std::optional<std::string> answer = answer_(request);
    const std::string out =
        answer ? *answer : "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: open\n\n";
    for (std::size_t sent = 0; sent < out.size();) {
      const ssize_t n = ::write(client, out.data() + sent, out.size() - sent);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    if (!answer) {
      // Held until the client closes its end.
      while (::read(client, chunk, sizeof chunk) > 0) {
      }
      std::lock_guard lock(mutex_);
      ++closed_;
    }
    ::close(client);
  }

  Answer answer_;
  int fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<int> clients_;
  std::vector<std::thread> connections_;
  std::vector<Request> requests_;
  int closed_ = 0;
};

// A 2026-07-28 request: its _meta names the protocol version.
std::string modern_request(const json& id, const std::string& method,
                           json params = json::object()) {
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"io.modelcontextprotocol/clientCapabilities", json::object()},
                     {"io.modelcontextprotocol/clientInfo", {{"name", "t"}, {"version", "1"}}}};
  return request(id, method, std::move(params));
}

// Answers a request with an empty result for its id.
std::optional<std::string> empty_result(const RecordingServer::Request& r) {
  return RecordingServer::response(
      200, "OK", json{{"jsonrpc", "2.0"}, {"id", r.body["id"]}, {"result", json::object()}}.dump());
}

}  // namespace

TEST_CASE(
    "a 2026-07-28 request carries MCP-Protocol-Version, Mcp-Method and Mcp-Name, no session") {
  RecordingServer server(empty_result);
  HttpClientOptions options;
  options.url = server.url();
  // The transport's own headers are not the configuration's to set.
  options.headers = {{"Mcp-Method", "evil"}, {"X-Team", "tools"}};
  auto transport = make_transport(std::move(options));
  Received received;
  received.start(*transport);

  REQUIRE(transport->send(modern_request(1, "tools/call", {{"name", "get weather"}})));
  REQUIRE(received.response(1).contains("result"));
  REQUIRE(transport->send(modern_request(2, "resources/read", {{"uri", "file:///é.txt"}})));
  REQUIRE(received.response(2).contains("result"));
  REQUIRE(transport->send(modern_request(3, "tools/list")));
  REQUIRE(received.response(3).contains("result"));
  // A legacy request beside them: its own version, no Mcp-Method.
  transport->set_protocol_version("2025-11-25");
  REQUIRE(transport->send(request(4, "tools/list")));
  REQUIRE(received.response(4).contains("result"));

  const auto requests = server.requests();
  REQUIRE(requests.size() == 4);
  const auto header = [&](std::size_t i, const std::string& name) -> std::string {
    auto it = requests[i].headers.find(name);
    return it == requests[i].headers.end() ? "(none)" : it->second;
  };
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(header(i, "mcp-protocol-version") == "2026-07-28");
    CHECK(header(i, "mcp-session-id") == "(none)");
    CHECK(header(i, "x-team") == "tools");
  }
  CHECK(header(0, "mcp-method") == "tools/call");
  CHECK(header(0, "mcp-name") == "get weather");
  CHECK(header(1, "mcp-method") == "resources/read");
  CHECK(header(1, "mcp-name") == "=?base64?ZmlsZTovLy/DqS50eHQ=?=");
  CHECK(header(2, "mcp-method") == "tools/list");
  CHECK(header(2, "mcp-name") == "(none)");
  CHECK(header(3, "mcp-protocol-version") == "2025-11-25");
  CHECK(header(3, "mcp-method") == "(none)");
  transport->close();
}

TEST_CASE("an HTTP error whose body is a JSON-RPC error is a 2026-07-28 request's answer") {
  const std::string unsupported =
      R"({"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2027-01-01"],"requested":"2026-07-28"}}})";
  RecordingServer server([&](const RecordingServer::Request&) {
    return RecordingServer::response(400, "Bad Request", unsupported);
  });
  auto transport = make_transport(server.url());
  Received received;
  received.start(*transport);
  REQUIRE(transport->send(modern_request(1, "server/discover")));
  const json modern = received.response(1);
  CHECK(modern["error"] == json::parse(unsupported)["error"]);
  // A legacy request's HTTP error is told as before: -32000 naming the status.
  REQUIRE(transport->send(request(2, "tools/list")));
  const json legacy = received.response(2);
  CHECK(legacy["error"]["code"] == -32000);
  CHECK(legacy["error"]["data"]["httpStatus"] == 400);
  transport->close();
}

TEST_CASE("end_request_stream closes a 2026-07-28 request's stream, which cancels it") {
  RecordingServer server([](const RecordingServer::Request&) { return std::nullopt; });
  auto transport = make_transport(server.url());
  Received received;
  received.start(*transport);
  REQUIRE(transport->send(modern_request(7, "tools/call", {{"name", "slow"}})));
  REQUIRE(transport->send(request(8, "tools/call", {{"name", "slow"}})));
  REQUIRE(eventually([&] { return server.requests().size() == 2; }, 5s));
  // A legacy request is cancelled with notifications/cancelled, not so.
  CHECK_FALSE(transport->end_request_stream(8));
  CHECK_FALSE(transport->end_request_stream(9));  // no such request
  CHECK(transport->end_request_stream(7));
  CHECK(eventually([&] { return server.closed() == 1; }, 5s));
  // Nothing of it is handed over: no error response for a stream toolmux closed.
  std::this_thread::sleep_for(300ms);
  CHECK(received.response(7, 0ms).is_null());
  CHECK(received.count() == 0);
  transport->close();
}
