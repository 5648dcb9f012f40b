// The 2026-07-28 protocol over toolmux's Streamable HTTP front door, driven
// over real HTTP (raw TCP, so the tests send exactly the headers they mean):
// which era a POST is, the header checks and their statuses, the stateless
// carrier, and a closed response stream cancelling its call.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "src/app/session_directory.h"
#include "src/protocol/mcp_server.h"
#include "src/protocol/modern.h"
#include "tests/support/eventually.h"
#include "tests/support/quiet_logger.h"
#include "tests/support/tcp.h"
#include "tests/support/test_tools.h"
#include "transports/http_server.h"

using nlohmann::json;
using toolmux::testing::TcpClient;
using namespace std::chrono_literals;

namespace {

// What the tools of these tests saw: calls cancelled while they ran.
struct Seen {
  std::atomic<int> cancelled{0};
  std::atomic<int> started{0};
};

// The test tools, and: hold {progress?} runs until cancelled (30 s at most),
// reporting progress every 20 ms when asked for; whoami says whose the call
// is (the owner key of what it stores, and the principal).
std::shared_ptr<toolmux::Catalog> catalog_with_hold(const std::shared_ptr<Seen>& seen) {
  auto registry = toolmux::testing::make_test_registry();
  REQUIRE(registry
              ->add(toolmux::testing::spec("hold", toolmux::testing::object_schema(), 60000),
                    [seen](const json&, toolmux::CallContext& ctx) {
                      ++seen->started;
                      const auto until = std::chrono::steady_clock::now() + 30s;
                      int step = 0;
                      while (!ctx.cancelled() && std::chrono::steady_clock::now() < until) {
                        ctx.report_progress(++step, std::nullopt, "holding");
                        std::this_thread::sleep_for(20ms);
                      }
                      if (ctx.cancelled()) ++seen->cancelled;
                      return toolmux::ToolResult::text("held");
                    })
              .empty());
  REQUIRE(registry
              ->add(toolmux::testing::spec("whoami", toolmux::testing::object_schema()),
                    [](const json&, toolmux::CallContext& ctx) {
                      return toolmux::ToolResult::text(ctx.session_id() + " " + ctx.principal());
                    })
              .empty());
  return toolmux::testing::make_test_catalog(registry);
}

// toolmux's HTTP server on 127.0.0.1 and a free port, in this process.
struct Door {
  explicit Door(toolmux::HttpOptions options = {}) {
    server = std::make_unique<toolmux::McpServer>(catalog_with_hold(seen), toolmux::ServerOptions{},
                                                  quiet.logger, metrics);
    sessions = std::make_unique<toolmux::SessionDirectory>(*server, toolmux::SessionLimits{},
                                                           nullptr, nullptr, quiet.logger);
    http =
        std::make_unique<toolmux::HttpServer>(*sessions, metrics, quiet.logger, std::move(options));
    const toolmux::Status bound = http->bind();
    INFO(bound.message());
    REQUIRE(bound.ok());
    runner = std::thread([this] { http->run(); });
  }
  Door(const Door&) = delete;
  Door& operator=(const Door&) = delete;
  // As `toolmux serve --http` stops: the calls still running (a cancelled
  // one finishing on its call thread) end before the server they use goes.
  ~Door() {
    http->stop();
    runner.join();
    for (const auto& session : sessions->all()) session->wait_for_calls(10s);
    server->wait_for_running_tools(10s);
  }

  std::unique_ptr<TcpClient> connect() const {
    auto client = std::make_unique<TcpClient>(http->port());
    REQUIRE(client->fd() >= 0);
    return client;
  }

