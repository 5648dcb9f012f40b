#include "catalog/tool_registry.h"

#include <string>

#include <catch2/catch.hpp>

#include "catalog/argument_check.h"
#include "tests/support/fixtures.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

ToolSpec valid_spec(std::string name = "read_file") {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = "Reads a file.";
  spec.input_schema = json::parse(
      R"({"type":"object","properties":{"path":{"type":"string","description":"The file."}}})");
  spec.side_effect = "read_only";
  spec.timeout = 5000ms;
  return spec;
}

ToolResult noop(const json&, CallContext&) { return ToolResult::text("ok"); }

// The one problem a spec is refused with (and that check_tool_spec agrees).
Problem only_problem(const ToolSpec& spec) {
  ToolRegistry registry;
  const Problems problems = registry.add(spec, noop);
  INFO(format_problems(problems));
  REQUIRE(problems.size() == 1);
  CHECK(registry.tools().empty());
  const Problems checked = check_tool_spec(spec);
  REQUIRE(checked.size() == 1);
  CHECK(checked[0].message == problems[0].message);
  return problems[0];
}

}  // namespace

TEST_CASE("a valid tool is registered with its descriptor") {
  ToolRegistry registry;
  ToolSpec spec = valid_spec();
  spec.title = "Read file";
  spec.output_schema = json::parse(R"({"type":"object","properties":{"text":{"type":"string"}}})");
  spec.tags = {"fs", "read"};
  spec.version = "1.2.0";
  REQUIRE(registry.add(spec, noop).empty());
  const RegisteredTool* tool = registry.find("read_file");
  REQUIRE(tool);
  CHECK(registry.find("other") == nullptr);
  CHECK(tool->side_effect == SideEffect::read_only);
  REQUIRE(tool->input_schema);
  REQUIRE(tool->output_schema);
  CHECK(tool->descriptor == json::parse(R"({
    "name": "read_file",
    "title": "Read file",
    "description": "Reads a file.",
    "inputSchema": {"type":"object","properties":{"path":{"type":"string","description":"The file."}}},
    "outputSchema": {"type":"object","properties":{"text":{"type":"string"}}},
    "annotations": {"title": "Read file", "readOnlyHint": true, "destructiveHint": false,
                    "idempotentHint": false, "openWorldHint": false},
    "_meta": {"io.toolmux/tags": ["fs", "read"], "io.toolmux/version": "1.2.0"}
  })"));
}

TEST_CASE("optional descriptor fields are left out") {
  ToolRegistry registry;
  REQUIRE(registry.add(valid_spec(), noop).empty());
  const json& d = registry.tools().at(0)->descriptor;
  CHECK_FALSE(d.contains("title"));
  CHECK_FALSE(d.contains("outputSchema"));
  CHECK_FALSE(d.contains("_meta"));
  CHECK_FALSE(d["annotations"].contains("title"));
  CHECK_FALSE(registry.tools().at(0)->output_schema);
}

TEST_CASE("annotations follow the side-effect class") {
  ToolSpec spec = valid_spec();
  CHECK(
      annotations_for(spec, SideEffect::local_mutation) ==
      json::parse(
          R"({"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false})"));
  CHECK(
      annotations_for(spec, SideEffect::remote_mutation) ==
      json::parse(
          R"({"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true})"));
  CHECK(
      annotations_for(spec, SideEffect::destructive) ==
      json::parse(
          R"({"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false})"));
  spec.idempotent = true;
  CHECK(annotations_for(spec, SideEffect::destructive)["idempotentHint"] == true);
}

TEST_CASE("openWorldHint is the spec's own when it declares one") {
  ToolSpec spec = valid_spec();
  spec.open_world = true;
  CHECK(annotations_for(spec, SideEffect::read_only)["openWorldHint"] == true);
  spec.open_world = false;
  CHECK(annotations_for(spec, SideEffect::remote_mutation)["openWorldHint"] == false);
}

