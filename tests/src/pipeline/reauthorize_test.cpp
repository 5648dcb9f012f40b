// The reauthorize stage: a call that waited for a human's confirmation is
// judged again by the catalog serving when the answer came.
#include <catch2/catch.hpp>

#include "src/pipeline/reauthorize.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

// The test tools and "note" {}, a local_mutation.
std::shared_ptr<Catalog> catalog_with_note() {
  auto registry = make_test_registry();
  ToolSpec note = spec("note", object_schema());
  note.side_effect = "local_mutation";
  REQUIRE(registry->add(note, [](const json&, CallContext&) { return ToolResult::text("noted"); })
              .empty());
  return make_test_catalog(registry);
}

}  // namespace

TEST_CASE("reauthorize refuses a confirmed call once the serving catalog froze writes") {
  PipelineFixture f;
  f.catalog = catalog_with_note();
  auto frozen = std::make_shared<Catalog>(*f.catalog);
  frozen->write_freeze = "incident 42";
  std::shared_ptr<const Catalog> serving = frozen;
  StubNext next;
  auto stage = stages::reauthorize([&] { return serving; })(next.handler());

  ToolCall confirmed = f.resolved_call("note", "{}", true);
  confirmed.confirmation = "accepted";
  CallResult r = stage(confirmed);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK(text_at(r) ==
        "Tool \"note\" did not run: writes are frozen, only read_only tools run, and this one is "
        "local_mutation (incident 42)");

  // A read goes on under the freeze; so does any call while the catalog is
  // the one it started with, and one that asked no one.
  ToolCall read = f.resolved_call("echo", echo_args("x"), true);
  read.confirmation = "accepted";
  CHECK(text_at(stage(read)) == "next");
  ToolCall unasked = f.resolved_call("note", "{}", true);
  CHECK(text_at(stage(unasked)) == "next");
  serving = f.catalog;
  ToolCall thawed = f.resolved_call("note", "{}", true);
  thawed.confirmation = "accepted";
  CHECK(text_at(stage(thawed)) == "next");
  CHECK(next.calls == 3);
}

TEST_CASE("reauthorize without a resolved tool is an internal error naming resolve_tool") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.make_call("echo", echo_args("x"));
  CallResult r = stages::reauthorize(nullptr)(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::internal_error);
}