  std::shared_ptr<Seen> seen = std::make_shared<Seen>();
  toolmux::testing::QuietLogger quiet;
  toolmux::Metrics metrics;
  std::unique_ptr<toolmux::McpServer> server;
  std::unique_ptr<toolmux::SessionDirectory> sessions;
  std::unique_ptr<toolmux::HttpServer> http;
  std::thread runner;
};

// The _meta of a 2026-07-28 request.
json modern_meta() {
  return {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
          {"io.modelcontextprotocol/clientCapabilities", json::object()},
          {"io.modelcontextprotocol/clientInfo", {{"name", "t"}, {"version", "0"}}}};
}

json modern_request(const json& id, const std::string& method, json params = json::object()) {
  params["_meta"] = modern_meta();
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

// Headers, in the order sent ("Name: value" lines without the CRLF).
using Headers = std::vector<std::string>;

// The headers a conforming 2026-07-28 client sends with `request`.
Headers standard_headers(const json& request) {
  Headers headers{"MCP-Protocol-Version: 2026-07-28",
                  "Mcp-Method: " + request["method"].get<std::string>()};
  const json& params = request["params"];
  if (params.contains("name")) headers.push_back("Mcp-Name: " + params["name"].get<std::string>());
  if (params.contains("uri")) headers.push_back("Mcp-Name: " + params["uri"].get<std::string>());
  return headers;
}

std::string post_text(const std::string& body, const Headers& headers) {
  std::string text =
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Accept: application/json, text/event-stream\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n";
  for (const auto& h : headers) text += h + "\r\n";
  return text + "\r\n" + body;
}

struct Answer {
  int status = 0;
  std::string head;  // status line and headers
  json body;         // the JSON body, null when there is none (or it is not JSON)
  bool has_header(const std::string& name) const {
    return Catch::toLower(head).find("\r\n" + Catch::toLower(name) + ":") != std::string::npos;
  }
};

// Reads one whole response with a Content-Length (or none: 202).
Answer read_answer(TcpClient& client) {
  std::string raw = client.receive(10s, "\r\n\r\n");
  Answer answer;
  const auto end = raw.find("\r\n\r\n");
  REQUIRE(end != std::string::npos);
  answer.head = raw.substr(0, end);
  answer.status = std::stoi(raw.substr(9, 3));
  std::size_t length = 0;
  const std::string lower = Catch::toLower(answer.head);
  if (auto at = lower.find("\r\ncontent-length: "); at != std::string::npos) {
    length = std::stoul(lower.substr(at + 18));
  }
  std::string body = raw.substr(end + 4);
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (body.size() < length && !client.closed && std::chrono::steady_clock::now() < until) {
    body += client.receive(50ms);
  }
  if (!body.empty()) answer.body = json::parse(body, nullptr, false);
  return answer;
}

// POSTs `body` with `headers` on a connection of its own; its answer.
Answer post(const Door& door, const std::string& body, const Headers& headers) {
  auto client = door.connect();
  REQUIRE(client->send(post_text(body, headers)));
  return read_answer(*client);
}

Answer post(const Door& door, const json& request, const Headers& headers) {
  return post(door, request.dump(), headers);
}

Answer post(const Door& door, const json& request) {
  return post(door, request, standard_headers(request));
}

// The gauge `name` in /metrics.
long gauge(const Door& door, const std::string& name) {
  auto client = door.connect();
  REQUIRE(client->send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  const std::string text = client->receive(5s);
  const auto at = text.find("\n" + name + " ");
  REQUIRE(at != std::string::npos);
  return std::stol(text.substr(at + name.size() + 2));
}

// A legacy session's id, from an initialize.
std::string initialize(const Door& door) {
  const json init = {{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "initialize"},
                     {"params",
                      {{"protocolVersion", "2025-11-25"},
                       {"capabilities", json::object()},
                       {"clientInfo", {{"name", "legacy"}, {"version", "0"}}}}}};
  const Answer answer = post(door, init, {});
  REQUIRE(answer.status == 200);
  const std::string lower = Catch::toLower(answer.head);
  const auto at = lower.find("\r\nmcp-session-id: ");
  REQUIRE(at != std::string::npos);
  return answer.head.substr(at + 18, answer.head.find("\r\n", at + 2) - at - 18);
}

// The "data: " payloads in raw SSE bytes, parsed.
std::vector<json> sse_events(const std::string& raw) {
  std::vector<json> events;
  std::size_t at = 0;
  while ((at = raw.find("data: ", at)) != std::string::npos) {
    const auto end = raw.find('\n', at);
    const json event = json::parse(raw.substr(at + 6, end - at - 6), nullptr, false);
    if (!event.is_discarded()) events.push_back(event);
    at = end;
  }
  return events;
}

const json& error_of(const Answer& answer) {
  INFO(answer.head << "\n" << answer.body.dump());
  REQUIRE(answer.body.is_object());
  REQUIRE(answer.body.contains("error"));
  return answer.body["error"];
}

}  // namespace

TEST_CASE("a 2026-07-28 POST is served statelessly: no session id minted, a named one ignored",
          "[modern]") {
  Door door;
  const json list = modern_request(7, "tools/list");
  const Answer plain = post(door, list);
  INFO(plain.head << "\n" << plain.body.dump());
  CHECK(plain.status == 200);
  CHECK(plain.body["id"] == 7);
  CHECK(plain.body["result"]["resultType"] == "complete");
  CHECK_FALSE(plain.body["result"]["tools"].empty());
  CHECK_FALSE(plain.has_header("Mcp-Session-Id"));
  // A legacy request naming an unknown session gets 404; a modern one is served.
  Headers named = standard_headers(list);
  named.push_back("Mcp-Session-Id: no-such-session");
  const Answer ignored = post(door, list, named);
  CHECK(ignored.status == 200);
  CHECK(ignored.body["result"]["resultType"] == "complete");
  CHECK_FALSE(ignored.has_header("Mcp-Session-Id"));
  CHECK(gauge(door, "toolmux_http_sessions") == 0);
}

TEST_CASE("an MCP-Protocol-Version toolmux does not speak is 400 with -32022 and the versions",
          "[modern]") {
  Door door;
  json request = modern_request(301, "server/discover");
  request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999.0.0";
  const Answer answer =
      post(door, request, {"MCP-Protocol-Version: v999.0.0", "Mcp-Method: server/discover"});
  CHECK(answer.status == 400);
  const json& error = error_of(answer);
  CHECK(error["code"] == -32022);
  CHECK(answer.body["id"] == 301);
  CHECK(error["data"]["requested"] == "v999.0.0");
  CHECK(error["data"]["supported"] == toolmux::modern::supported_versions());
  CHECK(error["data"]["supported"][0] == "2026-07-28");
  CHECK_THAT(error["message"].get<std::string>(), Catch::Contains("MCP-Protocol-Version"));
}

TEST_CASE("a request whose _meta names 2026-07-28 must say so in MCP-Protocol-Version",
          "[modern]") {
  Door door;
  const json list = modern_request(3, "tools/list");
  SECTION("no header: -32020, not the legacy 400 for a missing session") {
    const Answer answer = post(door, list, {"Mcp-Method: tools/list"});
    CHECK(answer.status == 400);
    const json& error = error_of(answer);
    CHECK(error["code"] == -32020);
    CHECK(error["data"]["header"] == "MCP-Protocol-Version");
    CHECK_THAT(error["message"].get<std::string>(),
               Catch::Contains("MCP-Protocol-Version header is missing") &&
                   Catch::Contains("\"2026-07-28\""));
  }
  SECTION("a legacy version in the header: -32020 naming both") {
    const Answer answer =
        post(door, list, {"MCP-Protocol-Version: 2025-11-25", "Mcp-Method: tools/list"});
    CHECK(answer.status == 400);
    const json& error = error_of(answer);
    CHECK(error["code"] == -32020);
    CHECK_THAT(error["message"].get<std::string>(),
               Catch::Contains("\"2025-11-25\"") && Catch::Contains("\"2026-07-28\""));
  }
  SECTION("the header says 2026-07-28, the body another version: -32020 naming both") {
    json other = list;
    other["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999.0.0";
    const Answer answer = post(door, other, standard_headers(list));
    CHECK(answer.status == 400);
    const json& error = error_of(answer);
    CHECK(error["code"] == -32020);
    CHECK(error["data"]["headerValue"] == "2026-07-28");
    CHECK(error["data"]["bodyValue"] == "v999.0.0");
  }
}

TEST_CASE("Mcp-Method must be sent and be the body's method, value compared case-sensitively",
          "[modern]") {
  Door door;
  const json list = modern_request(4, "tools/list");
  struct Case {
    Headers headers;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"MCP-Protocol-Version: 2026-07-28"}, "the Mcp-Method header is missing"},
      {{"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: prompts/list"},
       "Mcp-Method header value \"prompts/list\" does not match body value \"tools/list\""},
      {{"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: TOOLS/LIST"}, "\"TOOLS/LIST\""},
      {{"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list", "Mcp-Method: tools/list"},
       "sent 2 times"},
  };
  for (const Case& c : cases) {
    const Answer answer = post(door, list, c.headers);
    CHECK(answer.status == 400);
    const json& error = error_of(answer);
    CHECK(error["code"] == -32020);
    CHECK(answer.body["id"] == 4);
    CHECK_THAT(error["message"].get<std::string>(), Catch::Contains(c.says));
  }
  // Header names are matched in any case.
  const Answer lower =
      post(door, list, {"mcp-protocol-version: 2026-07-28", "MCP-METHOD: tools/list"});
  CHECK(lower.status == 200);
}

TEST_CASE("Mcp-Name must be the body's name or uri, Base64-decoded when sent so", "[modern]") {
  Door door;
  json call = modern_request(5, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}});
  const Headers base{"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call"};
  auto with = [&](const std::string& name) {
    Headers headers = base;
    headers.push_back("Mcp-Name: " + name);
    return headers;
  };
  SECTION("missing") {
    const Answer answer = post(door, call, base);
    CHECK(answer.status == 400);
    CHECK(error_of(answer)["code"] == -32020);
    CHECK_THAT(error_of(answer)["message"].get<std::string>(),
               Catch::Contains("the Mcp-Name header is missing"));
  }
  SECTION("another name") {
    const Answer answer = post(door, call, with("wrong_tool_name"));
    CHECK(answer.status == 400);
    CHECK(error_of(answer)["code"] == -32020);
    CHECK(error_of(answer)["data"]["headerValue"] == "wrong_tool_name");
    CHECK(error_of(answer)["data"]["bodyValue"] == "echo");
  }
  SECTION("spaces around it are not part of it") {
    const Answer answer = post(door, call, with("   echo  "));
    CHECK(answer.status == 200);
    CHECK(answer.body["result"]["content"][0]["text"] == "hi");
  }
  SECTION("Base64, and Base64 that is not") {
    CHECK(post(door, call, with("=?base64?ZWNobw==?=")).status == 200);
    const Answer unpadded = post(door, call, with("=?base64?ZWNobw?="));
    CHECK(unpadded.status == 400);
    CHECK_THAT(error_of(unpadded)["message"].get<std::string>(),
               Catch::Contains("not padded to a multiple of 4"));
    const Answer alphabet = post(door, call, with("=?base64?ZW!obw==?="));
    CHECK(alphabet.status == 400);
    CHECK_THAT(error_of(alphabet)["message"].get<std::string>(),
               Catch::Contains("not in the Base64 alphabet"));
  }
  SECTION("bytes a header may not carry") {
    const Answer answer = post(door, call, with("ech\xC3\xB6"));
    CHECK(answer.status == 400);
    CHECK(error_of(answer)["code"] == -32020);
    CHECK_THAT(error_of(answer)["message"].get<std::string>(),
               Catch::Contains("characters a header may not carry"));
  }
  SECTION("prompts/get and resources/read too") {
    const json get = modern_request(6, "prompts/get", {{"name", "no_such_prompt"}});
    Headers headers = standard_headers(get);
    headers.back() = "Mcp-Name: other";
    CHECK(error_of(post(door, get, headers))["code"] == -32020);
    const json read = modern_request(7, "resources/read", {{"uri", "toolmux://nothing"}});
    CHECK(error_of(post(door, read,
                        {"MCP-Protocol-Version: 2026-07-28",
                         "Mcp-Method: resources/read"}))["code"] == -32020);
  }
}

