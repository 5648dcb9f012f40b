// The learn_from_use stage: tool_search's answers remembered for their
// caller, the calls that follow them recorded as clicks, and the order it
// needs (check_arguments before it).
#include "src/pipeline/learn_from_use.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/builtins/result_tools.h"
#include "src/builtins/tool_search.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

// A fixture whose catalog learns, with tool_search's place taken by a test
// tool of that name (its answers come from StubNext).
struct Learning : PipelineFixture {
  // Its clock stands still: the counts do not decay during a test.
  std::shared_ptr<SearchMemory> memory = std::make_shared<SearchMemory>(SearchMemoryOptions{
      .now = [] { return std::chrono::system_clock::time_point(std::chrono::hours(500000)); }});
  Learning() { catalog->search_clicks = std::make_shared<SearchClicks>(memory); }

  // A call of `tool` as check_arguments leaves it, its tool as `as` in the
  // catalog (the test catalog has no tool_search or read_tool_result).
  ToolCall call_of(const std::string& tool, const json& arguments, const std::string& as = "echo") {
    ToolCall call = resolved_call(as, arguments.dump(), true);
    named.push_back(std::make_unique<RegisteredTool>(*call.tool));
    named.back()->spec.name = tool;
    call.tool = named.back().get();
    return call;
  }

  std::vector<std::unique_ptr<RegisteredTool>> named;
};

// What tool_search answers with `tools`.
CallResult search_answer(const std::vector<std::string>& tools) {
  ToolResult result = ToolResult::text("found");
  result.structured_content = {{"tools", json::array()}, {"confidence", "low"}};
  for (const auto& name : tools) result.structured_content["tools"].push_back({{"name", name}});
  return CallResult::answered(std::move(result));
}

}  // namespace

TEST_CASE("a tool called after a search that answered with it is a click on the search's terms",
          "[learn_from_use]") {
  Learning f;
  StubNext search;
  search.answer = [](ToolCall&) { return search_answer({"send_email", "post_message", "echo"}); };
  ToolCall searching = f.call_of(kToolSearch, {{"query", "repeat my words"}});
  CallResult found = stages::learn_from_use()(search.handler())(searching);
  CHECK(search.calls == 1);
  CHECK(found.result.content == search_answer({}).result.content);  // passed on unchanged
  CHECK(f.memory->changes() == 0);  // a search alone teaches nothing

  StubNext next;
  ToolCall call = f.call_of("echo", {{"text", "hello"}});
  CallResult out = stages::learn_from_use()(next.handler())(call);
  CHECK(next.calls == 1);
  CHECK(text_at(out) == "next");
  for (const std::string term : {"repeat", "word"}) {
    CHECK(f.memory->associations(term) ==
          std::vector<std::pair<std::string, double>>{{"echo", 1.0}});
  }
  // Nothing of the arguments is kept.
  CHECK(f.memory->associations("hello").empty());

  // Called again after the same search: no second click.
  ToolCall again = f.call_of("echo", {{"text", "hello"}});
  stages::learn_from_use()(next.handler())(again);
  CHECK(f.memory->associations("word").front().second == 1.0);
}

TEST_CASE("tool_search and read_tool_result are never clicks", "[learn_from_use]") {
  Learning f;
  StubNext search;
  search.answer = [](ToolCall&) { return search_answer({kToolSearch, kReadToolResult, "echo"}); };
  ToolCall searching = f.call_of(kToolSearch, {{"query", "repeat my words"}});
  stages::learn_from_use()(search.handler())(searching);
  StubNext next;
  ToolCall reading = f.call_of(kReadToolResult, json::object());
  stages::learn_from_use()(next.handler())(reading);
  CHECK(next.calls == 1);
  CHECK(f.memory->association_count() == 0);
  // A search that follows is remembered, not a click on the first.
  ToolCall searching_again = f.call_of(kToolSearch, {{"query", "other words"}});
  stages::learn_from_use()(search.handler())(searching_again);
  CHECK(f.memory->association_count() == 0);
}

