// McpClient against real child processes: a scripted server
// (tests/data/upstreams/scripted.sh) for what the npm servers of the e2e tests
// do not do (tools/list in pages, a JSON-RPC error to tools/call), and a
// command that exits at once. tests/e2e/upstreams.test.mjs covers the rest
// with real upstreams.
#include "src/mcp_client.h"

#include "transports/stdio_child_transport.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/quiet_logger.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const fs::path kScripted = fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "scripted.sh";

std::shared_ptr<McpClient> start_client(const std::vector<std::string>& argv,
                                        const fs::path& received, Logger& logger,
                                        const std::vector<std::string>& env) {
  ChildCommand command;
  command.argv = argv;
  command.env = {"PATH=/usr/bin:/bin", "RECEIVED=" + received.string()};
  command.env.insert(command.env.end(), env.begin(), env.end());
  std::string error;
  auto transport = StdioChildTransport::start(command, nullptr, nullptr, error);
  REQUIRE(transport);
  return McpClient::create("scripted", std::move(transport), logger);
}

// A client of `argv` (the scripted server by default), with its own folder
// for the lines the server received.
struct Upstream {
  TempDir dir;
  QuietLogger quiet;
  std::shared_ptr<McpClient> client;
  explicit Upstream(const std::vector<std::string>& argv = {kScripted.string()},
                    const std::vector<std::string>& env = {})
      : client(start_client(argv, received(), quiet.logger, env)) {}
  fs::path received() const { return dir.path() / "received"; }
};

