// McpClient and the era of its upstream (src/upstream/protocol_era.h), against
// real child processes: a server that speaks the 2026-07-28 protocol
// (tests/data/upstreams/modern.sh) and the legacy scripted one
// (tests/data/upstreams/scripted.sh). The probe and each way it falls back,
// the modern _meta on every request, the rounds of input_required relayed to
// the calling client (one, two, the limit, a client that answers in a retry,
// a capability the client lacks), cancellation, and subscriptions/listen.
#include "src/upstream/mcp_client.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/eventually.h"
#include "tests/support/quiet_logger.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"
#include "transports/stdio_child_transport.h"

using namespace toolmux;
using namespace toolmux::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const fs::path kModern = fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "modern.sh";
const fs::path kScripted = fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "scripted.sh";

// A client of `script`, run with `env`, with its own folder for the lines
// the server received; what the upstream sends unprompted is kept.
struct Child {
  TempDir dir;
  QuietLogger quiet;
  std::mutex mutex;
  std::vector<std::pair<std::string, json>> notifications;
  std::shared_ptr<McpClient> client;

  explicit Child(const fs::path& script, const std::vector<std::string>& env = {}) {
    ChildCommand command;
    command.argv = {script.string()};
    command.env = {"PATH=/usr/bin:/bin", "RECEIVED=" + received().string()};
    command.env.insert(command.env.end(), env.begin(), env.end());
    auto transport = StdioChildTransport::start(command, nullptr);
    INFO(transport.message());
    REQUIRE(transport.ok());
    McpClient::Events events;
    events.on_notification = [this](const std::string& method, const json& params) {
      std::lock_guard lock(mutex);
      notifications.emplace_back(method, params);
    };
    client = McpClient::create("up", std::move(transport).value(), quiet.logger, events);
  }
  fs::path received() const { return dir.path() / "received"; }
  // The lines the server received, parsed, once it has received `count` (or 5 s passed).
  std::vector<json> lines(std::size_t count = 0) {
    std::vector<json> out;
    eventually(
        [&] {
          out.clear();
          std::istringstream in(read_file(received()));
          for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
          return out.size() >= count;
        },
        5s);
    return out;
  }
  // The requests received with `method`.
  std::vector<json> requests(const std::string& method, std::size_t at_least = 0) {
    std::vector<json> out;
    eventually(
        [&] {
          out.clear();
          for (const json& line : lines()) {
            if (line.value("method", "") == method) out.push_back(line);
          }
          return out.size() >= at_least;
        },
        5s);
    return out;
  }
  std::size_t notified(const std::string& method) {
    std::lock_guard lock(mutex);
    std::size_t count = 0;
    for (const auto& [m, params] : notifications) count += m == method ? 1 : 0;
    return count;
  }
};

// A calling client that declares `capabilities` and answers each question
// with `answer(key)` (or, with `pending`, in a retry of its call, which stops
// the call as a session's context does); it keeps what it was asked.
struct AskingContext : TestContext {
  explicit AskingContext(json declared = {{"elicitation", json::object()}},
                         std::chrono::milliseconds timeout = 20s)
      : TestContext(timeout), capabilities(std::move(declared)) {}
  json client_capabilities() const override { return capabilities; }
  ClientAnswer ask_client(const std::string& method, const json& params,
                          const std::stop_token& /*stop*/, const std::string& key) override {
    std::lock_guard lock(mutex);
    asked.push_back({{"method", method}, {"params", params}, {"key", key}});
    if (pending) {
      cancel = true;
      return {std::nullopt, "", true};
    }
    return {json{{"action", "accept"}, {"content", {{"name", "Ada " + key}}}}, "", false};
  }
  std::vector<json> questions() {
    std::lock_guard lock(mutex);
    return asked;
  }

  json capabilities;
  bool pending = false;
  std::mutex mutex;
  std::vector<json> asked;
};

