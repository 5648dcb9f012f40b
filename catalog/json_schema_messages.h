// valijson's validation errors turned into toolmux's messages: each names
// where (a JSON pointer into the value) and which rule broke, in the schema's
// own terms ("/count: expected integer, got string").
//
// valijson reports in English sentences; the translation matches them by
// their text, and tests/catalog/json_schema_messages_test.cpp pins every
// sentence it matches, so a valijson that words one differently fails there
// by name. A sentence it does not know is shown as valijson wrote it.
// Pure functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolmux::json_schema {

// One error as the validator reported it.
struct ValidatorError {
  std::vector<std::string> context;  // valijson's: "<root>", then "[name]" or "[index]" per level
  std::string description;           // valijson's sentence, or own_message()'s
};

// A description that is already toolmux's message, shown after "<pointer>: "
// as it is (for the keywords toolmux checks itself).
std::string own_message(std::string_view message);

// One message per violation of `schema` by `value`, in the order given, each
// once. Errors that only wrap a more specific one at or below the same place
// are left out. Never empty: "/: does not match the schema" when nothing
// better can be said.
std::vector<std::string> schema_error_messages(const nlohmann::json& schema,
                                               const nlohmann::json& value,
                                               const std::vector<ValidatorError>& errors);

}  // namespace toolmux::json_schema
