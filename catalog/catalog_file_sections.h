// The sections of the catalog file, one reader each (catalog/catalog_file_<section>.cpp),
// composed by load_catalog_file (catalog/catalog_file.cpp).
//
// Each reader takes its section's JSON value (an object, checked by the
// caller), reads what it can, and appends every problem it finds, each with
// the JSON pointer of where it is (under "/<section>"), to `problems`; what it
// returns is meaningful only when it appended none. Only the shape and ranges
// are checked here: the names of tools and arguments a section refers to are
// checked at registration (register_catalog). Relative paths are taken
// relative to `folder`, the file's own.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog_file.h"

namespace toolmux::catalog_file {

// One entry of "tools" at `base` ("/tools/N"): the spec checked against the
// contract (check_tool_spec), its command against the spec's input schema.
// nullopt when it has any problem.
std::optional<CommandTool> read_tool(const nlohmann::json& value, const std::string& base,
                                     const std::filesystem::path& folder, Problems& problems);

AliasTable read_aliases(const nlohmann::json& value, Problems& problems);           // "aliases"
ToolPolicy read_policy(const nlohmann::json& value, Problems& problems);            // "policy"
ResultLimits read_results(const nlohmann::json& value, Problems& problems);         // "results"
DiscoverySettings read_discovery(const nlohmann::json& value, Problems& problems);  // "discovery"
SearchOptions read_search(const nlohmann::json& value, Problems& problems);         // "search"
bool read_search_learn(const nlohmann::json& value, Problems& problems);  // "search"."learn"
SearchRerankSettings read_search_rerank(const nlohmann::json& value,
                                        Problems& problems);  // "search"."rerank"

AuthorizationSettings read_authorization(const nlohmann::json& value,
                                         Problems& problems);  // "authorization"

// One secret, or "env" value: a string, {"fromEnv": "VAR"} or {"fromFile":
// "path"} (relative to `folder`), read and remembered as a secret
// (src/base/redact.h). Nullopt with a problem at `at` when it cannot be read;
// the value itself never goes into a problem's message.
std::optional<std::string> read_env_value(const nlohmann::json& value, const std::string& at,
                                          const std::filesystem::path& folder, Problems& problems);

// "upstreams", by name: each checked, its environment and header secrets
// resolved (from toolmux's environment or files); nothing is started. An
// upstream with a problem is left out.
std::vector<UpstreamSpec> read_upstreams(const nlohmann::json& value,
                                         const std::filesystem::path& folder, Problems& problems);

}  // namespace toolmux::catalog_file
