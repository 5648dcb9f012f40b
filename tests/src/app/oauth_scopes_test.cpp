#include "src/app/oauth_scopes.h"

#include <catch2/catch.hpp>

#include "tests/support/test_tools.h"

using nlohmann::json;
using toolmux::scope_needed;
using toolmux::ScopeGrant;
using toolmux::SideEffect;

namespace {

// The test tools (echo is read_only) with wipe (destructive), note
// (local_mutation) and a tool named call_tool, and the alias remove -> wipe.
std::shared_ptr<toolmux::Catalog> catalog() {
  auto registry = toolmux::testing::make_test_registry();
  auto add = [&](const char* name, const char* effect) {
    auto spec = toolmux::testing::spec(name, toolmux::testing::object_schema());
    spec.side_effect = effect;
    REQUIRE(registry
                ->add(spec, [](const json&,
                               toolmux::CallContext&) { return toolmux::ToolResult::text("done"); })
                .empty());
  };
  add("wipe", "destructive");
  add("note", "local_mutation");
  add("call_tool", "destructive");
  auto out = toolmux::testing::make_test_catalog(registry);
  out->aliases.tools["remove"] = "wipe";
  return out;
}

const std::vector<ScopeGrant> kGrants = {
    {"tools:read", {SideEffect::read_only}},
    {"tools:write",
     {SideEffect::read_only, SideEffect::local_mutation, SideEffect::remote_mutation}},
    {"tools:admin", {SideEffect::destructive}},
};

json call(const std::string& name, json arguments = json::object()) {
  return {{"name", name}, {"arguments", std::move(arguments)}};
}

}  // namespace

TEST_CASE("a call needs the first scope that allows its tool's class, and none once it holds one") {
  auto c = catalog();
  using Scopes = std::vector<std::string>;
  CHECK(scope_needed(*c, kGrants, "tools/call", call("echo"), Scopes{}) == "tools:read");
  CHECK(scope_needed(*c, kGrants, "tools/call", call("echo"), Scopes{"tools:write"}) ==
        std::nullopt);
  CHECK(scope_needed(*c, kGrants, "tools/call", call("note"), Scopes{"tools:read"}) ==
        "tools:write");
  CHECK(scope_needed(*c, kGrants, "tools/call", call("wipe"), Scopes{"tools:write"}) ==
        "tools:admin");
  CHECK(scope_needed(*c, kGrants, "tools/call", call("wipe"), Scopes{"tools:admin"}) ==
        std::nullopt);
  // By its alias, and through call_tool: the tool named counts.
  CHECK(scope_needed(*c, kGrants, "tools/call", call("remove"), Scopes{"tools:read"}) ==
        "tools:admin");
  CHECK(scope_needed(*c, kGrants, "tools/call", call("call_tool", call("wipe")),
                     Scopes{"tools:write"}) == "tools:admin");
  CHECK(scope_needed(*c, kGrants, "tools/call", call("call_tool", call("note")),
                     Scopes{"tools:write"}) == std::nullopt);
  // call_tool naming call_tool naming wipe: the pipeline refuses it; here it is call_tool's class.
  CHECK(scope_needed(*c, kGrants, "tools/call", call("call_tool", call("call_tool", call("wipe"))),
                     Scopes{"tools:write"}) == "tools:admin");
}

TEST_CASE(
    "every other request needs a scope that allows reads, and unknown tools are left to the "
    "server") {
  auto c = catalog();
  using Scopes = std::vector<std::string>;
  CHECK(scope_needed(*c, kGrants, "tools/list", json::object(), Scopes{}) == "tools:read");
  CHECK(scope_needed(*c, kGrants, "tools/list", json::object(), Scopes{"tools:admin"}) ==
        "tools:read");
  CHECK(scope_needed(*c, kGrants, "resources/read", json::object(), Scopes{"tools:write"}) ==
        std::nullopt);
  CHECK(scope_needed(*c, kGrants, "tools/call", call("no_such_tool"), Scopes{}) == std::nullopt);
  CHECK(scope_needed(*c, kGrants, "tools/call", json::array(), Scopes{}) == std::nullopt);
  // No scopes configured: none is needed.
  CHECK(scope_needed(*c, {}, "tools/call", call("wipe"), Scopes{}) == std::nullopt);
  // A class no scope allows: "" (the server says no scope it knows allows it).
  const std::vector<ScopeGrant> reads_only = {{"tools:read", {SideEffect::read_only}}};
  CHECK(scope_needed(*c, reads_only, "tools/call", call("wipe"), Scopes{"tools:read"}) == "");
  CHECK(toolmux::connect_scope(kGrants) == "tools:read");
  CHECK(toolmux::connect_scope({{"tools:admin", {SideEffect::destructive}}}).empty());
}
