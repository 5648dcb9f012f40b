// The hooks of a program that embeds toolmux (CallHooks): before_hook,
// call_middleware and after_hook, alone and in the whole pipeline.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "src/pipeline/call_hooks.h"
#include "src/pipeline/result_limiter.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("a before hook that refuses stops the call with a denied isError result") {
  PipelineFixture f;
  std::vector<HookedCall> seen;
  f.catalog->hooks.before = [&seen](const HookedCall& call) {
    seen.push_back(call);
    return BeforeDecision::refuse("no echoes on Mondays");
  };
  ToolCall call = f.make_call("echo", echo_args("hi"));
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK(r.result.is_error);
  CHECK(text_at(r) == "Tool \"echo\" was refused by the before hook: no echoes on Mondays");
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].tool == "echo");
  CHECK(seen[0].arguments == json{{"text", "hi"}});
  CHECK(seen[0].principal == "local");
  CHECK(seen[0].call_id == call.call_id);
}

TEST_CASE("a before hook never sees a call whose arguments failed their check") {
  PipelineFixture f;
  int before = 0;
  f.catalog->hooks.before = [&before](const HookedCall&) {
    ++before;
    return BeforeDecision::proceed();
  };
  ToolCall call = f.make_call("echo", R"({"text": 3})");
  CHECK(f.pipeline(call).outcome == CallOutcome::invalid_arguments);
  CHECK(before == 0);
}

TEST_CASE("a before hook's rewrite reaches the tool, checked against its schema first") {
  PipelineFixture f;
  SECTION("arguments that fit the schema: the tool gets them") {
    f.catalog->hooks.before = [](const HookedCall& call) {
      return BeforeDecision::rewrite({{"text", call.arguments["text"].get<std::string>() + "!"}});
    };
    ToolCall call = f.make_call("echo", echo_args("hi"));
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::ok);
    CHECK(text_at(r) == "hi!");
  }
  SECTION("arguments that break it: invalid_arguments, and the tool does not run") {
    f.catalog->hooks.before = [](const HookedCall&) {
      return BeforeDecision::rewrite({{"text", 42}});
    };
    ToolCall call = f.make_call("echo", echo_args("hi"));
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::invalid_arguments);
    CHECK_THAT(text_at(r),
               Catch::StartsWith("Invalid arguments for tool \"echo\": argument /text"));
    CHECK_THAT(text_at(r), Catch::EndsWith("(as the before hook rewrote them)"));
  }
  SECTION("not an object: invalid_arguments saying so") {
    f.catalog->hooks.before = [](const HookedCall&) { return BeforeDecision::rewrite("hi"); };
    ToolCall call = f.make_call("echo", echo_args("hi"));
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::invalid_arguments);
    CHECK_THAT(text_at(r),
               Catch::Contains("the before hook rewrote them into string, not an object"));
  }
}

TEST_CASE("a hook that throws gives a crashed isError result naming the hook") {
  PipelineFixture f;
  ToolCall call = f.make_call("echo", echo_args("hi"));
  SECTION("before") {
    f.catalog->hooks.before = [](const HookedCall&) -> BeforeDecision {
      throw std::runtime_error("policy store down");
    };
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::crashed);
    CHECK(text_at(r) == "Tool \"echo\": the before hook failed: policy store down");
  }
  SECTION("middleware") {
    f.catalog->hooks.middleware = [](const HookedCall&, const CallNext&) -> ToolResult { throw 7; };
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::crashed);
    CHECK(text_at(r) == "Tool \"echo\": the middleware failed with an unknown exception");
  }
  SECTION("after: the tool ran, its answer is replaced") {
    f.catalog->hooks.after = [](const AfterCall&) { throw std::logic_error("sink full"); };
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::crashed);
    CHECK(r.result.is_error);
    CHECK(text_at(r) == "Tool \"echo\": the after hook failed: sink full");
    CHECK(r.result.meta[std::string(kOutcomeMetaKey)] == "crashed");
  }
  // The pipeline goes on serving.
  f.catalog->hooks = {};
  ToolCall again = f.make_call("echo", echo_args("still here"));
  CHECK(text_at(f.pipeline(again)) == "still here");
}

TEST_CASE("a middleware wraps the tool: it may change its answer or answer instead") {
  PipelineFixture f;
  SECTION("calls next and changes the answer") {
    f.catalog->hooks.middleware = [](const HookedCall& call, const CallNext& next) {
      ToolResult r = next();
      r.content[0]["text"] = call.tool + ": " + r.content[0]["text"].get<std::string>();
      return r;
    };
    ToolCall call = f.make_call("echo", echo_args("hi"));
    CHECK(text_at(f.pipeline(call)) == "echo: hi");
  }
  SECTION("answers without running the tool") {
    f.catalog->hooks.middleware = [](const HookedCall&, const CallNext&) {
      return ToolResult::error("cached failure");
    };
    ToolCall call = f.make_call("throws", "{}");
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::tool_error);
    CHECK(text_at(r) == "cached failure");
  }
  SECTION("a crash of the tool stays a crash") {
    f.catalog->hooks.middleware = [](const HookedCall&, const CallNext& next) {
      next();
      return ToolResult::text("all fine");
    };
    ToolCall call = f.make_call("throws", "{}");
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::crashed);
    CHECK(text_at(r) == "Tool \"throws\" failed: disk on fire");
  }
}

TEST_CASE("an after hook sees duration, outcome, sizes, truncation and offload") {
  PipelineFixture f;
  std::vector<AfterCall> seen;
  f.catalog->hooks.after = [&seen](const AfterCall& call) { seen.push_back(call); };
  f.catalog->limits.offload = false;
  f.catalog->limits.max_text_chars = 10;
  ToolCall call = f.make_call("echo", echo_args(std::string(25, 'x')));
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].call.tool == "echo");
  CHECK(seen[0].call.arguments == json{{"text", std::string(25, 'x')}});
  CHECK(seen[0].outcome == "ok");
  CHECK_FALSE(seen[0].is_error);
  CHECK(seen[0].duration.count() > 0);
  CHECK(seen[0].bytes_produced == 25);
  CHECK(seen[0].bytes_returned == result_payload_bytes(r.result));
  CHECK(seen[0].bytes_returned > 10);  // the cut text and the notice
  CHECK(seen[0].truncated);
  CHECK_FALSE(seen[0].offloaded);

  ToolCall unknown = f.make_call("nope", "{}");
  f.pipeline(unknown);
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].outcome == "unknown_tool");
  CHECK(seen[1].call.arguments.is_null());
}

TEST_CASE("before_hook without a checked call is a chain composed out of order") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::before_hook()(next.handler())(call);
  CHECK(next.calls == 0);
  REQUIRE(r.protocol_error);
  CHECK(r.protocol_error->code == -32603);
}
