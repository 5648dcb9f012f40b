// The end of the chain: the tool's handler, called with the checked arguments.
#include <catch2/catch.hpp>

#include "src/pipeline/invoke.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("invoke_tool calls the handler with the checked arguments and answers its result") {
  PipelineFixture f;
  ToolCall call = f.resolved_call("echo", R"({"text":"raw"})");
  call.arguments = json{{"text", "checked"}};
  CallResult r = invoke_tool()(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == "checked");
}

TEST_CASE("invoke_tool answers an isError result as a tool error") {
  PipelineFixture f;
  auto registry = make_test_registry();
  REQUIRE(registry
              ->add(spec("fails", object_schema()),
                    [](const json&, CallContext&) { return ToolResult::error("no such file"); })
              .empty());
  f.catalog = make_test_catalog(registry);
  ToolCall call = f.resolved_call("fails", "{}", true);
  CallResult r = invoke_tool()(call);
  CHECK(r.outcome == CallOutcome::tool_error);
  CHECK(text_at(r) == "no such file");
}

TEST_CASE("invoke_tool without checked arguments is an internal error, and the tool does not run") {
  PipelineFixture f;
  ToolCall call = f.resolved_call("throws", "{}");  // would throw if it ran
  CallResult r = invoke_tool()(call);
  CHECK(r.outcome == CallOutcome::internal_error);
  REQUIRE(r.protocol_error.has_value());
  CHECK(r.protocol_error->code == -32603);
  CHECK(r.protocol_error->message ==
        "Internal error: the call pipeline is composed out of order: invoke_tool found no "
        "arguments, which check_arguments sets when it runs before invoke_tool");

  ToolCall unresolved = f.make_call("echo", "{}");
  CHECK_THAT(invoke_tool()(unresolved).protocol_error->message,
             Catch::Contains("invoke_tool found no tool, which resolve_tool sets"));
}
