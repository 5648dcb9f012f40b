#include "src/pipeline/redact_result.h"

#include <string>
#include <utility>

#include "src/base/personal_data.h"
#include "src/base/redact.h"

namespace toolmux::stages {

namespace {

using nlohmann::json;

// Redacts the string at `value`, if it is one, in place: its secrets, then
// the personal data of `classes`.
void redact_string(json& value, PersonalDataClasses classes) {
  if (!value.is_string()) return;
  const auto& text = value.get_ref<const std::string&>();
  if (needs_redaction(text)) value = redact(text);
  if (!classes.empty()) value = redact_personal_data(value.get_ref<const std::string&>(), classes);
}

// A text block's text, or an embedded resource's text.
void redact_block(json& block, PersonalDataClasses classes) {
  if (!block.is_object()) return;
  const auto type = block.find("type");
  if (type == block.end() || !type->is_string()) return;
  if (*type == "text") {
    if (auto text = block.find("text"); text != block.end()) redact_string(*text, classes);
  } else if (*type == "resource") {
    auto resource = block.find("resource");
    if (resource == block.end() || !resource->is_object()) return;
    if (auto text = resource->find("text"); text != resource->end()) {
      redact_string(*text, classes);
    }
  }
}

// Redacts `result` in place, the personal data of `classes` too; true when
// its structuredContent changed.
bool redact_in_place(ToolResult& result, PersonalDataClasses classes) {
  if (result.content.is_array()) {
    for (json& block : result.content) redact_block(block, classes);
  }
  if (result.structured_content.is_null()) return false;
  json redacted = redact_json(result.structured_content);
  // A tool with no class (the default) pays for no second copy.
  if (!classes.empty()) redacted = redact_personal_data_json(redacted, classes);
  if (redacted == result.structured_content) return false;
  result.structured_content = std::move(redacted);
  return true;
}

// `result` (a success) without its structuredContent, which redaction took
// out of its tool's outputSchema: an error that says so.
CallResult without_structured_content(const ToolCall& call, ToolResult result) {
  result.structured_content = nullptr;
  result.content.push_back(
      {{"type", "text"},
       {"text", "[toolmux: tool " + json_quoted(call.tool->spec.name) +
                    " returned structuredContent that held secrets or personal data; redacted, "
                    "it no longer matches the tool's outputSchema, so it is left out]"}});
  return CallResult::bad_result(std::move(result));
}

}  // namespace

CallStage redact_result() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("redact_result", "tool", "resolve_tool");
      CallResult out = next(call);
      if (!carries_result(out) ||
          !redact_in_place(out.result, call.tool->spec.redact_personal_data)) {
        return out;
      }
      const auto& schema = call.tool->output_schema;
      if (out.result.is_error || !schema ||
          schema.validate(out.result.structured_content).empty()) {
        return out;
      }
      return without_structured_content(call, std::move(out.result));
    };
  };
}

}  // namespace toolmux::stages