TEST_CASE("registration refusals name the tool and the reason") {
  SECTION("empty name") {
    const Problem p = only_problem(valid_spec(""));
    CHECK(p.pointer == "/name");
    CHECK(p.message == "tool \"\": name is empty");
  }
  SECTION("129-byte name") {
    const std::string name(129, 'a');
    const Problem p = only_problem(valid_spec(name));
    CHECK(p.message == "tool \"" + name + "\": name is 129 bytes long; the limit is 128");
    ToolRegistry registry;
    CHECK(registry.add(valid_spec(std::string(128, 'a')), noop).empty());
  }
  SECTION("bad character") {
    const Problem p = only_problem(valid_spec("read file/x"));
    CHECK(p.message ==
          "tool \"read file/x\": name contains U+0020 (space) at byte 4; only ASCII letters, "
          "digits, '_', '-' and '.' are allowed");
    CHECK(only_problem(valid_spec("a/b")).message.find("contains '/' at byte 1") !=
          std::string::npos);
    CHECK(only_problem(valid_spec("caf\xC3\xA9")).message.find("contains '\xC3\xA9' at byte 3") !=
          std::string::npos);
  }
  SECTION("duplicate") {
    ToolRegistry registry;
    REQUIRE(registry.add(valid_spec("x"), noop).empty());
    const Problems p = registry.add(valid_spec("x"), noop);
    REQUIRE(p.size() == 1);
    CHECK(p[0].message == "tool \"x\": a tool with this name is already registered");
    CHECK(registry.tools().size() == 1);
  }
  SECTION("empty or blank description") {
    ToolSpec spec = valid_spec();
    spec.description = "";
    CHECK(only_problem(spec).message == "tool \"read_file\": description is empty");
    spec.description = " \n\t";
    const Problem p = only_problem(spec);
    CHECK(p.pointer == "/description");
    CHECK(p.message == "tool \"read_file\": description is only whitespace");
  }
  SECTION("unknown side effect") {
    ToolSpec spec = valid_spec();
    spec.side_effect = "readonly";
    const Problem p = only_problem(spec);
    CHECK(p.pointer == "/sideEffect");
    CHECK(p.message ==
          "tool \"read_file\": side effect \"readonly\" is unknown; use one of read_only, "
          "local_mutation, remote_mutation, destructive");
  }
  SECTION("zero timeout") {
    ToolSpec spec = valid_spec();
    spec.timeout = 0ms;
    const Problem p = only_problem(spec);
    CHECK(p.pointer == "/timeoutMs");
    CHECK(p.message == "tool \"read_file\": timeout is missing or zero");
  }
  SECTION("runs on the reader without returning by its deadline") {
    ToolSpec spec = valid_spec();
    spec.runs_on_reader = true;
    const Problem p = only_problem(spec);
    CHECK(p.pointer == "/runsOnReader");
    CHECK(p.message ==
          "tool \"read_file\": runs on the reader but does not return by its deadline; set "
          "returns_by_deadline too");
  }
  SECTION("runs on the reader but changes something") {
    ToolSpec spec = valid_spec();
    spec.runs_on_reader = true;
    spec.returns_by_deadline = true;
    spec.side_effect = "local_mutation";
    const Problem p = only_problem(spec);
    CHECK(p.pointer == "/runsOnReader");
    CHECK(p.message ==
          "tool \"read_file\": runs on the reader but is local_mutation; only a read_only tool "
          "may (a mutation is journaled and may ask for confirmation)");
  }
}

