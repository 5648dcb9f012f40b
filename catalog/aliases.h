// Extra names for tools and for their arguments, declared in the catalog file.
//
// A call by a tool alias is served as the canonical tool; an aliased argument
// is renamed to its canonical name before the schema check. Aliases are not
// advertised in tools/list. Immutable once checked; safe to read from many
// threads.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "catalog/problem.h"
#include "catalog/tool_registry.h"

namespace toolmux {

struct AliasTable {
  // alias -> canonical tool name
  std::map<std::string, std::string, std::less<>> tools;
  // canonical tool name -> (argument alias -> canonical argument name)
  std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> arguments;

  // The canonical name for `name`: itself when it is not an alias.
  std::string_view canonical_tool(std::string_view name) const;

  // Renames aliased arguments of `tool` in `arguments` (an object). Giving
  // both an alias and its canonical argument is a problem ("argument \"q\" is
  // an alias of \"query\", which is also given"); returns the problems, and
  // leaves `arguments` as it was when there are any.
  std::vector<std::string> rename_arguments(std::string_view tool, nlohmann::json& arguments) const;
};

// Checks the table against the registry and lists every problem, each naming
// both sides (pointers "/aliases/tools/<alias>", "/aliases/arguments/<tool>/<alias>"):
// - a tool alias that is also a tool's name (`alias "cat" collides with tool "cat"`);
// - a tool alias pointing at a tool that does not exist;
// - a tool alias that is not a valid tool name (1-128 of [A-Za-z0-9_.-]);
// - argument aliases for a tool that does not exist, or pointing at an
//   argument its inputSchema.properties does not declare;
// - an argument alias equal to a declared argument of the same tool.
// (Two aliases cannot share a name: they are keys of one JSON object, and the
// JSON boundary refuses a repeated key.)
Problems check_aliases(const AliasTable& aliases, const ToolRegistry& registry);

}  // namespace toolmux
