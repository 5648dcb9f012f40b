#include "catalog/confirm_policy.h"

#include "catalog/tool_policy.h"
#include "src/base/problem.h"

namespace toolmux {

namespace {

// The first of `rule`'s patterns that matches `tool` and asks for
// confirmation; `decided` turns true when any matches (true wins over false).
std::optional<std::string> matching_pattern(const ConfirmRule& rule, std::string_view tool,
                                            bool& decided) {
  for (const auto& [pattern, confirm] : rule.tools) {
    if (!tool_pattern_matches(pattern, tool)) continue;
    decided = true;
    if (confirm) return pattern;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ConfirmPolicy::rule_for(std::string_view principal,
                                                   std::string_view tool, SideEffect effect) const {
  const auto own = principals.find(principal);
  const std::string own_at =
      own == principals.end() ? "" : "/policy/confirm/principals/" + pointer_token(own->first);
  bool decided = false;
  if (own != principals.end()) {
    if (auto pattern = matching_pattern(own->second, tool, decided)) {
      return own_at + "/tools/" + pointer_token(*pattern);
    }
    if (decided) return std::nullopt;
  }
  if (auto pattern = matching_pattern(rule, tool, decided)) {
    return "/policy/confirm/tools/" + pointer_token(*pattern);
  }
  if (decided) return std::nullopt;
  if (own != principals.end() && own->second.classes) {
    if (own->second.classes->count(effect)) return own_at + "/classes";
    return std::nullopt;
  }
  if (rule.classes && rule.classes->count(effect)) return "/policy/confirm/classes";
  return std::nullopt;
}

}  // namespace toolmux
