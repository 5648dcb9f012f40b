#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>

#include "src/mcp_server.h"
#include "tests/support/test_tools.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Fixture {
  explicit Fixture(std::size_t page_size = 0) {
    ServerOptions options;
    options.page_size = page_size;
    server = std::make_unique<McpServer>(make_test_catalog(), options, logger, metrics);
  }
  ~Fixture() {
    session->cancel_all_calls();
    session->wait_for_calls(std::chrono::seconds(2));
    server->wait_for_running_tools(std::chrono::seconds(2));
    std::fclose(log_file);
  }

  json request(const json& id, const std::string& method, json params = json::object()) {
    server->handle(
        json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump(),
        session);
    return sink.response(id);
  }

  void initialize(const std::string& version = "2025-11-25") {
    json r = request("init", "initialize",
                     {{"protocolVersion", version},
                      {"capabilities", json::object()},
                      {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
    REQUIRE(r.contains("result"));
    server->handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", session);
  }

  CapturingSink sink;
  std::shared_ptr<Session> session =
      std::make_shared<Session>("test-session", "local", "test", sink);
  std::FILE* log_file = std::tmpfile();
  Logger logger{log_file, LogLevel::debug};
  Metrics metrics;
  std::unique_ptr<McpServer> server;
};

}  // namespace

TEST_CASE("initialize answers with the client's version when supported, else the latest") {
  SECTION("supported") {
    Fixture f;
    json r = f.request(1, "initialize",
                       {{"protocolVersion", "2025-03-26"}, {"capabilities", json::object()}});
    CHECK(r["result"]["protocolVersion"] == "2025-03-26");
    CHECK(r["result"]["serverInfo"]["name"] == "toolmux");
    CHECK(r["result"]["capabilities"].contains("tools"));
    CHECK(r["result"]["capabilities"].contains("logging"));
  }
  SECTION("unknown") {
    Fixture f;
    json r = f.request(1, "initialize", {{"protocolVersion", "1999-01-01"}});
    CHECK(r["result"]["protocolVersion"] == "2025-11-25");
  }
  SECTION("missing") {
    Fixture f;
    json r = f.request(1, "initialize", json::object());
    CHECK(r["error"]["code"] == -32602);
  }
}

TEST_CASE("requests before initialize get a clear error, but ping is answered") {
  Fixture f;
  json r = f.request(1, "tools/list");
  CHECK(r["error"]["code"] == -32600);
  CHECK_THAT(r["error"]["message"].get<std::string>(), Catch::Contains("initialize"));
  CHECK(f.request(2, "ping").contains("result"));
}

TEST_CASE("a second initialize is refused") {
  Fixture f;
  f.initialize();
  json r = f.request(9, "initialize", {{"protocolVersion", "2025-11-25"}});
  CHECK(r["error"]["code"] == -32600);
}

TEST_CASE("unknown methods get -32601 naming the method") {
  Fixture f;
  f.initialize();
  json r = f.request(3, "resources/teleport");
  CHECK(r["error"]["code"] == -32601);
  CHECK(r["error"]["message"] == "Method not found: resources/teleport");
}

TEST_CASE("a line that is not JSON gets -32700 and the server goes on") {
  Fixture f;
  f.server->handle("{not json", f.session);
  json r = f.sink.response(nullptr);
  CHECK(r["error"]["code"] == -32700);
  f.initialize();
}

TEST_CASE("tools/list pages with opaque cursors and refuses a bad one") {
  Fixture f(3);
  f.initialize();
  std::vector<std::string> names;
  json cursor = nullptr;
  int id = 10;
  do {
    json params = json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    json r = f.request(id++, "tools/list", params);
    REQUIRE(r.contains("result"));
    for (const auto& t : r["result"]["tools"]) names.push_back(t["name"]);
    CHECK(r["result"]["tools"].size() <= 3);
    cursor = r["result"].value("nextCursor", json(nullptr));
  } while (!cursor.is_null());
  CHECK(names ==
        std::vector<std::string>{"echo", "slow", "throws", "wrong_output", "raw_bytes", "listing"});

  json bad = f.request(99, "tools/list", {{"cursor", "bm90LWEtY3Vyc29y"}});
  CHECK(bad["error"]["code"] == -32602);
}

TEST_CASE("listed tools carry annotations from their side-effect class") {
  Fixture f;
  f.initialize();
  json r = f.request(1, "tools/list");
  json echo = r["result"]["tools"][0];
  CHECK(echo["name"] == "echo");
  CHECK(echo["annotations"]["readOnlyHint"] == true);
  CHECK(echo["inputSchema"]["type"] == "object");
}

TEST_CASE("an unknown tool is -32602 with the closest names") {
  Fixture f;
  f.initialize();
  json r = f.request(4, "tools/call", {{"name", "ecko"}, {"arguments", json::object()}});
  CHECK(r["error"]["code"] == -32602);
  CHECK_THAT(r["error"]["message"].get<std::string>(), Catch::Contains("Did you mean \"echo\""));
  CHECK(r["error"]["data"]["suggestions"][0] == "echo");
}

TEST_CASE("tools/call returns the tool's result, and failures are isError results") {
  Fixture f;
  f.initialize();
  json ok = f.request(5, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}});
  CHECK(ok["result"]["content"][0]["text"] == "hi");
  CHECK(ok["result"]["isError"] == false);

  json bad = f.request(6, "tools/call", {{"name", "echo"}, {"arguments", {{"text", 1}}}});
  CHECK(bad["result"]["isError"] == true);

  json thrown = f.request(7, "tools/call", {{"name", "throws"}});
  CHECK(thrown["result"]["isError"] == true);
}

