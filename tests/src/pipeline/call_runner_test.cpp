// CallRunner alone, with the real pipeline, admission and session (no
// McpServer): what a client sees of each way a call goes, and that every way
// out ends the request with the session (its id is free again).
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "src/pipeline/call_runner.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

// A gate a tool waits at until the test opens it (or the call is cancelled).
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  bool entered = false;
  void wait(CallContext& ctx) {
    std::unique_lock lock(mutex);
    entered = true;
    changed.notify_all();
    changed.wait_for(lock, std::chrono::seconds(5), [&] { return open || ctx.cancelled(); });
  }
  bool wait_entered() {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(5), [&] { return entered; });
  }
  void release() {
    std::lock_guard lock(mutex);
    open = true;
    changed.notify_all();
  }
};

struct RunnerFixture : PipelineFixture {
  explicit RunnerFixture(CallLimits limits = {}) : admission(limits, &metrics) {
    auto registry = make_test_registry();
    ToolSpec gated = spec("gated", object_schema(), 5000);
    gated.returns_by_deadline = true;
    REQUIRE(registry
                ->add(gated,
                      [this](const json&, CallContext& ctx) {
                        ran_on = std::this_thread::get_id();
                        gate.wait(ctx);
                        return ToolResult::text("through");
                      })
                .empty());
    auto record_thread = [this](const json&, CallContext&) {
      ran_on = std::this_thread::get_id();
      return ToolResult::text("here");
    };
    ToolSpec where = spec("where", object_schema());
    where.returns_by_deadline = true;
    REQUIRE(registry->add(where, record_thread).empty());
    ToolSpec instant = spec("instant", object_schema());
    instant.returns_by_deadline = true;
    instant.runs_on_reader = true;
    REQUIRE(registry->add(instant, record_thread).empty());
    catalog = make_test_catalog(registry);
    rebuild();
    runner = std::make_unique<CallRunner>(
        pipeline, admission, [this] { return std::shared_ptr<const Catalog>(catalog); },
        std::chrono::milliseconds(1000), logger, metrics);
  }
  ~RunnerFixture() {
    gate.release();
    session->cancel_all_calls();
    session->wait_for_calls(std::chrono::seconds(5));
    admission.close();
  }

  void run(const json& id, const std::string& tool, Carrier carrier = Carrier::hand_off,
           std::optional<JsonRpcError> invalid = std::nullopt) {
    CallRequest request;
    request.id = id;
    request.name = tool;
    request.arguments = parse_untrusted_json("{}");
    request.invalid = std::move(invalid);
    runner->run(std::move(request), session, carrier);
  }

  Gate gate;
  std::thread::id ran_on;
  CallAdmission admission;
  std::unique_ptr<CallRunner> runner;
};

std::string text_of(const json& response) {
  return response["result"]["content"][0]["text"].get<std::string>();
}

}  // namespace

TEST_CASE("the runner answers a carried call before run returns, and a handed-off one later") {
  RunnerFixture f;
  f.run(1, "where", Carrier::carry);
  CHECK(text_of(f.sink.response(1, std::chrono::milliseconds(0))) == "here");
  CHECK(f.ran_on == std::this_thread::get_id());
  CHECK(f.session->wait_for_calls(std::chrono::milliseconds(0)));

  f.run(2, "gated", Carrier::hand_off);
  REQUIRE(f.gate.wait_entered());
  CHECK(f.ran_on != std::this_thread::get_id());
  CHECK(f.sink.response(2, std::chrono::milliseconds(0)).is_null());
  f.gate.release();
  CHECK(text_of(f.sink.response(2)) == "through");
  CHECK(f.session->wait_for_calls(std::chrono::seconds(2)));
}

