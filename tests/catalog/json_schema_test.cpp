#include "catalog/json_schema.h"

#include <string>

#include <catch2/catch.hpp>

#include "src/base/untrusted_json.h"
#include "tests/support/fixtures.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

std::shared_ptr<const CompiledSchema> compile_ok(const json& schema) {
  Problems problems;
  auto compiled = CompiledSchema::compile(schema, problems);
  INFO(format_problems(problems));
  REQUIRE(problems.empty());
  REQUIRE(compiled);
  return compiled;
}

Problems refused(const json& schema) {
  Problems problems;
  CHECK_FALSE(CompiledSchema::compile(schema, problems));
  CHECK_FALSE(problems.empty());
  return problems;
}

bool has(const Problems& problems, const std::string& pointer, const std::string& message) {
  for (const Problem& p : problems) {
    if (p.pointer == pointer && p.message == message) return true;
  }
  return false;
}

std::string nested_not(int depth) {
  std::string text = "{}";
  for (int i = 0; i < depth; ++i) text = "{\"not\":" + text + "}";
  return text;
}

}  // namespace

TEST_CASE("local references through $defs and definitions resolve, recursively") {
  auto defs = compile_ok(load_schema("recursive_defs.json"));
  CHECK(defs
            ->validate(json::parse(
                R"({"tree":{"value":1,"children":[{"value":2,"children":[{"value":3}]}]}})"))
            .empty());
  CHECK(defs->validate(json::parse(R"({"tree":{"value":1,"children":[{"value":"two"}]}})")) ==
        std::vector<std::string>{"/tree/children/0/value: expected integer, got string"});
  CHECK(defs->validate(json::parse(R"({"tree":{"value":1,"children":[{"value":2,"extra":0}]}})")) ==
        std::vector<std::string>{"/tree/children/0: property \"extra\" is not allowed"});

  auto definitions = compile_ok(load_schema("recursive_definitions.json"));
  CHECK(
      definitions->validate(json::parse(R"({"list":{"head":"a","tail":{"head":"b","tail":null}}})"))
          .empty());
  const auto messages =
      definitions->validate(json::parse(R"({"list":{"head":"a","tail":{"tail":null}}})"));
  REQUIRE_FALSE(messages.empty());
  CHECK(messages.front() == "/list/tail: expected null, got object");

  SECTION("root reference") {
    auto root = compile_ok(json::parse(R"({"type":"object","properties":{"child":{"$ref":"#"}}})"));
    CHECK(root->validate(json::parse(R"({"child":{"child":{}}})")).empty());
    CHECK(root->validate(json::parse(R"({"child":{"child":3}})")) ==
          std::vector<std::string>{"/child/child: expected object, got integer"});
  }
  SECTION("escaped tokens") {
    compile_ok(json::parse(R"({"type":"object","properties":{"a":{"$ref":"#/$defs/a~1b~0c%20d"}},
                              "$defs":{"a/b~c d":{"type":"string"}}})"));
  }
}

TEST_CASE("$schema naming a standard draft is accepted") {
  for (const char* uri :
       {"https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-06/schema#", "http://json-schema.org/draft-04/schema#"}) {
    INFO(uri);
    compile_ok(json{{"$schema", uri}, {"type", "object"}});
  }
}

TEST_CASE("annotations, unknown keywords and data are not taken for keywords") {
  auto schema = compile_ok(load_schema("annotations_and_data.json"));
  CHECK(schema->validate(json::parse(R"({"prefixItems":"x","email":"not an email"})")).empty());
  CHECK(schema->validate(json::parse(R"({"when":"2024-02-30T10:00:00Z"})")).empty() == false);
  CHECK(schema->validate(json::parse(R"({"when":"yesterday"})")) ==
        std::vector<std::string>{
            "/when: \"yesterday\" is not a valid date-time (format \"date-time\")"});
  CHECK(schema->validate(json::parse(R"({"when":"2024-01-31T10:00:00Z"})")).empty());
}

TEST_CASE("format applies to strings only") {
  auto schema = compile_ok(json::parse(
      R"({"type":"object","properties":{"d":{"format":"date"},"t":{"format":"time","allOf":[{"type":"string"}]}}})"));
  CHECK(schema->validate(json::parse(R"({"d":5,"t":"10:00:00Z"})")).empty());
  CHECK(schema->validate(json::parse(R"({"d":{"a":1}})")).empty());
  CHECK(schema->validate(json::parse(R"({"d":"2024-13-01"})")) ==
        std::vector<std::string>{"/d: \"2024-13-01\" is not a valid date (format \"date\")"});
  CHECK(schema->validate(json::parse(R"({"t":"noon"})")) ==
        std::vector<std::string>{"/t: \"noon\" is not a valid time (format \"time\")"});
}

TEST_CASE("a $ref valijson would read differently from RFC 6901 is refused, naming why") {
  const Problems problems = refused(
      json::parse(R"({"type":"object","properties":{"a":{"$ref":"#/x~2"},"b":{"$ref":"#/x//y"},)"
                  R"("c":{"$ref":"#/x%zz"}},"x":{}})"));
  CHECK(has(problems, "/properties/a/$ref", "$ref \"#/x~2\" has an invalid ~ escape"));
  CHECK(has(problems, "/properties/b/$ref", "$ref \"#/x//y\" has an empty reference token"));
  CHECK(has(problems, "/properties/c/$ref", "$ref \"#/x%zz\" has an invalid %-escape"));
}

TEST_CASE("refused schemas: every problem, with pointers") {
  const Problems problems = refused(load_schema("many_problems.json"));
  CHECK(
      has(problems, "/$id",
          "$id \"https://example.com/tool.json\" is not allowed: a schema must be self-contained, "
          "without a base URI"));
  CHECK(has(problems, "/properties/a/$ref",
            "$ref \"other.json#/x\" refers outside the schema; only references inside the "
            "document (#/...) are allowed"));
  CHECK(has(problems, "/properties/b/$ref",
            "$ref \"https://example.com/schema.json\" refers outside the schema; only references "
            "inside the document (#/...) are allowed"));
  CHECK(has(problems, "/properties/c/$ref", "$ref \"#/$defs/missing\" points at nothing"));
  CHECK(has(problems, "/properties/d/prefixItems",
            "keyword \"prefixItems\" is not enforced by toolmux's validator"));
  CHECK(has(problems, "/properties/e/dependentRequired",
            "keyword \"dependentRequired\" is not enforced by toolmux's validator"));
  CHECK(problems.size() == 6);
}

TEST_CASE("every unenforced keyword is refused") {
  for (const char* keyword :
       {"prefixItems", "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
        "dependentSchemas", "minContains", "maxContains", "$dynamicRef", "$dynamicAnchor",
        "$recursiveRef", "$recursiveAnchor", "$vocabulary", "contentSchema"}) {
    INFO(keyword);
    const Problems problems = refused(json{{"type", "object"}, {keyword, json::object()}});
    CHECK(has(problems, std::string("/") + keyword,
              std::string("keyword \"") + keyword + "\" is not enforced by toolmux's validator"));
  }
}

TEST_CASE("$anchor names a schema and a $ref by anchor is refused naming the path to use") {
  // SEP-2106's example: the anchor stays in the schema a client lists.
  auto schema = compile_ok(json::parse(R"({"type":"object",
    "$defs":{"address":{"$anchor":"addressDef","type":"object",
                        "properties":{"city":{"type":"string"}}}},
    "properties":{"address":{"$ref":"#/$defs/address"}}})"));
  CHECK(schema->validate(json{{"address", {{"city", 3}}}}).size() == 1);
  const Problems by_anchor = refused(json::parse(R"({"type":"object",
    "$defs":{"address":{"$anchor":"addressDef","type":"object"}},
    "properties":{"address":{"$ref":"#addressDef"}}})"));
  CHECK(has(by_anchor, "/properties/address/$ref",
            "$ref \"#addressDef\" names an anchor; toolmux follows only JSON pointers inside the "
            "document (#/...): point at the anchored schema by its path"));
  const Problems bad_name =
      refused(json::parse(R"({"type":"object","$defs":{"a":{"$anchor":"1st"}}})"));
  CHECK(
      has(bad_name, "/$defs/a/$anchor",
          "$anchor \"1st\" is not a plain name (a letter or _, then letters, digits, -, _ or .)"));
}

TEST_CASE("other refusals") {
  SECTION("$schema that is not a draft") {
    const Problems p =
        refused(json::parse(R"({"type":"object","$schema":"https://example.com/my-meta"})"));
    CHECK(has(p, "/$schema",
              "$schema \"https://example.com/my-meta\" is not a standard JSON Schema draft "
              "(draft-04, draft-06, draft-07, 2019-09 or 2020-12)"));
  }
  SECTION("depth 257") {
    const Problems p = refused(json::parse(nested_not(256)));
    REQUIRE(p.size() == 1);
    CHECK(p[0].message == "schema nested deeper than 256 levels");
    compile_ok(json::parse(nested_not(255)));
  }
  SECTION("does not compile") {
    const Problems p =
        refused(json::parse(R"({"type":"object","minimum":3,"exclusiveMinimum":true})"));
    CHECK(has(p, "",
              "schema does not compile: Expected numeric value for exclusiveMinimum constraint."));
    CHECK(refused(json::parse(R"({"type":"objet"})"))[0].message.rfind("schema does not compile: ",
                                                                       0) == 0);
  }
  SECTION("a $ref cycle that never descends") {
    const Problems p = refused(json::parse(
        R"({"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}})"));
    CHECK(p.size() == 1);
    CHECK(p[0].message.find("leads back to itself without descending into the value") !=
          std::string::npos);
    CHECK_FALSE(CompiledSchema::compile(json::parse(R"({"type":"object","allOf":[{"$ref":"#"}]})"),
                                        *std::make_unique<Problems>()));
  }
  SECTION("keywords next to $ref") {
    const Problems p = refused(json::parse(
        R"({"type":"object","properties":{"a":{"$ref":"#/$defs/a","maxLength":3,"description":"ok"}},"$defs":{"a":{"type":"string"}}})"));
    CHECK(p.size() == 1);
    CHECK(has(p, "/properties/a/maxLength",
              "keyword \"maxLength\" next to $ref is not enforced by toolmux's validator; move it "
              "into an allOf"));
  }
  SECTION("invalid regular expression") {
    const Problems p =
        refused(json::parse(R"({"type":"object","properties":{"a":{"pattern":"(x"}}})"));
    CHECK(has(p, "/properties/a/pattern",
              "pattern \"(x\" is not a valid regular expression: missing closing parenthesis at "
              "offset 2"));
  }
  SECTION("a long chain of $ref") {
    json defs = json::object();
    for (int i = 0; i < 200; ++i) {
      defs["d" + std::to_string(i)] = {
          {"type", "object"},
          {"properties", {{"x", {{"$ref", "#/$defs/d" + std::to_string(i + 1)}}}}}};
    }
    defs["d200"] = {{"type", "integer"}};
    const Problems p = refused(json{
        {"type", "object"}, {"properties", {{"r", {{"$ref", "#/$defs/d0"}}}}}, {"$defs", defs}});
    CHECK(p.size() == 1);
    CHECK(has(p, "", "schema nested deeper than 256 levels once $ref is followed"));
  }
}

TEST_CASE("validation messages name the pointer and the rule") {
  auto schema = compile_ok(load_schema("tool_input.json"));
  CHECK(schema->validate(json::parse(R"({"path":"a","count":5,"mode":"fast","tags":["x"]})"))
            .empty());
  CHECK(schema->validate(json::parse(R"({"path":"a","count":"5"})")) ==
        std::vector<std::string>{"/count: expected integer, got string"});
  CHECK(schema->validate(json::parse(R"({"count":5})")) ==
        std::vector<std::string>{"/: missing required property \"path\""});
  CHECK(schema->validate(json::parse(R"({"path":"a","count":0})")) ==
        std::vector<std::string>{"/count: must be at least 1, got 0"});
  CHECK(schema->validate(json::parse(R"({"path":"a","count":101})")) ==
        std::vector<std::string>{"/count: must be at most 100, got 101"});
  CHECK(schema->validate(json::parse(R"({"path":"","mode":"slow"})")) ==
        std::vector<std::string>{"/mode: must be one of \"fast\", \"safe\", got \"slow\"",
                                 "/path: must be at least 1 characters long, got 0"});
  CHECK(schema->validate(json::parse(R"({"path":"a","tags":["x",1,"x"]})")) ==
        std::vector<std::string>{"/tags/1: expected string, got integer",
                                 "/tags: items 0 and 2 are equal, but items must be unique"});
  CHECK(schema->validate(json::parse(R"({"path":"a","b":1,"a":2})")) ==
        std::vector<std::string>{"/: properties \"a\", \"b\" are not allowed"});
  CHECK(schema->validate(json::parse(R"([])")) ==
        std::vector<std::string>{"/: expected object, got array"});
}

TEST_CASE("combinators and the rest") {
  const auto messages = [](const char* schema, const char* value) {
    Problems problems;
    auto compiled = CompiledSchema::compile(json::parse(schema), problems);
    REQUIRE(compiled);
    return compiled->validate(json::parse(value));
  };
  using V = std::vector<std::string>;
  CHECK(messages(R"({"properties":{"x":{"anyOf":[{"type":"string"},{"type":"integer"}]}}})",
                 R"({"x":true})") == V{"/x: expected string or integer, got boolean"});
  CHECK(messages(R"({"oneOf":[{"required":["a"]},{"required":["b"]}]})", R"({"a":1,"b":2})") ==
        V{"/: matches more than one of the \"oneOf\" schemas"});
  CHECK(messages(R"({"properties":{"n":{"not":{"type":"string"}}}})", R"({"n":"s"})") ==
        V{"/n: must not match the \"not\" schema"});
  CHECK(messages(R"({"properties":{"x":false}})", R"({"x":1})") ==
        V{"/x: property \"x\" is not allowed"});
  CHECK(messages(R"({"properties":{"c":{"contains":{"type":"string"}}}})", R"({"c":[1]})") ==
        V{"/c: no item matches the \"contains\" schema"});
  CHECK(messages(R"({"properties":{"k":{"const":"v"}}})", R"({"k":"w"})") ==
        V{"/k: must be \"v\", got \"w\""});
  CHECK(messages(R"({"properties":{"k":{"pattern":"^a+$"}}})", R"({"k":"b"})") ==
        V{"/k: does not match the pattern \"^a+$\""});
  CHECK(messages(R"({"properties":{"k":{"multipleOf":0.5}}})", R"({"k":1.2})") ==
        V{"/k: must be a multiple of 0.5, got 1.2"});
  CHECK(messages(R"({"if":{"required":["a"]},"then":{"required":["b"]}})", R"({"a":1})") ==
        V{"/: missing required property \"b\""});
  CHECK(messages(R"({"dependencies":{"a":["b"]}})", R"({"a":1})") ==
        V{"/: missing property \"b\", required by \"dependencies\" when another property is "
          "present"});
  CHECK(messages(R"({"properties":{"a":{"items":[{"type":"string"}],"additionalItems":false}}})",
                 R"({"a":["x",1]})") ==
        V{"/a: has more items than \"items\" lists, and \"additionalItems\" is false"});
  CHECK(messages(R"({"properties":{"i":{"type":"integer"}}})", R"({"i":1.0})") ==
        V{"/i: expected integer, got number"});
  CHECK(
      messages(R"({"properties":{"s":{"maxLength":2}}})", "{\"s\":\"\xC3\xA9\xC3\xA9\xC3\xA9\"}") ==
      V{"/s: must be at most 2 characters long, got 3"});
  CHECK(messages(R"({"properties":{"o":{"maxProperties":1}}})", R"({"o":{"a":1,"b":2}})") ==
        V{"/o: must have at most 1 properties, got 2"});
}

TEST_CASE("a 256-deep value validates against a recursive schema") {
  auto schema = compile_ok(json::parse(R"({"type":"object","properties":{"a":{"$ref":"#"}}})"));
  std::string text = "{}";
  for (int i = 0; i < 255; ++i) text = "{\"a\":" + text + "}";
  const ParsedJson parsed = parse_untrusted_json(text);
  REQUIRE(parsed.ok());
  CHECK(schema->validate(parsed.value).empty());
}

// The example catalog's path pattern, with two lookaheads.
constexpr const char* kRelativePath = R"(^(?!/)(?!(.*/)?\.\.(/|$)).+$)";

TEST_CASE("a pattern is matched without recursion: a 40,000-character argument is answered") {
  // std::regex recursed once per character and overflowed the stack (SIGSEGV).
  auto schema = compile_ok(
      json{{"type", "object"},
           {"properties", {{"path", {{"type", "string"}, {"pattern", kRelativePath}}}}}});
  CHECK(schema->validate(json{{"path", std::string(40000, 'a')}}).empty());
  CHECK(
      schema->validate(json{{"path", std::string(40000, 'a') + "/../x"}}) ==
      std::vector<std::string>{"/path: does not match the pattern " + json(kRelativePath).dump()});
  CHECK(schema->validate(json{{"path", std::string(1 << 20, '/')}}).size() == 1);
}

TEST_CASE("maxLength is checked before pattern: a string over it never reaches the matcher") {
  auto schema = compile_ok(json::parse(
      R"({"type":"object","properties":{"p":{"type":"string","maxLength":8,"pattern":"^(a+)+$"}}})"));
  CHECK(schema->validate(json{{"p", std::string(30, 'a') + "b"}}) ==
        std::vector<std::string>{"/p: must be at most 8 characters long, got 31"});
  CHECK(schema->validate(json{{"p", "aaaab"}}) ==
        std::vector<std::string>{"/p: does not match the pattern \"^(a+)+$\""});
  CHECK(schema->validate(json{{"p", "aaaa"}}).empty());
}

TEST_CASE("a pattern that backtracks catastrophically is stopped by the matching limits") {
  auto schema = compile_ok(
      json::parse(R"({"type":"object","properties":{"p":{"type":"string","pattern":"^(a+)+$"}}})"));
  CHECK(schema->validate(json{{"p", std::string(5000, 'a') + "b"}}) ==
        std::vector<std::string>{
            "/p: could not be matched against the pattern \"^(a+)+$\" within toolmux's matching "
            "limits"});
}

TEST_CASE("ECMAScript pattern features: lookahead, u escapes, $ only at the end, Unicode") {
  auto schema = compile_ok(json::parse(R"({"type":"object","properties":{
      "a":{"pattern":"^\\u0041+$"},
      "b":{"pattern":"^x$"},
      "c":{"pattern":"^.$"},
      "d":{"pattern":"^(?=.*[0-9])\\w+$"}}})"));
  CHECK(schema->validate(json{{"a", "AAA"}}).empty());
  CHECK(schema->validate(json{{"b", "x\n"}}).size() == 1);   // JavaScript: $ is the very end
  CHECK(schema->validate(json{{"c", "\xc3\xa9"}}).empty());  // one code point
  CHECK(schema->validate(json{{"d", "abc1"}}).empty());
  CHECK(schema->validate(json{{"d", "abc"}}).size() == 1);
  const Problems p = refused(json::parse(R"({"properties":{"a":{"pattern":"(?<=a+)b"}}})"));
  CHECK(p.size() == 1);
  CHECK(p.front().message.find("not a valid regular expression") != std::string::npos);
}

TEST_CASE("patternProperties and additionalProperties, matched by toolmux") {
  auto schema = compile_ok(json::parse(R"({"type":"object",
      "properties":{"name":{"type":"string"}},
      "patternProperties":{"^x-":{"type":"integer"},"^x-big":{"minimum":100}},
      "additionalProperties":false})"));
  CHECK(schema->validate(json::parse(R"({"name":"n","x-a":1,"x-big":100})")).empty());
  CHECK(schema->validate(json::parse(R"({"x-a":"one"})")) ==
        std::vector<std::string>{"/x-a: expected integer, got string"});
  CHECK(schema->validate(json::parse(R"({"x-big":5})")) ==
        std::vector<std::string>{"/x-big: must be at least 100, got 5"});
  CHECK(schema->validate(json::parse(R"({"name":"n","other":1,"more":2})")) ==
        std::vector<std::string>{"/: properties \"more\", \"other\" are not allowed"});

  auto typed = compile_ok(json::parse(R"({"type":"object",
      "patternProperties":{"^n":{"type":"number"}},
      "additionalProperties":{"$ref":"#/$defs/s"},
      "$defs":{"s":{"type":"string"}}})"));
  CHECK(typed->validate(json::parse(R"({"n1":1,"s":"text"})")).empty());
  CHECK(typed->validate(json::parse(R"({"s":1})")) ==
        std::vector<std::string>{"/s: expected string, got integer"});

  // A long property name meets the pattern with bounded matching too.
  auto names = compile_ok(json::parse(R"({"type":"object","patternProperties":{"^(a|b)*$":{}},
      "additionalProperties":false})"));
  const auto messages = names->validate(json{{std::string(100000, 'a'), 1}});
  INFO(messages.front());
  CHECK(messages.size() == 1);
}

TEST_CASE("toolmux's own keyword names are reserved in schemas") {
  const Problems p = refused(json::parse(R"({"properties":{"a":{"x-toolmux-pattern":0}}})"));
  CHECK(has(p, "/properties/a/x-toolmux-pattern",
            "keyword \"x-toolmux-pattern\" is reserved by toolmux"));
}

TEST_CASE("date, time and date-time follow RFC 3339, in linear time") {
  auto schema = compile_ok(json::parse(R"({"type":"object","properties":{
      "d":{"format":"date"},"t":{"format":"time"},"dt":{"format":"date-time"},
      "u":{"format":"uri"}}})"));
  CHECK(schema
            ->validate(json::parse(R"({"d":"2024-02-29","t":"23:59:60.5+01:00",
      "dt":"2024-01-31t10:00:00z"})"))
            .empty());
  CHECK(schema->validate(json::parse(R"({"d":"2023-02-29"})")).size() == 1);
  CHECK(schema->validate(json::parse(R"({"d":"2024-04-31"})")).size() == 1);
  CHECK(schema->validate(json::parse(R"({"t":"10:00:00"})")).size() == 1);  // no offset
  CHECK(schema->validate(json{{"dt", std::string(100000, '1')}}).size() == 1);
  // Other formats are annotations, whatever the value.
  CHECK(schema->validate(json::parse(R"({"u":{"a":1}})")).empty());
}

// A long value is cut for the message; the cut fell inside a multi-byte
// character, and the message (which goes into a JSON-RPC answer) was not UTF-8.
TEST_CASE("a long value quoted in a message is cut between characters, never inside one") {
  const auto schema =
      compile_ok(json::parse(R"({"type":"object","properties":{"s":{"const":"x"}}})"));
  for (const std::string unit : {"\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80"}) {
    for (std::size_t prefix = 0; prefix < 4; ++prefix) {
      std::string text(prefix, 'a');
      for (int i = 0; i < 40; ++i) text += unit;
      const auto messages = schema->validate(json{{"s", text}});
      REQUIRE(messages.size() == 1);
      INFO(messages[0]);
      CHECK(is_valid_utf8(messages[0]));
      CHECK_THAT(messages[0], Catch::Contains("...") || Catch::Contains("\xE2\x80\xA6"));
    }
  }
}
