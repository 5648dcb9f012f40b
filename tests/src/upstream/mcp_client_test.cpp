// McpClient against real child processes: a scripted server
// (tests/data/upstreams/scripted.sh) for what the npm servers of the e2e tests
// do not do (tools/list in pages, a JSON-RPC error to tools/call), and a
// command that exits at once; and a server that misbehaves on purpose
// (tests/data/upstreams/misbehaving.sh): client requests before its result, a
// log flood, results MCP does not allow, answers the boundary refuses.
// tests/e2e/upstreams.test.mjs covers the rest with real upstreams.
#include "src/upstream/mcp_client.h"

#include "transports/stdio_child_transport.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stop_token>
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
  auto transport = StdioChildTransport::start(command, nullptr);
  INFO(transport.message());
  REQUIRE(transport.ok());
  return McpClient::create("scripted", std::move(transport).value(), logger);
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
  REQUIRE(client->initialize(5s).ok());
  CHECK(client->server_info()["name"] == "scripted");
  auto tools = client->list_tools(5s);
  INFO(tools.message());
  REQUIRE(tools.ok());
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
  REQUIRE(up.client->initialize(5s).ok());
  CHECK(eventually_contains(up.received(),
                            R"("method":"logging/setLevel","params":{"level":"debug"})"));
}

TEST_CASE("a relayed call returns the upstream's result, and its error as an error result") {
  Upstream up;
  auto& client = up.client;
  REQUIRE(client->initialize(5s).ok());
  TestContext context;
  ToolResult result = McpClient::tool_result(client->call_tool("any", {{"x", 1}}, context));
  CHECK_FALSE(result.is_error);
  CHECK_FALSE(result.from_toolmux);
  CHECK(result.content == json::parse(R"([{"type":"text","text":"called"}])"));
  CHECK(result.structured_content == json{{"ok", true}});
  CHECK(eventually_contains(up.received(), R"("arguments":{"x":1})"));

  ToolResult failed = McpClient::tool_result(client->call_tool("fails", json::object(), context));
  CHECK(failed.is_error);
  CHECK(failed.from_toolmux);  // toolmux's words: never spotlighted as the tool's
  CHECK(failed.content[0]["text"] ==
        "upstream \"scripted\" answered tools/call with an error: no such tool (code -32602)");
}

TEST_CASE("progress reaches the call's context and cancelling sends notifications/cancelled") {
  Upstream up;
  auto& client = up.client;
  REQUIRE(client->initialize(5s).ok());
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
  REQUIRE(client->initialize(5s).ok());
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
  const toolmux::Status initialized = client->initialize(5s);
  CHECK(initialized.message() == "upstream \"scripted\" exited with status 4");
  CHECK(initialized.is_unavailable());
  CHECK(client->gone());
  TestContext context;
  ToolResult result = McpClient::tool_result(client->call_tool("any", json::object(), context));
  CHECK(result.is_error);
  CHECK(result.content[0]["text"] == "upstream \"scripted\" exited with status 4");
}

// --- A misbehaving upstream (tests/data/upstreams/misbehaving.sh) ---

namespace {

const fs::path kMisbehaving = fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "misbehaving.sh";

// An initialized client of the misbehaving server whose log goes to a file
// the test reads. `max_message_bytes` bounds one line of its stdout.
struct Misbehaving {
  TempDir dir;
  std::FILE* log_file = std::tmpfile();
  Logger logger{log_file};
  std::shared_ptr<McpClient> client;

  explicit Misbehaving(std::size_t max_message_bytes = std::size_t{64} << 20) {
    ChildCommand command;
    command.argv = {kMisbehaving.string()};
    command.env = {"PATH=/usr/bin:/bin", "RECEIVED=" + received().string()};
    command.max_message_bytes = max_message_bytes;
    auto transport = StdioChildTransport::start(command, nullptr);
    REQUIRE(transport.ok());
    client = McpClient::create("misbehaving", std::move(transport).value(), logger);
    REQUIRE(client->initialize(5s).ok());
  }
  ~Misbehaving() {
    client.reset();
    std::fclose(log_file);
  }
  fs::path received() const { return dir.path() / "received"; }
  // The log lines so far whose event is `event`.
  std::vector<json> log_lines(const std::string& event) {
    std::fflush(log_file);
    std::rewind(log_file);
    std::vector<json> lines;
    std::string line;
    for (int c = std::fgetc(log_file); c != EOF; c = std::fgetc(log_file)) {
      if (c != '\n') {
        line += static_cast<char>(c);
        continue;
      }
      json parsed = json::parse(line);
      if (parsed["event"] == event) lines.push_back(std::move(parsed));
      line.clear();
    }
    std::fseek(log_file, 0, SEEK_END);
    return lines;
  }
  // The text of a call's answer as toolmux returns it (the error when it failed).
  std::string answer(const std::string& tool, McpClient::Failure expected,
                     std::chrono::milliseconds timeout = 5s) {
    TestContext context(timeout);
    McpClient::Outcome outcome = client->call_tool(tool, json::object(), context);
    INFO(tool << ": " << outcome.error);
    CHECK(outcome.failure == expected);
    ToolResult result = McpClient::tool_result(outcome);
    CHECK(result.is_error == (expected != McpClient::Failure::none));
    REQUIRE(!result.content.empty());
    return result.content[0].value("text", std::string("(not text)"));
  }
};

// A client that keeps the log messages it is sent.
struct LoggingContext : TestContext {
  using TestContext::TestContext;
  std::mutex mutex;
  std::vector<std::pair<LogLevel, json>> logs;
  void log(LogLevel level, const json& data) override {
    std::lock_guard lock(mutex);
    logs.emplace_back(level, data);
  }
};

// A client that answers sampling only once the test lets it (or the relay
// gives up): slower than the call.
struct SlowClient : TestContext {
  using TestContext::TestContext;
  std::atomic<int> asked{0};
  std::atomic<bool> may_answer{false};
  ClientAnswer ask_client(const std::string& /*method*/, const json& /*params*/,
                          const std::stop_token& stop, const std::string& /*key*/) override {
    ++asked;
    while (!may_answer && !cancelled() && !stop.stop_requested()) {
      std::this_thread::sleep_for(5ms);
    }
    if (!may_answer) return {std::nullopt, "no answer", false};
    return {json{{"role", "assistant"}, {"content", {{"type", "text"}, {"text", "hm"}}}}, "",
            false};
  }
};

}  // namespace

