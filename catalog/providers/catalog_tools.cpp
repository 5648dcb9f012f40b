#include "catalog/providers/catalog_tools.h"

#include <map>
#include <string>

#include "catalog/aliases.h"
#include "catalog/providers/command_tools.h"
#include "catalog/tool_policy.h"

namespace toolmux {

Problems register_catalog(ToolRegistry& registry, const CatalogFile& catalog) {
  // Everything is checked before anything is added, so that a refused catalog
  // leaves the registry as it was.
  Problems problems;
  std::map<std::string, std::size_t> first_use;
  for (std::size_t i = 0; i < catalog.command_tools.size(); ++i) {
    const CommandTool& tool = catalog.command_tools[i];
    std::string base = "/tools/" + std::to_string(i);
    if (registry.find(tool.spec.name)) {
      problems.push_back({base + "/name", "tool \"" + tool.spec.name +
                                              "\": the name is already taken by a tool "
                                              "registered before the catalog"});
    } else if (auto [it, fresh] = first_use.emplace(tool.spec.name, i); !fresh) {
      problems.push_back({base + "/name", "tool \"" + tool.spec.name +
                                              "\": the name is already used by /tools/" +
                                              std::to_string(it->second)});
    }
    for (auto& problem : with_prefix(check_tool_spec(tool.spec), base)) {
      problems.push_back(std::move(problem));
    }
    for (auto& problem :
         with_prefix(check_command_spec(tool.command, tool.spec.input_schema), base + "/command")) {
      problems.push_back(std::move(problem));
    }
  }
  if (!problems.empty()) return problems;

  // Aliases and the policy may name built-in tools as well as the file's own,
  // so they are checked against both: a scratch registry holding what is
  // registered already plus the catalog's tools.
  bool names_tools = !catalog.aliases.tools.empty() || !catalog.aliases.arguments.empty() ||
                     !catalog.policy.arguments.empty();
  if (names_tools) {
    ToolRegistry everything;
    for (const auto& tool : registry.tools()) everything.add(tool->spec, tool->handler);
    for (const CommandTool& tool : catalog.command_tools) {
      everything.add(tool.spec, make_command_handler(tool.command));
    }
    // Names that may be an upstream's tools are checked once serve has listed
    // the upstreams (src/assembly/tool_catalog.cpp), not here.
    AliasTable aliases = catalog.aliases;
    ToolPolicy policy = catalog.policy;
    auto deferred = [&](const std::string& tool) {
      return !everything.find(tool) && may_be_upstream_tool(catalog.upstreams, tool);
    };
    std::erase_if(aliases.tools, [&](const auto& entry) { return deferred(entry.second); });
    std::erase_if(aliases.arguments, [&](const auto& entry) { return deferred(entry.first); });
    std::erase_if(policy.arguments, [&](const auto& entry) { return deferred(entry.first); });
    problems = check_aliases(aliases, everything);
    for (auto& problem : check_tool_policy(policy, everything)) {
      problems.push_back(std::move(problem));
    }
    if (!problems.empty()) return problems;
  }

  for (std::size_t i = 0; i < catalog.command_tools.size(); ++i) {
    const CommandTool& tool = catalog.command_tools[i];
    for (auto& problem : with_prefix(registry.add(tool.spec, make_command_handler(tool.command)),
                                     "/tools/" + std::to_string(i))) {
      problems.push_back(std::move(problem));
    }
  }
  return problems;
}

}  // namespace toolmux
