#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "src/protocol/mcp_server.h"
#include "tests/support/modern_greeting.h"
#include "tests/support/test_tools.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Fixture {
  explicit Fixture(std::size_t page_size = 0, CallLimits limits = {},
                   std::shared_ptr<Catalog> catalog = make_test_catalog()) {
    ServerOptions options;
    options.page_size = page_size;
    options.call_limits = limits;
    server = std::make_unique<McpServer>(std::move(catalog), options, logger, metrics);
  }
  ~Fixture() {
    session->cancel_all_calls();
    session->wait_for_calls(std::chrono::seconds(2));
    server->wait_for_running_tools(std::chrono::seconds(2));
    std::fclose(log_file);
  }

  json request(const json& id, const std::string& method, json params = json::object()) {
    handle(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump());
    return sink.response(id);
  }

  // A message's text, read as the stdio transport reads it, to the server.
  void handle(std::string_view text) {
    server->handle(jsonrpc::parse_message(text, server->json_limits()), session);
  }

  void initialize(const std::string& version = "2025-11-25", json capabilities = json::object()) {
    json r = request("init", "initialize",
                     {{"protocolVersion", version},
                      {"capabilities", std::move(capabilities)},
                      {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
    REQUIRE(r.contains("result"));
    handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }
  // A client that can be asked to confirm a call (elicitation).
  void initialize_confirming() { initialize("2025-11-25", {{"elicitation", json::object()}}); }

  // The human's yes, with `rationale`, to the elicitation request `asked`.
  void approve(const json& asked, const std::string& rationale) {
    handle(json{{"jsonrpc", "2.0"},
                {"id", asked["id"]},
                {"result",
                 {{"action", "accept"},
                  {"content", {{"approve", true}, {"approver", "Ada"}, {"rationale", rationale}}}}}}
               .dump());
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
  f.handle("{not json");
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
  f.handle(
      R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}})");
  json r = f.sink.response(8);
  CHECK(r["result"]["isError"] == true);
  CHECK_THAT(r["result"]["content"][0]["text"].get<std::string>(),
             Catch::Contains("repeated object key \"text\""));

  f.handle(R"({"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":1,"a":2}})");
  CHECK(f.sink.response(9)["error"]["code"] == -32600);
}

TEST_CASE("ping is answered while a slow call runs, and a cancelled call gets no response") {
  Fixture f;
  f.initialize();
  f.handle(
      R"({"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slow","arguments":{"ms":250},"_meta":{"progressToken":"p1"}}})");
  const auto start = Clock::now();
  CHECK(f.request(20, "ping").contains("result"));
  CHECK(Clock::now() - start < std::chrono::milliseconds(100));
  // Progress is sent for the token while the tool runs.
  REQUIRE(f.sink.wait_for_notification("notifications/progress"));

  f.handle(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1"}})");
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
  f.handle(call);
  f.handle(call);
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

namespace {

json call_request(const json& id, const std::string& tool, const json& arguments) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "tools/call"},
          {"params", {{"name", tool}, {"arguments", arguments}}}};
}

// The test tools, "nap" {ms}: sleeps `ms` or until told to stop, with a 10 s
// timeout; "stubborn" {ms}: sleeps `ms` whatever it is told (a handler that
// ignores its deadline), with a 100 ms timeout; and "note" {}, a
// local_mutation that counts its runs in `notes` (when given).
std::shared_ptr<Catalog> catalog_for_limits(std::atomic<int>* notes = nullptr) {
  auto registry = make_test_registry();
  ToolSpec note = spec("note", object_schema());
  note.side_effect = "local_mutation";
  REQUIRE(registry
              ->add(note,
                    [notes](const json&, CallContext&) {
                      if (notes) ++*notes;
                      return ToolResult::text("noted");
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("nap", object_schema({{"ms", {{"type", "integer"}}}}, {"ms"}), 10000),
                    [](const json& args, CallContext& ctx) {
                      const auto until = std::chrono::steady_clock::now() +
                                         std::chrono::milliseconds(args["ms"].get<int>());
                      while (std::chrono::steady_clock::now() < until && !ctx.cancelled()) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(5));
                      }
                      return ToolResult::text("rested");
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("stubborn", object_schema({{"ms", {{"type", "integer"}}}}, {"ms"}), 100),
                    [](const json& args, CallContext&) {
                      std::this_thread::sleep_for(std::chrono::milliseconds(args["ms"].get<int>()));
                      return ToolResult::text("finally");
                    })
              .empty());
  return make_test_catalog(registry);
}

bool eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 500 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

}  // namespace

