#include "transports/http_server.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/app/session_directory.h"
#include "src/protocol/mcp_server.h"
#include "src/store/pg_session_store.h"
#include "tests/support/eventually.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/quiet_logger.h"
#include "tests/support/tcp.h"
#include "tests/support/test_tools.h"

using toolmux::parse_tokens;
using Tokens = std::map<std::string, std::string>;
using namespace std::chrono_literals;

namespace {

// toolmux's HTTP server on 127.0.0.1 and a free port, in this process; its
// sessions kept in `store` when one is given (it must outlive the door).
struct FrontDoor {
  explicit FrontDoor(toolmux::HttpOptions options, toolmux::SessionStore* store = nullptr) {
    server = std::make_unique<toolmux::McpServer>(toolmux::testing::make_test_catalog(),
                                                  toolmux::ServerOptions{}, quiet.logger, metrics);
    sessions = std::make_unique<toolmux::SessionDirectory>(*server, toolmux::SessionLimits{}, store,
                                                           nullptr, quiet.logger);
    http =
        std::make_unique<toolmux::HttpServer>(*sessions, metrics, quiet.logger, std::move(options));
    const toolmux::Status bound = http->bind();
    INFO(bound.message());
    REQUIRE(bound.ok());
    runner = std::thread([this] { http->run(); });
  }
  FrontDoor(const FrontDoor&) = delete;
  FrontDoor& operator=(const FrontDoor&) = delete;
  ~FrontDoor() {
    http->stop();
    runner.join();
  }

  std::unique_ptr<toolmux::testing::TcpClient> connect(const char* from = "127.0.0.1") const {
    auto client = std::make_unique<toolmux::testing::TcpClient>(http->port(), from);
    REQUIRE(client->fd() >= 0);
    return client;
  }

  // The whole answer to an initialize over its own connection (`extra`
  // headers each end in \r\n).
  std::string initialize_answer(const std::string& extra = "") const {
    auto client = connect();
    REQUIRE(client->send(post_head("", kInitialize.size(), extra + "Connection: close\r\n") +
                         std::string(kInitialize)));
    return client->receive(5s);
  }

  // A session's id, from an initialize over its own connection.
  std::string initialize() const {
    const std::string response = initialize_answer();
    const auto at = response.find("Mcp-Session-Id: ");
    REQUIRE(at != std::string::npos);
    return response.substr(at + 16, response.find("\r\n", at) - at - 16);
  }

  static constexpr std::string_view kInitialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
      R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}})";

  // The head of a POST to /mcp of `length` bytes, in session `session` (none when empty).
  static std::string post_head(const std::string& session, std::size_t length,
                               const std::string& extra = "") {
    std::string head =
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: " +
        std::to_string(length) + "\r\n" + extra;
    if (!session.empty()) head += "Mcp-Session-Id: " + session + "\r\n";
    return head + "\r\n";
  }

  toolmux::testing::QuietLogger quiet;
  toolmux::Metrics metrics;
  std::unique_ptr<toolmux::McpServer> server;
  std::unique_ptr<toolmux::SessionDirectory> sessions;
  std::unique_ptr<toolmux::HttpServer> http;
  std::thread runner;
};

// Sends `bytes` a byte every `every` until `client` has an answer (or
// `timeout`); returns it. A server waiting for the bytes never sees a pause
// long enough to give up on them.
std::string trickle_until_answered(toolmux::testing::TcpClient& client,
                                   std::chrono::milliseconds every,
                                   std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::string answer;
  while (answer.empty() && !client.closed && std::chrono::steady_clock::now() < until) {
    client.send("x");
    answer = client.receive(every, "\r\n\r\n");
  }
  return answer + client.receive(1s, "}}");
}

// parse_tokens on `text`; `error` gets its message. A refusal is always
// invalid_argument.
bool parse(const std::string& text, Tokens& tokens, std::string& error) {
  tokens.clear();
  const toolmux::Status parsed = parse_tokens(text, tokens);
  error = parsed.message();
  if (!parsed.ok()) CHECK(parsed.is_invalid_argument());
  return parsed.ok();
}

}  // namespace

