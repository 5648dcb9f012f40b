// The outcome_meta stage: every error result names its outcome in _meta.
#include <catch2/catch.hpp>

#include <string>

#include "src/base/jsonrpc.h"
#include "src/pipeline/outcome_meta.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("outcome_meta names the outcome of every error result") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.resolved_call("echo", "{}");
  const std::vector<std::pair<CallResult, std::string>> cases = {
      {CallResult::answered(ToolResult::error("no such file")), "tool_error"},
      {CallResult::unknown_tool("Unknown tool"), "unknown_tool"},
      {CallResult::invalid_arguments("bad"), "invalid_arguments"},
      {CallResult::denied("no"), "denied"},
      {CallResult::timed_out("late"), "timed_out"},
      {CallResult::crashed("threw"), "crashed"},
      {CallResult::bad_result("broken"), "bad_result"},
      {CallResult::stopped("exiting"), "stopped"},
  };
  for (const auto& [answer, name] : cases) {
    INFO(name);
    next.answer = [answer = answer](ToolCall&) { return answer; };
    CallResult r = stages::outcome_meta()(next.handler())(call);
    CHECK(r.result.to_json()["_meta"] == json{{"io.toolmux/outcome", name}});
    CHECK(r.result.is_error);
  }
}

TEST_CASE("outcome_meta keeps a result's other _meta, and a success never carries the key") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.resolved_call("echo", "{}");
  next.answer = [](ToolCall&) {
    ToolResult r = ToolResult::text("fine");
    r.meta = {{"io.toolmux/outcome", "timed_out"}, {"other", 1}};
    return CallResult::answered(r);
  };
  CallResult ok = stages::outcome_meta()(next.handler())(call);
  CHECK(ok.result.to_json()["_meta"] == json{{"other", 1}});

  next.answer = [](ToolCall&) {
    ToolResult r = ToolResult::text("fine");
    r.meta = {{"io.toolmux/outcome", "timed_out"}};
    return CallResult::answered(r);
  };
  CHECK_FALSE(stages::outcome_meta()(next.handler())(call).result.to_json().contains("_meta"));
  next.answer = [](ToolCall&) { return CallResult::answered(ToolResult::text("fine")); };
  CHECK_FALSE(stages::outcome_meta()(next.handler())(call).result.to_json().contains("_meta"));

  next.answer = [](ToolCall&) {
    ToolResult r = ToolResult::error("failed");
    r.meta = {{"other", 1}};
    return CallResult::answered(r);
  };
  CHECK(stages::outcome_meta()(next.handler())(call).result.meta ==
        json{{"other", 1}, {"io.toolmux/outcome", "tool_error"}});
}

TEST_CASE("outcome_meta leaves answers that are not results alone") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.resolved_call("echo", "{}");
  next.answer = [](ToolCall&) { return CallResult::cancelled(); };
  CHECK(stages::outcome_meta()(next.handler())(call).result.meta.is_null());
  next.answer = [](ToolCall&) {
    return CallResult::rejected(CallOutcome::unknown_tool,
                                JsonRpcError{jsonrpc::kInvalidParams, "Unknown tool", nullptr});
  };
  CHECK(stages::outcome_meta()(next.handler())(call).result.meta.is_null());
}

TEST_CASE("through the pipeline, each way a call fails is named in _meta") {
  PipelineFixture f;
  ToolCall bad_arguments = f.make_call("echo", R"({"text": 5})");
  CHECK(f.pipeline(bad_arguments).result.to_json()["_meta"]["io.toolmux/outcome"] ==
        "invalid_arguments");
  ToolCall throws = f.make_call("throws", "{}");
  CHECK(f.pipeline(throws).result.to_json()["_meta"]["io.toolmux/outcome"] == "crashed");
  ToolCall broken = f.make_call("wrong_output", "{}");
  CHECK(f.pipeline(broken).result.to_json()["_meta"]["io.toolmux/outcome"] == "bad_result");
  ToolCall fine = f.make_call("echo", echo_args("x"));
  CHECK_FALSE(f.pipeline(fine).result.to_json().contains("_meta"));
  // The record in the log has the same outcome.
  CHECK_THAT(f.log_text(), Catch::Contains(R"("outcome":"invalid_arguments")"));
}
