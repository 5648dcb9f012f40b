// The resolve_tool stage: tools by name or alias, unknown names answered with
// the closest names, and the order it needs (unwrap_call_tool before it).
#include <catch2/catch.hpp>

#include "src/builtins/call_tool.h"
#include "src/pipeline/compose.h"
#include "src/pipeline/resolve_tool.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("resolve_tool sets the tool an alias names and passes the call on") {
  PipelineFixture f;
  f.catalog->aliases.tools["say"] = "echo";
  StubNext next;
  ToolCall call = f.make_call("say", R"({"text":"hi"})");
  CallResult r = stages::resolve_tool()(next.handler())(call);
  REQUIRE(next.calls == 1);
  REQUIRE(next.seen->tool != nullptr);
  CHECK(next.seen->tool->spec.name == "echo");
  CHECK(next.seen->requested_name == "say");
  CHECK(text_at(r) == "next");  // next's answer, unchanged
}

TEST_CASE("resolve_tool answers an unknown name without calling next") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.make_call("ecko", "{}");
  CallResult r = stages::resolve_tool()(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::unknown_tool);
  REQUIRE(r.protocol_error.has_value());
  CHECK(r.protocol_error->data["unknownTool"] == "ecko");

  // Through call_tool the answer is call_tool's: an isError result.
  ToolCall via = f.make_call("ecko", "{}");
  via.via_call_tool = true;
  CallResult as_result = stages::resolve_tool()(next.handler())(via);
  CHECK(next.calls == 0);
  CHECK_FALSE(as_result.protocol_error.has_value());
  CHECK_THAT(text_at(as_result), Catch::StartsWith("Unknown tool: \"ecko\"."));
}

TEST_CASE("resolve_tool before unwrap_call_tool is an internal error naming the order") {
  PipelineFixture f;
  auto registry = make_test_registry();
  REQUIRE(register_call_tool(*registry).empty());
  f.catalog = make_test_catalog(registry);
  StubNext next;
  ToolCall call = f.make_call("call_tool", R"({"name":"echo","arguments":{"text":"hi"}})");
  CallResult r = compose({stages::resolve_tool()}, next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::internal_error);
  REQUIRE(r.protocol_error.has_value());
  CHECK(r.protocol_error->code == -32603);
  CHECK(r.protocol_error->message ==
        "Internal error: the call pipeline is composed out of order: resolve_tool found no "
        "unwrapped call_tool call, which unwrap_call_tool sets when it runs before resolve_tool");
}

TEST_CASE("a tool alias is served as its tool, and an argument alias is renamed") {
  PipelineFixture f;
  f.catalog->aliases.tools["say"] = "echo";
  f.catalog->aliases.arguments["echo"]["message"] = "text";
  ToolCall call = f.make_call("say", R"({"message":"hi"})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == "hi");
  CHECK(call.tool->spec.name == "echo");

  ToolCall both = f.make_call("echo", R"({"message":"a","text":"b"})");
  CallResult twice = f.pipeline(both);
  CHECK(twice.outcome == CallOutcome::invalid_arguments);
  CHECK_THAT(text_at(twice), Catch::Contains("\"message\""));
}

TEST_CASE("an unknown tool is a -32602 error with suggestions, or an isError result") {
  PipelineFixture f;
  ToolCall call = f.make_call("ecko", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::unknown_tool);
  REQUIRE(r.protocol_error.has_value());
  CHECK(r.protocol_error->code == -32602);
  CHECK_THAT(r.protocol_error->message, Catch::Contains("Did you mean \"echo\""));
  CHECK(r.protocol_error->data["suggestions"][0] == "echo");

  f.catalog->policy.unknown_tool = UnknownToolAnswer::tool_result;
  ToolCall again = f.make_call("ecko", "{}");
  CallResult as_result = f.pipeline(again);
  CHECK_FALSE(as_result.protocol_error.has_value());
  CHECK(as_result.result.is_error);
  CHECK_THAT(text_at(as_result), Catch::Contains("Did you mean \"echo\""));
}
