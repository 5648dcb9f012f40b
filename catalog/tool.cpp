#include "catalog/tool.h"

#include <array>
#include <utility>

namespace toolmux {

namespace {

constexpr std::array<std::pair<std::string_view, SideEffect>, 4> kSideEffects{{
    {"read_only", SideEffect::read_only},
    {"local_mutation", SideEffect::local_mutation},
    {"remote_mutation", SideEffect::remote_mutation},
    {"destructive", SideEffect::destructive},
}};

}  // namespace

std::optional<SideEffect> side_effect_from_name(std::string_view name) {
  for (const auto& [text, effect] : kSideEffects) {
    if (text == name) return effect;
  }
  return std::nullopt;
}

std::string_view side_effect_name(SideEffect effect) {
  for (const auto& [text, value] : kSideEffects) {
    if (value == effect) return text;
  }
  return "unknown";
}

ToolResult ToolResult::text(std::string text) {
  ToolResult result;
  json block(json::value_t::object);
  block["type"] = "text";
  block["text"] = std::move(text);
  result.content.push_back(std::move(block));
  return result;
}

ToolResult ToolResult::error(std::string message) {
  ToolResult result = text(std::move(message));
  result.is_error = true;
  return result;
}

json ToolResult::to_json() const& { return ToolResult(*this).to_json(); }

json ToolResult::to_json() && {
  json out = json::object();
  out["content"] = content.is_array() ? std::move(content) : json::array();
  if (!structured_content.is_null()) out["structuredContent"] = std::move(structured_content);
  out["isError"] = is_error;
  if (meta.is_object()) out["_meta"] = std::move(meta);
  return out;
}

MissingClientCapability::MissingClientCapability(json missing, const std::string& message)
    : std::runtime_error(message.empty()
                             ? "the client did not declare the capabilities " + missing.dump()
                             : message),
      missing_(std::move(missing)) {}

void require_client_capabilities(const CallContext& context, const json& required) {
  const json declared = context.client_capabilities();
  json missing = json::object();
  for (const auto& [name, value] : required.items()) {
    if (!declared.is_object() || !declared.contains(name)) missing[name] = value;
  }
  if (!missing.empty()) throw MissingClientCapability(std::move(missing));
}

}  // namespace toolmux