bool has_modern_meta(const json& request) {
  const json meta = request["params"].value("_meta", json());
  return meta.is_object() &&
         meta.value("io.modelcontextprotocol/protocolVersion", "") == "2026-07-28" &&
         meta.contains("io.modelcontextprotocol/clientCapabilities") &&
         meta.value("io.modelcontextprotocol/clientInfo", json())["name"] == "toolmux";
}

}  // namespace

// --- The probe (basic/versioning.mdx, "Backward Compatibility") ---

TEST_CASE("a DiscoverResult naming 2026-07-28 makes the upstream modern: no initialize") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  CHECK(up.client->era() == ProtocolEra::modern);
  CHECK(up.client->protocol_version() == "2026-07-28");
  CHECK(up.client->server_info()["name"] == "modern");
  CHECK(up.client->server_capabilities()["resources"]["subscribe"] == true);
  auto tools = up.client->list_tools(5s);
  INFO(tools.message());
  REQUIRE(tools.ok());
  CHECK(tools->size() == 2);

  const std::vector<json> lines = up.lines(2);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["method"] == "server/discover");
  CHECK(lines[1]["method"] == "tools/list");
  // Nothing of the handshake era: no initialize, no notifications/initialized.
  for (const json& line : lines) CHECK(has_modern_meta(line));
  // With no client to answer for, the capabilities toolmux can relay.
  CHECK(
      lines[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] ==
      json::parse(
          R"({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}},"roots":{},"sampling":{}})"));
}

TEST_CASE(
    "every request to a modern upstream carries the modern _meta and the caller's capabilities") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  AskingContext context(
      {{"sampling", {{"tools", json::object()}}}, {"experimental", json::object()}});
  McpClient::Outcome outcome = up.client->call_tool("echo", {{"x", 1}}, context);
  INFO(outcome.error);
  REQUIRE(outcome.result);
  CHECK(McpClient::tool_result(outcome).content[0]["text"] == "echoed");
  const std::vector<json> calls = up.requests("tools/call", 1);
  REQUIRE(calls.size() == 1);
  CHECK(has_modern_meta(calls[0]));
  // Only what toolmux relays, as the client declared it; and a progress token.
  CHECK(calls[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] ==
        json::parse(
            R"({"extensions":{"io.modelcontextprotocol/tasks":{}},"sampling":{"tools":{}}})"));
  CHECK(calls[0]["params"]["_meta"]["progressToken"] == calls[0]["id"]);
  CHECK(calls[0]["params"]["arguments"] == json{{"x", 1}});
}

TEST_CASE("a legacy upstream's -32601 to the probe falls back to initialize") {
  Child up(kScripted);
  REQUIRE(up.client->connect(5s, 5s).ok());
  CHECK(up.client->era() == ProtocolEra::legacy);
  CHECK(up.client->protocol_version() == "2025-11-25");
  CHECK(up.client->legacy_reason() ==
        "server/discover answered an error -32601 (Method not found)");
  TestContext context;
  CHECK(McpClient::tool_result(up.client->call_tool("any", json::object(), context))
            .content[0]["text"] == "called");
  const std::vector<json> lines = up.lines(4);
  REQUIRE(lines.size() >= 4);
  CHECK(lines[0]["method"] == "server/discover");
  CHECK(lines[1]["method"] == "initialize");
  CHECK(lines[2]["method"] == "notifications/initialized");
  CHECK(lines[3]["method"] == "tools/call");
  // Legacy requests carry no modern _meta.
  CHECK_FALSE(lines[3]["params"]["_meta"].contains("io.modelcontextprotocol/protocolVersion"));
}

TEST_CASE(
    "a legacy upstream that does not answer the probe gets initialize after the probe timeout") {
  Child up(kScripted, {"DISCOVER=silent"});
  const auto before = Clock::now();
  REQUIRE(up.client->connect(5s, 300ms).ok());
  CHECK(Clock::now() - before >= 300ms);
  CHECK(up.client->era() == ProtocolEra::legacy);
  CHECK(up.client->legacy_reason() ==
        "no answer to server/discover: server/discover to upstream \"up\" timed out");
  // The probe is not cancelled: a legacy server knows no request before initialize.
  const std::vector<json> lines = up.lines(3);
  REQUIRE(lines.size() >= 3);
  CHECK(lines[0]["method"] == "server/discover");
  CHECK(lines[1]["method"] == "initialize");
  CHECK(up.requests("notifications/cancelled").empty());
}

