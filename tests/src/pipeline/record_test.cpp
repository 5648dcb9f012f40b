// The record stage: one log record, one metric and one client message per call.
#include <catch2/catch.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

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

TEST_CASE("a started record comes before each call's ended one, paired by call id") {
  PipelineFixture f;  // its logger logs debug
  StubNext next;
  next.answer = [](ToolCall&) { return CallResult::answered(ToolResult::text("done")); };
  ToolCall call = f.resolved_call("echo", R"({"text":"secret"})");
  call.call_id = "call-42";
  stages::record(f.logger, f.metrics)(next.handler())(call);
  f.logger.flush();
  std::vector<json> lines;
  std::istringstream text(f.log_text());
  for (std::string line; std::getline(text, line);) lines.push_back(json::parse(line));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["event"] == "tool_call_started");
  CHECK(lines[0]["level"] == "info");
  CHECK(lines[0]["call_id"] == "call-42");
  CHECK(lines[0]["tool"] == "echo");
  CHECK(lines[0]["owner"] == "local");
  CHECK(lines[1]["event"] == "tool_call");
  CHECK(lines[1]["call_id"] == "call-42");
  CHECK(lines[1]["outcome"] == "ok");
  CHECK_THAT(f.log_text(), !Catch::Contains("secret"));

  // At info (the default) too; at warning neither.
  std::FILE* file = std::tmpfile();
  Logger info_logger{file, LogLevel::info};
  ToolCall quiet = f.resolved_call("echo", R"({"text":"x"})");
  stages::record(info_logger, f.metrics)(next.handler())(quiet);
  info_logger.flush();
  std::rewind(file);
  char buf[4096];
  const std::string info_log(buf, std::fread(buf, 1, sizeof buf, file));
  std::fclose(file);
  CHECK_THAT(info_log, Catch::Contains(R"("event":"tool_call")"));
  CHECK_THAT(info_log, Catch::Contains(R"("event":"tool_call_started")"));
}
