// The catch_tool_exceptions stage: the one place exceptions from tool code are caught.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "src/pipeline/catch_tool_exceptions.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("catch_tool_exceptions turns what next throws into a crashed isError result") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) -> CallResult { throw std::runtime_error("boom"); };
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::catch_tool_exceptions()(next.handler())(call);
  CHECK(next.calls == 1);
  CHECK(r.outcome == CallOutcome::crashed);
  CHECK(text_at(r) == "Tool \"echo\" failed: boom");

  next.answer = [](ToolCall&) -> CallResult { throw 42; };
  CHECK(text_at(stages::catch_tool_exceptions()(next.handler())(call)) ==
        "Tool \"echo\" failed with an unknown exception");
}

TEST_CASE("catch_tool_exceptions passes next's answer through unchanged") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::catch_tool_exceptions()(next.handler())(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == "next");
}

TEST_CASE("a tool that throws gives an isError result naming the tool") {
  PipelineFixture f;
  ToolCall call = f.make_call("throws", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::crashed);
  CHECK(r.result.is_error);
  CHECK(text_at(r) == "Tool \"throws\" failed: disk on fire");
}

TEST_CASE(
    "a handler that needs a capability the client did not declare gets -32021 naming it, not an "
    "isError result") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall& call) -> CallResult {
    require_client_capabilities(
        *call.context, {{"sampling", json::object()}, {"elicitation", {{"form", json::object()}}}});
    return CallResult::answered(ToolResult::text("asked"));
  };
  ToolCall call = f.resolved_call("echo", "{}");
  call.modern = true;

  SECTION("the client declared only elicitation: sampling is what it lacks") {
    f.session->set_initialized("2025-11-25", {{"elicitation", json::object()}}, json::object());
    CallResult r = stages::catch_tool_exceptions()(next.handler())(call);
    REQUIRE(r.protocol_error);
    CHECK(r.protocol_error->code == -32021);
    CHECK(r.protocol_error->data == json{{"requiredCapabilities", {{"sampling", json::object()}}}});
    CHECK(r.protocol_error->message ==
          "Missing required client capability: the client did not declare sampling");
  }
  SECTION("the client declared both: the handler goes on") {
    f.session->set_initialized("2025-11-25",
                               {{"elicitation", json::object()}, {"sampling", json::object()}},
                               json::object());
    CallResult r = stages::catch_tool_exceptions()(next.handler())(call);
    CHECK_FALSE(r.protocol_error);
    CHECK(text_at(r) == "asked");
  }
}

TEST_CASE("a legacy-era client that lacks a capability a handler needs gets the tool's error") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) -> CallResult {
    throw MissingClientCapability({{"sampling", json::object()}},
                                  "upstream \"u\" answered tools/call with an error (code -32021)");
  };
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::catch_tool_exceptions()(next.handler())(call);
  CHECK_FALSE(r.protocol_error);
  CHECK(r.result.is_error);
  CHECK(text_at(r) == "upstream \"u\" answered tools/call with an error (code -32021)");
}
