// The unwrap_call_tool stage: call_tool {name, arguments} becomes a call of
// the tool it names, and every stage after it treats it so.
#include <catch2/catch.hpp>

#include "src/builtins/call_tool.h"
#include "src/pipeline/unwrap_call_tool.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

std::shared_ptr<Catalog> catalog_with_call_tool() {
  auto registry = make_test_registry();
  REQUIRE(register_call_tool(*registry).empty());
  return make_test_catalog(registry);
}

}  // namespace

TEST_CASE("unwrap_call_tool turns a call_tool call into a call of the tool it names") {
  PipelineFixture f;
  f.catalog = catalog_with_call_tool();
  f.catalog->aliases.tools["run"] = "call_tool";
  StubNext next;
  ToolCall call = f.make_call("run", R"({"name":"say","arguments":{"text":"hi","text":"b"}})");
  CallResult r = stages::unwrap_call_tool()(next.handler())(call);
  REQUIRE(next.calls == 1);
  CHECK(text_at(r) == "next");
  const ToolCall& seen = *next.seen;
  CHECK(seen.via_call_tool);
  CHECK(seen.requested_name == "say");  // resolve_tool's to resolve
  CHECK(seen.tool == nullptr);
  CHECK(seen.raw_arguments.value == json{{"text", "hi"}});  // the first of a repeated key
  // The boundary's findings under /arguments follow them, re-rooted.
  REQUIRE(seen.raw_arguments.violations.size() == 1);
  CHECK(seen.raw_arguments.violations[0].pointer == "/text");
}

TEST_CASE("call_tool's reason becomes the call's, for the human asked to confirm it") {
  PipelineFixture f;
  f.catalog = catalog_with_call_tool();
  StubNext next;
  ToolCall call = f.make_call(
      "call_tool", R"({"name":"echo","arguments":{"text":"hi"},"reason":"the user asked"})");
  stages::unwrap_call_tool()(next.handler())(call);
  REQUIRE(next.calls == 1);
  CHECK(next.seen->reason == "the user asked");
  CHECK(next.seen->raw_arguments.value == json{{"text", "hi"}});
}

TEST_CASE("unwrap_call_tool passes any other call on untouched") {
  PipelineFixture f;
  f.catalog = catalog_with_call_tool();
  StubNext next;
  ToolCall call = f.make_call("echo", R"({"name":"x"})");
  stages::unwrap_call_tool()(next.handler())(call);
  REQUIRE(next.calls == 1);
  CHECK_FALSE(next.seen->via_call_tool);
  CHECK(next.seen->requested_name == "echo");
  CHECK(next.seen->raw_arguments.value == json{{"name", "x"}});
}

TEST_CASE("unwrap_call_tool answers a call it cannot unwrap without calling next") {
  PipelineFixture f;
  f.catalog = catalog_with_call_tool();
  StubNext next;
  auto answer = [&](const std::string& arguments) {
    ToolCall call = f.make_call("call_tool", arguments);
    CallResult r = stages::unwrap_call_tool()(next.handler())(call);
    CHECK(r.outcome == CallOutcome::invalid_arguments);
    CHECK(r.result.is_error);
    return text_at(r);
  };
  CHECK(answer(R"({"arguments":{}})") ==
        "Invalid arguments for tool \"call_tool\": argument /name: a tool name (string) is "
        "required");
  CHECK(answer(R"({"name":"echo","arguments":[1]})") ==
        "Invalid arguments for tool \"call_tool\": argument /arguments: must be an object");
  CHECK(answer(R"({"name":"echo","extra":1})") ==
        "Invalid arguments for tool \"call_tool\": argument /extra: call_tool takes only name, "
        "arguments and reason");
  CHECK(answer(R"({"name":"echo","reason":7})") ==
        "Invalid arguments for tool \"call_tool\": argument /reason: must be a string");
  CHECK(answer(R"({"name":"call_tool"})") ==
        "Invalid arguments for tool \"call_tool\": argument /name: call_tool cannot call itself");
  CHECK(next.calls == 0);
}

TEST_CASE("call_tool reaches a tool by name through every stage") {
  PipelineFixture f;
  f.catalog = catalog_with_call_tool();
  f.catalog->aliases.tools["say"] = "echo";

  ToolCall call = f.make_call("call_tool", R"({"name":"say","arguments":{"text":"hi"}})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == "hi");
  CHECK(call.tool->spec.name == "echo");  // recorded and limited as echo

  ToolCall bad = f.make_call("call_tool", R"({"name":"echo","arguments":{"text":1}})");
  CHECK_THAT(text_at(f.pipeline(bad)), Catch::StartsWith("Invalid arguments for tool \"echo\""));

  ToolCall repeated =
      f.make_call("call_tool", R"({"name":"echo","arguments":{"text":"a","text":"b"}})");
  CHECK_THAT(text_at(f.pipeline(repeated)), Catch::Contains("argument /text: repeated object key"));

  f.catalog->policy.access["*"] = AccessRule{{}, {"echo"}};
  ToolCall denied = f.make_call("call_tool", R"({"name":"echo","arguments":{"text":"x"}})");
  CHECK(f.pipeline(denied).outcome == CallOutcome::denied);
}

TEST_CASE("call_tool answers an unknown name or a bad call with an isError result") {
  PipelineFixture f;
  f.catalog = catalog_with_call_tool();
  ToolCall unknown = f.make_call("call_tool", R"({"name":"ecko"})");
  CallResult r = f.pipeline(unknown);
  CHECK(r.outcome == CallOutcome::unknown_tool);
  CHECK_FALSE(r.protocol_error.has_value());
  CHECK_THAT(text_at(r), Catch::Contains("Did you mean \"echo\""));

  ToolCall itself = f.make_call("call_tool", R"({"name":"call_tool"})");
  CHECK_THAT(text_at(f.pipeline(itself)), Catch::Contains("cannot call itself"));
  ToolCall nameless = f.make_call("call_tool", R"({"arguments":{}})");
  CHECK(f.pipeline(nameless).outcome == CallOutcome::invalid_arguments);
}
