// What a catalog snapshot offers whom: call_tool's annotations follow the
// most severe class its caller can reach, and the write freeze leaves only
// reads (tests/data/catalogs/reach.json).
#include "src/assembly/tool_catalog.h"

#include <algorithm>
#include <cstdlib>

#include <catch2/catch.hpp>

#include "src/base/redact.h"

#include "src/upstream/upstreams.h"
#include "tests/support/captured_log.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

std::shared_ptr<const Catalog> reach_catalog(std::optional<std::string> freeze = std::nullopt,
                                             bool read_only = false) {
  TempDir dir;
  ServeOptions options;
  options.catalog_file = fs::path(TOOLMUX_TEST_DATA) / "catalogs" / "reach.json";
  options.roots = {dir.path()};
  options.write_freeze = std::move(freeze);
  options.read_only = read_only;
  Problems problems;
  auto catalog = build_catalog(options, nullptr, problems);
  INFO(format_problems(problems));
  REQUIRE(catalog);
  return catalog;
}

const json* published(const Catalog& catalog, const std::string& name) {
  for (const json& tool : catalog.published) {
    if (tool["name"] == name) return &tool;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("call_tool is listed with the worst class its caller can reach through it") {
  auto catalog = reach_catalog();
  // Nobody's rule: everything, so destructive.
  const json* call_tool = published(*catalog, "call_tool");
  REQUIRE(call_tool);
  CHECK((*call_tool)["annotations"]["destructiveHint"] == true);
  CHECK(call_tool_reach(*catalog, "local") == SideEffect::destructive);
  CHECK(call_tool_listing(*catalog, "local", *call_tool) == nullptr);
  // reader may call no widget tool: only reads.
  CHECK(call_tool_reach(*catalog, "reader") == SideEffect::read_only);
  const json* own = call_tool_listing(*catalog, "reader", *call_tool);
  REQUIRE(own);
  CHECK((*own)["annotations"]["readOnlyHint"] == true);
  CHECK((*own)["annotations"]["destructiveHint"] == false);
  // maker may create but not delete.
  CHECK(call_tool_reach(*catalog, "maker") == SideEffect::local_mutation);
  own = call_tool_listing(*catalog, "maker", *call_tool);
  REQUIRE(own);
  CHECK((*own)["annotations"]["readOnlyHint"] == false);
  CHECK((*own)["annotations"]["destructiveHint"] == false);
  // Any other tool is shown as published.
  CHECK(call_tool_listing(*catalog, "reader", *published(*catalog, "read_text_file")) == nullptr);
}

TEST_CASE("under a write freeze only reads are offered, and the rest is refused with the reason") {
  for (bool read_only : {false, true}) {
    auto catalog = read_only ? reach_catalog(std::nullopt, true)
                             : reach_catalog(std::string("maintenance until 14:00"));
    INFO(read_only);
    CHECK(published(*catalog, "widget_delete") == nullptr);
    CHECK(published(*catalog, "widget_create") == nullptr);
    CHECK(published(*catalog, "read_text_file") != nullptr);
    const json* call_tool = published(*catalog, "call_tool");
    REQUIRE(call_tool);
    CHECK((*call_tool)["annotations"]["readOnlyHint"] == true);
    const RegisteredTool* remove = catalog->registry->find("widget_delete");
    REQUIRE(remove);
    auto why = call_refusal(*catalog, "local", *remove);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::StartsWith("did not run: writes are frozen, only read_only tools run, "
                                       "and this one is destructive"));
    CHECK_THAT(*why, Catch::Contains(read_only ? "--read-only" : "maintenance until 14:00"));
    CHECK_FALSE(call_refusal(*catalog, "local", *catalog->registry->find("read_text_file")));
  }
}

TEST_CASE("without a freeze the access rules still refuse, in their own words") {
  auto catalog = reach_catalog();
  auto why = call_refusal(*catalog, "reader", *catalog->registry->find("widget_delete"));
  REQUIRE(why);
  CHECK(*why ==
        "is not allowed for \"reader\": denied by /policy/access/reader/deny/0 "
        "(\"widget_*\")");
  CHECK_FALSE(call_refusal(*catalog, "local", *catalog->registry->find("widget_delete")));
}

TEST_CASE("every built-in tool's schemas compile, as their first call will compile them") {
  // Built-ins skip compiling at registration (ToolSpec::schemas_vetted): this
  // test is what vets them.
  TempDir dir;
  ServeOptions options;
  options.roots = {dir.path()};
  options.allow_writes = true;
  Problems problems;
  auto catalog = build_catalog(options, nullptr, problems);
  INFO(format_problems(problems));
  REQUIRE(catalog);
  std::vector<std::string> vetted;
  for (const auto& tool : catalog->registry->tools()) {
    if (!tool->spec.schemas_vetted) continue;
    vetted.push_back(tool->spec.name);
    INFO(tool->spec.name);
    for (const json* schema : {&tool->spec.input_schema, &tool->spec.output_schema}) {
      if (schema->is_null()) continue;
      Problems found;
      CHECK(CompiledSchema::compile(*schema, found));
      CHECK(format_problems(found).empty());
    }
    // Registration does not walk a vetted schema for undescribed properties.
    CHECK(format_problems(undescribed_properties(tool->spec.input_schema)).empty());
    // Nor are the arguments its defaults fill in checked again at each call:
    // each default passes its own property's schema.
    for (const auto& [name, property] : tool->spec.input_schema["properties"].items()) {
      if (!property.contains("default")) continue;
      INFO(name);
      Problems found;
      auto alone =
          CompiledSchema::compile({{"type", "object"}, {"properties", {{name, property}}}}, found);
      REQUIRE(alone);
      CHECK(alone->validate({{name, property["default"]}}).empty());
    }
  }
  std::sort(vetted.begin(), vetted.end());
  CHECK(vetted == std::vector<std::string>{"call_tool", "find_files", "get_file_info",
                                           "list_directory", "read_text_file", "read_tool_result",
                                           "search_file_contents", "tool_search",
                                           "write_text_file"});
}

TEST_CASE("tools whose schema takes undeclared arguments are named in a warning, unless refused") {
  TempDir dir;
  ServeOptions options;
  options.roots = {dir.path()};
  options.catalog_file = fs::path(TOOLMUX_TEST_DATA) / "catalogs" / "reach.json";
  CapturedLog log;
  Problems problems;
  auto catalog = build_catalog(options, nullptr, problems, {}, nullptr, &log.logger);
  INFO(format_problems(problems));
  REQUIRE(catalog);
  // The built-ins all say "additionalProperties": false; the file's two do not.
  CHECK(catalog->open_schema_tools == std::vector<std::string>{"widget_create", "widget_delete"});
  auto warned = log.lines("undeclared_arguments_pass");
  REQUIRE(warned.size() == 1);
  CHECK(warned[0]["level"] == "warning");
  CHECK(warned[0]["count"] == 2);
  CHECK(warned[0]["tools"] == json{"widget_create", "widget_delete"});

  // With the policy refusing them, there is nothing to warn of.
  json file = json::parse(read_file(options.catalog_file));
  file["policy"]["unknownArguments"] = "reject";
  options.catalog_file = dir.path() / "reject.json";
  write_file(options.catalog_file, file.dump());
  CapturedLog quiet;
  auto rejecting = build_catalog(options, nullptr, problems, {}, nullptr, &quiet.logger);
  INFO(format_problems(problems));
  REQUIRE(rejecting);
  CHECK(rejecting->policy.reject_unknown_arguments);
  CHECK(quiet.lines("undeclared_arguments_pass").empty());
}

TEST_CASE(
    "an alias naming a tool its upstream does not list is an error naming both, once listed") {
  TempDir dir;
  const fs::path script = fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "scripted.sh";
  const json file = {
      {"tools", json::array()},
      {"upstreams",
       {{"scripted",
         {{"command", script.string()},
          {"prefix", "scripted_"},
          {"env",
           {{"PATH", "/usr/bin:/bin"}, {"RECEIVED", (dir.path() / "received").string()}}}}}}},
      {"aliases",
       {{"tools",
         {{"good", "scripted_second"}, {"typo", "scripted_secnd"}, {"mine", "read_text_file"}}}}}};
  ServeOptions options;
  options.roots = {dir.path()};
  options.catalog_file = dir.path() / "catalog.json";
  write_file(options.catalog_file, file.dump());
  CatalogLoad load = load_catalog_file(options.catalog_file);
  INFO(format_problems(load.problems));
  REQUIRE(load.problems.empty());  // names an upstream may hold are not checked at load

  CapturedLog log;
  UpstreamSet upstreams(log.logger, {}, {});
  upstreams.update(load.catalog.upstreams);
  REQUIRE(upstreams.find("scripted")->wait_started(std::chrono::seconds(5)));
  Problems problems;
  auto catalog = build_catalog(options, nullptr, problems, {}, &upstreams, &log.logger);
  upstreams.stop();
  INFO(format_problems(problems));
  REQUIRE(catalog);
  CHECK(catalog->aliases.tools.count("good") == 1);
  CHECK(catalog->aliases.tools.count("mine") == 1);
  CHECK(catalog->aliases.tools.count("typo") == 0);
  auto missing = log.lines("catalog_entry_missing");
  REQUIRE(missing.size() == 1);
  CHECK(missing[0]["level"] == "error");
  CHECK(missing[0]["at"] == "/aliases/tools/typo");
  CHECK(missing[0]["reason"] ==
        "alias \"typo\" points at \"scripted_secnd\", which upstream \"scripted\" does not list "
        "(did you mean \"scripted_second\"?); the alias is left out until it does");
  CHECK(log.lines("catalog_entry_waiting").empty());
}

namespace {

// A native tool `whoami` that needs `credentials` and answers with the value
// of the one named "token".
NativeTool credentialed_tool(std::vector<NativeCredential> credentials) {
  NativeTool tool;
  tool.spec.name = "whoami";
  tool.spec.description = "Says which token it calls with.";
  tool.spec.input_schema = {{"type", "object"}, {"properties", json::object()}};
  tool.spec.side_effect = "read_only";
  tool.spec.timeout = std::chrono::seconds(5);
  tool.credentials = std::move(credentials);
  tool.with_credentials = [](const Credentials& read) -> ToolHandler {
    const std::string token = read.at("token");
    return [token](const json&, CallContext&) { return ToolResult::text(token); };
  };
  return tool;
}

std::shared_ptr<const Catalog> native_catalog(const TempDir& dir, const NativeTool& tool,
                                              Problems& problems) {
  ServeOptions options;
  options.roots = {dir.path()};
  return build_catalog(options, nullptr, problems, {tool});
}

}  // namespace

TEST_CASE("a native tool's credentials are read from the environment or a file, as secrets") {
  TempDir dir;
  Problems problems;
  std::shared_ptr<const Catalog> catalog;
  std::string expected;
  SECTION("from the environment") {
    expected = "env-token-4b1d9e77c0";
    ::setenv("TOOLMUX_TEST_NATIVE_TOKEN", expected.c_str(), 1);
    catalog = native_catalog(dir, credentialed_tool({{"token", "TOOLMUX_TEST_NATIVE_TOKEN", {}}}),
                             problems);
    ::unsetenv("TOOLMUX_TEST_NATIVE_TOKEN");
  }
  SECTION("from a file, its trailing newline dropped") {
    expected = "file-token-93c2aa1f07";
    dir.write("token", expected + "\n");
    catalog =
        native_catalog(dir, credentialed_tool({{"token", "", dir.path() / "token"}}), problems);
  }
  INFO(format_problems(problems));
  REQUIRE(catalog);
  const RegisteredTool* tool = catalog->registry->find("whoami");
  REQUIRE(tool);
  TestContext context;
  CHECK(tool->handler(json::object(), context).content[0]["text"] == expected);
  CHECK(redact("sent " + expected) == "sent [REDACTED]");
}

TEST_CASE("a native tool whose credential cannot be read is refused, naming it and where") {
  TempDir dir;
  Problems problems;
  ::unsetenv("TOOLMUX_TEST_NATIVE_ABSENT");
  auto tool = credentialed_tool({{"token", "TOOLMUX_TEST_NATIVE_ABSENT", {}},
                                 {"other", "", dir.path() / "missing"},
                                 {"both", "X", dir.path() / "x"}});
  CHECK_FALSE(native_catalog(dir, tool, problems));
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].pointer == "/native/0/credentials/0/fromEnv");
  CHECK(
      problems[0].message ==
      "credential \"token\": toolmux's environment has no variable \"TOOLMUX_TEST_NATIVE_ABSENT\"");
  CHECK(problems[1].pointer == "/native/0/credentials/1/fromFile");
  CHECK_THAT(problems[1].message, Catch::StartsWith("credential \"other\": "));
  CHECK(problems[2].pointer == "/native/0/credentials/2");
  CHECK(problems[2].message ==
        "credential \"both\": give a name and exactly one of from_env and from_file");
}
