#include "catalog/catalog_file_sections.h"

#include "catalog/catalog_file_reader.h"

namespace toolmux::catalog_file {

namespace {

const std::vector<std::string_view> kPolicyFields = {"$comment",    "arguments",        "access",
                                                     "unknownTool", "unknownArguments", "confirm"};
const std::vector<std::string_view> kConfirmFields = {"$comment", "classes", "tools", "principals",
                                                      "timeoutSeconds"};
const std::vector<std::string_view> kConfirmRuleFields = {"$comment", "classes", "tools"};

// A rule's "classes" (side-effect class names) and "tools" (pattern -> bool).
void read_confirm_rule(ObjectReader& reader, ConfirmRule& rule) {
  if (auto classes = reader.strings("classes", false)) {
    std::set<SideEffect> effects;
    for (std::size_t i = 0; i < classes->size(); ++i) {
      if (auto effect = side_effect_from_name((*classes)[i])) {
        effects.insert(*effect);
      } else {
        reader.add(reader.pointer("classes") + "/" + std::to_string(i),
                   json((*classes)[i]).dump() +
                       " is not a side-effect class (read_only, local_mutation, remote_mutation, "
                       "destructive)");
      }
    }
    rule.classes = std::move(effects);
  }
  if (const json* tools = reader.object("tools", false)) {
    for (const auto& [pattern, confirm] : tools->items()) {
      if (!confirm.is_boolean()) {
        reader.add(
            reader.pointer("tools") + "/" + pointer_token(pattern),
            "expected a boolean (whether the tool needs confirmation), got " + type_name(confirm));
        continue;
      }
      rule.tools[pattern] = confirm.get<bool>();
    }
  }
}

ConfirmPolicy read_confirm(const json& value, const std::string& at, Problems& problems) {
  ConfirmPolicy confirm;
  ObjectReader reader(value, at, problems);
  reader.reject_unknown(kConfirmFields);
  reader.string("$comment", false);
  read_confirm_rule(reader, confirm.rule);
  reader.object_members(
      "principals", "\"classes\" and \"tools\"",
      [&](const std::string& principal, const json& member, const std::string& member_at) {
        ObjectReader rule_reader(member, member_at, problems);
        rule_reader.reject_unknown(kConfirmRuleFields);
        rule_reader.string("$comment", false);
        read_confirm_rule(rule_reader, confirm.principals[principal]);
      });
  constexpr std::uint64_t kDaySeconds = 24ULL * 3600;
  if (auto seconds = reader.integer("timeoutSeconds", false, 1, kDaySeconds)) {
    confirm.timeout = std::chrono::seconds(*seconds);
  }
  return confirm;
}
const std::vector<std::string_view> kArgumentPolicyFields = {"$comment", "defaults", "fixed"};
const std::vector<std::string_view> kAccessRuleFields = {"$comment", "allow", "deny"};

}  // namespace

// "policy": only the shape; check_tool_policy checks the tools and arguments
// it names at registration.
ToolPolicy read_policy(const json& value, Problems& problems) {
  ToolPolicy policy;
  ObjectReader reader(value, "/policy", problems);
  reader.reject_unknown(kPolicyFields);
  reader.string("$comment", false);
  if (const json* arguments = reader.object("arguments", false)) {
    for (const auto& [tool, item] : arguments->items()) {
      const std::string tool_at = reader.pointer("arguments") + "/" + pointer_token(tool);
      if (!item.is_object()) {
        reader.add(tool_at,
                   "expected an object (\"defaults\" and \"fixed\"), got " + type_name(item));
        continue;
      }
      ObjectReader tool_reader(item, tool_at, problems);
      tool_reader.reject_unknown(kArgumentPolicyFields);
      tool_reader.string("$comment", false);
      ArgumentPolicy& argument_policy = policy.arguments[tool];
      if (const json* defaults = tool_reader.object("defaults", false)) {
        argument_policy.defaults = *defaults;
      }
      if (const json* fixed = tool_reader.object("fixed", false)) argument_policy.fixed = *fixed;
      for (const auto& [name, default_value] : argument_policy.defaults.items()) {
        if (!argument_policy.fixed.contains(name)) continue;
        tool_reader.add(
            tool_reader.pointer("defaults") + "/" + pointer_token(name),
            "argument " + json(name).dump() + " has both a default and a fixed value (" +
                tool_reader.pointer("fixed") + "/" + pointer_token(name) + "): give one");
      }
    }
  }
  if (const json* access = reader.object("access", false)) {
    for (const auto& [principal, item] : access->items()) {
      const std::string rule_at = reader.pointer("access") + "/" + pointer_token(principal);
      if (!item.is_object()) {
        reader.add(rule_at, "expected an object (\"allow\" and \"deny\"), got " + type_name(item));
        continue;
      }
      ObjectReader rule_reader(item, rule_at, problems);
      rule_reader.reject_unknown(kAccessRuleFields);
      rule_reader.string("$comment", false);
      AccessRule& rule = policy.access[principal];
      if (auto allow = rule_reader.strings("allow", false)) rule.allow = std::move(*allow);
      if (auto deny = rule_reader.strings("deny", false)) rule.deny = std::move(*deny);
    }
  }
  if (const json* confirm = reader.object("confirm", false)) {
    policy.confirm = read_confirm(*confirm, reader.pointer("confirm"), problems);
  }
  if (auto answer = reader.string("unknownTool", false)) {
    if (*answer == "error") {
      policy.unknown_tool = UnknownToolAnswer::protocol_error;
    } else if (*answer == "result") {
      policy.unknown_tool = UnknownToolAnswer::tool_result;
    } else {
      reader.add(reader.pointer("unknownTool"),
                 "unknownTool must be \"error\" or \"result\", not " + json(*answer).dump());
    }
  }
  if (auto arguments = reader.string("unknownArguments", false)) {
    if (*arguments == "pass" || *arguments == "reject") {
      policy.reject_unknown_arguments = *arguments == "reject";
    } else {
      reader.add(reader.pointer("unknownArguments"),
                 "unknownArguments must be \"pass\" or \"reject\", not " + json(*arguments).dump());
    }
  }
  return policy;
}

}  // namespace toolmux::catalog_file