TEST_CASE("calls past the limits wait their turn, and past the queue get a busy error at once") {
  Fixture f(0, CallLimits{2, 2, 1}, catalog_for_limits());
  f.initialize();
  for (int i = 1; i <= 4; ++i) {
    f.handle(call_request(i, "nap", {{"ms", 200}}).dump());
  }
  // The 4th finds 2 calls running and 1 queued: refused at once.
  json busy = f.sink.response(4, std::chrono::milliseconds(100));
  REQUIRE_FALSE(busy.is_null());
  CHECK(busy["error"]["code"] == -32000);
  CHECK(busy["error"]["message"] ==
        "toolmux is busy: 2 calls running (--max-calls 2) and 1 calls queued "
        "(--max-queued-calls 1); try again later");
  CHECK(f.request(5, "ping").contains("result"));
  for (int i = 1; i <= 3; ++i) {
    json r = f.sink.response(i);
    INFO(r.dump());
    CHECK(r["result"]["content"][0]["text"] == "rested");
  }
  CHECK_THAT(f.metrics.render_prometheus(), Catch::Contains("toolmux_calls_refused_total 1\n"));
}

TEST_CASE("resources/..., prompts/... and completion go through the same admission") {
  Fixture f(0, CallLimits{1, 1, 0}, catalog_for_limits());
  f.initialize();
  f.handle(call_request(1, "nap", {{"ms", 300}}).dump());
  json refused = f.request(2, "resources/list");
  CHECK(refused["error"]["code"] == -32000);
  CHECK_THAT(refused["error"]["message"].get<std::string>(),
             Catch::StartsWith("toolmux is busy: 1 calls running (--max-calls 1)"));
  CHECK(f.sink.response(1)["result"]["content"][0]["text"] == "rested");
  // The place frees once the call's threads have let go, a moment after its answer.
  REQUIRE(eventually([&] {
    return f.metrics.render_prometheus().find("toolmux_calls_running 0\n") != std::string::npos;
  }));
  CHECK(f.request(3, "resources/list").contains("result"));
}

TEST_CASE("a queued call that is cancelled gets no response and frees its place in the queue") {
  Fixture f(0, CallLimits{1, 1, 1}, catalog_for_limits());
  f.initialize();
  f.handle(call_request("running", "nap", {{"ms", 500}}).dump());
  f.handle(call_request("queued", "echo", {{"text", "never"}}).dump());
  CHECK_THAT(f.metrics.render_prometheus(), Catch::Contains("toolmux_calls_queued 1\n"));
  f.handle(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"queued"}})");
  REQUIRE(eventually([&] {
    return f.metrics.render_prometheus().find("toolmux_calls_queued 0\n") != std::string::npos;
  }));
  // Its place in the queue is free: the next call waits there, and runs in its turn.
  json next =
      f.request("next", "tools/call", {{"name", "echo"}, {"arguments", {{"text", "next"}}}});
  CHECK(next["result"]["content"][0]["text"] == "next");
  CHECK(f.sink.response("running")["result"]["content"][0]["text"] == "rested");
  CHECK(f.sink.response("queued", std::chrono::milliseconds(200)).is_null());
  CHECK(f.session->wait_for_calls(std::chrono::seconds(2)));
}

TEST_CASE("a handler that ignores its deadline keeps its place until it stops") {
  Fixture f(0, CallLimits{1, 1, 4}, catalog_for_limits());
  f.initialize();
  const auto start = Clock::now();
  json stuck = f.request(1, "tools/call", {{"name", "stubborn"}, {"arguments", {{"ms", 800}}}});
  CHECK(stuck["result"]["isError"] == true);
  CHECK(stuck["result"]["content"][0]["text"] == "Tool \"stubborn\" timed out after 100 ms");
  CHECK(stuck["result"]["_meta"] == json{{"io.toolmux/outcome", "timed_out"}});
  // Answered, but its handler still runs: the next call waits for it.
  json next = f.request(2, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "after"}}}});
  CHECK(next["result"]["content"][0]["text"] == "after");
  CHECK(Clock::now() - start >= std::chrono::milliseconds(700));
}

TEST_CASE("a call that waits past its tool's timeout is answered as timed out, saying why") {
  Fixture f(0, CallLimits{1, 1, 4}, catalog_for_limits());
  f.initialize();
  f.handle(call_request(1, "nap", {{"ms", 400}}).dump());
  // stubborn's 100 ms pass while nap holds the only place.
  json r = f.request(2, "tools/call", {{"name", "stubborn"}, {"arguments", {{"ms", 0}}}});
  CHECK(r["result"]["isError"] == true);
  CHECK(r["result"]["content"][0]["text"] ==
        "Tool \"stubborn\" timed out after 100 ms waiting for a place to run; toolmux was "
        "busy: 1 calls running (--max-calls 1)");
  CHECK(r["result"]["_meta"] == json{{"io.toolmux/outcome", "timed_out"}});
  CHECK(f.sink.response(1)["result"]["content"][0]["text"] == "rested");
  CHECK_FALSE(f.sink.response(1)["result"].contains("_meta"));
  CHECK(f.metrics.calls("stubborn", "timed_out") == 1);
}

