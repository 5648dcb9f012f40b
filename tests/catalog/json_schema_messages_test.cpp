// valijson's English sentences, pinned. catalog/json_schema_messages.cpp
// recognises each by its words: a valijson that words one differently fails
// here, naming the keyword, instead of silently showing its raw sentence to
// users. Each case pins valijson's own sentence (validating with valijson
// alone) and the message toolmux gives for the same schema and value.
#include "catalog/json_schema_messages.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "catalog/json_schema.h"
#include "catalog/valijson.h"

using nlohmann::json;
using toolmux::CompiledSchema;
using toolmux::Problems;

namespace {

// What valijson alone says of `value` under `schema`, sentence by sentence.
std::vector<std::string> valijson_says(const json& schema, const json& value) {
  valijson::Schema compiled;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema);
  parser.populateSchema(schema_adapter, compiled);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(value);
  validator.validate(compiled, target, &results);
  std::vector<std::string> sentences;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) sentences.push_back(error.description);
  return sentences;
}

// What toolmux says.
std::vector<std::string> toolmux_says(const json& schema, const json& value) {
  Problems problems;
  auto compiled = CompiledSchema::compile(schema, problems);
  std::string refused;
  for (const auto& problem : problems) refused += problem.pointer + ": " + problem.message + "\n";
  INFO("the schema is refused: " << refused);
  REQUIRE(compiled);
  return compiled->validate(value);
}

struct Pinned {
  const char* keyword;               // what the sentence is about
  const char* schema;                // JSON
  const char* value;                 // JSON
  const char* valijson;              // one of valijson's sentences, word for word
  std::vector<std::string> toolmux;  // all of toolmux's messages
};

void check(const Pinned& pin) {
  const json schema = json::parse(pin.schema);
  const json value = json::parse(pin.value);
  DYNAMIC_SECTION("valijson's sentence for " << pin.keyword) {
    {
      INFO("valijson no longer says \""
           << pin.valijson << "\" for " << pin.keyword
           << ": catalog/json_schema_messages.cpp matches those words");
      CHECK_THAT(valijson_says(schema, value), Catch::VectorContains(std::string(pin.valijson)));
    }
    INFO("toolmux's message for " << pin.keyword);
    CHECK(toolmux_says(schema, value) == pin.toolmux);
  }
}

}  // namespace

TEST_CASE("valijson's sentences for the value's own constraints are pinned") {
  const std::vector<Pinned> pins{
      {"type",
       R"({"type": "integer"})",
       R"("x")",
       "Value type not permitted by 'type' constraint.",
       {"/: expected integer, got string"}},
      {"required",
       R"({"required": ["path"]})",
       "{}",
       "Missing required property 'path'.",
       {"/: missing required property \"path\""}},
      {"additionalProperties: false",
       R"({"properties": {"a": {}}, "additionalProperties": false})",
       R"({"a": 1, "b": 2, "c": 3})",
       "Object contains a property that could not be validated using 'properties' or "
       "'additionalProperties' constraints: 'b'.",
       {"/: properties \"b\", \"c\" are not allowed"}},
      {"enum",
       R"({"enum": ["a", "b"]})",
       R"("c")",
       "Failed to match against any enum values.",
       {"/: must be one of \"a\", \"b\", got \"c\""}},
      {"const",
       R"({"const": 1})",
       "2",
       "Failed to match expected value set by 'const' constraint.",
       {"/: must be 1, got 2"}},
      {"maximum",
       R"({"maximum": 5})",
       "6",
       "Expected number less than or equal to 5.000000",
       {"/: must be at most 5, got 6"}},
      {"exclusiveMaximum",
       R"({"exclusiveMaximum": 5})",
       "5",
       "Expected number less than 5.000000",
       {"/: must be less than 5, got 5"}},
      {"minimum",
       R"({"minimum": 2.5})",
       "2",
       "Expected number greater than or equal to 2.500000",
       {"/: must be at least 2.5, got 2"}},
      {"exclusiveMinimum",
       R"({"exclusiveMinimum": 5})",
       "5",
       "Expected number greater than 5.000000",
       {"/: must be greater than 5, got 5"}},
      {"multipleOf",
       R"({"multipleOf": 3})",
       "4",
       "Value should be a multiple of 3",
       {"/: must be a multiple of 3, got 4"}},
      {"multipleOf (a fraction)",
       R"({"multipleOf": 0.5})",
       "0.7",
       "Value should be a multiple of 0.500000",
       {"/: must be a multiple of 0.5, got 0.7"}},
      {"maxItems",
       R"({"maxItems": 1})",
       "[1, 2]",
       "Array should contain no more than 1 elements.",
       {"/: must have at most 1 items, got 2"}},
      {"minItems",
       R"({"minItems": 2})",
       "[1]",
       "Array should contain no fewer than 2 elements.",
       {"/: must have at least 2 items, got 1"}},
      {"maxLength",
       R"({"maxLength": 2})",
       R"("abc")",
       "String should be no more than 2 characters in length.",
       {"/: must be at most 2 characters long, got 3"}},
      {"minLength",
       R"({"minLength": 2})",
       R"("a")",
       "String should be no fewer than 2 characters in length.",
       {"/: must be at least 2 characters long, got 1"}},
      {"maxProperties",
       R"({"maxProperties": 1})",
       R"({"a": 1, "b": 2})",
       "Object should have no more than 1 properties.",
       {"/: must have at most 1 properties, got 2"}},
      {"minProperties",
       R"({"minProperties": 1})",
       "{}",
       "Object should have no fewer than 1 properties.",
       {"/: must have at least 1 properties, got 0"}},
      {"uniqueItems",
       R"({"uniqueItems": true})",
       "[1, 2, 1]",
       "Elements at indexes #0 and #2 violate uniqueness constraint.",
       {"/: items 0 and 2 are equal, but items must be unique"}},
      {"contains",
       R"({"contains": {"const": 1}})",
       "[2]",
       "Failed to any values against subschema in 'contains' constraint.",
       {"/: no item matches the \"contains\" schema"}},
      {"not",
       R"({"not": {"type": "string"}})",
       R"("x")",
       "Target should not validate against schema specified in 'not' constraint.",
       {"/: must not match the \"not\" schema"}},
      {"oneOf (more than one)",
       R"({"oneOf": [{"type": "string"}, {"minLength": 1}]})",
       R"("x")",
       "Failed to validate against exactly one child schema.",
       {"/: matches more than one of the \"oneOf\" schemas"}},
      {"dependencies (property list)",
       R"({"dependencies": {"a": ["b"]}})",
       R"({"a": 1})",
       "Missing dependency 'b'.",
       {"/: missing property \"b\", required by \"dependencies\" when another property is "
        "present"}},
      {"additionalItems: false",
       R"({"items": [{}], "additionalItems": false})",
       "[1, 2]",
       "Array contains more items than allowed by items constraint.",
       {"/: has more items than \"items\" lists, and \"additionalItems\" is false"}},
      {"additionalItems: false (the item)",
       R"({"items": [{}], "additionalItems": false})",
       "[1, 2]",
       "Cannot validate item #1 or greater using 'items' constraint or 'additionalItems' "
       "constraint.",
       {"/: has more items than \"items\" lists, and \"additionalItems\" is false"}},
  };
  for (const Pinned& pin : pins) check(pin);
}

