// The catalog file: JSON that declares command tools, aliases, the operator's
// policy, result limits and the upstream MCP servers whose tools join the catalog. See
// examples/catalog.json and docs/catalog-file.md.
//
// Loading collects every problem in the file at once, each with a JSON pointer
// to where it is; unknown fields are problems too, so a typo is caught rather
// than ignored. A file with any problem is refused whole.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "catalog/aliases.h"
#include "catalog/command_spec.h"
#include "catalog/result_limits.h"
#include "catalog/search_rerank.h"
#include "catalog/tool.h"
#include "catalog/tool_policy.h"
#include "catalog/tool_registry.h"
#include "catalog/tool_search_index.h"
#include "catalog/upstream_spec.h"
#include "src/base/problem.h"

namespace toolmux {

struct CommandTool {
  ToolSpec spec;
  CommandSpec command;
};

// "discovery": whether tools/list shows every tool or only the pinned ones
// plus tool_search, call_tool and read_tool_result (the rest found by search).
struct DiscoverySettings {
  enum class Mode { automatic, on, off };
  Mode mode = Mode::automatic;  // automatic: on when the catalog has more than 40 tools
  std::vector<std::string> pinned;
};

// "authorization": toolmux over HTTP as an OAuth 2.1 resource server
// (docs/authorization.md), the same as serve's --auth-issuer, --resource-url,
// --auth-scope and --introspection-client, which add to or replace these.
// Read when serve starts; a reload does not change them.
struct AuthorizationSettings {
  std::vector<std::string> issuers;
  std::string resource;
  // Scope -> side-effect class names, in the file's order.
  std::vector<std::pair<std::string, std::vector<std::string>>> scopes;
  std::string introspection_client;
};

struct CatalogFile {
  std::vector<CommandTool> command_tools;
  AliasTable aliases;           // "aliases"
  ToolPolicy policy;            // "policy"
  ResultLimits results;         // "results"
  DiscoverySettings discovery;  // "discovery"
  SearchOptions search;         // "search": field weights, synonyms
  // "search"."learn": whether tool_search learns from the calls that follow
  // its searches (catalog/search_memory.h); on unless the file says false.
  bool search_learn = true;
  // "search"."rerank": whether tool_search asks the client's model to order
  // its candidates when it is unsure; off unless the file turns it on.
  SearchRerankSettings search_rerank;
  // "upstreams", by name. Loading checks their fields and resolves
  // their environment references; nothing is started (see src/upstream/upstreams.h).
  std::vector<UpstreamSpec> upstreams;
  AuthorizationSettings authorization;  // "authorization"
  // "skills": folders of skills (catalog/skills.h), relative ones
  // taken in the file's folder; read when the catalog is built.
  std::vector<std::filesystem::path> skills;
};

struct CatalogLoad {
  CatalogFile catalog;
  Problems problems;  // empty when the file is usable
};

// Reads and checks the file: JSON boundary, field names and types, each tool
// spec against the contract (check_tool_spec), each command against its
// schema, and the shape and ranges of "aliases", "policy" and "results" (the
// tools and arguments those name are checked by register_catalog, which knows
// the built-in tools). A relative "cwd" is taken relative to the file's
// folder. With any problem, `catalog` is left empty (all defaults).
CatalogLoad load_catalog_file(const std::filesystem::path& path);

}  // namespace toolmux
