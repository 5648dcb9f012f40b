// McpClient and a 2026-07-28 upstream's x-mcp-header parameters (SEP-2243):
// the tools whose annotations are invalid are left out of tools/list, and a
// call carries its Mcp-Param-* headers to the transport
// (ClientTransport::send_with_headers). The upstream is a transport of the
// test's own that answers from a thread, as a real one does, and keeps the
// headers each request came with.
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "src/upstream/mcp_client.h"
#include "tests/support/quiet_logger.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using namespace std::chrono_literals;

namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

const json kTools = json::parse(R"([
  {"name": "forecast", "inputSchema": {"type": "object", "properties": {
      "region": {"type": "string", "x-mcp-header": "Region"},
      "days": {"type": "integer", "x-mcp-header": "Days"},
      "detail": {"type": "boolean", "x-mcp-header": "Detail"},
      "note": {"type": "string"}}}},
  {"name": "bad_number", "inputSchema": {"type": "object", "properties": {
      "score": {"type": "number", "x-mcp-header": "Score"}}}},
  {"name": "bad_duplicate", "inputSchema": {"type": "object", "properties": {
      "a": {"type": "string", "x-mcp-header": "Same"},
      "b": {"type": "string", "x-mcp-header": "same"}}}},
  {"name": "plain", "inputSchema": {"type": "object"}}
])");

class ModernUpstream final : public ClientTransport {
 public:
  ~ModernUpstream() override { close(); }
  void start(OnMessage on_message, OnClosed, OnDropped) override { on_message_ = on_message; }
  bool send(const std::string& text) override { return send_with_headers(text, {}); }
  bool send_with_headers(const std::string& text, const Headers& headers) override {
    const json message = json::parse(text);
    if (!message.contains("id")) return true;
    const std::string method = message["method"];
    {
      std::lock_guard lock(mutex_);
      sent_.emplace_back(method, headers);
    }
    json result;
    if (method == "server/discover") {
      result = {{"supportedVersions", {"2026-07-28"}},
                {"capabilities", {{"tools", json::object()}}}};
    } else if (method == "tools/list") {
      result = {{"tools", kTools}};
    } else {
      result = {{"content", {{{"type", "text"}, {"text", "sunny"}}}}};
    }
    const std::string reply =
        json{{"jsonrpc", "2.0"}, {"id", message["id"]}, {"result", result}}.dump();
    std::lock_guard lock(mutex_);
    threads_.emplace_back([this, reply] { on_message_(reply); });
    return true;
  }
  void close() override {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      threads.swap(threads_);
    }
    for (auto& t : threads) t.join();
  }
  std::string describe() const override { return "test upstream"; }
  // The headers the last request with `method` came with.
  Headers headers_of(const std::string& method) {
    std::lock_guard lock(mutex_);
    for (auto it = sent_.rbegin(); it != sent_.rend(); ++it) {
      if (it->first == method) return it->second;
    }
    return {};
  }

 private:
  OnMessage on_message_;
  std::mutex mutex_;
  std::vector<std::pair<std::string, Headers>> sent_;
  std::vector<std::thread> threads_;
};

}  // namespace

TEST_CASE("a modern upstream's x-mcp-header arguments go as Mcp-Param headers with the call") {
  QuietLogger quiet;
  auto owned = std::make_unique<ModernUpstream>();
  ModernUpstream* upstream = owned.get();
  auto client = McpClient::create("weather", std::move(owned), quiet.logger);
  REQUIRE(client->connect(5s, 5s).ok());
  REQUIRE(client->era() == ProtocolEra::modern);

  auto tools = client->list_tools(5s);
  REQUIRE(tools.ok());
  std::vector<std::string> names;
  for (const json& tool : tools.value()) names.push_back(tool["name"]);
  // The tools with an invalid annotation are left out; the rest stay.
  CHECK(names == std::vector<std::string>{"forecast", "plain"});

  TestContext context;
  auto outcome = client->call_tool(
      "forecast", {{"region", "Zürich"}, {"days", 3}, {"detail", nullptr}, {"note", "x"}}, context);
  REQUIRE(outcome.result);
  CHECK(upstream->headers_of("tools/call") ==
        Headers{{"Mcp-Param-Days", "3"}, {"Mcp-Param-Region", "=?base64?WsO8cmljaA==?="}});

  outcome = client->call_tool("plain", json::object(), context);
  REQUIRE(outcome.result);
  CHECK(upstream->headers_of("tools/call").empty());
  CHECK(upstream->headers_of("tools/list").empty());
}
