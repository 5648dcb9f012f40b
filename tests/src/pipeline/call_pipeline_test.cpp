#include <catch2/catch.hpp>

#include <chrono>

#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using Clock = std::chrono::steady_clock;

namespace {

using Fixture = PipelineFixture;

std::string first_text(const CallResult& r) { return r.result.content.at(0).at("text"); }

}  // namespace

TEST_CASE("a good call runs the tool and returns its result") {
  Fixture f;
  ToolCall call = f.make_call("echo", R"({"text":"hello"})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK_FALSE(r.result.is_error);
  CHECK(first_text(r) == "hello");
}

TEST_CASE("bad arguments stop the call before the tool runs, naming the argument") {
  Fixture f;
  ToolCall call = f.make_call("echo", R"({"text":42})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::invalid_arguments);
  CHECK(r.result.is_error);
  CHECK_THAT(first_text(r), Catch::StartsWith("Invalid arguments for tool \"echo\""));
  CHECK_THAT(first_text(r), Catch::Contains("/text"));
}

TEST_CASE("a repeated key in the arguments is an argument error") {
  Fixture f;
  ToolCall call = f.make_call("echo", R"({"text":"a","text":"b"})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::invalid_arguments);
  CHECK_THAT(first_text(r), Catch::Contains("repeated object key"));
}

TEST_CASE("a tool that throws gives an isError result naming the tool") {
  Fixture f;
  ToolCall call = f.make_call("throws", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::crashed);
  CHECK(r.result.is_error);
  CHECK(first_text(r) == "Tool \"throws\" failed: disk on fire");
}

TEST_CASE("a tool that runs past its timeout gives 'timed out after N ms' promptly") {
  Fixture f;
  ToolCall call = f.make_call("slow", R"({"ms":5000})");
  const auto start = Clock::now();
  CallResult r = f.pipeline(call);
  const auto elapsed = Clock::now() - start;
  CHECK(r.outcome == CallOutcome::timed_out);
  CHECK(first_text(r) == "Tool \"slow\" timed out after 300 ms");
  CHECK(elapsed < std::chrono::seconds(2));
  // The abandoned handler was told to stop through its context, and stops.
  CHECK(call.context->cancelled());
  CHECK(f.running->wait_until_idle(std::chrono::seconds(1)));
}

TEST_CASE("a cancelled call ends early with the cancelled outcome") {
  Fixture f;
  ToolCall call = f.make_call("slow", R"({"ms":5000})");
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    call.control->cancel();
  });
  const auto start = Clock::now();
  CallResult r = f.pipeline(call);
  canceller.join();
  CHECK(r.outcome == CallOutcome::cancelled);
  CHECK(Clock::now() - start < std::chrono::seconds(1));
}

TEST_CASE("structuredContent that breaks the outputSchema becomes a tool error naming the rule") {
  Fixture f;
  ToolCall call = f.make_call("wrong_output", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::bad_result);
  CHECK(r.result.is_error);
  CHECK_THAT(first_text(r), Catch::Contains("does not match its outputSchema"));
  CHECK_THAT(first_text(r), Catch::Contains("/count"));
}

TEST_CASE("every call leaves one record in the operator's log") {
  Fixture f;
  ToolCall good = f.make_call("echo", R"({"text":"x"})");
  f.pipeline(good);
  ToolCall bad = f.make_call("throws", "{}");
  f.pipeline(bad);
  const std::string log = f.log_text();
  CHECK_THAT(log, Catch::Contains(R"("event":"tool_call")"));
  CHECK_THAT(log, Catch::Contains(R"("outcome":"ok")"));
  CHECK_THAT(log, Catch::Contains(R"("outcome":"crashed")"));
  // Argument values never reach the log.
  CHECK_THAT(log, !Catch::Contains("\"x\""));
}

TEST_CASE("stages compose with the first one outermost") {
  std::vector<std::string> order;
  auto stage = [&order](std::string name) -> CallStage {
    return [&order, name](CallHandler next) -> CallHandler {
      return [&order, name, next](ToolCall& call) {
        order.push_back(name);
        return next(call);
      };
    };
  };
  CallHandler h = compose({stage("a"), stage("b")}, [&order](ToolCall&) {
    order.push_back("end");
    return CallResult{};
  });
  ToolCall call;
  h(call);
  CHECK(order == std::vector<std::string>{"a", "b", "end"});
}