TEST_CASE("a tool's Mcp-Param headers must agree with its arguments (SEP-2243)", "[modern]") {
  toolmux::HttpOptions options;
  options.param_headers_of = [](std::string_view tool) {
    return tool == "echo" ? std::vector<toolmux::ParamHeader>{{"text", "Text"}}
                          : std::vector<toolmux::ParamHeader>{};
  };
  Door door(std::move(options));
  const json call =
      modern_request(8, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "Hello"}}}});
  auto with = [&](const std::string& line) {
    Headers headers = standard_headers(call);
    headers.push_back(line);
    return headers;
  };
  auto refused_with = [&](const Headers& headers, const std::string& why) {
    const Answer answer = post(door, call, headers);
    CHECK(answer.status == 400);
    CHECK(error_of(answer)["code"] == -32020);
    CHECK_THAT(error_of(answer)["message"].get<std::string>(), Catch::Contains(why));
  };
  SECTION("the same value, as it is or in Base64, in any case of the name") {
    CHECK(post(door, call, with("Mcp-Param-Text: Hello")).body["result"]["content"][0]["text"] ==
          "Hello");
    CHECK(post(door, call, with("mcp-param-text: =?base64?SGVsbG8=?=")).status == 200);
  }
  SECTION("missing, another value, bad Base64, repeated") {
    refused_with(standard_headers(call), "the Mcp-Param-Text header is missing");
    refused_with(with("Mcp-Param-Text: Goodbye"),
                 "Mcp-Param-Text header value \"Goodbye\" does not match body value "
                 "arguments.text \"Hello\"");
    refused_with(with("Mcp-Param-Text: =?base64?SGVsbG8?="), "not padded to a multiple of 4");
    refused_with(with("Mcp-Param-Text: =?base64?SGVs!!!!bG8=?="), "not in the Base64 alphabet");
    Headers twice = with("Mcp-Param-Text: Hello");
    twice.push_back("Mcp-Param-Text: Hello");
    refused_with(twice, "sent 2 times");
  }
  SECTION("a value without the whole sentinel is taken as it is") {
    const json literal = modern_request(
        9, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "=?base64?SGVsbG8="}}}});
    Headers headers = standard_headers(literal);
    headers.push_back("Mcp-Param-Text: =?base64?SGVsbG8=");
    CHECK(post(door, literal, headers).status == 200);
  }
  SECTION("a header for an argument the call does not pass") {
    const json bare =
        modern_request(10, "tools/call", {{"name", "echo"}, {"arguments", json::object()}});
    Headers headers = standard_headers(bare);
    headers.push_back("Mcp-Param-Text: Hello");
    const Answer answer = post(door, bare, headers);
    CHECK(answer.status == 400);
    CHECK_THAT(error_of(answer)["message"].get<std::string>(),
               Catch::Contains("the Mcp-Param-Text header is sent, but the arguments have no "
                               "\"text\""));
  }
  SECTION("a tool that declares none is not checked") {
    const json other =
        modern_request(11, "tools/call", {{"name", "whoami"}, {"arguments", json::object()}});
    CHECK(post(door, other, standard_headers(other)).status == 200);
  }
}

