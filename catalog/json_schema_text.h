// How schema problems and validation messages show JSON: the type of a
// value, a value cut short, a caller's text quoted. Pure functions, safe from
// any thread; they throw nothing but std::bad_alloc (invalid UTF-8 is shown
// with replacement characters).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace toolmux::json_schema {

// JSON Schema's name for the type of `value`: "integer" for a number without
// a fraction part, "number" for one with it, "null", "boolean", "string",
// "array", "object".
std::string type_name(const nlohmann::json& value);

// `value` as compact JSON, cut to 57 characters and "..." when longer than 60.
std::string brief(const nlohmann::json& value);

// `text` (a property name, a pattern: a caller's, possibly megabytes long) as
// a JSON string, its start only when long, with a note of its full size.
std::string quote(const std::string& text);

}  // namespace toolmux::json_schema