// valijson wraps a subschema's error in one of its own; toolmux shows the
// wrapper only when nothing more specific was said (a false subschema says
// nothing), and leaves it out otherwise.
TEST_CASE("valijson's sentences for subschemas that fail are pinned") {
  const std::vector<Pinned> pins{
      {"items (one schema)",
       R"({"items": false})",
       "[1]",
       "Failed to validate item #0 in array.",
       {"/0: does not match the \"items\" schema"}},
      {"items (one schema), covered",
       R"({"items": {"type": "integer"}})",
       R"(["x"])",
       "Failed to validate item #0 in array.",
       {"/0: expected integer, got string"}},
      {"items (a schema per item)",
       R"({"items": [false]})",
       "[1]",
       "Failed to validate item #0 against corresponding item schema.",
       {"/0: does not match its schema in \"items\""}},
      {"items (a schema per item), covered",
       R"({"items": [{"type": "integer"}]})",
       R"(["x"])",
       "Failed to validate item #0 against corresponding item schema.",
       {"/0: expected integer, got string"}},
      {"additionalItems",
       R"({"items": [{}], "additionalItems": false, "minItems": 0})",
       "[1, 2]",
       "Array contains more items than allowed by items constraint.",
       {"/: has more items than \"items\" lists, and \"additionalItems\" is false"}},
      {"additionalItems (a schema)",
       R"({"items": [{}], "additionalItems": {"not": {}}})",
       "[1, 2]",
       "Failed to validate item #1 against additional items schema.",
       {"/1: must not match the \"not\" schema"}},
      {"properties",
       R"({"properties": {"a": false}})",
       R"({"a": 1})",
       "Failed to validate against schema associated with property name 'a'.",
       {"/a: property \"a\" is not allowed"}},
      {"properties, covered",
       R"({"properties": {"a": {"type": "integer"}}})",
       R"({"a": "x"})",
       "Failed to validate against schema associated with property name 'a'.",
       {"/a: expected integer, got string"}},
      {"additionalProperties (a schema)",
       R"({"properties": {"a": {}}, "additionalProperties": {"type": "integer"}})",
       R"({"b": "x"})",
       "Failed to validate against additional properties schema",
       {"/b: expected integer, got string"}},
      {"allOf",
       R"({"allOf": [false]})",
       R"("x")",
       "Failed to validate against child schema #0.",
       {"/: does not match subschema #0"}},
      {"anyOf",
       R"({"anyOf": [false, false]})",
       R"("x")",
       "Failed to validate against any schemas allowed by anyOf constraint.",
       {"/: does not match subschema #0", "/: does not match subschema #1",
        "/: matches none of the \"anyOf\" schemas"}},
      {"oneOf (none)",
       R"({"oneOf": [false, false]})",
       R"("x")",
       "Failed to validate against any child schemas allowed by oneOf constraint.",
       {"/: does not match subschema #0", "/: does not match subschema #1",
        "/: matches none of the \"oneOf\" schemas"}},
      {"if/then",
       R"({"if": {"type": "string"}, "then": false})",
       R"("x")",
       "Failed to validate against a conditional schema set by if-then-else constraints.",
       {"/: does not match the \"then\"/\"else\" schema its \"if\" selects"}},
      {"if/then, covered",
       R"({"if": {"type": "string"}, "then": {"minLength": 3}})",
       R"("x")",
       "Failed to validate against a conditional schema set by if-then-else constraints.",
       {"/: must be at least 3 characters long, got 1"}},
      {"dependencies (a schema)",
       R"({"dependencies": {"a": false}})",
       R"({"a": 1})",
       "Failed to validate against dependent schema.",
       {"/: does not match a schema in \"dependencies\""}},
  };
  for (const Pinned& pin : pins) check(pin);
}

