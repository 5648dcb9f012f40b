// Assembles what a server offers into one immutable snapshot: the built-in
// filesystem tools, read_tool_result, call_tool, the catalog file's command
// tools, the tools of its upstream MCP servers (when they are started), tool_search with its index
// over all of them, and the file's aliases, policy and result limits. Used by `serve` and by
// `check`, so both judge a catalog file the same way. A snapshot is shared (std::shared_ptr) by
// every call that uses it and read from many threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/aliases.h"
#include "catalog/catalog_file.h"
#include "catalog/prompt_provider.h"
#include "catalog/provider_router.h"
#include "catalog/resource_provider.h"
#include "catalog/result_limits.h"
#include "catalog/tool_policy.h"
#include "catalog/tool_registry.h"
#include "src/assembly/native.h"
#include "src/assembly/serve_options.h"
#include "src/base/logger.h"
#include "src/base/problem.h"
#include "src/builtins/search_clicks.h"
#include "src/builtins/tool_search.h"
#include "src/store/lazy_result_store.h"
#include "src/upstream/upstream_providers.h"
#include "src/upstream/upstreams.h"

namespace toolmux {

class SkillSet;

struct Catalog {
  std::shared_ptr<const ToolRegistry> registry;
  AliasTable aliases;
  ToolPolicy policy;
  ResultLimits limits;
  // What tools/list shows, in registration order: each tool's descriptor with
  // the operator's fixed arguments hidden from its inputSchema.
  std::vector<nlohmann::json> published;
  std::size_t command_tool_count = 0;
  std::size_t upstream_tool_count = 0;
  // Where the registry's tools come from: in registration order, the
  // built-ins (builtin_tool_count of them), the catalog file's command tools
  // (command_tool_count), the upstreams' tools (tool_upstream: registered
  // name -> upstream name), then tool_search, also a built-in.
  std::size_t builtin_tool_count = 0;
  std::map<std::string, std::string, std::less<>> tool_upstream;
  // Each upstream's resources and prompts (among `providers`), by upstream
  // name, for its notifications.
  std::map<std::string, UpstreamFeatures> upstream_features;
  std::size_t serving_upstreams = 0;  // upstreams with at least one tool in the catalog
  // "This server offers 2,880 tools: ...", for the server's instructions (not
  // tool_search's description, which stays the same as the catalog changes).
  std::string summary;
  std::size_t declared_upstreams = 0;  // in the catalog file, started or not
  // The tools whose input schema lets a call pass arguments it does not
  // declare (accepts_undeclared_arguments), in registration order: `check`
  // and serve's log warn of them unless the policy rejects such arguments.
  std::vector<std::string> open_schema_tools;
  // Discovery: when on, tools/list shows only `always_listed` (the pinned
  // tools, tool_search, call_tool, read_tool_result) plus what each session's
  // searches found.
  bool discovery = false;
  std::set<std::string, std::less<>> always_listed;
  // What tool_search answers from (set once every tool is registered).
  std::shared_ptr<SearchIndexHolder> search = std::make_shared<SearchIndexHolder>();
  // Learning from use: the searches and the calls that follow them
  // (src/builtins/search_clicks.h), shared by every catalog serve builds, and
  // the memory tool_search ranks by. Null when the catalog does not learn
  // ("search": {"learn": false}) or the builder gave none (check, search).
  std::shared_ptr<SearchClicks> search_clicks;
  // The write freeze (serve --read-only, or data_dir/write-freeze): its
  // reason while it is on. Every tool but read_only ones is then left out of
  // `published` (so of tools/list and tool_search) and refused by call_refusal.
  std::optional<std::string> write_freeze;
  // The most severe class a principal reaches through call_tool (the tools
  // its access rules let it call, and under a freeze only the reads), by the
  // access rules' principal keys ("*" among them); call_tool_reach() reads it.
  std::map<std::string, SideEffect, std::less<>> call_tool_reach_by_rule;
  SideEffect call_tool_reach_unruled = SideEffect::read_only;  // no rule applies
  // call_tool's tools/list entry for each rule whose reach differs from the
  // published one's (call_tool_listing).
  std::map<std::string, nlohmann::json, std::less<>> call_tool_listed_by_rule;
  // Resources, resource templates, prompts and completion: the native
  // providers, then the session's offloaded results (src/builtins/result_resources.h).
  std::shared_ptr<ProviderRouter> providers;
  // The catalog file's skills (catalog/skills.h), served as the
  // io.modelcontextprotocol/skills extension; null when it names none.
  std::shared_ptr<const SkillSet> skills;
  // The catalog file's "authorization" (serve --http reads it when it starts).
  AuthorizationSettings authorization;
  // The hooks of the program that embeds toolmux (NativeProviders::hooks),
  // which every call runs through (src/pipeline/call_hooks.h).
  CallHooks hooks;
};

// Null with problems when anything is wrong; problems from the catalog file
// carry pointers into it, problems from the command line start with "/roots",
// problems of native tools with "/native/<index>".
// `results` backs read_tool_result (may be null for `check`).
// `upstreams`: when given (`serve`), the tools its upstreams listed join,
// with what cannot join logged to `logger` and never fatal; aliases, policy
// and pins that name upstream tools are checked against them then (a name
// that is missing is logged and its entry left out). When null (`check`,
// `search`), upstreams are checked in the file only and not started, and
// names that may belong to an upstream (its prefix, an override's name) are
// not checked. `preloaded`: the catalog file as already loaded (else it is
// loaded from options.catalog_file). `native_providers` join the catalog's
// providers ahead of the offloaded results. `clicks`: what serve learns from
// use with, kept in the catalog unless its file says "learn": false.
std::shared_ptr<const Catalog> build_catalog(
    const ServeOptions& options, const std::shared_ptr<LazyResultStore>& results,
    Problems& problems, const std::vector<NativeTool>& native_tools = {},
    const UpstreamSet* upstreams = nullptr, Logger* logger = nullptr,
    const CatalogLoad* preloaded = nullptr, const NativeProviders& native_providers = {},
    std::shared_ptr<SearchClicks> clicks = nullptr);

// Why `principal` may not call `tool` now: the operator's access rules ("is
// not allowed for ..."), then the write freeze (a tool that is not read_only:
// "did not run: writes are frozen, ..."), to follow the tool's name in a
// message. Nullopt when it may.
std::optional<std::string> call_refusal(const Catalog& catalog, std::string_view principal,
                                        const RegisteredTool& tool);

// The most severe class `principal` can reach through call_tool: what
// call_tool's annotations say to that caller.
SideEffect call_tool_reach(const Catalog& catalog, std::string_view principal);

// call_tool's entry as tools/list shows it to `principal`, when `tool` (an
// entry of catalog.published) is call_tool's and that caller's reach differs
// from what the published entry says; else null (show `tool` as it is).
const nlohmann::json* call_tool_listing(const Catalog& catalog, std::string_view principal,
                                        const nlohmann::json& tool);

// The instructions the initialize result carries: what the catalog offers.
std::string server_instructions(const Catalog& catalog);

}  // namespace toolmux
