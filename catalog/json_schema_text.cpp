#include "catalog/json_schema_text.h"

#include "src/base/utf8.h"

namespace toolmux::json_schema {

using nlohmann::json;

// Names from a caller (property names) may be megabytes long: quote their start.
std::string quote(const std::string& text) {
  return json(clip_for_message(text)).dump(-1, ' ', false, json::error_handler_t::replace) +
         clipped_size_note(text);
}

std::string type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

// Short rendering of a value for a message, cut between characters (the
// dump is UTF-8: invalid bytes were replaced).
std::string brief(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= 60) return text;
  return std::string(utf8_prefix(text, 57)) + "...";
}

}  // namespace toolmux::json_schema