TEST_CASE("a stop as the server begins to listen is never lost (a SIGTERM just after start)") {
  // cpp-httplib's own stop() does nothing until its listen loop runs: a stop
  // in between left run() listening for good, and `toolmux serve --http`
  // never exited.
  toolmux::testing::QuietLogger quiet;
  toolmux::Metrics metrics;
  toolmux::McpServer server(toolmux::testing::make_test_catalog(), toolmux::ServerOptions{},
                            quiet.logger, metrics);
  toolmux::SessionDirectory sessions(server, toolmux::SessionLimits{}, nullptr, nullptr,
                                     quiet.logger);
  for (int round = 0; round < 100; ++round) {
    toolmux::HttpServer http(sessions, metrics, quiet.logger, toolmux::HttpOptions{});
    REQUIRE(http.bind().ok());
    auto run = std::async(std::launch::async, [&http] { return http.run(); });
    if (round % 2 == 1) std::this_thread::sleep_for(std::chrono::microseconds(50 * (round % 7)));
    http.stop();
    INFO("round " << round);
    REQUIRE(run.wait_for(5s) == std::future_status::ready);
    CHECK(run.get());
  }
  // A stop before run(): run() does not listen at all.
  toolmux::HttpServer early(sessions, metrics, quiet.logger, toolmux::HttpOptions{});
  REQUIRE(early.bind().ok());
  early.stop();
  CHECK(early.run());
}

TEST_CASE("parse_tokens reads principal=token entries by line or comma, with comments") {
  Tokens tokens;
  std::string error;
  REQUIRE(
      parse("# who may call\n"
            "alice=aaaaaaaaaaaaaaaa\n"
            "\n"
            "  bob = bbbbbbbbbbbbbbbb  # trailing comment\r\n"
            "carol=cccccccccccccccc,dave=dddddddddddddddd,",
            tokens, error));
  CHECK(error.empty());
  CHECK(tokens == Tokens{{"aaaaaaaaaaaaaaaa", "alice"},
                         {"bbbbbbbbbbbbbbbb", "bob"},
                         {"cccccccccccccccc", "carol"},
                         {"dddddddddddddddd", "dave"}});
}

TEST_CASE("a comment runs to the end of its line, commas in it included") {
  Tokens tokens;
  std::string error;
  REQUIRE(
      parse("# alice, bob and carol\nalice=aaaaaaaaaaaaaaaa # alice, for now\n"
            "bob=bbbbbbbbbbbbbbbb",
            tokens, error));
  CHECK(tokens == Tokens{{"aaaaaaaaaaaaaaaa", "alice"}, {"bbbbbbbbbbbbbbbb", "bob"}});
}

TEST_CASE("parse_tokens accepts an empty text, and two tokens for one principal") {
  Tokens tokens;
  std::string error;
  CHECK(parse("", tokens, error));
  CHECK(tokens.empty());
  CHECK(parse("  \n# nothing\n,", tokens, error));
  CHECK(tokens.empty());
  REQUIRE(parse("ci=1111111111111111\nci=2222222222222222", tokens, error));
  CHECK(tokens.size() == 2);
}

TEST_CASE("a token may contain '=' after the first one") {
  Tokens tokens;
  std::string error;
  REQUIRE(parse("alice=abc=def=ghi=jklmnop", tokens, error));
  CHECK(tokens.at("abc=def=ghi=jklmnop") == "alice");
}

TEST_CASE("parse_tokens refuses malformed entries, naming the entry") {
  Tokens tokens;
  std::string error;
  CHECK_FALSE(parse("alice=aaaaaaaaaaaaaaaa\njust-a-token-no-principal", tokens, error));
  CHECK(error == "token entry 2 is not principal=token");
  CHECK_FALSE(parse("=aaaaaaaaaaaaaaaa", tokens, error));
  CHECK(error == "token entry 1 is not principal=token");
  CHECK_FALSE(parse("alice=", tokens, error));
  CHECK(error == "token entry 1 is not principal=token");
}

TEST_CASE("parse_tokens refuses tokens shorter than 16 characters") {
  Tokens tokens;
  std::string error;
  CHECK_FALSE(parse("alice=123456789012345", tokens, error));
  CHECK(error == "the token of \"alice\" is shorter than 16 characters");
  CHECK(parse("alice=1234567890123456", tokens, error));
}

TEST_CASE("parse_tokens refuses a token that two principals share") {
  Tokens tokens;
  std::string error;
  CHECK_FALSE(parse("alice=ssssssssssssssss\nbob=ssssssssssssssss", tokens, error));
  CHECK(error == "the token of \"bob\" is also another principal's");
}