TEST_CASE("Mcp-Name is compared as sent: a %20 in a URI is not a space", "[modern]") {
  // cpp-httplib percent-decodes header values: compared as it gives them,
  // "file:///a%20b" in the header would be "file:///a b", and a conforming
  // request refused as a mismatch.
  Door door;
  const json read = modern_request(8, "resources/read", {{"uri", "file:///a%20b.txt"}});
  const Answer answer = post(door, read);
  INFO(answer.head << "\n" << answer.body.dump());
  CHECK(answer.status == 200);  // the server's own answer: no such resource
  CHECK(error_of(answer)["code"] != -32020);
}

TEST_CASE("a body whose _meta lacks the version or the capabilities is 400 with -32602",
          "[modern]") {
  Door door;
  json no_meta = modern_request(101, "server/discover");
  no_meta["params"].erase("_meta");
  json no_version = modern_request(102, "server/discover");
  no_version["params"]["_meta"].erase("io.modelcontextprotocol/protocolVersion");
  json no_capabilities = modern_request(104, "server/discover");
  no_capabilities["params"]["_meta"].erase("io.modelcontextprotocol/clientCapabilities");
  for (const auto& [request, names] :
       std::vector<std::pair<json, std::string>>{{no_meta, "params._meta"},
                                                 {no_version, "protocolVersion"},
                                                 {no_capabilities, "clientCapabilities"}}) {
    const Answer answer = post(door, request, standard_headers(request));
    CHECK(answer.status == 400);
    const json& error = error_of(answer);
    CHECK(error["code"] == -32602);
    CHECK(answer.body["id"] == request["id"]);
    CHECK_THAT(error["message"].get<std::string>(), Catch::Contains(names));
  }
  // clientInfo is optional.
  json no_info = modern_request(105, "server/discover");
  no_info["params"]["_meta"].erase("io.modelcontextprotocol/clientInfo");
  CHECK(post(door, no_info).status == 200);
}

