// The whole pipeline build_call_pipeline composes: a call from its name to
// the tool and back. Each stage has its own test file beside this one.
#include <catch2/catch.hpp>

#include "src/builtins/call_tool.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

TEST_CASE("a good call runs the tool and returns its result") {
  PipelineFixture f;
  ToolCall call = f.make_call("echo", R"({"text":"hello"})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK_FALSE(r.result.is_error);
  CHECK(text_at(r) == "hello");
}

TEST_CASE("the pipeline runs its stages in order: an unknown tool is never authorized or checked") {
  PipelineFixture f;
  f.catalog->policy.access["*"] = AccessRule{{}, {"*"}};  // deny everything
  ToolCall unknown = f.make_call("ecko", R"({"text":1})");
  CHECK(f.pipeline(unknown).outcome == CallOutcome::unknown_tool);
  ToolCall denied = f.make_call("echo", R"({"text":1})");  // bad arguments, denied first
  CHECK(f.pipeline(denied).outcome == CallOutcome::denied);
}
