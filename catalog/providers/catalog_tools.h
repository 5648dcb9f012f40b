// The catalog file's command tools joining a registry, with the aliases and
// the policy checked against everything the registry will then hold.
#pragma once

#include "catalog/catalog_file.h"
#include "catalog/tool_registry.h"
#include "src/base/problem.h"

namespace toolmux {

// Registers the command tools into `registry` (which may already hold built-in
// tools: a clash of names is a problem at "/tools/N/name"), after checking the
// aliases and the policy against everything registered plus the command tools
// (check_aliases, check_tool_policy), so that they may name built-in tools too.
// Returns every problem found; with any, nothing is registered and the
// registry is as it was: the caller refuses the file.
Problems register_catalog(ToolRegistry& registry, const CatalogFile& catalog);

}  // namespace toolmux
