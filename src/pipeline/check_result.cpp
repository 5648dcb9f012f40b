#include "src/pipeline/check_result.h"

#include <utility>

#include "catalog/tool_result_shape.h"
#include "src/base/base64.h"
#include "src/base/json_text.h"
#include "src/base/untrusted_json.h"
#include "src/base/utf8.h"
#include "src/pipeline/spotlight.h"

namespace toolmux::stages {

namespace {

using nlohmann::json;

// The bad_result answer for `returned`, which broke the rule `reason` names:
// the reason, then what the tool returned as JSON text, so that nothing it
// said is lost (the result stages after this one still redact and limit it).
// The spotlight stage leaves answers toolmux wrote alone: what an untrusted
// tool returned is marked as data here.
CallResult refused(const ToolCall& call, std::string reason, ToolResult&& returned) {
  // As the tool gave it: to_json() would replace content that is not a list.
  json given = json::object();
  given["content"] = std::move(returned.content);
  if (!returned.structured_content.is_null()) {
    given["structuredContent"] = std::move(returned.structured_content);
  }
  given["isError"] = returned.is_error;
  if (!returned.meta.is_null()) given["_meta"] = std::move(returned.meta);
  std::string text = json_text(given);
  ToolResult error = ToolResult::error(std::move(reason) + "; the " + std::to_string(text.size()) +
                                       " bytes of JSON it returned follow");
  if (call.tool->spec.untrusted_output) text = spotlight_text(call.tool->spec.name, text);
  error.content.push_back({{"type", "text"}, {"text", std::move(text)}});
  return CallResult::bad_result(std::move(error));
}

}  // namespace

CallStage check_result() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("check_result", "tool", "resolve_tool");
      CallResult out = next(call);
      // No result to judge: none goes out, or the question does instead.
      if (out.outcome == CallOutcome::cancelled || out.outcome == CallOutcome::input_required) {
        return out;
      }
      ToolResult& r = out.result;
      if (!r.content.is_array()) {
        return refused(call, tool_label(call) + " returned content that is not a list",
                       std::move(r));
      }
      if (auto why = content_problem(r.content)) {
        return refused(call, tool_label(call) + " returned content MCP does not allow: " + *why,
                       std::move(r));
      }
      for (const auto& block : r.content) {
        if (json_depth(block) > JsonLimits{}.max_depth) {
          return refused(call, tool_label(call) + " returned content nested deeper than 256 levels",
                         std::move(r));
        }
      }
      // Text that is not UTF-8 cannot travel in JSON: an error that still
      // carries the bytes, as base64, so nothing the tool said is lost.
      for (const auto& block : r.content) {
        const std::string* text_ptr = text_of_block(block);
        if (!text_ptr) continue;
        const std::string& text = *text_ptr;
        if (!is_valid_utf8(text)) {
          ToolResult error =
              ToolResult::error(tool_label(call) + " returned text that is not valid UTF-8; its " +
                                std::to_string(text.size()) + " bytes follow, base64-encoded");
          error.content.push_back({{"type", "text"}, {"text", base64_encode(text)}});
          return CallResult::bad_result(std::move(error));
        }
      }
      // Anything else that could not be written as JSON (NaN, bad UTF-8 in
      // another block or in structuredContent) is an error naming where.
      for (const json* part : {&r.content, &r.structured_content}) {
        if (auto why = unserializable_json(*part)) {
          return refused(call,
                         tool_label(call) +
                             " returned a result that cannot be sent as JSON: " + *why +
                             (part == &r.content ? " of its content" : " of its structuredContent"),
                         std::move(r));
        }
      }
      const auto& output_schema = call.tool->output_schema;
      if (auto why = structured_content_problem(r.structured_content)) {
        return refused(
            call, tool_label(call) + " returned structuredContent MCP does not allow: /" + *why,
            std::move(r));
      }
      if (!r.structured_content.is_null()) {
        if (json_depth(r.structured_content) > JsonLimits{}.max_depth) {
          return refused(
              call, tool_label(call) + " returned structuredContent nested deeper than 256 levels",
              std::move(r));
        }
        if (output_schema && !r.is_error) {
          auto violations = output_schema.validate(r.structured_content);
          if (!violations.empty()) {
            std::string message = tool_label(call) +
                                  " returned structuredContent that does not match its "
                                  "outputSchema:";
            for (const auto& v : violations) message += " " + v + ";";
            message.pop_back();
            return refused(call, std::move(message), std::move(r));
          }
        }
      } else if (output_schema && !r.is_error) {
        return refused(call,
                       tool_label(call) +
                           " returned no structuredContent although it declares an outputSchema",
                       std::move(r));
      }
      return out;
    };
  };
}

}  // namespace toolmux::stages