TEST_CASE("a Content-Length over the limit gets 413 as soon as the head is read") {
  toolmux::HttpOptions options;
  options.max_body_bytes = 4096;
  FrontDoor door(options);
  auto client = door.connect();
  // cpp-httplib would read (and drop) all 99999999999 bytes before answering.
  REQUIRE(client->send(FrontDoor::post_head("", 99999999999)));
  const std::string answer = trickle_until_answered(*client, 200ms, 8s);
  CHECK(answer.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0) == 0);
  CHECK_THAT(answer, Catch::Contains("Connection: close\r\n"));
  CHECK_THAT(answer,
             Catch::Contains("the request body is 99999999999 bytes, over the limit of 4096"));
}

TEST_CASE("/metrics answers only the Host names the endpoint does, /health answers any") {
  FrontDoor door(toolmux::HttpOptions{});
  const auto get = [&](const std::string& path, const std::string& host) {
    auto client = door.connect();
    REQUIRE(client->send("GET " + path + " HTTP/1.1\r\nHost: " + host +
                         "\r\nConnection: close\r\n\r\n"));
    return client->receive(5s);
  };
  const std::string rebound = get("/metrics", "evil.example:8080");
  CHECK(rebound.rfind("HTTP/1.1 403 Forbidden\r\n", 0) == 0);
  CHECK_THAT(rebound, Catch::Contains("Host \\\"evil.example:8080\\\" is not allowed"));
  CHECK(get("/metrics", "127.0.0.1:8080").rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(get("/health", "evil.example:8080").rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
}

TEST_CASE("a POST naming an unknown session gets 404 before its body is read") {
  FrontDoor door(toolmux::HttpOptions{});
  auto client = door.connect();
  REQUIRE(client->send(FrontDoor::post_head("no-such-session", 15'000'000)));
  const std::string answer = trickle_until_answered(*client, 200ms, 8s);
  CHECK(answer.rfind("HTTP/1.1 404 Not Found\r\n", 0) == 0);
  CHECK_THAT(answer, Catch::Contains("Connection: close\r\n"));
}

TEST_CASE(
    "a refusal quoting header bytes that are not UTF-8 is valid JSON and the server lives on") {
  // Found by tests/fuzz/http_request_fuzz: the refusal's message quoted the
  // header, and dumping it threw on the invalid UTF-8, on a connection
  // thread: std::terminate ended the whole server.
  FrontDoor door(toolmux::HttpOptions{});
  struct Case {
    std::string request;
    std::string status;
    std::string quoted;  // the header's value as the message quotes it
  };
  const std::vector<Case> cases = {
      {"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 41\x83\r\n\r\n", "400",
       "Content-Length \\\"41\xEF\xBF\xBD\\\" is not a number"},
      {"GET /metrics HTTP/1.1\r\nHost: evil\xFF.example\r\nConnection: close\r\n\r\n", "403",
       "Host \\\"evil\xEF\xBF\xBD.example\\\" is not allowed"},
      {"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://\xC3\r\nContent-Length: "
       "2\r\n\r\n{}",
       "403", "Origin \\\"http://\xEF\xBF\xBD\\\" is not allowed"},
  };
  for (const Case& c : cases) {
    INFO(c.request);
    auto client = door.connect();
    REQUIRE(client->send(c.request));
    const std::string answer = client->receive(5s, "}}");
    CHECK(answer.rfind("HTTP/1.1 " + c.status + " ", 0) == 0);
    // Each byte that is not UTF-8 is sent as U+FFFD.
    CHECK_THAT(answer, Catch::Contains(c.quoted));
  }
  auto client = door.connect();
  REQUIRE(client->send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  CHECK(client->receive(5s, "}").rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
}

TEST_CASE("a method cpp-httplib would read a body for unbounded gets 501") {
  FrontDoor door(toolmux::HttpOptions{});
  auto client = door.connect();
  REQUIRE(
      client->send("PRI /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::string answer = trickle_until_answered(*client, 200ms, 8s);
  CHECK(answer.rfind("HTTP/1.1 501 Not Implemented\r\n", 0) == 0);
}

TEST_CASE("a body slower than body_timeout gets 408 and its connection is closed") {
  toolmux::HttpOptions options;
  options.body_timeout = 1s;
  FrontDoor door(options);
  const std::string session = door.initialize();
  auto client = door.connect();
  REQUIRE(client->send(FrontDoor::post_head(session, 1000)));
  const auto start = std::chrono::steady_clock::now();
  const std::string answer = trickle_until_answered(*client, 100ms, 8s);
  CHECK(std::chrono::steady_clock::now() - start < 6s);
  CHECK(answer.rfind("HTTP/1.1 408 Request Timeout\r\n", 0) == 0);
  CHECK_THAT(answer, Catch::Contains("the request body did not arrive within 1 s"));
  client->receive(3s);
  CHECK(client->closed);
  // Counted where the operator looks.
  auto metrics = door.connect();
  REQUIRE(metrics->send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  CHECK_THAT(metrics->receive(5s),
             Catch::Contains("toolmux_http_refused_total{reason=\"body_timeout\"} 1\n"));
}

TEST_CASE("bodies past the budget wait for it, then get 503 with Retry-After") {
  toolmux::HttpOptions options;
  options.max_body_bytes = 2048;
  options.body_budget_bytes = 3000;
  options.budget_wait = 500ms;
  FrontDoor door(options);
  const std::string session = door.initialize();
  const std::string ping = R"({"jsonrpc":"2.0","id":2,"method":"ping"})";
  const std::string prefix = ping.substr(0, ping.size() - 1) + R"(,"params":{"pad":")";
  const std::string padded = prefix + std::string(2000 - prefix.size() - 3, 'x') + "\"}}";
  REQUIRE(padded.size() == 2000);
  // One body of 2000 bytes being sent slowly holds 2000 of the 3000.
  auto slow = door.connect();
  REQUIRE(slow->send(FrontDoor::post_head(session, padded.size()) + padded.substr(0, 100)));
  std::this_thread::sleep_for(200ms);
  auto second = door.connect();
  REQUIRE(second->send(FrontDoor::post_head(session, padded.size()) + padded));
  const std::string refused = second->receive(5s, "}}");
  CHECK(refused.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK_THAT(refused, Catch::Contains("Retry-After: 1\r\n"));
  CHECK_THAT(refused, Catch::Contains("3000 bytes of request bodies are being read and parsed"));
  // A small one fits beside it; the slow one, once whole, is answered.
  auto small = door.connect();
  REQUIRE(small->send(FrontDoor::post_head(session, ping.size()) + ping));
  CHECK(small->receive(5s, "}}").rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  REQUIRE(slow->send(padded.substr(100)));
  CHECK(slow->receive(5s, "}}").rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
}

namespace {

// Options serving a status page: `page` as the page, {"shown": true} as its data.
toolmux::HttpOptions with_status(std::string page, toolmux::HttpOptions options = {}) {
  options.status_page = std::move(page);
  options.status_snapshot = [] { return nlohmann::json{{"shown", true}}; };
  return options;
}

// The whole answer to a GET of `path` with `headers` (each ending in \r\n).
std::string get_all(const FrontDoor& door, const std::string& path,
                    const std::string& headers = "") {
  auto client = door.connect();
  REQUIRE(client->send("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                       headers + "\r\n"));
  return client->receive(5s);
}

// The value of header `name` in `answer` ("" when absent).
std::string header_of(const std::string& answer, const std::string& name) {
  const auto at = answer.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const auto from = at + name.size() + 4;
  return answer.substr(from, answer.find("\r\n", from) - from);
}

}  // namespace

TEST_CASE(
    "/status answers the page under a strict policy with a fresh nonce, /status.json the data") {
  FrontDoor door(
      with_status("<style nonce=\"{{TOOLMUX_NONCE}}\"></style>"
                  "<script nonce=\"{{TOOLMUX_NONCE}}\"></script>"));
  const std::string page = get_all(door, "/status");
  REQUIRE(page.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(header_of(page, "Content-Type") == "text/html; charset=utf-8");
  CHECK(header_of(page, "Cache-Control") == "no-store");
  CHECK(header_of(page, "X-Content-Type-Options") == "nosniff");
  CHECK(header_of(page, "X-Frame-Options") == "DENY");
  CHECK(header_of(page, "Referrer-Policy") == "no-referrer");
  const std::string policy = header_of(page, "Content-Security-Policy");
  const auto nonce_at = policy.find("'nonce-");
  REQUIRE(nonce_at != std::string::npos);
  const std::string nonce =
      policy.substr(nonce_at + 7, policy.find('\'', nonce_at + 7) - nonce_at - 7);
  CHECK(nonce.size() == 24);  // 18 random bytes, base64url
  CHECK(policy == toolmux::status_page_policy(nonce));
  CHECK(policy == "default-src 'none'; script-src 'nonce-" + nonce + "'; style-src 'nonce-" +
                      nonce +
                      "'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
                      "frame-ancestors 'none'");
  CHECK_THAT(page, Catch::EndsWith("<style nonce=\"" + nonce + "\"></style><script nonce=\"" +
                                   nonce + "\"></script>"));
  CHECK(header_of(get_all(door, "/status"), "Content-Security-Policy") != policy);

  const std::string data = get_all(door, "/status.json");
  REQUIRE(data.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(header_of(data, "Content-Type") == "application/json");
  CHECK(header_of(data, "Cache-Control") == "no-store");
  CHECK_THAT(data, Catch::EndsWith("\r\n\r\n{\"shown\":true}"));
}

TEST_CASE(
    "/status is refused as the endpoint refuses, and with tokens only named principals see it") {
  toolmux::HttpOptions options;
  options.tokens = {{"alice-token-0123456789", "alice"}, {"bob-token-0123456789ab", "bob"}};
  options.status_principals = {"alice"};
  FrontDoor door(with_status("page", options));
  const std::string alice = "Authorization: Bearer alice-token-0123456789\r\n";

  CHECK(get_all(door, "/status", alice).rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  const std::string bob =
      get_all(door, "/status.json", "Authorization: Bearer bob-token-0123456789ab\r\n");
  CHECK(bob.rfind("HTTP/1.1 403 Forbidden\r\n", 0) == 0);
  CHECK_THAT(bob, Catch::Contains("principal \\\"bob\\\" may not see the status page"));
  const std::string anonymous = get_all(door, "/status");
  CHECK(anonymous.rfind("HTTP/1.1 401 Unauthorized\r\n", 0) == 0);
  CHECK(header_of(anonymous, "WWW-Authenticate") == "Bearer realm=\"toolmux\"");
  const std::string origin = get_all(door, "/status", alice + "Origin: http://evil.example\r\n");
  CHECK(origin.rfind("HTTP/1.1 403 Forbidden\r\n", 0) == 0);
  CHECK_THAT(origin, Catch::Contains("Origin \\\"http://evil.example\\\" is not allowed"));
}

TEST_CASE(
    "without tokens the status page is the local client's, and without a snapshot it is not "
    "served") {
  FrontDoor open(with_status("page"));
  CHECK(get_all(open, "/status").rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  FrontDoor none(toolmux::HttpOptions{});
  CHECK(get_all(none, "/status").rfind("HTTP/1.1 404 Not Found\r\n", 0) == 0);
  CHECK(get_all(none, "/status.json").rfind("HTTP/1.1 404 Not Found\r\n", 0) == 0);
}

TEST_CASE("a repeated Host gets 400 on every path, a repeated Origin 403 wherever Origin counts") {
  // cpp-httplib keeps every field and its get_header_value gives the first:
  // a second Host or Origin went unchecked.
  FrontDoor door(with_status("page"));
  const auto get = [&](const std::string& path, const std::string& headers) {
    auto client = door.connect();
    REQUIRE(client->send("GET " + path + " HTTP/1.1\r\nConnection: close\r\n" + headers + "\r\n"));
    return client->receive(5s);
  };
  CHECK(door.initialize_answer("Origin: http://localhost\r\n").rfind("HTTP/1.1 200 OK\r\n", 0) ==
        0);

  for (const std::string second : {"Host: evil.example\r\n", "Host: 127.0.0.1\r\n"}) {
    INFO(second);
    const std::string twice = "Host: 127.0.0.1\r\n" + second;
    const std::string initialize = door.initialize_answer(second);
    CHECK(initialize.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
    CHECK_THAT(initialize, Catch::Contains("Bad Request: the Host header is repeated"));
    CHECK(header_of(initialize, "Mcp-Session-Id").empty());
    for (const char* path : {"/mcp", "/metrics", "/status", "/status.json", "/health"}) {
      INFO(path);
      CHECK(get(path, twice).rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
    }
  }

  for (const std::string second :
       {"Origin: http://evil.example\r\n", "Origin: http://localhost\r\n"}) {
    INFO(second);
    const std::string twice = "Origin: http://localhost\r\n" + second;
    const std::string initialize = door.initialize_answer(twice);
    CHECK(initialize.rfind("HTTP/1.1 403 Forbidden\r\n", 0) == 0);
    CHECK_THAT(initialize, Catch::Contains("Forbidden: the Origin header is repeated"));
    for (const char* path : {"/metrics", "/status", "/status.json"}) {
      INFO(path);
      CHECK(get(path, "Host: 127.0.0.1\r\n" + twice).rfind("HTTP/1.1 403 Forbidden\r\n", 0) == 0);
    }
    // The probe checks no Origin.
    CHECK(get("/health", "Host: 127.0.0.1\r\n" + twice).rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  }
}

TEST_CASE("an initialize while the session store is down gets 503 with Retry-After and no id",
          "[postgres]") {
  toolmux::testing::QuietLogger quiet;
  auto store = toolmux::PgSessionStore::open(
      toolmux::testing::open_postgres_store(toolmux::testing::fresh_postgres_database()),
      quiet.logger);
  INFO(store.message());
  REQUIRE(store.ok());
  FrontDoor door(toolmux::HttpOptions{}, store->get());
  auto& postgres = toolmux::testing::postgres_server();

  postgres.pause();
  const std::string refused = door.initialize_answer();
  postgres.resume();
  CHECK(refused.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(header_of(refused, "Retry-After") == "5");
  CHECK(header_of(refused, "Mcp-Session-Id").empty());
  const auto body = nlohmann::json::parse(refused.substr(refused.find("\r\n\r\n") + 4));
  CHECK(body["id"] == 1);
  CHECK_THAT(body["error"]["message"].get<std::string>(),
             Catch::Contains("the session could not be stored") &&
                 Catch::Contains("send initialize again in 5 seconds"));
  CHECK(door.sessions->count() == 0);

  // The store is back (the pool tries again within its back-off): a new
  // session is stored, and served by its id.
  std::string answer;
  CHECK(toolmux::testing::eventually(
      [&] {
        answer = door.initialize_answer();
        return answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0;
      },
      6s));
  const std::string id = header_of(answer, "Mcp-Session-Id");
  REQUIRE_FALSE(id.empty());
  CHECK((*store)->load_session(id)->has_value());
  const std::string ping = R"({"jsonrpc":"2.0","id":2,"method":"ping"})";
  auto client = door.connect();
  REQUIRE(client->send(FrontDoor::post_head(id, ping.size(), "Connection: close\r\n") + ping));
  CHECK(client->receive(5s).rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
}

TEST_CASE("a request for a session the store cannot be asked about gets 503, not 404",
          "[postgres]") {
  toolmux::testing::QuietLogger quiet;
  const std::string database = toolmux::testing::fresh_postgres_database();
  auto open_store = [&] {
    auto store = toolmux::PgSessionStore::open(toolmux::testing::open_postgres_store(database),
                                               quiet.logger);
    INFO(store.message());
    REQUIRE(store.ok());
    return std::move(store).value();
  };
  auto first_store = open_store();
  auto second_store = open_store();
  FrontDoor first(toolmux::HttpOptions{}, first_store.get());
  FrontDoor second(toolmux::HttpOptions{}, second_store.get());  // another instance
  const std::string id = first.initialize();
  const std::string ping = R"({"jsonrpc":"2.0","id":2,"method":"ping"})";
  const auto ping_second = [&] {
    auto client = second.connect();
    REQUIRE(client->send(FrontDoor::post_head(id, ping.size(), "Connection: close\r\n") + ping));
    return client->receive(5s);
  };

  auto& postgres = toolmux::testing::postgres_server();
  postgres.pause();
  const std::string during = ping_second();
  postgres.resume();
  CHECK(during.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(header_of(during, "Retry-After") == "5");
  CHECK_THAT(during, Catch::Contains("the session cannot be looked up now"));
  // Back: the same id is served by the other instance.
  CHECK(toolmux::testing::eventually(
      [&] { return ping_second().rfind("HTTP/1.1 200 OK\r\n", 0) == 0; }, 8s));
}
