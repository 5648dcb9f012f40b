// The check_result stage: the boundary for what a tool returns.
#include <catch2/catch.hpp>

#include <cmath>

#include "src/base/base64.h"
#include "src/pipeline/check_result.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("check_result passes a well-formed answer unchanged") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::check_result()(next.handler())(call);
  CHECK(next.calls == 1);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(r.result.content == json::array({{{"type", "text"}, {"text", "next"}}}));
}

TEST_CASE("check_result turns a broken answer into a bad_result naming the tool") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) {
    ToolResult broken;
    broken.content = json{{"type", "text"}};
    return CallResult::answered(broken);
  };
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::check_result()(next.handler())(call);
  CHECK(r.outcome == CallOutcome::bad_result);
  CHECK(r.result.is_error);
  CHECK(text_at(r) == "Tool \"echo\" returned content that is not a list");
}

TEST_CASE("check_result lets a cancelled answer through unchecked") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) { return CallResult::cancelled(); };
  ToolCall call = f.resolved_call("wrong_output", "{}");  // declares an outputSchema
  CHECK(stages::check_result()(next.handler())(call).outcome == CallOutcome::cancelled);
}

TEST_CASE("check_result without a resolved tool is an internal error naming resolve_tool") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.make_call("echo", "{}");
  CallResult r = stages::check_result()(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::internal_error);
}

TEST_CASE("structuredContent that breaks the outputSchema becomes a tool error naming the rule") {
  PipelineFixture f;
  ToolCall call = f.make_call("wrong_output", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::bad_result);
  CHECK(r.result.is_error);
  CHECK_THAT(text_at(r), Catch::Contains("does not match its outputSchema"));
  CHECK_THAT(text_at(r), Catch::Contains("/count"));
}

TEST_CASE("text that is not UTF-8 becomes an error that carries the bytes as base64") {
  PipelineFixture f;
  ToolCall call = f.make_call("raw_bytes", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::bad_result);
  CHECK_THAT(text_at(r), Catch::Contains("not valid UTF-8"));
  CHECK(text_at(r, 1) == base64_encode("ok\xff\xfe"));
}

TEST_CASE("a result that cannot be written as JSON is an error naming where") {
  PipelineFixture f;
  auto registry = make_test_registry();
  REQUIRE(registry
              ->add(spec("not_finite", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text("fine");
                      r.structured_content = {{"ratio", std::nan("")}};
                      return r;
                    })
              .empty());
  f.catalog = make_test_catalog(registry);
  ToolCall call = f.make_call("not_finite", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::bad_result);
  CHECK_THAT(text_at(r), Catch::Contains("a number that is not finite at /ratio"));
}

TEST_CASE("a result MCP does not allow is an error naming where, as for an upstream's") {
  PipelineFixture f;
  auto registry = make_test_registry();
  REQUIRE(registry
              ->add(spec("text_not_string", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r;
                      r.content = json::array({{{"type", "text"}, {"text", 5}}});
                      return r;
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("image_without_data", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text("fine");
                      r.content.push_back({{"type", "image"}, {"mimeType", "image/png"}});
                      return r;
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("structured_list", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text("fine");
                      r.structured_content = json::array({1, 2});
                      return r;
                    })
              .empty());
  f.catalog = make_test_catalog(registry);
  auto answer = [&](const std::string& tool) {
    ToolCall call = f.make_call(tool, "{}");
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::bad_result);
    CHECK(r.result.is_error);
    return text_at(r);
  };
  CHECK(answer("text_not_string") ==
        "Tool \"text_not_string\" returned content MCP does not allow: /content/0/text must be a "
        "string (it is a number)");
  CHECK(answer("image_without_data") ==
        "Tool \"image_without_data\" returned content MCP does not allow: /content/1/data is "
        "missing");
  CHECK(answer("structured_list") ==
        "Tool \"structured_list\" returned structuredContent MCP does not allow: "
        "/structuredContent must be an object (it is an array)");
}