TEST_CASE("statuses of modern answers: 404 for -32601, 202 for a notification", "[modern]") {
  Door door;
  for (const std::string method : {"initialize", "ping", "logging/setLevel", "unknown/method"}) {
    const Answer answer = post(door, modern_request(500, method));
    INFO(method);
    CHECK(answer.status == 404);
    CHECK(error_of(answer)["code"] == -32601);
    CHECK(answer.body["id"] == 500);
  }
  // A tool's error is a result; -32602 (unknown tool) is 200 too.
  const json unknown = modern_request(9, "tools/call", {{"name", "nope"}, {"arguments", {}}});
  const Answer answer = post(door, unknown);
  CHECK(answer.status == 200);
  CHECK(error_of(answer)["code"] == -32602);
  json note = {{"jsonrpc", "2.0"},
               {"method", "notifications/cancelled"},
               {"params", {{"requestId", 1}, {"_meta", modern_meta()}}}};
  const Answer accepted =
      post(door, note, {"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: notifications/cancelled"});
  CHECK(accepted.status == 202);
  CHECK_FALSE(accepted.has_header("Mcp-Session-Id"));
}

TEST_CASE("GET and DELETE stay legacy: 405 for the 2026-07-28 protocol", "[modern]") {
  Door door;
  for (const std::string method : {"GET", "DELETE"}) {
    auto client = door.connect();
    REQUIRE(client->send(method +
                         " /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                         "MCP-Protocol-Version: 2026-07-28\r\n\r\n"));
    const Answer answer = read_answer(*client);
    CHECK(answer.status == 405);
    CHECK_THAT(answer.head, Catch::Contains("Allow: POST"));
  }
}

TEST_CASE("Host, Origin, bearer tokens and the body limit apply to modern POSTs too", "[modern]") {
  toolmux::HttpOptions options;
  options.tokens = {{"alice-token-0123456789", "alice"}, {"bob-token-0123456789ab", "bob"}};
  options.max_body_bytes = 4096;
  Door door(options);
  const json call = modern_request(10, "tools/call", {{"name", "whoami"}, {"arguments", {}}});
  Headers headers = standard_headers(call);
  CHECK(post(door, call, headers).status == 401);
  headers.push_back("Authorization: Bearer alice-token-0123456789");
  const Answer alice = post(door, call, headers);
  CHECK(alice.status == 200);
  // What its calls store belongs to the principal, not to a session.
  CHECK(alice.body["result"]["content"][0]["text"] == "principal:alice alice");
  Headers evil = headers;
  evil.push_back("Origin: http://evil.example");
  CHECK(post(door, call, evil).status == 403);
  json big = modern_request(11, "tools/list", {{"pad", std::string(5000, 'x')}});
  CHECK(post(door, big, headers).status == 413);
}

TEST_CASE("a legacy session and modern requests on one endpoint at once", "[modern]") {
  Door door;
  const std::string session = initialize(door);
  const Headers legacy{"Mcp-Session-Id: " + session, "MCP-Protocol-Version: 2025-11-25"};
  const json legacy_list = {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}};
  // Both at once: a modern call holding its stream while the session works.
  auto held = door.connect();
  json hold = modern_request(20, "tools/call", {{"name", "hold"}, {"arguments", json::object()}});
  hold["params"]["_meta"]["progressToken"] = "p";
  REQUIRE(held->send(post_text(hold.dump(), standard_headers(hold))));
  CHECK_THAT(held->receive(10s, "notifications/progress"), Catch::Contains("text/event-stream"));
  const Answer listed = post(door, legacy_list, legacy);
  CHECK(listed.status == 200);
  CHECK_FALSE(listed.body["result"]["tools"].empty());
  CHECK_FALSE(listed.body["result"].contains("resultType"));  // the legacy era's answer
  const Answer modern = post(
      door, modern_request(21, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "m"}}}}));
  CHECK(modern.status == 200);
  CHECK(modern.body["result"]["content"][0]["text"] == "m");
  // Only the legacy session is a session; the stream is counted.
  CHECK(gauge(door, "toolmux_http_sessions") == 1);
  CHECK(gauge(door, "toolmux_http_streams") == 1);
  held->close();
  // The session is still there, and answers.
  CHECK(post(door, legacy_list, legacy).status == 200);
}