TEST_CASE("a repeated key inside arguments is an isError result, elsewhere an invalid request") {
  Fixture f;
  f.initialize();
  f.server->handle(
      R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}})",
      f.session);
  json r = f.sink.response(8);
  CHECK(r["result"]["isError"] == true);
  CHECK_THAT(r["result"]["content"][0]["text"].get<std::string>(),
             Catch::Contains("repeated object key \"text\""));

  f.server->handle(R"({"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":1,"a":2}})", f.session);
  CHECK(f.sink.response(9)["error"]["code"] == -32600);
}

TEST_CASE("ping is answered while a slow call runs, and a cancelled call gets no response") {
  Fixture f;
  f.initialize();
  f.server->handle(
      R"({"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slow","arguments":{"ms":250},"_meta":{"progressToken":"p1"}}})",
      f.session);
  const auto start = Clock::now();
  CHECK(f.request(20, "ping").contains("result"));
  CHECK(Clock::now() - start < std::chrono::milliseconds(100));
  // Progress is sent for the token while the tool runs.
  REQUIRE(f.sink.wait_for_notification("notifications/progress"));

  f.server->handle(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1"}})",
      f.session);
  CHECK(f.session->wait_for_calls(std::chrono::seconds(2)));
  CHECK(f.sink.response("slow-1", std::chrono::milliseconds(300)).is_null());
  auto progress = f.sink.notifications("notifications/progress");
  CHECK(progress[0]["params"]["progressToken"] == "p1");
  for (std::size_t i = 1; i < progress.size(); ++i) {
    CHECK(progress[i]["params"]["progress"] > progress[i - 1]["params"]["progress"]);
  }
}

TEST_CASE("a duplicate in-flight request id is refused") {
  Fixture f;
  f.initialize();
  const std::string call =
      R"({"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"slow","arguments":{"ms":200}}})";
  f.server->handle(call, f.session);
  f.server->handle(call, f.session);
  json first = f.sink.response(30);
  CHECK(first["error"]["code"] == -32600);
}

TEST_CASE("logging/setLevel controls notifications/message") {
  Fixture f;
  f.initialize();
  CHECK(f.request(40, "logging/setLevel", {{"level", "loud"}})["error"]["code"] == -32602);
  CHECK(f.request(41, "logging/setLevel", {{"level", "debug"}}).contains("result"));
  f.request(42, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "x"}}}});
  auto logs = f.sink.notifications("notifications/message");
  REQUIRE_FALSE(logs.empty());
  CHECK(logs.back()["params"]["level"] == "debug");
  CHECK(logs.back()["params"]["data"]["tool"] == "echo");
}
