// The protocol extensions the server declares (SEP-2133): the map of
// extension identifiers to their settings that initialize and server/discover
// give as capabilities.extensions. One place, so that each extension adds its
// entry here and both answers stay the same.
#pragma once

#include <nlohmann/json.hpp>

namespace toolmux {

struct Catalog;

// By identifier, each extension's settings object ({} for none); an empty
// object when the server declares none (the caller then leaves
// capabilities.extensions out). io.modelcontextprotocol/tasks ({}) always
// (src/pipeline/tasks.h); io.modelcontextprotocol/skills
// ({"directoryRead": true}) while the catalog serves skills.
nlohmann::json server_extensions(const Catalog& catalog);

}  // namespace toolmux
