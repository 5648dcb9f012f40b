// The check_arguments stage: the JSON boundary, the argument policy and the
// input schema, before the tool runs.
#include <catch2/catch.hpp>

#include "src/pipeline/check_arguments.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("check_arguments sets the checked arguments, policy applied, and passes the call on") {
  PipelineFixture f;
  f.catalog->policy.arguments["echo"].defaults = {{"text", "default text"}};
  StubNext next;
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::check_arguments()(next.handler())(call);
  REQUIRE(next.calls == 1);
  REQUIRE(next.seen->arguments.has_value());
  CHECK(*next.seen->arguments == json{{"text", "default text"}});
  CHECK(text_at(r) == "next");
}

TEST_CASE("check_arguments answers bad arguments without calling next") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.resolved_call("echo", R"({"text":42})");
  CallResult r = stages::check_arguments()(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::invalid_arguments);
  CHECK_THAT(text_at(r), Catch::StartsWith("Invalid arguments for tool \"echo\": argument /text"));
  CHECK_FALSE(call.arguments.has_value());
}

TEST_CASE("check_arguments without a resolved tool is an internal error naming resolve_tool") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.make_call("echo", echo_args("x"));
  CallResult r = stages::check_arguments()(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::internal_error);
  REQUIRE(r.protocol_error.has_value());
  CHECK_THAT(r.protocol_error->message,
             Catch::Contains("check_arguments found no tool, which resolve_tool sets"));
}

TEST_CASE("bad arguments stop the call before the tool runs, naming the argument") {
  PipelineFixture f;
  ToolCall call = f.make_call("echo", R"({"text":42})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::invalid_arguments);
  CHECK(r.result.is_error);
  CHECK_THAT(text_at(r), Catch::StartsWith("Invalid arguments for tool \"echo\""));
  CHECK_THAT(text_at(r), Catch::Contains("/text"));
}

TEST_CASE("a repeated key in the arguments is an argument error") {
  PipelineFixture f;
  ToolCall call = f.make_call("echo", R"({"text":"a","text":"b"})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::invalid_arguments);
  CHECK_THAT(text_at(r), Catch::Contains("repeated object key"));
}

TEST_CASE("defaults fill absent arguments, and a fixed argument cannot be set by the caller") {
  PipelineFixture f;
  f.catalog->policy.arguments["echo"].defaults = {{"text", "default text"}};
  ToolCall call = f.make_call("echo", "{}");
  CHECK(text_at(f.pipeline(call)) == "default text");

  f.catalog->policy.arguments["echo"] = ArgumentPolicy{json::object(), {{"text", "fixed"}}};
  ToolCall fixed = f.make_call("echo", "{}");
  CHECK(text_at(f.pipeline(fixed)) == "fixed");
  ToolCall overridden = f.make_call("echo", echo_args("mine"));
  CallResult r = f.pipeline(overridden);
  CHECK(r.outcome == CallOutcome::invalid_arguments);
  CHECK_THAT(text_at(r), Catch::Contains("fixed by the operator"));
}

TEST_CASE("with unknownArguments: reject, an argument the tool does not declare is refused") {
  PipelineFixture f;
  // echo's schema says nothing of undeclared arguments: by default they reach it.
  ToolCall passed = f.make_call("echo", R"({"text":"hi","txet":"ho"})");
  CHECK(text_at(f.pipeline(passed)) == "hi");

  f.catalog->policy.reject_unknown_arguments = true;
  ToolCall refused = f.make_call("echo", R"({"text":"hi","txet":"ho","a/b":1})");
  CallResult r = f.pipeline(refused);
  CHECK(r.outcome == CallOutcome::invalid_arguments);
  CHECK(text_at(r) ==
        "Invalid arguments for tool \"echo\": argument /a~1b: the tool does not declare it, and "
        "the operator's policy rejects undeclared arguments; argument /txet: the tool does not "
        "declare it, and the operator's policy rejects undeclared arguments (did you mean "
        "\"text\"?)");
  ToolCall declared = f.make_call("echo", R"({"text":"hi"})");
  CHECK(text_at(f.pipeline(declared)) == "hi");
}

TEST_CASE("a schema default reaches the tool, and the call records it as filled") {
  PipelineFixture f;
  auto registry = make_test_registry();
  REQUIRE(registry
              ->add(spec("greet",
                         object_schema({{"name", {{"type", "string"}}},
                                        {"greeting", {{"type", "string"}, {"default", "Hello"}}}},
                                       {"name"})),
                    [](const json& args, CallContext&) {
                      return ToolResult::text(args["greeting"].get<std::string>() + ", " +
                                              args["name"].get<std::string>());
                    })
              .empty());
  f.catalog = make_test_catalog(registry);
  StubNext next;
  ToolCall call = f.resolved_call("greet", R"({"name":"Ada"})");
  stages::check_arguments()(next.handler())(call);
  REQUIRE(next.calls == 1);
  CHECK(*next.seen->arguments == json{{"name", "Ada"}, {"greeting", "Hello"}});
  CHECK(next.seen->filled_arguments == json{{"greeting", "Hello"}});
  ToolCall whole = f.make_call("greet", R"({"name":"Ada"})");
  CHECK(text_at(f.pipeline(whole)) == "Hello, Ada");
}