TEST_CASE("tools are found by tag, in registration order") {
  ToolRegistry registry;
  auto tagged = [](std::string name, std::vector<std::string> tags) {
    ToolSpec spec = valid_spec(std::move(name));
    spec.tags = std::move(tags);
    return spec;
  };
  REQUIRE(registry.add(tagged("read_a", {"fs", "read"}), noop).empty());
  REQUIRE(registry.add(tagged("plain", {}), noop).empty());
  REQUIRE(registry.add(tagged("read_b", {"read"}), noop).empty());
  auto names = [&registry](std::string_view tag) {
    std::vector<std::string> out;
    for (const RegisteredTool* tool : registry.with_tag(tag)) out.push_back(tool->spec.name);
    return out;
  };
  CHECK(names("read") == std::vector<std::string>{"read_a", "read_b"});
  CHECK(names("fs") == std::vector<std::string>{"read_a"});
  CHECK(names("Read").empty());  // exact
  CHECK(names("").empty());
}

TEST_CASE("every property a tool's input schema declares has a description, or it is refused") {
  ToolSpec spec = valid_spec();
  spec.input_schema = load_schema("undescribed_properties.json");
  ToolRegistry registry;
  const Problems problems = registry.add(spec, noop);
  CHECK(registry.tools().empty());
  std::vector<std::string> where;
  for (const Problem& problem : problems) where.push_back(problem.pointer);
  // Nested objects, array items, $defs, a branch's own property, a blank
  // description, a boolean schema; not a property a branch restates, one
  // whose $ref leads to a description, or a condition's (if/then/else).
  CHECK(where == std::vector<std::string>{"/inputSchema/$defs/point/properties/x",
                                          "/inputSchema/anyOf/1/properties/extra",
                                          "/inputSchema/properties/blank",
                                          "/inputSchema/properties/flag",
                                          "/inputSchema/properties/options/properties/depth",
                                          "/inputSchema/properties/points/items/properties/label",
                                          "/inputSchema/properties/unexplained"});
  REQUIRE_FALSE(problems.empty());
  CHECK(problems[0].message ==
        "tool \"read_file\": inputSchema: property \"x\" has no description (the model knows an "
        "argument by its name and description alone)");
  CHECK(format_problems(check_tool_spec(spec)) == format_problems(problems));

  // An upstream's tool is toolmux's to relay, not to refuse for this.
  CHECK(registry.add(spec, noop, ToolOwner::upstream).empty());
  CHECK(check_tool_spec(spec, ToolOwner::upstream).empty());
  // The same walk, relative to the schema, is what serve warns of for upstreams.
  CHECK(undescribed_properties(spec.input_schema).size() == problems.size());
  CHECK(undescribed_properties(spec.input_schema)[0].pointer == "/$defs/point/properties/x");
}

TEST_CASE("a read_only tool that returns by its deadline may run on the reader") {
  ToolRegistry registry;
  ToolSpec spec = valid_spec();
  spec.runs_on_reader = true;
  spec.returns_by_deadline = true;
  CHECK(
      registry.add(spec, [](const json&, CallContext&) { return ToolResult::text("ok"); }).empty());
}

namespace {

// The problems for a spec whose input (or output) schema is `schema`.
Problems schema_problems(const char* field, const json& schema) {
  ToolSpec spec = valid_spec("t");
  if (std::string(field) == "inputSchema") {
    spec.input_schema = schema;
  } else {
    spec.output_schema = schema;
  }
  ToolRegistry registry;
  const Problems problems = registry.add(spec, noop);
  CHECK(registry.tools().empty() == !problems.empty());
  return problems;
}

std::string nested_not(int depth) {
  std::string text = R"({"type":"object"})";
  for (int i = 0; i < depth; ++i) text = R"({"type":"object","not":)" + text + "}";
  return text;
}

}  // namespace

