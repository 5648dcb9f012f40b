#include "catalog/tool_result_shape.h"

#include <initializer_list>
#include <string_view>
#include <utility>

namespace toolmux {
namespace {

using nlohmann::json;

enum class Kind { string, number, object, boolean };

bool is(const json& value, Kind kind) {
  switch (kind) {
    case Kind::string:
      return value.is_string();
    case Kind::number:
      return value.is_number();
    case Kind::object:
      return value.is_object();
    case Kind::boolean:
      return value.is_boolean();
  }
  return false;
}

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::string:
      return "a string";
    case Kind::number:
      return "a number";
    case Kind::object:
      return "an object";
    case Kind::boolean:
      return "a boolean";
  }
  return "";
}

std::string type_text(const json& value) {
  const std::string_view name = value.type_name();
  return (name == "array" || name == "object" ? "an " : "a ") + std::string(name);
}

// "/<key> ..." when `object[key]` is missing (and required) or of another kind.
std::optional<std::string> field_problem(const json& object, const char* key, Kind kind,
                                         bool required) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (!required) return std::nullopt;
    return "/" + std::string(key) + " is missing";
  }
  if (is(*it, kind)) return std::nullopt;
  return "/" + std::string(key) + " must be " + std::string(kind_name(kind)) + " (it is " +
         type_text(*it) + ")";
}

// The first problem among `checks`, in order.
std::optional<std::string> first(std::initializer_list<std::optional<std::string>> checks) {
  for (const auto& check : checks) {
    if (check) return check;
  }
  return std::nullopt;
}

std::optional<std::string> resource_contents_problem(const json& resource) {
  if (!resource.is_object())
    return "/resource must be an object (it is " + type_text(resource) + ")";
  if (auto why = first({field_problem(resource, "uri", Kind::string, true),
                        field_problem(resource, "mimeType", Kind::string, false),
                        field_problem(resource, "_meta", Kind::object, false)})) {
    return "/resource" + *why;
  }
  // TextResourceContents or BlobResourceContents.
  if (resource.contains("text")) return field_problem(resource, "text", Kind::string, true);
  if (resource.contains("blob")) return field_problem(resource, "blob", Kind::string, true);
  return std::string("/resource must have a text or a blob");
}

// content_problem's judgement of one block; the pointer is from the block.
std::optional<std::string> content_block_problem(const json& block) {
  if (!block.is_object()) return "must be an object (it is " + type_text(block) + ")";
  if (auto why = field_problem(block, "type", Kind::string, true)) return why;
  if (auto why = first({field_problem(block, "annotations", Kind::object, false),
                        field_problem(block, "_meta", Kind::object, false)})) {
    return why;
  }
  const std::string& type = block["type"].get_ref<const std::string&>();
  if (type == "text") return field_problem(block, "text", Kind::string, true);
  if (type == "image" || type == "audio") {
    return first({field_problem(block, "data", Kind::string, true),
                  field_problem(block, "mimeType", Kind::string, true)});
  }
  if (type == "resource_link") {
    return first({field_problem(block, "uri", Kind::string, true),
                  field_problem(block, "name", Kind::string, true),
                  field_problem(block, "title", Kind::string, false),
                  field_problem(block, "description", Kind::string, false),
                  field_problem(block, "mimeType", Kind::string, false),
                  field_problem(block, "size", Kind::number, false)});
  }
  if (type == "resource") {
    if (!block.contains("resource")) return std::string("/resource is missing");
    return resource_contents_problem(block["resource"]);
  }
  return "/type " + json(type).dump(-1, ' ', false, json::error_handler_t::replace) +
         " is not an MCP content type (text, image, audio, resource_link, resource)";
}

}  // namespace

std::optional<std::string> content_problem(const json& content) {
  if (!content.is_array()) return "/content must be an array (it is " + type_text(content) + ")";
  for (std::size_t i = 0; i < content.size(); ++i) {
    if (auto why = content_block_problem(content[i])) {
      return "/content/" + std::to_string(i) + (why->front() == '/' ? "" : " ") + *why;
    }
  }
  return std::nullopt;
}

const std::string* text_of_block(const json& block) {
  if (!block.is_object()) return nullptr;
  const auto type = block.find("type");
  if (type == block.end() || !type->is_string() || type->get_ref<const std::string&>() != "text") {
    return nullptr;
  }
  const auto text = block.find("text");
  return text != block.end() && text->is_string() ? &text->get_ref<const std::string&>() : nullptr;
}

std::optional<std::string> structured_content_problem(const json& structured) {
  if (structured.is_null() || structured.is_object()) return std::nullopt;
  return "structuredContent must be an object (it is " + type_text(structured) + ")";
}

Result<ToolResult> read_tool_result(const json& result) {
  if (!result.is_object()) {
    return Status::invalid_argument("the result must be an object (it is " + type_text(result) +
                                    ")");
  }
  auto content = result.find("content");
  if (content == result.end()) return Status::invalid_argument("/content is missing");
  if (auto why = content_problem(*content)) return Status::invalid_argument(*why);
  auto structured = result.find("structuredContent");
  if (structured != result.end()) {
    if (auto why = structured_content_problem(*structured)) {
      return Status::invalid_argument("/" + *why);
    }
  }
  if (auto why = first({field_problem(result, "isError", Kind::boolean, false),
                        field_problem(result, "_meta", Kind::object, false)})) {
    return Status::invalid_argument(*why);
  }
  ToolResult out;
  out.content = *content;
  if (structured != result.end()) out.structured_content = *structured;
  if (auto is_error = result.find("isError"); is_error != result.end()) {
    out.is_error = is_error->get<bool>();
  }
  return out;
}

}  // namespace toolmux
