// Registration: where the tool contract is enforced.
//
// add() checks a spec against the whole contract and refuses it with every
// problem found, each naming the tool and the reason: the name (1-128 bytes of
// ASCII letters, digits, '_', '-', '.'; unique), a non-empty description, a
// known side-effect class, a timeout above zero, input and output schemas
// that are JSON objects of type "object", at most 256 levels deep, compile,
// and refer to nothing outside themselves, and a description for every
// property of the input schema (not asked of an upstream's tools) (a built-in tool's schemas, which
// the tests compile, are compiled at its first call instead: ToolSchema).
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

// A tool's input or output schema as the registry keeps it: compiled at
// registration, or at the first validate() when the spec's schemas are vetted
// (ToolSpec::schemas_vetted). Copies share the one compiled schema; validate()
// may be called from any number of threads.
class ToolSchema {
 public:
  ToolSchema() = default;  // the spec declares none
  explicit ToolSchema(std::shared_ptr<const CompiledSchema> compiled);
  // Compiled by the first validate().
  static ToolSchema on_first_use(nlohmann::json source);

  // Whether the spec declares this schema.
  explicit operator bool() const { return state_ != nullptr; }

  // As CompiledSchema::validate. A vetted schema that does not compile (a
  // defect in toolmux, which the tests are there to catch) fails every value
  // with one message that says so, so that nothing passes unchecked.
  std::vector<std::string> validate(const nlohmann::json& value) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

struct RegisteredTool {
  ToolSpec spec;
  SideEffect side_effect;
  ToolSchema input_schema;
  ToolSchema output_schema;  // false when the spec has none
  ToolHandler handler;
  // The MCP Tool object tools/list advertises: name, title, description,
  // inputSchema, outputSchema, annotations (from the side-effect class).
  nlohmann::json descriptor;
};

// Whose contract a tool is: a tool toolmux serves as its own (built-in,
// command, native) must meet all of it; an upstream's tool, which toolmux
// relays but does not own, is spared the rules an upstream can break without
// harm to the call (undescribed properties: the upstream's log warns of them).
enum class ToolOwner { toolmux, upstream };

// Each property `input_schema` declares (under "properties", at any depth:
// nested objects, array items, $defs, allOf/anyOf/oneOf branches, but not
// conditions such as if/then/else) whose schema has no non-blank
// "description", directly or, for a "$ref", at its target; a branch may
// restate a property its enclosing schema describes. Each problem's pointer is
// the property's, relative to the schema's root:
// "/properties/options/properties/depth". The walk keeps its own stack; the
// schema must be one audit_schema accepts (bounded depth).
Problems undescribed_properties(const nlohmann::json& input_schema);

// Every contract check on one spec except uniqueness. Pointers use the catalog
// file's field names: "/name", "/description", "/sideEffect", "/timeoutMs",
// "/inputSchema/...", "/outputSchema/...". Messages start with the tool's name:
// `tool "x": description is empty`.
Problems check_tool_spec(const ToolSpec& spec, ToolOwner owner = ToolOwner::toolmux);

// The MCP annotations an effect class implies: readOnlyHint, destructiveHint,
// openWorldHint (spec.open_world when set, else remote effects),
// idempotentHint (when declared).
nlohmann::json annotations_for(const ToolSpec& spec, SideEffect effect);

class ToolRegistry {
 public:
  // Registers the tool, or refuses it and returns why (nothing is added then).
  Problems add(ToolSpec spec, ToolHandler handler, ToolOwner owner = ToolOwner::toolmux);

  const RegisteredTool* find(std::string_view name) const;
  // The tools whose spec carries `tag` (ToolSpec::tags, compared exactly), in
  // registration order; empty when none does.
  std::vector<const RegisteredTool*> with_tag(std::string_view tag) const;
  // In registration order.
  const std::vector<std::unique_ptr<RegisteredTool>>& tools() const { return tools_; }

 private:
  std::vector<std::unique_ptr<RegisteredTool>> tools_;
  std::map<std::string, const RegisteredTool*, std::less<>> by_name_;
};

}  // namespace toolmux
