#include "catalog/aliases.h"

#include <cstddef>
#include <utility>

#include "src/base/edit_distance.h"

namespace toolmux {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxNameBytes = 128;

// `text` as a JSON string, for messages: quoted, with control characters and
// bad UTF-8 escaped or replaced.
std::string quote(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

bool valid_tool_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// " (did you mean \"x\"?)" for the closest registered tool name, or "".
std::string tool_suggestion(std::string_view name, const ToolRegistry& registry) {
  std::vector<std::string_view> names;
  for (const auto& tool : registry.tools()) names.emplace_back(tool->spec.name);
  const std::vector<std::size_t> best = closest_names(names, name, 1);
  return best.empty() ? "" : " (did you mean " + quote(names[best[0]]) + "?)";
}

// " (did you mean \"x\"?)" for the closest property of `properties`, or "".
std::string argument_suggestion(std::string_view name, const json& properties) {
  std::vector<std::string_view> keys;
  for (const auto& [key, value] : properties.items()) keys.emplace_back(key);
  const std::vector<std::size_t> best = closest_names(keys, name, 1);
  return best.empty() ? "" : " (did you mean " + quote(keys[best[0]]) + "?)";
}

// inputSchema.properties of a registered tool, or an empty object.
const json& declared_properties(const RegisteredTool& tool) {
  static const json kNone = json::object();
  const json& schema = tool.spec.input_schema;
  if (!schema.is_object()) return kNone;
  auto it = schema.find("properties");
  if (it == schema.end() || !it->is_object()) return kNone;
  return *it;
}

}  // namespace

std::string_view AliasTable::canonical_tool(std::string_view name) const {
  auto it = tools.find(name);
  return it == tools.end() ? name : std::string_view(it->second);
}

std::vector<std::string> AliasTable::rename_arguments(std::string_view tool,
                                                      json& call_arguments) const {
  std::vector<std::string> problems;
  auto table = arguments.find(tool);
  if (table == arguments.end() || !call_arguments.is_object()) return problems;

  // canonical name -> the alias given for it (the first, in alias order)
  std::map<std::string, std::string, std::less<>> renamed;
  for (const auto& [alias, canonical] : table->second) {
    if (!call_arguments.contains(alias)) continue;
    if (call_arguments.contains(canonical)) {
      problems.push_back("argument " + quote(alias) + " is an alias of " + quote(canonical) +
                         ", which is also given");
      continue;
    }
    auto [it, fresh] = renamed.emplace(canonical, alias);
    if (!fresh) {
      problems.push_back("arguments " + quote(it->second) + " and " + quote(alias) +
                         " are both aliases of " + quote(canonical) + ": give one");
    }
  }
  if (!problems.empty()) return problems;
  for (const auto& [canonical, alias] : renamed) {
    auto it = call_arguments.find(alias);
    json value = std::move(*it);
    call_arguments.erase(it);
    call_arguments[canonical] = std::move(value);
  }
  return problems;
}

Problems check_aliases(const AliasTable& aliases, const ToolRegistry& registry) {
  Problems problems;
  for (const auto& [alias, target] : aliases.tools) {
    const std::string at = "/aliases/tools/" + pointer_token(alias);
    if (!valid_tool_name(alias)) {
      problems.push_back({at, "alias " + quote(alias) +
                                  " is not a valid tool name (1-128 bytes of ASCII letters, "
                                  "digits, '_', '-', '.')"});
    }
    if (registry.find(alias)) {
      problems.push_back({at, "alias " + quote(alias) + " collides with tool " + quote(alias)});
    }
    if (!registry.find(target)) {
      if (aliases.tools.count(target)) {
        problems.push_back({at, "alias " + quote(alias) + " points at " + quote(target) +
                                    ", which is an alias, not a tool (aliases do not chain)"});
      } else {
        problems.push_back({at, "alias " + quote(alias) + " points at tool " + quote(target) +
                                    ", which does not exist" + tool_suggestion(target, registry)});
      }
    }
  }

  for (const auto& [tool_name, table] : aliases.arguments) {
    const std::string tool_at = "/aliases/arguments/" + pointer_token(tool_name);
    const RegisteredTool* tool = registry.find(tool_name);
    if (!tool) {
      auto alias = aliases.tools.find(tool_name);
      if (alias != aliases.tools.end()) {
        problems.push_back({tool_at, "argument aliases for " + quote(tool_name) +
                                         ", which is an alias of " + quote(alias->second) +
                                         ": list them under the tool's own name"});
      } else {
        problems.push_back({tool_at, "argument aliases for tool " + quote(tool_name) +
                                         ", which does not exist" +
                                         tool_suggestion(tool_name, registry)});
      }
      continue;
    }
    const json& properties = declared_properties(*tool);
    for (const auto& [alias, canonical] : table) {
      const std::string at = tool_at + "/" + pointer_token(alias);
      if (properties.contains(alias)) {
        problems.push_back({at, "argument alias " + quote(alias) + " collides with argument " +
                                    quote(alias) + " of tool " + quote(tool_name)});
      }
      if (!properties.contains(canonical)) {
        problems.push_back({at, "argument alias " + quote(alias) + " points at argument " +
                                    quote(canonical) + ", which tool " + quote(tool_name) +
                                    " does not declare" +
                                    argument_suggestion(canonical, properties)});
      }
    }
  }
  return problems;
}

}  // namespace toolmux
