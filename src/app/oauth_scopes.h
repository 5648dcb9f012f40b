// What an OAuth access token's scopes let its holder do (serve --auth-scope):
// each scope names the side-effect classes of the tools it may call. A
// tools/call needs a scope that allows its tool's class (through call_tool
// too: the tool call_tool names counts); every other request needs a scope
// that allows read_only. Which scope a client is told to ask for is the first
// one, in the operator's order, that allows what it asked.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "src/assembly/tool_catalog.h"

namespace toolmux {

struct ScopeGrant {
  std::string scope;
  std::vector<SideEffect> classes;
};

// From ServeOptions::auth_scopes (whose class names the command line checked).
std::vector<ScopeGrant> scope_grants(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& configured);

// The scope the request (`method`, `params`) needs that `scopes` lacks;
// "" when no configured scope allows it; nullopt when `scopes` reach it, or
// when `grants` is empty (scopes are not used), or the tool is unknown (the
// server answers that itself).
std::optional<std::string> scope_needed(const Catalog& catalog,
                                        const std::vector<ScopeGrant>& grants,
                                        std::string_view method, const nlohmann::json& params,
                                        const std::vector<std::string>& scopes);

// The first scope that allows read_only ("" when none does): what a client
// with no token is told to ask for.
std::string connect_scope(const std::vector<ScopeGrant>& grants);

}  // namespace toolmux
