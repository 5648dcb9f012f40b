#include "src/assembly/tool_catalog.h"

#include <algorithm>
#include <exception>
#include <filesystem>

#include "catalog/argument_check.h"
#include "catalog/catalog_file.h"
#include "catalog/catalog_file_sections.h"
#include "catalog/providers/catalog_tools.h"
#include "catalog/providers/filesystem_tools.h"
#include "catalog/skills.h"
#include "src/base/edit_distance.h"
#include "src/base/redact.h"
#include "src/builtins/call_tool.h"
#include "src/builtins/result_resources.h"
#include "src/builtins/result_tools.h"
#include "src/upstream/upstreams.h"

namespace toolmux {
namespace {

// The handler to register for native tool `tool` (at pointer `at`): its own,
// or, when it declares credentials, the one with_credentials returns for them
// as read now (from the environment or files, as an upstream's secrets). Null
// with a problem for each credential that cannot be read or is declared
// wrongly; never a value in a message.
ToolHandler native_handler(const NativeTool& tool, const std::string& at, Problems& problems) {
  if (tool.credentials.empty()) return tool.handler;
  const std::size_t before = problems.size();
  if (!tool.with_credentials) {
    problems.push_back({at + "/credentials",
                        "the tool declares credentials but no with_credentials to take them"});
  }
  Credentials credentials;
  for (std::size_t i = 0; i < tool.credentials.size(); ++i) {
    const NativeCredential& credential = tool.credentials[i];
    const std::string item_at = at + "/credentials/" + std::to_string(i);
    const std::string label = "credential " + nlohmann::json(credential.name).dump() + ": ";
    if (credential.name.empty() || credential.from_env.empty() == credential.from_file.empty()) {
      problems.push_back(
          {item_at, label + "give a name and exactly one of from_env and from_file"});
      continue;
    }
    if (credentials.count(credential.name) != 0) {
      problems.push_back({item_at, label + "declared twice"});
      continue;
    }
    const nlohmann::json source = credential.from_env.empty()
                                      ? nlohmann::json{{"fromFile", credential.from_file.string()}}
                                      : nlohmann::json{{"fromEnv", credential.from_env}};
    Problems unread;
    if (auto value = catalog_file::read_env_value(source, item_at, std::filesystem::current_path(),
                                                  unread)) {
      credentials.emplace(credential.name, std::move(*value));
    }
    for (Problem& p : unread) {
      p.message = label + p.message;
      problems.push_back(std::move(p));
    }
  }
  if (problems.size() != before) return nullptr;
  try {
    return tool.with_credentials(credentials);
  } catch (const std::exception& e) {
    problems.push_back({at + "/credentials", "with_credentials failed: " + redact(e.what())});
  }
  return nullptr;
}

// The aliases and policy entries that name upstream tools were left unchecked
// at load (catalog_file.cpp); now that the upstreams listed their tools, those
// naming a tool that is not there are logged and left out, so they never
// point at nothing: as an error naming the upstream (and its closest tools)
// when every upstream that could hold the name has listed its tools, else as
// waiting for one that has not yet.
void check_upstream_names(Catalog& catalog, const ToolRegistry& registry,
                          const std::vector<UpstreamSpec>& declared, const UpstreamSet& upstreams,
                          Logger& logger) {
  // Why `tool` is not there (`waiting`: an upstream that could hold it has
  // not listed its tools yet), or nullopt when it is (or is no upstream's).
  struct Absence {
    bool waiting = false;
    std::string why;
  };
  auto absent = [&](const std::string& tool) -> std::optional<Absence> {
    if (registry.find(tool) || !may_be_upstream_tool(declared, tool)) return std::nullopt;
    std::vector<std::string> listed_by;  // upstreams that could hold it and have listed
    for (const UpstreamSpec& spec : declared) {
      if (!may_be_upstream_tool({spec}, tool)) continue;
      auto upstream = upstreams.find(spec.name);
      if (!upstream || upstream->tools().empty()) {
        return Absence{true, ", which no upstream lists (yet)"};
      }
      listed_by.push_back(spec.name);
    }
    std::string quoted;
    for (const std::string& name : listed_by) {
      quoted += (quoted.empty() ? "\"" : ", \"") + name + "\"";
    }
    std::string why = listed_by.size() == 1 ? ", which upstream " + quoted + " does not list"
                                            : ", which none of upstreams " + quoted + " lists";
    std::vector<std::string_view> names;
    for (const auto& [name, upstream] : catalog.tool_upstream) {
      if (std::find(listed_by.begin(), listed_by.end(), upstream) != listed_by.end()) {
        names.emplace_back(name);
      }
    }
    const std::vector<std::size_t> best = closest_names(names, tool, 3);
    for (std::size_t i = 0; i < best.size(); ++i) {
      why += (i == 0 ? " (did you mean \"" : "\" or \"") + std::string(names[best[i]]);
    }
    if (!best.empty()) why += "\"?)";
    return Absence{false, why};
  };
  // Logged, and the entry left out: an error once the upstreams have listed.
  auto left_out = [&](const std::string& at, const Absence& absence, const std::string& reason) {
    logger.write(absence.waiting ? LogLevel::warning : LogLevel::error,
                 absence.waiting ? "catalog_entry_waiting" : "catalog_entry_missing",
                 {{"at", at}, {"reason", reason}});
  };
  std::erase_if(catalog.aliases.tools, [&](const auto& entry) {
    const auto absence = absent(entry.second);
    if (!absence) return false;
    left_out("/aliases/tools/" + entry.first, *absence,
             "alias \"" + entry.first + "\" points at \"" + entry.second + "\"" + absence->why +
                 "; the alias is left out until it does");
    return true;
  });
  std::erase_if(catalog.aliases.arguments, [&](const auto& entry) {
    const auto absence = absent(entry.first);
    if (!absence) return false;
    left_out("/aliases/arguments/" + entry.first, *absence,
             "argument aliases for \"" + entry.first + "\"" + absence->why);
    return true;
  });
  std::erase_if(catalog.policy.arguments, [&](const auto& entry) {
    const auto absence = absent(entry.first);
    if (!absence) return false;
    left_out("/policy/arguments/" + entry.first, *absence,
             "argument policy for \"" + entry.first + "\"" + absence->why);
    return true;
  });
  auto waiting = [&](const std::string& at, const std::string& reason) {
    logger.write(LogLevel::warning, "catalog_entry_waiting", {{"at", at}, {"reason", reason}});
  };
  // What remains names tools that exist: the usual checks (argument names).
  for (const Problem& problem : check_aliases(catalog.aliases, registry)) {
    waiting(problem.pointer, problem.message);
  }
  for (const Problem& problem : check_tool_policy(catalog.policy, registry)) {
    waiting(problem.pointer, problem.message);
  }
}

// The most severe class among the tools `principal` (an access-rule key, or
// "" for a caller no rule names) may call through call_tool, the freeze
// considered. call_tool itself, and tool_search, are not counted.
SideEffect worst_reachable(const Catalog& catalog, const ToolRegistry& registry,
                           std::string_view principal) {
  SideEffect worst = SideEffect::read_only;
  for (const auto& tool : registry.tools()) {
    if (tool->spec.name == kCallTool || tool->side_effect <= worst) continue;
    if (catalog.write_freeze) continue;  // only reads then
    if (!principal.empty() && catalog.policy.denial(principal, tool->spec.name)) continue;
    worst = tool->side_effect;
  }
  return worst;
}

void set_call_tool_reach(Catalog& catalog, const ToolRegistry& registry) {
  for (const auto& [principal, rule] : catalog.policy.access) {
    catalog.call_tool_reach_by_rule[principal] = worst_reachable(catalog, registry, principal);
  }
  // A caller no rule names: the "*" rule when there is one, else everything.
  const auto any = catalog.call_tool_reach_by_rule.find("*");
  catalog.call_tool_reach_unruled = any != catalog.call_tool_reach_by_rule.end()
                                        ? any->second
                                        : worst_reachable(catalog, registry, "");
}

}  // namespace

std::shared_ptr<const Catalog> build_catalog(
    const ServeOptions& options, const std::shared_ptr<LazyResultStore>& results,
    Problems& problems, const std::vector<NativeTool>& native_tools,
    const UpstreamSet* upstream_set, Logger* logger, const CatalogLoad* preloaded,
    const NativeProviders& native_providers, std::shared_ptr<SearchClicks> clicks) {
  auto registry = std::make_shared<ToolRegistry>();
  auto catalog = std::make_shared<Catalog>();
  const std::size_t before = problems.size();
  DiscoverySettings discovery;
  SearchOptions search_options;
  SearchRerankSettings rerank_settings;
  auto take = [&problems](Problems more) {
    problems.insert(problems.end(), more.begin(), more.end());
  };

  FilesystemToolOptions fs;
  fs.roots = options.roots;
  if (fs.roots.empty()) fs.roots.push_back(std::filesystem::current_path());
  fs.allow_writes = options.allow_writes;
  take(register_filesystem_tools(*registry, fs));
  take(register_result_tools(*registry, results));
  take(register_call_tool(*registry));
  for (std::size_t i = 0; i < native_tools.size(); ++i) {
    const std::string at = "/native/" + std::to_string(i);
    ToolHandler handler = native_handler(native_tools[i], at, problems);
    if (!handler && !native_tools[i].credentials.empty()) continue;
    for (Problem p : registry->add(native_tools[i].spec, std::move(handler))) {
      p.pointer = at + p.pointer;
      problems.push_back(std::move(p));
    }
  }

  const std::size_t builtins = registry->tools().size();
  UpstreamTools upstreams;
  std::vector<UpstreamSpec> declared;
  if (!options.catalog_file.empty() || preloaded) {
    CatalogLoad load = preloaded ? *preloaded : load_catalog_file(options.catalog_file);
    // The discovery tools' names are toolmux's, whatever the catalog holds.
    for (std::size_t i = 0; i < load.catalog.command_tools.size(); ++i) {
      const std::string& name = load.catalog.command_tools[i].spec.name;
      if (name == kToolSearch || name == kCallTool || name == kReadToolResult) {
        load.problems.push_back(
            {"/tools/" + std::to_string(i) + "/name",
             "tool \"" + name + "\": the name is reserved for toolmux's own " + name + " tool"});
      }
    }
    take(load.problems);
    if (load.problems.empty()) {
      take(register_catalog(*registry, load.catalog));
      catalog->aliases = std::move(load.catalog.aliases);
      catalog->policy = std::move(load.catalog.policy);
      catalog->limits = load.catalog.results;
      catalog->authorization = std::move(load.catalog.authorization);
      catalog->command_tool_count = load.catalog.command_tools.size();
      discovery = load.catalog.discovery;
      search_options = load.catalog.search;
      if (!load.catalog.search_learn) clicks = nullptr;
      rerank_settings = load.catalog.search_rerank;
      catalog->declared_upstreams = load.catalog.upstreams.size();
      declared = load.catalog.upstreams;
      if (!load.catalog.skills.empty()) {
        catalog->skills = SkillSet::load(load.catalog.skills, "/skills", problems);
      }
      if (upstream_set && logger) {
        upstreams = register_upstream_tools(upstream_set->list(), *registry, *logger);
        catalog->upstream_tool_count = upstreams.tool_upstream.size();
        catalog->serving_upstreams = upstreams.upstreams_with_tools;
      }
    }
  }
  if (problems.size() != before) return nullptr;
  catalog->builtin_tool_count = builtins;
  catalog->tool_upstream.insert(upstreams.tool_upstream.begin(), upstreams.tool_upstream.end());

  // tool_search comes last (its description is the same whatever the
  // catalog holds; the server's instructions say what it holds).
  std::string& summary = catalog->summary;
  summary = "This server offers " + std::to_string(registry->tools().size() + 1) +
            " tools: " + std::to_string(builtins) +
            " built-in (files in the folders it was given, stored results, "
            "call_tool)";
  if (catalog->command_tool_count > 0) {
    summary += ", " + std::to_string(catalog->command_tool_count) + " from its catalog file";
  }
  if (catalog->upstream_tool_count > 0) {
    summary += ", " + std::to_string(catalog->upstream_tool_count) + " from " +
               std::to_string(catalog->serving_upstreams) + " upstream MCP server" +
               (catalog->serving_upstreams == 1 ? "" : "s");
  }
  summary += ".";
  take(register_tool_search(*registry, catalog->search));
  if (problems.size() != before) return nullptr;

  // Discovery: automatic turns on past 40 tools, where a model's choice of
  // tool starts to suffer and tool definitions crowd its context.
  constexpr std::size_t kDiscoveryThreshold = 40;
  catalog->discovery = discovery.mode == DiscoverySettings::Mode::on ||
                       (discovery.mode == DiscoverySettings::Mode::automatic &&
                        registry->tools().size() > kDiscoveryThreshold);
  catalog->always_listed = {kToolSearch, kCallTool, kReadToolResult};
  for (std::size_t i = 0; i < discovery.pinned.size(); ++i) {
    const std::string& name = discovery.pinned[i];
    const std::string at = "/discovery/pinned/" + std::to_string(i);
    if (!registry->find(name)) {
      if (!may_be_upstream_tool(declared, name)) {
        problems.push_back({at, "pinned tool \"" + name + "\" does not exist"});
      } else if (upstream_set && logger) {
        logger->write(
            LogLevel::warning, "catalog_entry_waiting",
            {{"at", at},
             {"reason", "pinned tool \"" + name + "\" is not listed by any upstream (yet)"}});
      }
    }
    catalog->always_listed.insert(name);
  }
  if (upstream_set && logger) {
    check_upstream_names(*catalog, *registry, declared, *upstream_set, *logger);
  }
  for (const std::string& name : upstreams.pinned) catalog->always_listed.insert(name);
  if (problems.size() != before) return nullptr;

  if (options.read_only) {
    catalog->write_freeze = "toolmux was started with --read-only";
  } else if (options.write_freeze) {
    catalog->write_freeze = *options.write_freeze;
  }
  set_call_tool_reach(*catalog, *registry);
  for (const auto& tool : registry->tools()) {
    if (accepts_undeclared_arguments(tool->spec.input_schema)) {
      catalog->open_schema_tools.push_back(tool->spec.name);
    }
  }
  if (logger && !catalog->open_schema_tools.empty() && !catalog->policy.reject_unknown_arguments) {
    // Named up to a bound: an upstream may list thousands.
    constexpr std::size_t kNamed = 20;
    const auto& open = catalog->open_schema_tools;
    nlohmann::json named = nlohmann::json::array();
    for (std::size_t i = 0; i < std::min(open.size(), kNamed); ++i) named.push_back(open[i]);
    logger->write(LogLevel::warning, "undeclared_arguments_pass",
                  {{"count", open.size()},
                   {"tools", std::move(named)},
                   {"reason",
                    "their input schemas do not set \"additionalProperties\": false, so "
                    "arguments they do not declare reach them; \"policy\": "
                    "{\"unknownArguments\": \"reject\"} refuses those"}});
  }

  std::vector<SourceInfo> sources = {
      {"toolmux", "toolmux",
       "toolmux's own tools: files in the folders it was given (read, write, list, search), "
       "stored results, and finding and calling the catalog's tools."},
      {"catalog", "Catalog file", "Command tools defined in toolmux's catalog file."}};
  for (const SourceInfo& source : upstreams.sources) sources.push_back(source);
  // Each published tool's source and tags, for its search document.
  struct Origin {
    std::string source;
    std::vector<std::string> tags;
  };
  std::vector<Origin> origins;
  const auto& tools = registry->tools();
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const RegisteredTool& tool = *tools[i];
    // Under a freeze only reads are offered; call_tool stays, reaching them.
    if (catalog->write_freeze && tool.side_effect != SideEffect::read_only &&
        tool.spec.name != kCallTool) {
      continue;
    }
    nlohmann::json published = tool.descriptor;
    if (tool.spec.name == kCallTool) {
      published["annotations"] = annotations_for(tool.spec, catalog->call_tool_reach_unruled);
      for (const auto& [principal, reach] : catalog->call_tool_reach_by_rule) {
        if (reach == catalog->call_tool_reach_unruled) continue;
        nlohmann::json own = published;
        own["annotations"] = annotations_for(tool.spec, reach);
        catalog->call_tool_listed_by_rule.emplace(principal, std::move(own));
      }
    }
    published["inputSchema"] =
        catalog->policy.advertised_schema(tool.spec.name, tool.descriptor["inputSchema"]);
    // Built-ins come first, then the file's tools, then upstream tools, then
    // tool_search; an upstream's tools have its name as their source.
    const bool from_file = i >= builtins && i < builtins + catalog->command_tool_count;
    auto upstream = upstreams.tool_upstream.find(tool.spec.name);
    origins.push_back({upstream != upstreams.tool_upstream.end() ? upstream->second
                       : from_file                               ? "catalog"
                                                                 : "toolmux",
                       tool.spec.tags});
    catalog->published.push_back(std::move(published));
  }
  // The index waits for the first search (SearchIndexHolder::set_on_first_use).
  // What it reads of the catalog (its published tools, its policy) is fixed
  // from here on, and the catalog outlives every call that searches it.
  auto searchable = std::make_shared<SearchableCatalog>();
  searchable->tools = &catalog->published;
  searchable->policy = &catalog->policy;
  if (clicks) searchable->memory = clicks->memory();
  catalog->search_clicks = std::move(clicks);
  searchable->rerank = rerank_settings;
  searchable->skills = catalog->skills.get();
  catalog->search->set_on_first_use([searchable = std::move(searchable),
                                     origins = std::move(origins), sources = std::move(sources),
                                     search_options = std::move(search_options)]() mutable {
    std::vector<SearchDocument> documents;
    documents.reserve(origins.size());
    for (std::size_t i = 0; i < origins.size(); ++i) {
      documents.push_back(search_document_from_tool((*searchable->tools)[i], origins[i].source));
      documents.back().tags = std::move(origins[i].tags);
    }
    CatalogSearchOptions catalog_search_options;
    catalog_search_options.tools = std::move(search_options);
    searchable->search =
        CatalogSearch::build(std::move(documents), sources, std::move(catalog_search_options));
    return std::shared_ptr<const SearchableCatalog>(std::move(searchable));
  });
  catalog->registry = std::move(registry);
  catalog->hooks = native_providers.hooks;
  // The program's own first, then the skills', the upstreams' in the file's order, then the
  // session's offloaded results.
  auto resource_providers = native_providers.resources;
  auto prompt_providers = native_providers.prompts;
  if (catalog->skills) resource_providers.push_back(make_skill_resources(catalog->skills));
  if (upstream_set && logger) {
    for (const auto& upstream : upstream_set->list()) {
      UpstreamFeatures features = make_upstream_features(upstream);
      resource_providers.push_back(features.resources);
      prompt_providers.push_back(features.prompts);
      catalog->upstream_features.emplace(upstream->name(), std::move(features));
    }
  }
  resource_providers.push_back(make_result_resources(results));
  catalog->providers =
      ProviderRouter::create(std::move(resource_providers), std::move(prompt_providers));
  return catalog;
}

