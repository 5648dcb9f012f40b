// The operator's policy over tools, declared in the catalog file: argument
// defaults and fixed values per tool, who may call what, and how an unknown
// tool name is answered. Immutable once checked; safe to read from many threads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/problem.h"
#include "catalog/tool_registry.h"

namespace toolmux {

struct ArgumentPolicy {
  nlohmann::json defaults = nlohmann::json::object();  // applied when the caller leaves them out
  nlohmann::json fixed = nlohmann::json::object();     // always applied; hidden from the advertised schema
};

// Tool-name patterns: "*" matches any run of characters, everything else is literal.
struct AccessRule {
  std::vector<std::string> allow;  // empty = everything
  std::vector<std::string> deny;
};

enum class UnknownToolAnswer {
  protocol_error,  // JSON-RPC -32602 with suggestions in its message and data (the default)
  tool_result,     // an isError result with the same text
};

struct ToolPolicy {
  std::map<std::string, ArgumentPolicy, std::less<>> arguments;  // by canonical tool name
  std::map<std::string, AccessRule, std::less<>> access;          // by principal; "*" = anyone else
  UnknownToolAnswer unknown_tool = UnknownToolAnswer::protocol_error;

  // Why `principal` may not call `tool`, naming the rule
  // ("denied by /policy/access/*/deny/0 \"write_*\""), or nullopt when allowed.
  // The rule for a principal is access[principal] if present, else access["*"],
  // else everything is allowed.
  std::optional<std::string> denial(std::string_view principal, std::string_view tool) const;

  // Applies defaults and fixed values of `tool` to `arguments` (an object). A
  // caller-supplied value for a fixed argument is a problem
  // ("argument \"x\" is fixed by the operator and cannot be set").
  std::vector<std::string> apply_arguments(std::string_view tool, nlohmann::json& arguments) const;

  // The inputSchema to advertise: `schema` without the fixed arguments (gone
  // from "properties" and "required").
  nlohmann::json advertised_schema(std::string_view tool, const nlohmann::json& schema) const;
};

// Checks the policy against the registry: tools named in "arguments" exist,
// and every default and fixed argument is declared by the tool's schema.
// Pointers: "/policy/arguments/<tool>/defaults/<arg>" etc.
Problems check_tool_policy(const ToolPolicy& policy, const ToolRegistry& registry);

bool tool_pattern_matches(std::string_view pattern, std::string_view name);

}  // namespace toolmux
