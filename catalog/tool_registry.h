// Registration: where the tool contract is enforced.
//
// add() checks a spec against the whole contract and refuses it with every
// problem found, each naming the tool and the reason: the name (1-128 bytes of
// ASCII letters, digits, '_', '-', '.'; unique), a non-empty description, a
// known side-effect class, a timeout above zero, and input and output schemas
// that are JSON objects of type "object", at most 256 levels deep, compile,
// and refer to nothing outside themselves.
//
// A registry is filled once, then read: after the last add() it may be read
// from any number of threads. Entries never move once added.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/json_schema.h"
#include "catalog/tool.h"
#include "src/base/problem.h"

namespace toolmux {

struct RegisteredTool {
  ToolSpec spec;
  SideEffect side_effect;
  std::shared_ptr<const CompiledSchema> input_schema;
  std::shared_ptr<const CompiledSchema> output_schema;  // null when the spec has none
  ToolHandler handler;
  // The MCP Tool object tools/list advertises: name, title, description,
  // inputSchema, outputSchema, annotations (from the side-effect class).
  nlohmann::json descriptor;
};

// Every contract check on one spec except uniqueness. Pointers use the catalog
// file's field names: "/name", "/description", "/sideEffect", "/timeoutMs",
// "/inputSchema/...", "/outputSchema/...". Messages start with the tool's name:
// `tool "x": description is empty`.
Problems check_tool_spec(const ToolSpec& spec);

// The MCP annotations an effect class implies: readOnlyHint, destructiveHint,
// openWorldHint (spec.open_world when set, else remote effects),
// idempotentHint (when declared).
nlohmann::json annotations_for(const ToolSpec& spec, SideEffect effect);

class ToolRegistry {
 public:
  // Registers the tool, or refuses it and returns why (nothing is added then).
  Problems add(ToolSpec spec, ToolHandler handler);

  const RegisteredTool* find(std::string_view name) const;
  // In registration order.
  const std::vector<std::unique_ptr<RegisteredTool>>& tools() const { return tools_; }

 private:
  std::vector<std::unique_ptr<RegisteredTool>> tools_;
  std::map<std::string, const RegisteredTool*, std::less<>> by_name_;
};

}  // namespace toolmux