TEST_CASE("calls stopped because toolmux exits are answered with an error saying so") {
  Fixture f(0, CallLimits{1, 1, 4}, catalog_for_limits());
  f.initialize();
  f.handle(call_request("running", "nap", {{"ms", 5000}}).dump());
  f.handle(call_request("queued", "echo", {{"text", "x"}}).dump());
  f.session->abort_all_calls();
  json running = f.sink.response("running");
  CHECK(running["result"]["isError"] == true);
  CHECK(running["result"]["content"][0]["text"] ==
        "Tool \"nap\" was stopped before it finished: toolmux is exiting");
  CHECK(running["result"]["_meta"] == json{{"io.toolmux/outcome", "stopped"}});
  json queued = f.sink.response("queued");
  CHECK(queued["result"]["isError"] == true);
  CHECK(queued["result"]["content"][0]["text"] == "Tool \"echo\" did not run: toolmux is exiting");
  CHECK(queued["result"]["_meta"] == json{{"io.toolmux/outcome", "stopped"}});
  CHECK(f.session->wait_for_calls(std::chrono::seconds(2)));
}

TEST_CASE("a call delivered by a thread that may carry it is answered before handle returns") {
  Fixture f;
  f.initialize();
  f.server->handle(jsonrpc::parse_message(call_request("carried", "slow", {{"ms", 50}}).dump()),
                   f.session, Carrier::carry);
  // Already there: the delivering thread ran the call.
  CHECK(f.sink.response("carried", std::chrono::milliseconds(0))["result"]["content"][0]["text"] ==
        "done");

  // Handed off, the same call is still running when handle returns.
  f.server->handle(jsonrpc::parse_message(call_request("handed", "slow", {{"ms", 200}}).dump()),
                   f.session, Carrier::hand_off);
  CHECK(f.sink.response("handed", std::chrono::milliseconds(0)).is_null());
  CHECK(f.sink.response("handed")["result"]["content"][0]["text"] == "done");
}

TEST_CASE("the stdio reader runs a call itself only when its tool says runs_on_reader") {
  auto registry = make_test_registry();
  auto ran_on = std::make_shared<std::thread::id>();
  auto record_thread = [ran_on](const json&, CallContext&) {
    *ran_on = std::this_thread::get_id();
    return ToolResult::text("here");
  };
  ToolSpec instant = spec("instant", object_schema());
  instant.returns_by_deadline = true;
  instant.runs_on_reader = true;
  REQUIRE(registry->add(instant, record_thread).empty());
  ToolSpec unmarked = spec("unmarked", object_schema());
  unmarked.returns_by_deadline = true;
  REQUIRE(registry->add(unmarked, record_thread).empty());
  Fixture f(0, {}, make_test_catalog(registry));
  f.initialize();

  f.server->handle(jsonrpc::parse_message(call_request("a", "instant", json::object()).dump()),
                   f.session, Carrier::reader);
  // Answered before handle returned, on this thread: no hand-off.
  CHECK(f.sink.response("a", std::chrono::milliseconds(0))["result"]["content"][0]["text"] ==
        "here");
  CHECK(*ran_on == std::this_thread::get_id());

  f.server->handle(jsonrpc::parse_message(call_request("b", "unmarked", json::object()).dump()),
                   f.session, Carrier::reader);
  CHECK(f.sink.response("b")["result"]["content"][0]["text"] == "here");
  CHECK(*ran_on != std::this_thread::get_id());
}

TEST_CASE("the stdio reader hands off a runs_on_reader call that a human must confirm first") {
  auto registry = make_test_registry();
  ToolSpec instant = spec("instant", object_schema());
  instant.returns_by_deadline = true;
  instant.runs_on_reader = true;
  REQUIRE(registry->add(instant, [](const json&, CallContext&) { return ToolResult::text("here"); })
              .empty());
  auto catalog = make_test_catalog(registry);
  catalog->policy.confirm.rule.tools["instant"] = true;
  Fixture f(0, {}, catalog);
  f.initialize_confirming();

  f.server->handle(jsonrpc::parse_message(call_request("asked", "instant", json::object()).dump()),
                   f.session, Carrier::reader);
  // The human is asked (the reader is free to read the answer), not refused.
  REQUIRE(f.sink.wait_for_notification("elicitation/create"));
  f.approve(f.sink.notifications("elicitation/create").front(), "fine");
  json r = f.sink.response("asked");
  INFO(r.dump());
  CHECK(r["result"]["content"][0]["text"] == "here");
}

