#include "catalog/upstream_spec.h"

#include <catch2/catch.hpp>

using namespace toolmux;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

json listed_tool(const std::string& name, json annotations = nullptr) {
  json tool = {
      {"name", name}, {"description", "An upstream tool."}, {"inputSchema", {{"type", "object"}}}};
  if (!annotations.is_null()) tool["annotations"] = std::move(annotations);
  return tool;
}

UpstreamSpec upstream_named(const std::string& name) {
  UpstreamSpec upstream;
  upstream.name = name;
  upstream.prefix = name + "_";
  return upstream;
}

}  // namespace

TEST_CASE("an upstream tool's side effect comes from its annotations") {
  // MCP's default for a missing destructiveHint is true: a tool that says
  // nothing is taken to be destructive.
  CHECK(side_effect_from_annotations(nullptr) == SideEffect::destructive);
  CHECK(side_effect_from_annotations(json::object()) == SideEffect::destructive);
  CHECK(side_effect_from_annotations({{"readOnlyHint", false}}) == SideEffect::destructive);
  CHECK(side_effect_from_annotations({{"destructiveHint", false}}) == SideEffect::remote_mutation);
  CHECK(side_effect_from_annotations({{"readOnlyHint", true}}) == SideEffect::read_only);
  CHECK(side_effect_from_annotations({{"readOnlyHint", true}, {"destructiveHint", true}}) ==
        SideEffect::read_only);
  CHECK(side_effect_from_annotations({{"destructiveHint", true}}) == SideEffect::destructive);
  CHECK(side_effect_from_annotations({{"readOnlyHint", false}, {"destructiveHint", false}}) ==
        SideEffect::remote_mutation);
  // Hints that are not booleans count as absent.
  CHECK(side_effect_from_annotations({{"readOnlyHint", "true"}}) == SideEffect::destructive);
  CHECK(side_effect_from_annotations({{"destructiveHint", "false"}}) == SideEffect::destructive);
  // Not destructive and closed-world: it changes only its own server's state.
  CHECK(side_effect_from_annotations({{"destructiveHint", false}, {"openWorldHint", false}}) ==
        SideEffect::local_mutation);
  CHECK(side_effect_from_annotations({{"destructiveHint", true}, {"openWorldHint", false}}) ==
        SideEffect::destructive);
}

TEST_CASE("an upstream tool becomes a spec with the prefix, its fields and a default timeout") {
  json tool = listed_tool("echo", {{"readOnlyHint", true}, {"idempotentHint", true}});
  tool["title"] = "Echo";
  tool["outputSchema"] = {{"type", "object"}};
  auto spec = upstream_tool_spec(upstream_named("everything"), tool);
  REQUIRE(spec);
  CHECK(spec->name == "everything_echo");
  CHECK(spec->title == "Echo");
  CHECK(spec->description == "An upstream tool.");
  CHECK(spec->input_schema == json{{"type", "object"}});
  CHECK(spec->output_schema == json{{"type", "object"}});
  CHECK(spec->side_effect == "read_only");
  CHECK(spec->idempotent);
  CHECK(spec->timeout == kUpstreamDefaultTimeout);

  UpstreamSpec bare = upstream_named("memory");
  bare.prefix = "";
  spec = upstream_tool_spec(bare, listed_tool("delete", {{"destructiveHint", true}}));
  REQUIRE(spec);
  CHECK(spec->name == "delete");
  CHECK(spec->side_effect == "destructive");
  CHECK_FALSE(spec->idempotent);
}