TEST_CASE("a search that failed, or found nothing, is not remembered", "[learn_from_use]") {
  Learning f;
  StubNext failing;
  failing.answer = [](ToolCall&) {
    ToolResult result = ToolResult::error("no source \"nowhere\"");
    result.structured_content = search_answer({"echo"}).result.structured_content;
    return CallResult::answered(std::move(result));
  };
  ToolCall searching = f.call_of(kToolSearch, {{"query", "repeat"}, {"source", "nowhere"}});
  stages::learn_from_use()(failing.handler())(searching);
  CHECK(f.catalog->search_clicks->caller_count() == 0);
  StubNext next;
  ToolCall call = f.call_of("echo", {{"text", "x"}});
  stages::learn_from_use()(next.handler())(call);
  CHECK(f.memory->association_count() == 0);
}

TEST_CASE("clicks are per session, and per principal for 2026-07-28 requests", "[learn_from_use]") {
  Learning f;
  StubNext search;
  search.answer = [](ToolCall&) { return search_answer({"echo"}); };
  StubNext next;

  ToolCall modern_search = f.call_of(kToolSearch, {{"query", "repeat"}});
  modern_search.modern = true;
  modern_search.session_id = "carrier-1";
  stages::learn_from_use()(search.handler())(modern_search);
  // A legacy call of the same principal counts for its session: no click...
  ToolCall legacy = f.call_of("echo", {{"text", "x"}});
  legacy.session_id = "other-session";
  stages::learn_from_use()(next.handler())(legacy);
  CHECK(f.memory->association_count() == 0);
  // ... but a later 2026-07-28 request of the same principal is.
  ToolCall modern_call = f.call_of("echo", {{"text", "x"}});
  modern_call.modern = true;
  modern_call.session_id = "carrier-2";
  stages::learn_from_use()(next.handler())(modern_call);
  CHECK(f.memory->associations("repeat").size() == 1);
}

TEST_CASE("a catalog that does not learn passes every call on and keeps nothing",
          "[learn_from_use]") {
  PipelineFixture f;  // no search_clicks: "learn": false
  StubNext search;
  search.answer = [](ToolCall&) { return search_answer({"echo"}); };
  ToolCall call = f.resolved_call("echo", echo_args("x"), true);
  CallResult out = stages::learn_from_use()(search.handler())(call);
  CHECK(search.calls == 1);
  CHECK(out.outcome == CallOutcome::ok);
}

TEST_CASE("learn_from_use before check_arguments or resolve_tool is an internal error naming it",
          "[learn_from_use]") {
  Learning f;
  StubNext next;
  std::vector<std::pair<ToolCall, std::string>> too_early = {
      {f.resolved_call("echo", echo_args("x")),
       "learn_from_use found no arguments, which check_arguments sets"},
      {f.make_call("echo", echo_args("x")),
       "learn_from_use found no tool, which resolve_tool sets"}};
  for (auto& [call, message] : too_early) {
    CallResult r = stages::learn_from_use()(next.handler())(call);
    CHECK(r.outcome == CallOutcome::internal_error);
    REQUIRE(r.protocol_error.has_value());
    CHECK(r.protocol_error->code == -32603);
    CHECK_THAT(r.protocol_error->message, Catch::Contains(message));
  }
  CHECK(next.calls == 0);
}

TEST_CASE("through the whole pipeline, a call after a search is recorded", "[learn_from_use]") {
  Learning f;
  f.catalog->search_clicks->searched(
      SearchClicks::caller_key(f.session->id(), f.session->principal(), false), {"repeat"},
      {"echo"});
  ToolCall call = f.make_call("echo", echo_args("hello"));
  CHECK(f.pipeline(call).outcome == CallOutcome::ok);
  CHECK(f.memory->associations("repeat") ==
        std::vector<std::pair<std::string, double>>{{"echo", 1.0}});
}
