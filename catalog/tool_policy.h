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

#include "catalog/confirm_policy.h"
#include "catalog/tool_registry.h"
#include "src/base/problem.h"

namespace toolmux {

struct ArgumentPolicy {
  // Applied when the caller leaves them out.
  nlohmann::json defaults = nlohmann::json::object();
  // Always applied; the caller may not set them; hidden from the advertised schema.
  nlohmann::json fixed = nlohmann::json::object();
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
  std::map<std::string, AccessRule, std::less<>> access;         // by principal; "*" = anyone else
  UnknownToolAnswer unknown_tool = UnknownToolAnswer::protocol_error;
  // "unknownArguments": "reject": a call of a tool whose input schema accepts
  // arguments it does not declare (accepts_undeclared_arguments) is refused
  // when it passes one; "pass" (the default) lets them reach the tool.
  bool reject_unknown_arguments = false;
  ConfirmPolicy confirm;  // which calls a human confirms first

  // Why `principal` may not call `tool` (a canonical name), naming the rule
  // by its pointer, or nullopt when allowed. The rule for a principal is
  // access[principal] if present, else access["*"], else everything is
  // allowed. A tool is allowed iff (allow is empty or an allow pattern
  // matches) and no deny pattern matches. A deny is reported first, with the
  // first matching pattern: `denied by /policy/access/*/deny/0 ("write_*")`;
  // else a tool no allow pattern matches: `not in /policy/access/alice/allow`.
  std::optional<std::string> denial(std::string_view principal, std::string_view tool) const;

  // Applies defaults (only where absent) and fixed values (always) of `tool`
  // to `call_arguments`: null counts as {}, anything else but an object is
  // left alone for the schema check to refuse. A caller-supplied value for a
  // fixed argument, even an equal one, is a problem ("argument \"x\" is fixed
  // by the operator and cannot be set"); returns the problems, and leaves
  // `call_arguments` as it was when there are any.
  std::vector<std::string> apply_arguments(std::string_view tool,
                                           nlohmann::json& call_arguments) const;

  // The inputSchema to advertise: a copy of `schema` without the fixed
  // arguments (gone from "properties" and "required"; a "required" left
  // empty is removed). Everything else is kept. Arguments are still checked
  // against the full schema, after apply_arguments.
  nlohmann::json advertised_schema(std::string_view tool, const nlohmann::json& schema) const;
};

// Checks the policy against the registry: tools named in "arguments" exist
// ("/policy/arguments/<tool>"), every default and fixed argument is declared
// by the tool's inputSchema.properties, and its value, checked alone against
// the tool's input schema, breaks none of the schema's rules for that argument
// ("/policy/arguments/<tool>/defaults/<arg>", ".../fixed/<arg>"). Access
// patterns are not checked: one may name a tool that is offered only
// sometimes (write_text_file).
Problems check_tool_policy(const ToolPolicy& policy, const ToolRegistry& registry);

// Whether `name` matches `pattern` ("*" matches any run of characters,
// including none; everything else, '?' and '[' too, matches itself). Case
// matters.
bool tool_pattern_matches(std::string_view pattern, std::string_view name);

}  // namespace toolmux