TEST_CASE("include, exclude and overrides decide which upstream tools join and as what") {
  UpstreamSpec upstream = upstream_named("up");
  upstream.include = std::vector<std::string>{"a", "b"};
  upstream.exclude = {"b"};
  UpstreamToolOverride change;
  change.name = "renamed";
  change.description = "Changed.";
  change.side_effect = "local_mutation";
  change.timeout = 1500ms;
  upstream.tools["a"] = change;

  auto a = upstream_tool_spec(upstream, listed_tool("a", {{"readOnlyHint", true}}));
  REQUIRE(a);
  CHECK(a->name == "renamed");
  CHECK(a->description == "Changed.");
  CHECK(a->side_effect == "local_mutation");
  CHECK(a->timeout == 1500ms);
  CHECK_FALSE(upstream_tool_spec(upstream, listed_tool("b")));
  CHECK_FALSE(upstream_tool_spec(upstream, listed_tool("c")));
}

TEST_CASE("an upstream tool keeps its openWorldHint, and open-world tools are spotlighted") {
  const UpstreamSpec upstream = upstream_named("up");
  // MCP's default for a missing openWorldHint is true.
  auto silent = upstream_tool_spec(upstream, listed_tool("silent"));
  REQUIRE(silent);
  CHECK(silent->open_world == true);
  CHECK(silent->untrusted_output);
  auto closed = upstream_tool_spec(
      upstream, listed_tool("closed", {{"readOnlyHint", true}, {"openWorldHint", false}}));
  REQUIRE(closed);
  CHECK(closed->open_world == false);
  CHECK_FALSE(closed->untrusted_output);
  auto open = upstream_tool_spec(
      upstream, listed_tool("open", {{"readOnlyHint", true}, {"openWorldHint", true}}));
  REQUIRE(open);
  CHECK(open->open_world == true);
  CHECK(open->untrusted_output);
  // A hint that is not a boolean counts as absent.
  auto odd = upstream_tool_spec(upstream, listed_tool("odd", {{"openWorldHint", "no"}}));
  REQUIRE(odd);
  CHECK(odd->open_world == true);
}

TEST_CASE("the catalog's spotlight settings win over the hint: the tool's, then the upstream's") {
  UpstreamSpec upstream = upstream_named("up");
  upstream.spotlight = false;
  UpstreamToolOverride on;
  on.spotlight = true;
  upstream.tools["closed"] = on;
  UpstreamToolOverride reclassed;
  reclassed.side_effect = "local_mutation";
  upstream.tools["reclassed"] = reclassed;

  auto open = upstream_tool_spec(upstream, listed_tool("open"));
  REQUIRE(open);
  CHECK_FALSE(open->untrusted_output);  // the upstream's "spotlight": false
  CHECK(open->open_world == true);      // still published as the upstream says
  auto closed = upstream_tool_spec(upstream, listed_tool("closed", {{"openWorldHint", false}}));
  REQUIRE(closed);
  CHECK(closed->untrusted_output);  // the tool's "spotlight": true

  // An operator's class stands for the upstream's hints: openWorldHint from
  // the class, and with it the default.
  upstream.spotlight.reset();
  auto local = upstream_tool_spec(upstream, listed_tool("reclassed"));
  REQUIRE(local);
  CHECK_FALSE(local->open_world.has_value());
  CHECK_FALSE(local->untrusted_output);
}

TEST_CASE("an upstream tool's personal data classes are its override's, else the upstream's") {
  UpstreamSpec upstream = upstream_named("up");
  upstream.redact_personal_data.insert(PersonalData::email);
  PersonalDataClasses cards;
  cards.insert(PersonalData::payment_card);
  upstream.tools["cards"].redact_personal_data = cards;
  upstream.tools["none"].redact_personal_data = PersonalDataClasses{};
  upstream.tools["renamed"].name = "other";
  auto classes_of = [&](const std::string& tool) {
    auto spec = upstream_tool_spec(upstream, listed_tool(tool));
    REQUIRE(spec);
    return spec->redact_personal_data;
  };
  CHECK(classes_of("plain") == upstream.redact_personal_data);
  CHECK(classes_of("cards") == cards);
  CHECK(classes_of("none").empty());  // [] turns the upstream's off
  CHECK(classes_of("renamed") == upstream.redact_personal_data);
  upstream.redact_personal_data = PersonalDataClasses{};  // none by default
  CHECK(classes_of("plain").empty());
}