std::string server_instructions(const Catalog& catalog) {
  std::string text = catalog.summary;
  if (catalog.discovery) {
    text +=
        " tools/list shows a few of them; find the others with tool_search, by what you want "
        "to do (an empty query lists where the tools come from).";
  }
  return text +
         " File tools take paths relative to the folders toolmux was given; "
         "a tool's annotations tell whether it only reads or changes something.";
}

std::optional<std::string> call_refusal(const Catalog& catalog, std::string_view principal,
                                        const RegisteredTool& tool) {
  if (auto why = catalog.policy.denial(principal, tool.spec.name)) {
    return "is not allowed for " +
           nlohmann::json(std::string(principal))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
           ": " + *why;
  }
  if (catalog.write_freeze && tool.side_effect != SideEffect::read_only &&
      tool.spec.name != kCallTool) {
    std::string why = "did not run: writes are frozen, only read_only tools run, and this one is " +
                      std::string(side_effect_name(tool.side_effect));
    if (!catalog.write_freeze->empty()) why += " (" + *catalog.write_freeze + ")";
    return why;
  }
  return std::nullopt;
}

SideEffect call_tool_reach(const Catalog& catalog, std::string_view principal) {
  if (auto it = catalog.call_tool_reach_by_rule.find(principal);
      it != catalog.call_tool_reach_by_rule.end()) {
    return it->second;
  }
  return catalog.call_tool_reach_unruled;
}

const nlohmann::json* call_tool_listing(const Catalog& catalog, std::string_view principal,
                                        const nlohmann::json& tool) {
  if (catalog.call_tool_listed_by_rule.empty()) return nullptr;
  const auto name = tool.find("name");
  if (name == tool.end() || *name != kCallTool) return nullptr;
  // The rule that applies to the caller: its own, else "*", else none.
  auto rule = catalog.policy.access.find(principal);
  if (rule == catalog.policy.access.end()) rule = catalog.policy.access.find(std::string_view("*"));
  if (rule == catalog.policy.access.end()) return nullptr;
  const auto own = catalog.call_tool_listed_by_rule.find(rule->first);
  return own == catalog.call_tool_listed_by_rule.end() ? nullptr : &own->second;
}

}  // namespace toolmux
