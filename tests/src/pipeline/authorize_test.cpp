// The authorize stage: the operator's access rules, and the order it needs
// (resolve_tool before it).
#include <catch2/catch.hpp>

#include "src/pipeline/authorize.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("authorize answers a denied call without calling next, and passes an allowed one") {
  PipelineFixture f;
  f.catalog->policy.access["*"] = AccessRule{{"*"}, {"thr*"}};
  StubNext next;
  ToolCall denied = f.resolved_call("throws", "{}");
  CallResult r = stages::authorize()(next.handler())(denied);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK(text_at(r) ==
        "Tool \"throws\" is not allowed for \"local\": denied by /policy/access/*/deny/0 "
        "(\"thr*\")");

  ToolCall allowed = f.resolved_call("echo", echo_args("x"));
  CallResult passed = stages::authorize()(next.handler())(allowed);
  CHECK(next.calls == 1);
  CHECK(text_at(passed) == "next");
}

TEST_CASE("authorize without a resolved tool is an internal error naming resolve_tool") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.make_call("echo", echo_args("x"));
  CallResult r = stages::authorize()(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::internal_error);
  REQUIRE(r.protocol_error.has_value());
  CHECK(r.protocol_error->code == -32603);
  CHECK_THAT(r.protocol_error->message,
             Catch::Contains("authorize found no tool, which resolve_tool sets"));
}

TEST_CASE("a call the access rules deny is an isError result naming the rule") {
  PipelineFixture f;
  f.catalog->policy.access["*"] = AccessRule{{"*"}, {"thr*"}};
  ToolCall call = f.make_call("throws", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK_THAT(text_at(r), Catch::Contains("not allowed for \"local\""));
  CHECK_THAT(text_at(r), Catch::Contains("/policy/access/*/deny/0"));
  ToolCall allowed = f.make_call("echo", echo_args("x"));
  CHECK(f.pipeline(allowed).outcome == CallOutcome::ok);
}