TEST_CASE(
    "a -32022 naming no version toolmux speaks: the upstream is unavailable, saying both lists") {
  Child up(kModern, {"DISCOVER=unsupported", R"(SUPPORTED=["2027-01-01","2027-06-01"])"});
  const toolmux::Status connected = up.client->connect(5s, 5s);
  CHECK(connected.is_unavailable());
  CHECK(connected.message() ==
        "upstream \"up\" supports the protocol versions 2027-01-01, 2027-06-01 (server/discover "
        "answered -32022 UnsupportedProtocolVersion); toolmux speaks 2026-07-28, 2025-11-25, "
        "2025-06-18, 2025-03-26, 2024-11-05: none in common");
  // It is not taken for a legacy server.
  CHECK(up.requests("initialize").empty());
}

TEST_CASE("a -32022 naming a legacy version falls back to initialize") {
  Child up(kModern, {"DISCOVER=unsupported", R"(SUPPORTED=["2025-06-18"])", "LEGACY=1"});
  REQUIRE(up.client->connect(5s, 5s).ok());
  CHECK(up.client->era() == ProtocolEra::legacy);
  CHECK(up.client->server_info()["name"] == "modern-as-legacy");
}

TEST_CASE("any other error to the probe falls back to initialize") {
  Child up(kModern, {"DISCOVER=error", "LEGACY=1"});
  REQUIRE(up.client->connect(5s, 5s).ok());
  CHECK(up.client->era() == ProtocolEra::legacy);
  CHECK(up.client->legacy_reason() == "server/discover answered an error -32603 (Internal error)");
}

TEST_CASE("a modern-only server slower than the probe is found by initialize's -32022") {
  // The first server/discover is answered after a second: the probe has
  // given up; initialize's -32022 names 2026-07-28, and a second probe finds it.
  Child up(kModern, {"DISCOVER=late"});
  REQUIRE(up.client->connect(5s, 200ms).ok());
  CHECK(up.client->era() == ProtocolEra::modern);
  CHECK(up.requests("server/discover").size() == 2);
  CHECK(up.requests("initialize").size() == 1);
}

// --- Multi round-trip requests (basic/patterns/mrtr.mdx) ---

TEST_CASE(
    "one round of input_required: the client is asked, the retry carries its answer and the "
    "state") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  AskingContext context;
  McpClient::Outcome outcome = up.client->call_tool("ask", {{"q", 1}}, context);
  INFO(outcome.error);
  REQUIRE(outcome.result);
  CHECK(McpClient::tool_result(outcome).structured_content ==
        json::parse(R"({"responses":{"who":{"action":"accept","content":{"name":"Ada who"}}},
                        "state":"state-1"})"));
  // The question, under the upstream's key.
  const std::vector<json> asked = context.questions();
  REQUIRE(asked.size() == 1);
  CHECK(asked[0]["key"] == "who");
  CHECK(asked[0]["method"] == "elicitation/create");
  CHECK(asked[0]["params"]["message"] == "Who?");
  // The retry: a new id, the same arguments, the answers, the state as it came.
  const std::vector<json> calls = up.requests("tools/call", 2);
  REQUIRE(calls.size() == 2);
  CHECK(calls[0]["id"] != calls[1]["id"]);
  CHECK_FALSE(calls[0]["params"].contains("inputResponses"));
  CHECK(calls[1]["params"]["arguments"] == json{{"q", 1}});
  CHECK(calls[1]["params"]["requestState"] == "state-1");
  CHECK(has_modern_meta(calls[1]));
}