TEST_CASE("closing a modern SSE response stream cancels its call", "[modern]") {
  Door door;
  auto client = door.connect();
  json hold = modern_request(30, "tools/call", {{"name", "hold"}, {"arguments", json::object()}});
  hold["params"]["_meta"]["progressToken"] = "p";
  REQUIRE(client->send(post_text(hold.dump(), standard_headers(hold))));
  const std::string raw = client->receive(10s, "notifications/progress");
  CHECK_THAT(raw, Catch::Contains("Content-Type: text/event-stream"));
  CHECK_THAT(raw, Catch::Contains("X-Accel-Buffering: no"));
  // Not resumable: no event ids, no priming event.
  CHECK_THAT(raw, !Catch::Contains("\nid: "));
  CHECK_THAT(raw, !Catch::Contains("Mcp-Session-Id"));
  CHECK(sse_events(raw).at(0)["method"] == "notifications/progress");
  CHECK(gauge(door, "toolmux_http_streams") == 1);
  client->close();
  // Seen at once, not at the next keep-alive (15 s): well within the 30 s
  // the tool would otherwise hold.
  CHECK(toolmux::testing::eventually([&] { return door.seen->cancelled.load() == 1; }, 10s));
  CHECK(
      toolmux::testing::eventually([&] { return gauge(door, "toolmux_http_streams") == 0; }, 10s));
}

