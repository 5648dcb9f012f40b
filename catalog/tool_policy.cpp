#include "catalog/tool_policy.h"

#include <cstddef>
#include <utility>

#include "src/base/edit_distance.h"
#include "src/base/utf8.h"

namespace toolmux {
namespace {

using nlohmann::json;

// `text` as a JSON string, for messages.
std::string quote(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

// " (did you mean \"x\"?)" for the closest of `candidates`, or "".
template <typename Names>
std::string suggestion(std::string_view name, const Names& candidates) {
  const std::vector<std::string_view> names(std::begin(candidates), std::end(candidates));
  const std::vector<std::size_t> best = closest_names(names, name, 1);
  return best.empty() ? "" : " (did you mean " + quote(names[best[0]]) + "?)";
}

std::vector<std::string> tool_names(const ToolRegistry& registry) {
  std::vector<std::string> names;
  for (const auto& tool : registry.tools()) names.push_back(tool->spec.name);
  return names;
}

std::vector<std::string> keys_of(const json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

// A value for a message, shortened when long.
std::string shown(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= 60) return text;
  return std::string(utf8_prefix(text, 57)) + "...";
}

// Whether a message of CompiledSchema::validate is about the value at `pointer`
// or below it ("/max_results: ..." or "/max_results/0: ..." for "/max_results").
bool about(const std::string& message, const std::string& pointer) {
  if (message.rfind(pointer, 0) != 0 || message.size() == pointer.size()) return false;
  char next = message[pointer.size()];
  return next == ':' || next == '/';
}

}  // namespace

bool tool_pattern_matches(std::string_view pattern, std::string_view name) {
  // Greedy matching with one backtrack point: the last '*' seen.
  std::size_t p = 0;
  std::size_t n = 0;
  std::size_t star = std::string_view::npos;
  std::size_t star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_n = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<std::string> ToolPolicy::denial(std::string_view principal,
                                              std::string_view tool) const {
  auto rule = access.find(principal);
  if (rule == access.end()) rule = access.find(std::string_view("*"));
  if (rule == access.end()) return std::nullopt;
  const std::string at = "/policy/access/" + pointer_token(rule->first);
  const AccessRule& access_rule = rule->second;
  for (std::size_t i = 0; i < access_rule.deny.size(); ++i) {
    if (tool_pattern_matches(access_rule.deny[i], tool)) {
      return "denied by " + at + "/deny/" + std::to_string(i) + " (" + quote(access_rule.deny[i]) +
             ")";
    }
  }
  if (access_rule.allow.empty()) return std::nullopt;
  for (const std::string& pattern : access_rule.allow) {
    if (tool_pattern_matches(pattern, tool)) return std::nullopt;
  }
  return "not in " + at + "/allow";
}

std::vector<std::string> ToolPolicy::apply_arguments(std::string_view tool,
                                                     json& call_arguments) const {
  std::vector<std::string> problems;
  auto policy = arguments.find(tool);
  if (policy == arguments.end()) return problems;
  if (call_arguments.is_null()) call_arguments = json::object();
  if (!call_arguments.is_object()) return problems;  // the schema check refuses it
  for (const auto& [name, value] : policy->second.fixed.items()) {
    if (call_arguments.contains(name)) {
      problems.push_back("argument " + quote(name) + " is fixed by the operator and cannot be set");
    }
  }
  if (!problems.empty()) return problems;
  for (const auto& [name, value] : policy->second.defaults.items()) {
    if (!call_arguments.contains(name)) call_arguments[name] = value;
  }
  for (const auto& [name, value] : policy->second.fixed.items()) call_arguments[name] = value;
  return problems;
}

json ToolPolicy::advertised_schema(std::string_view tool, const json& schema) const {
  json advertised = schema;
  auto policy = arguments.find(tool);
  if (policy == arguments.end() || policy->second.fixed.empty() || !advertised.is_object()) {
    return advertised;
  }
  const json& fixed = policy->second.fixed;
  auto properties = advertised.find("properties");
  if (properties != advertised.end() && properties->is_object()) {
    for (const auto& [name, value] : fixed.items()) properties->erase(name);
  }
  auto required = advertised.find("required");
  if (required != advertised.end() && required->is_array()) {
    json kept = json::array();
    for (const json& name : *required) {
      if (!(name.is_string() && fixed.contains(name.get<std::string>()))) kept.push_back(name);
    }
    // An empty "required" is invalid in draft 4; leaving it out means the same.
    if (kept.empty()) {
      advertised.erase("required");
    } else {
      *required = std::move(kept);
    }
  }
  return advertised;
}

Problems check_tool_policy(const ToolPolicy& policy, const ToolRegistry& registry) {
  Problems problems;
  for (const auto& [tool_name, argument_policy] : policy.arguments) {
    const std::string tool_at = "/policy/arguments/" + pointer_token(tool_name);
    const RegisteredTool* tool = registry.find(tool_name);
    if (!tool) {
      problems.push_back({tool_at, "argument policy for tool " + quote(tool_name) +
                                       ", which does not exist" +
                                       suggestion(tool_name, tool_names(registry))});
      continue;
    }
    static const json kNone = json::object();
    const json& schema = tool->spec.input_schema;
    const json* properties = &kNone;
    if (schema.is_object()) {
      auto it = schema.find("properties");
      if (it != schema.end() && it->is_object()) properties = &*it;
    }
    const std::vector<std::string> declared = keys_of(*properties);
    const std::pair<const char*, const json*> kinds[] = {{"defaults", &argument_policy.defaults},
                                                         {"fixed", &argument_policy.fixed}};
    for (const auto& [kind, values] : kinds) {
      const char* what = kind == std::string_view("fixed") ? "fixed value" : "default";
      for (const auto& [name, value] : values->items()) {
        const std::string at = tool_at + "/" + kind + "/" + pointer_token(name);
        if (!properties->contains(name)) {
          problems.push_back({at, "tool " + quote(tool_name) + " declares no argument " +
                                      quote(name) + suggestion(name, declared)});
          continue;
        }
        // Checked alone, so that only what the schema says about this one
        // argument counts (not, say, the other required arguments).
        if (!tool->input_schema) continue;
        const std::string pointer = "/" + pointer_token(name);
        std::string mismatch;
        for (const std::string& message : tool->input_schema.validate(json{{name, value}})) {
          if (!about(message, pointer)) continue;
          mismatch += (mismatch.empty() ? "" : "; ") + message;
        }
        if (!mismatch.empty()) {
          problems.push_back({at, std::string("the ") + what + " " + shown(value) +
                                      " of argument " + quote(name) +
                                      " does not match the input schema of tool " +
                                      quote(tool_name) + ": " + mismatch});
        }
      }
    }
  }
  return problems;
}

}  // namespace toolmux
