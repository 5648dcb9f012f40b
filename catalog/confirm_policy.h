// Which calls need a human's confirmation before they run: the catalog file's
// "policy.confirm" (docs/guarded-mutations.md). By default a destructive or
// remote_mutation tool needs one; the operator changes that per class, per
// tool (name patterns as in access rules) and per principal. Immutable once
// read; safe to read from many threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/tool.h"

namespace toolmux {

struct ConfirmRule {
  // The classes whose tools need confirmation; unset = the top-level rule's.
  std::optional<std::set<SideEffect>> classes;
  // Tool-name patterns ("*" matches any run of characters) and whether a
  // matching tool needs confirmation. When several match, true wins: an
  // operator's "confirm" is never undone by a broader "don't".
  std::map<std::string, bool, std::less<>> tools;
};

struct ConfirmPolicy {
  static constexpr std::size_t kMaxRationaleChars = 500;
  static constexpr std::size_t kMaxApproverChars = 100;

  ConfirmRule rule{std::set<SideEffect>{SideEffect::destructive, SideEffect::remote_mutation}, {}};
  std::map<std::string, ConfirmRule, std::less<>> principals;  // by principal
  // How long a legacy-era client's human may take to answer.
  std::chrono::seconds timeout{600};

  // The JSON pointer of the rule that makes `principal`'s call of `tool`
  // (whose class is `effect`) need confirmation, or nullopt when it needs
  // none. Looked at in this order, the first that decides wins: the
  // principal's tool patterns, the top-level tool patterns, the principal's
  // classes, the top-level classes. E.g. "/policy/confirm/classes" or
  // "/policy/confirm/principals/ci/tools/delete_*".
  std::optional<std::string> rule_for(std::string_view principal, std::string_view tool,
                                      SideEffect effect) const;
};

}  // namespace toolmux