TEST_CASE("a call's result is not held up by the client request the upstream sent before it") {
  // A client that keeps the log messages it is sent.
  struct LoggingContext : TestContext {
    using TestContext::TestContext;
    std::mutex mutex;
    std::vector<std::pair<LogLevel, json>> logs;
    void log(LogLevel level, const json& data) override {
      std::lock_guard lock(mutex);
      logs.emplace_back(level, data);
    }
  };

  // A client that answers sampling only once the test lets it, after the
  // call has returned: what toolmux relayed for the call must not hold the
  // call's answer back (nor the progress sent meanwhile).
  Misbehaving up;
  SlowClient context(10s);
  McpClient::Outcome outcome = up.client->call_tool("asks_first", json::object(), context);
  context.may_answer = true;
  INFO(outcome.error);
  REQUIRE(outcome.result);
  CHECK((*outcome.result)["content"][0]["text"] == "answered");
  CHECK(std::chrono::steady_clock::now() < context.deadline());
  CHECK(context.asked == 1);
  CHECK(context.progress().size() == 1);
  // The upstream's request is answered all the same (with an error: the call
  // it came with has ended).
  CHECK(eventually_contains(up.received(), R"("id":"sampling-1")"));
}

TEST_CASE("at most kMaxRelayedRequests of an upstream's requests wait for the client at once") {
  Misbehaving up;
  SlowClient context(10s);
  McpClient::Outcome outcome = up.client->call_tool("asks_many", json::object(), context);
  INFO(outcome.error);
  REQUIRE(outcome.result);
  CHECK((*outcome.result)["content"][0]["text"] == "asked");
  CHECK(context.asked <= McpClient::kMaxRelayedRequests);
  // The other two were refused at once, saying why.
  const std::string refusal =
      "toolmux relays at most 8 requests from an upstream to its client "
      "at once; sampling/createMessage was refused";
  CHECK(eventually_contains(up.received(), refusal));
  std::this_thread::sleep_for(100ms);
  const std::string received = read_file(up.received());
  std::size_t refusals = 0;
  for (auto at = received.find(refusal); at != std::string::npos;
       at = received.find(refusal, at + 1)) {
    ++refusals;
  }
  CHECK(refusals == 2);
}

TEST_CASE("an upstream result that breaks MCP's shape or the JSON boundary is an error naming it") {
  Misbehaving up;
  using F = McpClient::Failure;
  const std::string shape =
      "upstream \"misbehaving\" answered tools/call with a result MCP does not allow: ";
  const std::string refused =
      "upstream \"misbehaving\" answered tools/call with a message toolmux refuses: ";
  CHECK(up.answer("text_not_string", F::invalid) ==
        shape + "/content/0/text must be a string (it is a number)");
  CHECK(up.answer("structured_string", F::invalid) ==
        shape + "/structuredContent must be an object (it is a string)");
  CHECK(up.answer("is_error_yes", F::invalid) ==
        shape + "/isError must be a boolean (it is a string)");
  CHECK(up.answer("repeated_key", F::invalid) ==
        refused + "/result/content/0/text: repeated object key \"text\"");
  CHECK(up.answer("bad_utf8", F::invalid) ==
        refused + "/result/content/0/text: invalid UTF-8 in string");
  CHECK_THAT(up.answer("deep", F::invalid),
             Catch::StartsWith(refused + "/result/structuredContent/deep/0/0/") &&
                 Catch::EndsWith(": nested deeper than 256 levels"));
  // The upstream is still served.
  CHECK(up.answer("fine", F::none) == "fine");
}