// "pattern", "patternProperties" and the date/time formats never reach
// valijson: toolmux checks them itself (catalog/json_schema.cpp), in
// valijson's words, so that they translate like the rest.
TEST_CASE("the keywords toolmux checks itself translate like valijson's") {
  CHECK(toolmux_says(R"({"pattern": "^a"})"_json, "b") ==
        std::vector<std::string>{"/: does not match the pattern \"^a\""});
  CHECK(toolmux_says(R"({"format": "date-time"})"_json, "b") ==
        std::vector<std::string>{"/: \"b\" is not a valid date-time (format \"date-time\")"});
  CHECK(toolmux_says(R"({"patternProperties": {"^x": {"type": "integer"}}})"_json,
                     R"({"xa": "s"})"_json) ==
        std::vector<std::string>{"/xa: expected integer, got string"});
  CHECK(toolmux_says(R"({"patternProperties": {"^x": false}})"_json, R"({"xa": "s"})"_json) ==
        std::vector<std::string>{
            "/: a property matching \"^x\" does not match its schema in \"patternProperties\""});
  const json closed = R"({"patternProperties": {"^x": {}}, "additionalProperties": false})"_json;
  CHECK(toolmux_says(closed, R"({"xa": 1, "b": 2, "c": 3})"_json) ==
        std::vector<std::string>{"/: properties \"b\", \"c\" are not allowed"});
  CHECK(toolmux_says(closed, R"({"xa": 1, "b": 2})"_json) ==
        std::vector<std::string>{"/: property \"b\" is not allowed"});
  CHECK(
      toolmux_says(
          R"({"patternProperties": {"^x": {}}, "additionalProperties": {"type": "integer"}})"_json,
          R"({"b": "s"})"_json) == std::vector<std::string>{"/b: expected integer, got string"});
  CHECK(toolmux_says(R"({"patternProperties": {"^x": {}}, "additionalProperties": false})"_json,
                     R"({"b": "s"})"_json) ==
        std::vector<std::string>{"/: property \"b\" is not allowed"});
  CHECK(
      toolmux_says(R"({"patternProperties": {"^x": {}}, "additionalProperties": {"not": {}}})"_json,
                   R"({"b": "s"})"_json) ==
      std::vector<std::string>{"/b: must not match the \"not\" schema"});
  // A false subschema says nothing itself: the wrapper is all there is.
  CHECK(
      toolmux_says(
          R"({"patternProperties": {"^x": {}}, "additionalProperties": {"$ref": "#/$defs/no"},
                         "$defs": {"no": false}})"_json,
          R"({"b": "s"})"_json) ==
      std::vector<std::string>{"/: a property does not match the \"additionalProperties\" schema"});
}

TEST_CASE("a sentence the translation does not know is shown as valijson wrote it") {
  const std::vector<toolmux::json_schema::ValidatorError> errors{
      {{"<root>", "[a]"}, "Some sentence a later valijson may write."}};
  CHECK(toolmux::json_schema::schema_error_messages(json::object(), R"({"a": 1})"_json, errors) ==
        std::vector<std::string>{"/a: Some sentence a later valijson may write."});
  CHECK(toolmux::json_schema::schema_error_messages(json::object(), json::object(), {}) ==
        std::vector<std::string>{"/: does not match the schema"});
  CHECK(toolmux::json_schema::schema_error_messages(
            json::object(), json::object(),
            {{{"<root>"}, toolmux::json_schema::own_message("said in toolmux's words")}}) ==
        std::vector<std::string>{"/: said in toolmux's words"});
}
