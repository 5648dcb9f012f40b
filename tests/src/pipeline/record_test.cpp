// The record stage: one log record, one metric and one client message per call.
#include <catch2/catch.hpp>

#include "src/pipeline/record.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("record passes the call on, returns next's answer and records it") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) { return CallResult::denied("no"); };
  ToolCall call = f.resolved_call("echo", R"({"text":"secret"})");
  CallResult r = stages::record(f.logger, f.metrics)(next.handler())(call);
  CHECK(next.calls == 1);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK(text_at(r) == "no");
  CHECK(f.metrics.calls("echo", "denied") == 1);
  const std::string log = f.log_text();
  CHECK_THAT(log, Catch::Contains(R"("event":"tool_call")"));
  CHECK_THAT(log, Catch::Contains(R"("outcome":"denied")"));
  CHECK_THAT(log, !Catch::Contains("secret"));
}

TEST_CASE("record logs the requested tool when none was resolved, and counts it under one label") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) { return CallResult::unknown_tool("Unknown tool"); };
  for (int n = 0; n < 100; ++n) {
    ToolCall call = f.make_call("ecko" + std::to_string(n), "{}");
    stages::record(f.logger, f.metrics)(next.handler())(call);
  }
  // A hundred made-up names are one series, not a hundred.
  CHECK(f.metrics.calls(stages::kUnknownToolLabel, "unknown_tool") == 100);
  CHECK(f.metrics.calls("ecko7", "unknown_tool") == 0);
  CHECK_THAT(f.log_text(), Catch::Contains(R"("tool":"ecko7")"));
}

TEST_CASE("every call leaves one record in the operator's log") {
  PipelineFixture f;
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