TEST_CASE("two rounds of input_required: each answered, each retry with that round's state") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  AskingContext context;
  McpClient::Outcome outcome = up.client->call_tool("ask_twice", json::object(), context);
  INFO(outcome.error);
  REQUIRE(outcome.result);
  CHECK(McpClient::tool_result(outcome).structured_content["responses"] ==
        json::parse(R"({"second":{"action":"accept","content":{"name":"Ada second"}}})"));
  const std::vector<json> calls = up.requests("tools/call", 3);
  REQUIRE(calls.size() == 3);
  CHECK(calls[1]["params"]["requestState"] == "after-first");
  CHECK(calls[1]["params"]["inputResponses"].contains("first"));
  CHECK(calls[2]["params"]["requestState"] == "after-second");
  CHECK_FALSE(calls[2]["params"]["inputResponses"].contains("first"));
  CHECK(context.questions().size() == 2);
}

TEST_CASE("a request still asking after kMaxInputRounds rounds fails, naming the limit") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  AskingContext context;
  McpClient::Outcome outcome = up.client->call_tool("ask_forever", json::object(), context);
  CHECK(outcome.failure == McpClient::Failure::error);
  const ToolResult result = McpClient::tool_result(outcome);
  CHECK(result.is_error);
  CHECK(result.content[0]["text"] ==
        "upstream \"up\" still asked for input after 8 rounds of tools/call; toolmux relays at "
        "most 8");
  CHECK(context.questions().size() == 8);
  CHECK(up.requests("tools/call", 9).size() == 9);
}

TEST_CASE("a client that answers in a retry of its call stops the relay at once") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  AskingContext context;
  context.pending = true;
  const auto before = Clock::now();
  McpClient::Outcome outcome = up.client->call_tool("ask", json::object(), context);
  CHECK(Clock::now() - before < 5s);
  CHECK(outcome.failure == McpClient::Failure::cancelled);
  CHECK(outcome.error ==
        "tools/call to upstream \"up\" waits for its client's input, which comes with a retry of "
        "the call");
  CHECK(context.questions().size() == 1);
  std::this_thread::sleep_for(200ms);
  CHECK(up.requests("tools/call").size() == 1);  // no retry upstream: the client's retry makes it
}

TEST_CASE("a question needing a capability the client did not declare fails the call with -32021") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  AskingContext context(json{{"elicitation", json::object()}});  // no sampling
  McpClient::Outcome outcome = up.client->call_tool("ask_sampling", json::object(), context);
  CHECK(outcome.failure == McpClient::Failure::error);
  CHECK(outcome.error_object["code"] == -32021);
  CHECK(outcome.error_object["data"] == json::parse(R"({"requiredCapabilities":{"sampling":{}}})"));
  CHECK(outcome.error ==
        "upstream \"up\" asked for sampling/createMessage (\"llm\"), but the client did not "
        "declare the sampling capability");
  CHECK(context.questions().empty());
  // Told what the client declares, the upstream could have known.
  const std::vector<json> calls = up.requests("tools/call", 1);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] ==
        json::parse(R"({"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}})"));
}

TEST_CASE(
    "a client that does not answer before the call's deadline ends it, not the upstream's fault") {
  // (Failure::cancelled: the circuit breaker counts it neither way.)
  struct SlowToAnswer : AskingContext {
    SlowToAnswer() : AskingContext(json{{"elicitation", json::object()}}, 500ms) {}
    ClientAnswer ask_client(const std::string&, const json&, const std::stop_token&,
                            const std::string&) override {
      while (!cancelled()) std::this_thread::sleep_for(10ms);
      return {std::nullopt, "the call's deadline passed", false};
    }
  };
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  SlowToAnswer context;
  McpClient::Outcome outcome = up.client->call_tool("ask", json::object(), context);
  CHECK(outcome.failure == McpClient::Failure::cancelled);
  CHECK(outcome.error ==
        "tools/call to upstream \"up\" timed out while its client was asked for input");
  CHECK(up.requests("tools/call").size() == 1);
}

TEST_CASE("a resultType toolmux does not know fails the request, naming it") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  AskingContext context;
  McpClient::Outcome outcome = up.client->call_tool("odd_type", json::object(), context);
  CHECK(outcome.failure == McpClient::Failure::invalid);
  CHECK(outcome.error ==
        "upstream \"up\" answered tools/call with resultType \"deferred\", which toolmux does not "
        "know");
}

