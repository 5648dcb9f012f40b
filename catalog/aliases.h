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

#include "catalog/tool_registry.h"
#include "src/base/problem.h"

namespace toolmux {

struct AliasTable {
  // alias -> canonical tool name
  std::map<std::string, std::string, std::less<>> tools;
  // canonical tool name -> (argument alias -> canonical argument name)
  std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> arguments;

  // The canonical name for `name`: itself when it is not an alias.
  std::string_view canonical_tool(std::string_view name) const;

  // Renames aliased arguments of `tool` (a canonical name) in
  // `call_arguments`; anything but an object is left alone. Giving both an
  // alias and its canonical argument is a problem ("argument \"q\" is an alias
  // of \"query\", which is also given"), and so is giving two aliases of one
  // argument ("arguments \"q\" and \"text\" are both aliases of \"query\":
  // give one"); returns the problems, and leaves `call_arguments` as it was
  // when there are any.
  std::vector<std::string> rename_arguments(std::string_view tool,
                                            nlohmann::json& call_arguments) const;
};

// Checks the table against the registry and lists every problem, each naming
// both sides (pointers "/aliases/tools/<alias>", "/aliases/arguments/<tool>"
// and "/aliases/arguments/<tool>/<alias>", tokens escaped with pointer_token):
// - a tool alias that is also a tool's name (`alias "cat" collides with tool "cat"`);
// - a tool alias pointing at a tool that does not exist (`alias "cat" points
//   at tool "read_txt_file", which does not exist (did you mean
//   "read_text_file"?)`), or at another alias (aliases do not chain);
// - a tool alias that is not a valid tool name (1-128 of [A-Za-z0-9_.-]);
// - argument aliases for a tool that does not exist (or for a tool alias:
//   they are keyed by the canonical name), or pointing at an argument its
//   inputSchema.properties does not declare;
// - an argument alias equal to a declared argument of the same tool
//   (`argument alias "path" collides with argument "path" of tool "t"`).
// (Two aliases cannot share a name: they are keys of one JSON object, and the
// JSON boundary refuses a repeated key.)
Problems check_aliases(const AliasTable& aliases, const ToolRegistry& registry);

}  // namespace toolmux