TEST_CASE("an answer the boundary parser refuses fails its call at once, naming why") {
  using F = McpClient::Failure;
  const std::string refused =
      "upstream \"misbehaving\" answered tools/call with a message toolmux refuses: ";
  SECTION("nested too deep to parse: the id is still read") {
    Misbehaving up;
    CHECK_THAT(up.answer("too_deep", F::invalid),
               Catch::StartsWith(refused + "not JSON: nested deeper than 1024 levels at byte "));
    CHECK(up.answer("fine", F::none) == "fine");
  }
  SECTION("cut short: the id is still read") {
    Misbehaving up;
    CHECK_THAT(up.answer("truncated", F::invalid),
               Catch::StartsWith(refused + "not JSON: unterminated string at byte "));
    CHECK(up.answer("fine", F::none) == "fine");
  }
  SECTION("not JSON at all: every request in flight fails") {
    Misbehaving up;
    CHECK(up.answer("not_json", F::invalid) ==
          "upstream \"misbehaving\" sent a message toolmux cannot read while tools/call waited "
          "for its answer (not JSON: invalid literal at byte 0); it may have been that answer, so "
          "the request fails");
    CHECK(up.answer("fine", F::none) == "fine");
  }
  SECTION("over the transport's size limit: every request in flight fails") {
    Misbehaving up(std::size_t{1} << 20);
    CHECK(up.answer("oversized", F::invalid) ==
          "upstream \"misbehaving\" sent a message toolmux cannot read while tools/call waited "
          "for its answer (a message over the limit of 1048576 bytes); it may have been that "
          "answer, so the request fails");
    CHECK(up.answer("fine", F::none) == "fine");
  }
}

TEST_CASE("a flood of log messages is cut to a rate, counted, and does not delay the answer") {
  Misbehaving up;
  LoggingContext context(30s);
  McpClient::Outcome outcome = up.client->call_tool("floods", json::object(), context);
  INFO(outcome.error);
  REQUIRE(outcome.result);
  CHECK((*outcome.result)["content"][0]["text"] == "survived");

  // 100000 sent: a burst and a rate's worth pass; the rest are counted.
  const std::vector<json> logged = up.log_lines("upstream_log");
  CHECK(static_cast<double>(logged.size()) >= McpClient::kLogBurst);
  CHECK(logged.size() < 2000);
  std::uint64_t dropped = 0;
  for (const json& line : up.log_lines("upstream_log_dropped")) {
    dropped += line["dropped"].get<std::uint64_t>();
    CHECK_THAT(line["message"].get<std::string>(),
               Catch::Matches("dropped [0-9]+ log messages from upstream \"misbehaving\" \\(over "
                              "50 a second, in bursts of 200\\)"));
  }
  CHECK(logged.size() + dropped == 100000);

  // The calling client got as many, and was told of the rest.
  std::lock_guard lock(context.mutex);
  std::size_t relayed = 0;
  std::uint64_t told = 0;
  for (const auto& [level, data] : context.logs) {
    if (data == "flood") ++relayed;
    if (data.is_object() && data.value("event", "") == "upstream_log_dropped") {
      CHECK(level == LogLevel::warning);
      told += data["dropped"].get<std::uint64_t>();
    }
  }
  CHECK(relayed == logged.size());
  CHECK(relayed + told == 100000);
}

TEST_CASE("a long log message reaches the client whole, and toolmux's log cut") {
  Misbehaving up;
  LoggingContext context(10s);
  McpClient::Outcome outcome = up.client->call_tool("logs_big", json::object(), context);
  REQUIRE(outcome.result);
  const std::string data(10000, 'a');
  {
    std::lock_guard lock(context.mutex);
    REQUIRE(context.logs.size() == 1);
    CHECK(context.logs[0].second == data);
  }
  const std::vector<json> logged = up.log_lines("upstream_log");
  REQUIRE(logged.size() == 1);
  // The first 4096 bytes of its JSON text ("aaa...), then "...".
  CHECK(logged[0]["data"] == "\"" + data.substr(0, McpClient::kMaxLoggedData - 1) + "...");
}

TEST_CASE(
    "an upstream's -32021 reaches the client as that protocol error, naming what is missing") {
  McpClient::Outcome outcome;
  outcome.failure = McpClient::Failure::error;
  outcome.error = "upstream \"u\" answered tools/call with an error";
  outcome.error_object = {{"code", -32021},
                          {"message", "Missing required client capability"},
                          {"data", {{"requiredCapabilities", {{"sampling", json::object()}}}}}};
  try {
    McpClient::tool_result(outcome);
    FAIL("no MissingClientCapability thrown");
  } catch (const MissingClientCapability& e) {
    CHECK(e.missing() == json{{"sampling", json::object()}});
  }
  // Any other error is the tool's error, as before.
  outcome.error_object["code"] = -32603;
  CHECK(McpClient::tool_result(outcome).is_error);
}