TEST_CASE("a carried call that must wait for a place is handed off, not run by the deliverer") {
  Fixture f(0, CallLimits{1, 1, 4}, catalog_for_limits());
  f.initialize();
  f.handle(call_request("running", "nap", {{"ms", 300}}).dump());
  // No place: queued, so handle returns at once and the call runs when one frees.
  const auto start = Clock::now();
  f.server->handle(jsonrpc::parse_message(call_request("queued", "echo", {{"text", "x"}}).dump()),
                   f.session, Carrier::carry);
  CHECK(Clock::now() - start < std::chrono::milliseconds(250));
  CHECK(f.sink.response("queued")["result"]["content"][0]["text"] == "x");
}

TEST_CASE(
    "a call that may need the client while it runs is handed off even when it could be "
    "carried") {
  auto deliver_slow = [](Fixture& f, const json& id, json params) {
    f.server->handle(jsonrpc::parse_message(json{
                         {"jsonrpc", "2.0"},
                         {"id", id},
                         {"method", "tools/call"},
                         {"params", params}}.dump()),
                     f.session, Carrier::carry);
  };
  SECTION("it asked for progress") {
    Fixture f;
    f.initialize();
    deliver_slow(
        f, "p",
        {{"name", "slow"}, {"arguments", {{"ms", 200}}}, {"_meta", {{"progressToken", "t"}}}});
    CHECK(f.sink.response("p", std::chrono::milliseconds(0)).is_null());
    CHECK(f.sink.wait_for_notification("notifications/progress"));
    CHECK(f.sink.response("p")["result"]["content"][0]["text"] == "done");
  }
  SECTION("its client may be asked (elicitation)") {
    Fixture f;
    f.initialize_confirming();
    deliver_slow(f, "e", {{"name", "slow"}, {"arguments", {{"ms", 200}}}});
    CHECK(f.sink.response("e", std::chrono::milliseconds(0)).is_null());
    CHECK(f.sink.response("e")["result"]["content"][0]["text"] == "done");
  }
}

namespace {

// Serves the catalog serving now under a write freeze, as a reload after
// `toolmux freeze on --reason maintenance` does; and what a call of note gets then.
void freeze_writes(McpServer& server) {
  auto frozen = std::make_shared<Catalog>(*server.catalog());
  frozen->write_freeze = "maintenance";
  server.replace_catalog(frozen);
}
const std::string kNoteFrozen =
    "Tool \"note\" did not run: writes are frozen, only read_only tools run, and this one is "
    "local_mutation (maintenance)";

}  // namespace

TEST_CASE("a mutation queued when the write freeze goes on is refused when its turn comes") {
  // Over either era: the freeze that came while the call waited applies to it.
  const bool modern = GENERATE(false, true);
  INFO((modern ? "2026-07-28" : "legacy"));
  std::atomic<int> notes{0};
  Fixture f(0, CallLimits{1, 1, 4}, catalog_for_limits(&notes));
  f.initialize();
  f.handle(call_request("running", "nap", {{"ms", 5000}}).dump());
  json queued = call_request("queued", "note", json::object());
  if (modern) queued["params"]["_meta"] = kModernMeta;
  f.handle(queued.dump());
  REQUIRE_THAT(f.metrics.render_prometheus(), Catch::Contains("toolmux_calls_queued 1\n"));

  freeze_writes(*f.server);
  // The running call ends: the queued one starts, under the freeze.
  f.handle(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"running"}})");
  json r = f.sink.response("queued");
  INFO(r.dump());
  CHECK(r["result"]["isError"] == true);
  CHECK(r["result"]["content"][0]["text"] == kNoteFrozen);
  CHECK(r["result"]["_meta"]["io.toolmux/outcome"] == "denied");
  CHECK(notes == 0);
}

TEST_CASE("a mutation waiting for its confirmation when the write freeze goes on does not run") {
  std::atomic<int> notes{0};
  auto catalog = catalog_for_limits(&notes);
  catalog->policy.confirm.rule.tools["note"] = true;
  Fixture f(0, {}, catalog);
  f.initialize_confirming();
  f.handle(call_request("guarded", "note", json::object()).dump());
  REQUIRE(f.sink.wait_for_notification("elicitation/create"));
  const json asked = f.sink.notifications("elicitation/create").front();

  freeze_writes(*f.server);
  // The human says yes after the freeze came.
  f.approve(asked, "why not");
  json r = f.sink.response("guarded");
  INFO(r.dump());
  CHECK(r["result"]["isError"] == true);
  CHECK(r["result"]["content"][0]["text"] == kNoteFrozen);
  CHECK(notes == 0);
}
