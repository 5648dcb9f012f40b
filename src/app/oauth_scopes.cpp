#include "src/app/oauth_scopes.h"

#include <algorithm>

#include "src/builtins/call_tool.h"

namespace toolmux {
namespace {

// The class of the tool `params` names, through call_tool when it is the one
// named; nullopt when no tool goes by that name.
std::optional<SideEffect> called_class(const Catalog& catalog, const nlohmann::json& params) {
  const nlohmann::json* p = &params;
  // call_tool names one tool; call_tool naming call_tool is refused by the pipeline.
  for (int depth = 0; depth < 2; ++depth) {
    if (!p->is_object()) return std::nullopt;
    const auto name = p->find("name");
    if (name == p->end() || !name->is_string()) return std::nullopt;
    const std::string_view canonical =
        catalog.aliases.canonical_tool(name->get_ref<const std::string&>());
    const RegisteredTool* tool = catalog.registry->find(canonical);
    if (tool == nullptr) return std::nullopt;
    if (canonical != kCallTool || depth == 1) return tool->side_effect;
    const auto arguments = p->find("arguments");
    if (arguments == p->end()) return std::nullopt;
    p = &*arguments;
  }
  return std::nullopt;
}

bool holds(const std::vector<std::string>& scopes, std::string_view scope) {
  return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
}

bool allows(const ScopeGrant& grant, SideEffect effect) {
  return std::find(grant.classes.begin(), grant.classes.end(), effect) != grant.classes.end();
}

}  // namespace

std::vector<ScopeGrant> scope_grants(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& configured) {
  std::vector<ScopeGrant> out;
  for (const auto& [scope, names] : configured) {
    ScopeGrant grant{scope, {}};
    for (const auto& name : names) {
      if (auto effect = side_effect_from_name(name)) grant.classes.push_back(*effect);
    }
    out.push_back(std::move(grant));
  }
  return out;
}

std::optional<std::string> scope_needed(const Catalog& catalog,
                                        const std::vector<ScopeGrant>& grants,
                                        std::string_view method, const nlohmann::json& params,
                                        const std::vector<std::string>& scopes) {
  if (grants.empty()) return std::nullopt;
  SideEffect effect = SideEffect::read_only;
  if (method == "tools/call") {
    auto found = called_class(catalog, params);
    if (!found) return std::nullopt;
    effect = *found;
  }
  const ScopeGrant* first = nullptr;
  for (const auto& grant : grants) {
    if (!allows(grant, effect)) continue;
    if (holds(scopes, grant.scope)) return std::nullopt;
    if (first == nullptr) first = &grant;
  }
  return first == nullptr ? std::string() : first->scope;
}

std::string connect_scope(const std::vector<ScopeGrant>& grants) {
  for (const auto& grant : grants) {
    if (allows(grant, SideEffect::read_only)) return grant.scope;
  }
  return {};
}

}  // namespace toolmux