// Waits until `path` holds `text` (the scripted server writes as it reads).
bool eventually_contains(const fs::path& path, const std::string& text) {
  for (int i = 0; i < 200; ++i) {
    if (read_file(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_CASE("the client initializes and reads every page of tools/list") {
  Upstream up;
  auto& client = up.client;
  REQUIRE(client->initialize(5s).empty());
  CHECK(client->server_info()["name"] == "scripted");
  std::string error;
  auto tools = client->list_tools(5s, error);
  INFO(error);
  REQUIRE(tools);
  REQUIRE(tools->size() == 4);
  CHECK((*tools)[0]["name"] == "first");
  CHECK((*tools)[1]["name"] == "second");
  const std::string received = read_file(up.received());
  CHECK(received.find(R"("protocolVersion":"2025-11-25")") != std::string::npos);
  CHECK(received.find(R"("method":"notifications/initialized")") != std::string::npos);
  CHECK(received.find(R"("cursor":"page-2")") != std::string::npos);
  // It declares no logging: no logging/setLevel.
  CHECK(received.find("logging/setLevel") == std::string::npos);
}

TEST_CASE("the client asks an upstream that declares logging for every level") {
  // (Servers send nothing below their default level until asked; toolmux
  // filters at each calling client's own level.)
  Upstream up({kScripted.string()}, {"LOGGING=1"});
  REQUIRE(up.client->initialize(5s).empty());
  CHECK(eventually_contains(up.received(),
                            R"("method":"logging/setLevel","params":{"level":"debug"})"));
}

TEST_CASE("a relayed call returns the upstream's result, and its error as an error result") {
  Upstream up;
  auto& client = up.client;
  REQUIRE(client->initialize(5s).empty());
  TestContext context;
  ToolResult result = McpClient::tool_result(client->call_tool("any", {{"x", 1}}, context));
  CHECK_FALSE(result.is_error);
  CHECK(result.content == json::parse(R"([{"type":"text","text":"called"}])"));
  CHECK(result.structured_content == json{{"ok", true}});
  CHECK(eventually_contains(up.received(), R"("arguments":{"x":1})"));

  ToolResult failed = McpClient::tool_result(client->call_tool("fails", json::object(), context));
  CHECK(failed.is_error);
  CHECK(failed.content[0]["text"] ==
        "upstream \"scripted\" answered tools/call with an error: no such tool (code -32602)");
}

TEST_CASE("progress reaches the call's context and cancelling sends notifications/cancelled") {
  Upstream up;
  auto& client = up.client;
  REQUIRE(client->initialize(5s).empty());
  TestContext context;
  std::thread canceller([&] {
    for (int i = 0; i < 500 && context.progress().empty(); ++i) std::this_thread::sleep_for(10ms);
    context.cancel = true;
  });
  ToolResult result = McpClient::tool_result(client->call_tool("slow", json::object(), context));
  canceller.join();
  CHECK(result.is_error);
  CHECK(result.content[0]["text"] == "tools/call to upstream \"scripted\" was cancelled");
  auto progress = context.progress();
  REQUIRE(progress.size() == 1);
  CHECK(progress[0].progress == 1);
  CHECK(progress[0].total == 4);
  CHECK(progress[0].message == "one");
  // The call was request 2 (after initialize).
  CHECK(eventually_contains(
      up.received(),
      R"("method":"notifications/cancelled","params":{"reason":"cancelled by toolmux's client","requestId":2})"));
}

TEST_CASE("a log message reaches the only call in flight, ping is answered, roots/list refused") {
  struct LoggingContext : TestContext {
    std::mutex mutex;
    std::vector<std::pair<LogLevel, json>> logs;
    void log(LogLevel level, const json& data) override {
      std::lock_guard lock(mutex);
      logs.emplace_back(level, data);
    }
  };
  Upstream up;
  auto& client = up.client;
  REQUIRE(client->initialize(5s).empty());
  LoggingContext context;
  ToolResult result = McpClient::tool_result(client->call_tool("talks", json::object(), context));
  CHECK(result.content[0]["text"] == "talked");
  REQUIRE(context.logs.size() == 1);
  CHECK(context.logs[0].first == LogLevel::warning);
  CHECK(context.logs[0].second == "careful");
  CHECK(eventually_contains(up.received(), R"({"id":"ping-1","jsonrpc":"2.0","result":{}})"));
  CHECK(eventually_contains(up.received(), R"({"error":{"code":-32601,)"));
}

TEST_CASE("an upstream that exits at once fails initialize with its exit status") {
  Upstream up({"sh", "-c", "exit 4"});
  auto& client = up.client;
  CHECK(client->initialize(5s) == "upstream \"scripted\" exited with status 4");
  CHECK(client->gone());
  TestContext context;
  ToolResult result = McpClient::tool_result(client->call_tool("any", json::object(), context));
  CHECK(result.is_error);
  CHECK(result.content[0]["text"] == "upstream \"scripted\" exited with status 4");
}

TEST_CASE("an upstream's requests to the client are relayed a few at a time, the rest refused") {
  // A client that takes 200 ms to answer each request (with an error).
  struct SlowClient : TestContext {
    std::atomic<int> asked{0};
    ClientAnswer ask_client(const std::string&, const json&) override {
      ++asked;
      std::this_thread::sleep_for(200ms);
      return {std::nullopt, "no answer from the test client"};
    }
  };
  Upstream up;
  auto& client = up.client;
  REQUIRE(client->initialize(5s).empty());
  SlowClient context;
  ToolResult result =
      McpClient::tool_result(client->call_tool("asks_many", json::object(), context));
  CHECK(result.content[0]["text"] == "asked");
  // Ten requests came at once: four are relayed (each on a thread of its
  // own, waiting for the client), the six past the limit are refused at once.
  const std::string refusal =
      R"("message":"elicitation/create refused: toolmux already relays 4 requests from this )"
      R"(server to its client, its limit; answer them first")";
  REQUIRE(eventually_contains(up.received(), "no answer from the test client"));
  for (int i = 0; i < 200; ++i) {
    const std::string text = read_file(up.received());
    std::size_t refused = 0;
    for (auto at = text.find(refusal); at != std::string::npos; at = text.find(refusal, at + 1)) {
      ++refused;
    }
    if (refused == 6 || i == 199) {
      CHECK(refused == 6);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  CHECK(context.asked.load() <= 4);
}