TEST_CASE("closing the connection of a modern call whose JSON answer is pending cancels it",
          "[modern]") {
  Door door;
  auto client = door.connect();
  // No progress asked for: the connection's thread carries the call.
  const json hold =
      modern_request(31, "tools/call", {{"name", "hold"}, {"arguments", json::object()}});
  REQUIRE(client->send(post_text(hold.dump(), standard_headers(hold))));
  REQUIRE(toolmux::testing::eventually([&] { return door.seen->started.load() == 1; }, 10s));
  client->close();
  CHECK(toolmux::testing::eventually([&] { return door.seen->cancelled.load() == 1; }, 10s));
  // The server goes on serving.
  CHECK(post(door, modern_request(32, "tools/list")).status == 200);
}

TEST_CASE("a modern SSE stream outlives the header and body timeouts", "[modern]") {
  toolmux::HttpOptions options;
  options.header_timeout = 1s;
  options.body_timeout = 1s;
  Door door(options);
  auto client = door.connect();
  json hold = modern_request(40, "tools/call", {{"name", "hold"}, {"arguments", json::object()}});
  hold["params"]["_meta"]["progressToken"] = "p";
  REQUIRE(client->send(post_text(hold.dump(), standard_headers(hold))));
  REQUIRE_THAT(client->receive(10s, "notifications/progress"),
               Catch::Contains("text/event-stream"));
  // Three times both timeouts: still streaming, still counted.
  const auto until = std::chrono::steady_clock::now() + 3s;
  std::string more;
  while (std::chrono::steady_clock::now() < until && !client->closed)
    more += client->receive(200ms);
  CHECK_FALSE(client->closed);
  CHECK_THAT(more, Catch::Contains("notifications/progress"));
  CHECK(gauge(door, "toolmux_http_streams") == 1);
  CHECK(door.seen->cancelled.load() == 0);
}