TEST_CASE("the stdio reader carries only a tool that says runs_on_reader") {
  RunnerFixture f;
  f.run("i", "instant", Carrier::reader);
  CHECK(text_of(f.sink.response("i", std::chrono::milliseconds(0))) == "here");
  CHECK(f.ran_on == std::this_thread::get_id());
  // "where" does not say runs_on_reader: handed off.
  f.run("r", "where", Carrier::reader);
  CHECK(text_of(f.sink.response("r")) == "here");
  CHECK(f.ran_on != std::this_thread::get_id());
}

TEST_CASE("an id already in flight is refused as such, and the call in flight still answered") {
  RunnerFixture f;
  f.run(7, "gated");
  REQUIRE(f.gate.wait_entered());
  f.run(7, "echo");
  json refused = f.sink.response(7);
  CHECK(refused["error"]["code"] == -32600);
  CHECK(refused["error"]["message"] == "Invalid request: a request with id 7 is already in flight");
  f.gate.release();
  REQUIRE(f.session->wait_for_calls(std::chrono::seconds(2)));
  std::vector<json> answers;
  for (const auto& m : f.sink.messages()) {
    if (m.value("id", json()) == 7 && m.contains("result")) answers.push_back(m);
  }
  REQUIRE(answers.size() == 1);
  CHECK(text_of(answers[0]) == "through");
}

TEST_CASE("a request the protocol layer refused gets that error, and its id is free again") {
  RunnerFixture f;
  f.run("x", "echo", Carrier::carry, JsonRpcError::invalid_params("_meta is wrong"));
  json refused = f.sink.response("x", std::chrono::milliseconds(0));
  CHECK(refused["error"]["code"] == -32602);
  CHECK(refused["error"]["message"] == "Invalid params: _meta is wrong");
  CHECK(f.session->wait_for_calls(std::chrono::milliseconds(0)));
  f.run("y", "where", Carrier::carry);
  CHECK(text_of(f.sink.response("y", std::chrono::milliseconds(0))) == "here");
}

TEST_CASE("past the limits a call is refused as busy, naming the limit, and logged as not run") {
  CallLimits limits;
  limits.max_running = 1;
  limits.max_running_per_session = 1;
  limits.max_queued = 0;
  limits.max_queued_per_session = 0;
  RunnerFixture f(limits);
  f.run("holds", "gated");
  REQUIRE(f.gate.wait_entered());
  f.run("busy", "echo", Carrier::carry);
  json refused = f.sink.response("busy", std::chrono::milliseconds(0));
  CHECK(refused["error"]["code"] == -32000);
  CHECK_THAT(refused["error"]["message"].get<std::string>(), Catch::Contains("--max-calls 1"));
  CHECK_THAT(f.log_text(), Catch::Contains("\"call_not_run\""));
  f.gate.release();
  CHECK(text_of(f.sink.response("holds")) == "through");
  CHECK(f.session->wait_for_calls(std::chrono::seconds(2)));
}

TEST_CASE(
    "a queued call whose deadline passes is answered as timed out, a cancelled one not at all") {
  CallLimits limits;
  limits.max_running = 1;
  limits.max_running_per_session = 1;
  RunnerFixture f(limits);
  f.run("holds", "gated");
  REQUIRE(f.gate.wait_entered());
  // "slow" has a 300 ms timeout, which passes while it waits for the place.
  f.run("waits", "slow");
  json late = f.sink.response("waits");
  CHECK(late["result"]["isError"] == true);
  CHECK_THAT(text_of(late), Catch::StartsWith("Tool \"slow\" timed out after 300 ms waiting for a "
                                              "place to run; toolmux was busy: "));
  CHECK(late["result"]["_meta"] == json{{"io.toolmux/outcome", "timed_out"}});

  f.run("dropped", "echo");
  f.session->cancel_call("dropped");
  f.gate.release();
  CHECK(text_of(f.sink.response("holds")) == "through");
  REQUIRE(f.session->wait_for_calls(std::chrono::seconds(2)));
  CHECK(f.sink.response("dropped", std::chrono::milliseconds(100)).is_null());
}