// --- Cancellation and progress across eras ---

TEST_CASE(
    "a modern request over stdio gets its progress and is cancelled with notifications/cancelled") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  TestContext context;
  std::thread canceller([&] {
    eventually([&] { return !context.progress().empty(); }, 5s);
    context.cancel = true;
  });
  McpClient::Outcome outcome = up.client->call_tool("slow", json::object(), context);
  canceller.join();
  CHECK(outcome.failure == McpClient::Failure::cancelled);
  REQUIRE(context.progress().size() == 1);
  CHECK(context.progress()[0].message == "one");
  const std::vector<json> calls = up.requests("tools/call", 1);
  const std::vector<json> cancelled = up.requests("notifications/cancelled", 1);
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0]["params"]["requestId"] == calls[0]["id"]);
}

TEST_CASE(
    "a legacy upstream's question to a client that answers in a retry ends the call at once") {
  // The 2026-07-28 client gets the question in its call's answer; the
  // upstream call is cancelled, and its question answered with an error
  // that says why.
  Child up(kScripted);
  REQUIRE(up.client->connect(5s, 5s).ok());
  AskingContext context;
  context.pending = true;
  const auto before = Clock::now();
  McpClient::Outcome outcome = up.client->call_tool("asks_and_waits", json::object(), context);
  CHECK(Clock::now() - before < 5s);
  CHECK(outcome.failure == McpClient::Failure::cancelled);
  CHECK(outcome.error ==
        "tools/call to upstream \"up\" was stopped: its client answers the upstream's question in "
        "a retry of the call");
  REQUIRE(context.questions().size() == 1);
  CHECK(context.questions()[0]["method"] == "elicitation/create");
  const std::vector<json> calls = up.requests("tools/call", 1);
  const std::vector<json> cancelled = up.requests("notifications/cancelled", 1);
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0]["params"]["requestId"] == calls[0]["id"]);
  // The upstream's request got its answer: an error naming why.
  json answer;
  eventually(
      [&] {
        for (const json& line : up.lines()) {
          if (line.value("id", json()) == "ask-w") answer = line;
        }
        return !answer.is_null();
      },
      5s);
  CHECK(answer["error"]["message"] ==
        "toolmux's client answers elicitation/create in a retry of its call (2026-07-28 "
        "protocol); this call is cancelled");
}

// --- subscriptions/listen (basic/patterns/subscriptions.mdx) ---

TEST_CASE("a modern upstream's list changes come through subscriptions/listen") {
  Child up(kModern);
  REQUIRE(up.client->connect(5s, 5s).ok());
  std::atomic<int> ended{0};
  up.client->listen({{"toolsListChanged", true}}, [&](const std::string&, bool) { ++ended; });
  const std::vector<json> listens = up.requests("subscriptions/listen", 1);
  REQUIRE(listens.size() == 1);
  CHECK(has_modern_meta(listens[0]));
  CHECK(listens[0]["params"]["notifications"] == json{{"toolsListChanged", true}});

  TestContext context;
  REQUIRE(up.client->call_tool("change", json::object(), context).result);
  CHECK(eventually([&] { return up.notified("notifications/tools/list_changed") == 1; }));
  // The acknowledgment is the client's own business.
  CHECK(up.notified("notifications/subscriptions/acknowledged") == 0);

  // A new subscription ends the one before, upstream too; notifications of
  // the old one no longer count.
  up.client->listen({{"toolsListChanged", true}, {"resourceSubscriptions", {"file:///a"}}},
                    [&](const std::string&, bool) { ++ended; });
  const std::vector<json> cancelled = up.requests("notifications/cancelled", 1);
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0]["params"]["requestId"] == listens[0]["id"]);
  CHECK(up.requests("subscriptions/listen", 2).size() == 2);
  up.client->end_listen();
  CHECK(up.requests("notifications/cancelled", 2).size() == 2);
  CHECK(ended == 0);  // ended by toolmux: not reported
}