TEST_CASE("schema refusals, for the input and the output schema") {
  for (const char* field : {"inputSchema", "outputSchema"}) {
    const std::string f = field;
    const std::string label = "tool \"t\": " + f;
    INFO(field);
    const auto one = [&](const json& schema) {
      const Problems p = schema_problems(field, schema);
      INFO(format_problems(p));
      REQUIRE(p.size() == 1);
      return p[0];
    };
    if (f == "inputSchema") {
      const Problem missing = one(json());
      CHECK(missing.pointer == "/inputSchema");
      CHECK(missing.message == "tool \"t\": inputSchema is missing");
    }
    CHECK(one(json::array()).message == label + " must be a JSON object, got array");
    CHECK(one(json::parse(R"({"type":"array"})")).message ==
          label + " must have \"type\": \"object\", got \"array\"");
    CHECK(one(json::parse(R"({"properties":{}})")).message ==
          label + " must have \"type\": \"object\"");

    Problem deep = one(json::parse(nested_not(256)));
    CHECK(deep.message == label + ": schema nested deeper than 256 levels");
    CHECK(deep.pointer.rfind("/" + f + "/not/not/", 0) == 0);
    CHECK(schema_problems(field, json::parse(nested_not(127))).empty());

    CHECK(one(json::parse(R"({"type":"object","minimum":1,"exclusiveMinimum":true})")).message ==
          label +
              ": schema does not compile: Expected numeric value for exclusiveMinimum constraint.");

    Problem file =
        one(json::parse(R"({"type":"object","properties":{"a":{"$ref":"defs.json#/a"}}})"));
    CHECK(file.pointer == "/" + f + "/properties/a/$ref");
    CHECK(file.message == label +
                              ": $ref \"defs.json#/a\" refers outside the schema; only references "
                              "inside the document (#/...) are allowed");
    CHECK(one(json::parse(R"({"type":"object","items":{"$ref":"https://example.com/s.json"}})"))
              .message ==
          label +
              ": $ref \"https://example.com/s.json\" refers outside the schema; only references "
              "inside the document (#/...) are allowed");
    Problem id = one(json::parse(R"({"type":"object","$id":"https://example.com/s.json"})"));
    CHECK(id.pointer == "/" + f + "/$id");
    CHECK(id.message == label +
                            ": $id \"https://example.com/s.json\" is not allowed: a schema must be "
                            "self-contained, without a base URI");
    CHECK(one(json::parse(R"({"type":"object","$schema":"https://example.com/meta"})")).message ==
          label +
              ": $schema \"https://example.com/meta\" is not a standard JSON Schema draft "
              "(draft-04, draft-06, draft-07, 2019-09 or 2020-12)");
    Problem unenforced = one(json::parse(R"({"type":"object","unevaluatedProperties":false})"));
    CHECK(unenforced.pointer == "/" + f + "/unevaluatedProperties");
    CHECK(unenforced.message ==
          label + ": keyword \"unevaluatedProperties\" is not enforced by toolmux's validator");
    Problem dangling =
        one(json::parse(R"({"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}})"));
    CHECK(dangling.pointer == "/" + f + "/properties/a/$ref");
    CHECK(dangling.message == label + ": $ref \"#/$defs/missing\" points at nothing");
  }
}

TEST_CASE("a vetted spec's schemas compile at the first check, and one that does not fails it") {
  // Compiles only as valijson reads it: the registry refuses it unless vetted.
  const json broken = json::parse(R"({"type":"object","minimum":1,"exclusiveMinimum":true})");
  ToolSpec unvetted = valid_spec("unvetted");
  unvetted.input_schema = broken;
  CHECK(only_problem(unvetted).message ==
        "tool \"unvetted\": inputSchema: schema does not compile: Expected numeric value for "
        "exclusiveMinimum constraint.");

  ToolRegistry registry;
  ToolSpec good = valid_spec("good");
  good.schemas_vetted = true;
  good.input_schema =
      json::parse(R"({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]})");
  good.output_schema = json::parse(R"({"type":"object","properties":{"ok":{"type":"boolean"}}})");
  ToolSpec bad = valid_spec("bad");
  bad.schemas_vetted = true;
  bad.input_schema = broken;
  REQUIRE(registry.add(good, noop).empty());
  REQUIRE(registry.add(bad, noop).empty());
  // The rest of the contract is still checked at registration.
  ToolSpec not_object = valid_spec("not_object");
  not_object.schemas_vetted = true;
  not_object.input_schema = json::parse(R"({"type":"array"})");
  CHECK(only_problem(not_object).message ==
        "tool \"not_object\": inputSchema must have \"type\": \"object\", got \"array\"");

  const RegisteredTool* g = registry.find("good");
  REQUIRE(g);
  CHECK(g->input_schema.validate(json{{"n", 1}}).empty());
  CHECK(g->input_schema.validate(json{{"n", "one"}}) ==
        std::vector<std::string>{"/n: expected integer, got string"});
  CHECK(g->output_schema.validate(json{{"ok", 1}}) ==
        std::vector<std::string>{"/ok: expected boolean, got integer"});
  // A copy shares the compiled schema.
  const RegisteredTool copy = *g;
  CHECK(copy.input_schema.validate(json::object()) ==
        std::vector<std::string>{"/: missing required property \"n\""});

  // Nothing passes a schema that does not compile: the call is refused, saying why.
  const RegisteredTool* b = registry.find("bad");
  REQUIRE(b);
  const std::vector<std::string> expected{
      "/: cannot be checked: the tool's schema does not compile (/: schema does not compile: "
      "Expected numeric value for exclusiveMinimum constraint.)"};
  CHECK(b->input_schema.validate(json::object()) == expected);
  CHECK(b->input_schema.validate(json{{"n", 1}}) == expected);
  const ArgumentCheck check = check_arguments(*b, std::string_view("{}"));
  CHECK(check.message("bad") == "Invalid arguments for tool \"bad\": argument " + expected[0]);
}

TEST_CASE("schemas with local references and standard $schema are accepted") {
  ToolRegistry registry;
  ToolSpec a = valid_spec("defs");
  a.input_schema = load_schema("recursive_defs.json");
  a.output_schema = load_schema("recursive_definitions.json");
  CHECK(registry.add(a, noop).empty());
  ToolSpec b = valid_spec("drafts");
  b.input_schema =
      json::parse(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"})");
  b.output_schema =
      json::parse(R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"object"})");
  CHECK(registry.add(b, noop).empty());
  CHECK(registry.tools().size() == 2);
}

TEST_CASE("all problems at once") {
  ToolSpec spec;
  spec.name = "bad name";
  spec.input_schema = json::parse(R"({"type":"string","$id":"x"})");
  const Problems p = check_tool_spec(spec);
  CHECK(p.size() == 6);  // name, description, side effect, timeout, type, $id
  CHECK(format_problems(p).find("  /inputSchema/$id: tool \"bad name\": inputSchema: $id \"x\"") !=
        std::string::npos);
}

TEST_CASE("names, levels and results") {
  CHECK(side_effect_from_name("remote_mutation") == SideEffect::remote_mutation);
  CHECK_FALSE(side_effect_from_name("readonly"));
  CHECK(side_effect_name(SideEffect::local_mutation) == "local_mutation");
  CHECK(log_level_from_name("warning") == LogLevel::warning);
  CHECK(log_level_from_name("emergency") == LogLevel::emergency);
  CHECK_FALSE(log_level_from_name("warn"));
  CHECK(log_level_name(LogLevel::critical) == "critical");
  CHECK(ToolResult::text("hi").to_json() ==
        json::parse(R"({"content":[{"type":"text","text":"hi"}],"isError":false})"));
  CHECK(ToolResult::error("boom").to_json() ==
        json::parse(R"({"content":[{"type":"text","text":"boom"}],"isError":true})"));
  ToolResult structured = ToolResult::text("{}");
  structured.structured_content = json::object({{"a", 1}});
  CHECK(structured.to_json()["structuredContent"] == json::object({{"a", 1}}));
  CHECK(pointer_token("a/b~c") == "a~1b~0c");
  CHECK(with_prefix({{"/x", "m"}}, "/tools/0")[0].pointer == "/tools/0/x");
}
