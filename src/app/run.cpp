#include "src/app/toolmux.h"

#include <unistd.h>
#include <cstdio>
#include <iostream>

#include "catalog/skills.h"
#include "src/app/catalog_fuzz.h"
#include "src/app/catalog_host.h"
#include "src/app/cli.h"
#include "src/app/cluster_link.h"
#include "src/app/doctor.h"
#include "src/app/first_run.h"
#include "src/app/self_path.h"
#include "src/app/serve_http.h"
#include "src/app/serve_stdio.h"
#include "src/app/shared_store.h"
#include "src/app/store_backup.h"
#include "src/app/store_commands.h"
#include "src/app/upstream_login.h"
#include "src/base/logger.h"
#include "src/base/random_id.h"
#include "src/base/terminal_text.h"
#include "src/base/utf8.h"
#include "src/store/upstream_logins.h"

namespace toolmux {
namespace {

int run_check(const CommandLine& cl, const std::vector<NativeTool>& native) {
  const std::filesystem::path& file = cl.check_file;
  const ServeOptions& options = cl.serve;
  Problems problems;
  auto catalog = build_catalog(options, nullptr, problems, native);
  if (!catalog) {
    std::cout << terminal_text(file.string()) << ": " << problems.size()
              << (problems.size() == 1 ? " problem" : " problems") << "\n"
              << format_problems(problems);
    return 1;
  }
  std::cout << terminal_text(file.string()) << ": ok, " << catalog->command_tool_count
            << " command tools (" << catalog->registry->tools().size()
            << " tools with the built-ins)";
  if (catalog->skills) {
    const std::size_t skills = catalog->skills->skills().size();
    std::cout << ", " << skills << (skills == 1 ? " skill" : " skills");
  }
  // check reads the upstreams section only: their tools are known once serve starts them.
  if (catalog->declared_upstreams > 0) {
    std::cout << ", " << catalog->declared_upstreams << " upstream MCP server"
              << (catalog->declared_upstreams == 1 ? "" : "s") << " (not started)";
  }
  std::cout << "\n";
  if (!catalog->policy.reject_unknown_arguments) {
    for (const std::string& name : catalog->open_schema_tools) {
      std::cerr << "warning: tool " << terminal_text(nlohmann::json(name).dump())
                << ": its inputSchema does not set \"additionalProperties\": false, so arguments "
                   "it does not declare reach it; set it, or refuse such arguments for every "
                   "such tool with \"policy\": {\"unknownArguments\": \"reject\"}\n";
    }
  }
  const CheckFuzzOptions& fuzz = cl.check_fuzz;
  if (!fuzz.fuzz) return 0;
  const CatalogFuzzOptions options_of_fuzz{fuzz.cases, fuzz.seed};
  const auto reports = fuzz_catalog(catalog, options_of_fuzz);
  std::cout << format_fuzz_reports(file.string(), reports, options_of_fuzz);
  bool failed = false;
  for (const ToolFuzzReport& report : reports) failed = failed || !report.failures.empty();
  if (fuzz.run) {
    std::cout.flush();
    const auto runs =
        run_catalog_fuzz(catalog, options, native, options_of_fuzz, FuzzRunOptions{fuzz.mutating});
    std::cout << format_run_reports(file.string(), runs, catalog->declared_upstreams);
    failed = failed || run_failed(runs);
  }
  return failed ? 1 : 0;
}

// --explain: for each tool found, its score by word and field, and its
// source's share of the query. Names, groups and descriptions come from the
// catalog and upstreams: they reach the terminal through terminal_text.
void explain_hits(const SearchableCatalog& searchable, const ToolSearchQuery& query,
                  const nlohmann::json& answer) {
  const CatalogSearch& search = *searchable.search;
  std::string all_words = query.query;
  for (const auto& alternative : query.alternatives) all_words += "\n" + alternative;
  const std::vector<double> source_share = search.source_scores(all_words);
  char number[32];
  auto fixed = [&](double value) {
    std::snprintf(number, sizeof number, "%.3f", value);
    return std::string(number);
  };
  for (const auto& tool : answer["tools"]) {
    const std::string name = tool["name"].get<std::string>();
    std::size_t doc = 0;
    while (doc < searchable.tools->size() && (*searchable.tools)[doc]["name"] != name) ++doc;
    if (doc == searchable.tools->size()) continue;
    std::cout << "\n"
              << terminal_text(name) << "  (source " << terminal_text(search.source_of(doc));
    if (!search.group_of(doc).empty()) {
      std::cout << ", group " << terminal_text(search.group_of(doc));
    }
    std::cout << ": its match with the query "
              << fixed(source_share[search.tools().source_number(doc)])
              << " of the best source's)\n";
    std::vector<std::string> phrasings{query.query};
    phrasings.insert(phrasings.end(), query.alternatives.begin(), query.alternatives.end());
    for (const auto& phrasing : phrasings) {
      const auto why = search.tools().explain(phrasing, doc);
      if (phrasings.size() > 1) std::cout << "  for \"" << phrasing << "\":\n";
      if (why.terms.empty()) std::cout << "    no word of it matched\n";
      for (const auto& term : why.terms) {
        std::cout << "    " << term.query_word;
        if (term.synonym || term.term != term.query_word) std::cout << " -> " << term.term;
        if (term.synonym) std::cout << " (synonym)";
        std::cout << ": " << fixed(term.score) << " = idf " << fixed(term.idf) << ", in";
        for (std::size_t i = 0; i < term.fields.size(); ++i) {
          std::cout << (i == 0 ? " " : ", ") << term.fields[i].first << " x"
                    << term.fields[i].second;
        }
        if (term.damping < 1) std::cout << ", damped x" << fixed(term.damping) << " (boilerplate)";
        std::cout << "\n";
      }
      if (why.source_boost > 1)
        std::cout << "    the query names its source: x" << fixed(why.source_boost) << "\n";
      if (!why.terms.empty()) std::cout << "    score " << fixed(why.score) << "\n";
    }
  }
}

int run_search(const CommandLine& cl, const std::vector<NativeTool>& native) {
  Problems problems;
  auto catalog = build_catalog(cl.serve, nullptr, problems, native);
  if (!catalog) {
    std::cerr << format_problems(problems);
    return 1;
  }
  auto searchable = catalog->search->get();
  ToolSearchQuery query;
  query.query = cl.search_query;
  query.alternatives = cl.search_alternatives;
  query.source = cl.search_source;
  query.limit = cl.search_limit;
  const nlohmann::json answer = search_catalog(*searchable, query, "local");
  if (answer.contains("error")) {
    std::cerr << "toolmux: " << search_answer_text(query, answer) << "\n";
    return 1;
  }
  const nlohmann::json& found = answer["tools"];
  const bool blank = query.blank();
  if (blank && answer.contains("sources")) {
    for (const auto& source : answer["sources"]) {
      std::cout << terminal_text(source["id"].get<std::string>()) << "  "
                << source["tools"].get<std::size_t>() << " tools";
      if (source.contains("groups"))
        std::cout << " in " << source["groups"].get<std::size_t>() << " groups";
      std::cout << "  " << terminal_text(source["description"].get<std::string>()) << "\n";
    }
    return 0;
  }
  if (found.empty()) {
    std::cout << "No tools match \"" << cl.search_query << "\".\n";
    return 1;
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    std::string description = found[i]["description"];
    if (utf8_length(description) > 100) {
      description = description.substr(0, utf8_byte_offset(description, 97)) + "...";
    }
    std::cout << i + 1 << ". " << terminal_text(found[i]["name"].get<std::string>()) << "  "
              << terminal_text(description) << "\n";
  }
  if (!blank) std::cout << "confidence: " << answer["confidence"].get<std::string>() << "\n";
  if (answer.contains("sources") && !answer["sources"].empty()) {
    std::cout << "sources that match best:";
    for (const auto& source : answer["sources"])
      std::cout << " " << terminal_text(source["id"].get<std::string>());
    std::cout << "\n";
  }
  if (cl.search_explain && !blank) explain_hits(*searchable, query, answer);
  return 0;
}

int run_serve(const ServeOptions& options, const std::vector<NativeTool>& native,
              const NativeProviders& providers) {
  // Before any thread starts, so that every thread inherits the mask.
  if (options.http) block_stop_signals();
  block_reload_signal();
  Logger logger(stderr, options.log_level);
  // A line per call would cost a write each: lines below warning that come
  // within 20 ms of the last write go out together, within 20 ms (warnings at
  // once; what waits at the end, on return).
  logger.buffer_for(std::chrono::milliseconds(20));
  ServeStores stores;
  stores.instance_id = random_id(12);
  ResultStoreOptions store_options;
  store_options.data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  if (options.store == StoreKind::postgresql) {
    // Before anything starts: an unreachable store is a clear error at once
    // (within the connect timeout), naming where, never the connection string.
    auto shared = open_shared_store(options);
    if (!shared.ok()) {
      std::cerr << "toolmux: refusing to start: " << shared.message() << "\n";
      return 2;
    }
    stores.shared = *shared;
    store_options.postgres = stores.shared;
  }
  logger.write(
      LogLevel::info, "instance",
      {{"instance", stores.instance_id},
       {"store", stores.shared ? "postgresql" : "rocksdb"},
       {"store_at", stores.shared ? stores.shared->target() : store_options.data_dir.string()}});
  stores.results = std::make_shared<LazyResultStore>(store_options);
  stores.tasks.open_store = [shared = stores.shared, base = store_options.data_dir / "tasks",
                             slots = store_options.max_slots]() {
    if (shared) return open_pg_task_store(shared);
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return open_rocksdb_task_store(base, slots, now.count());
  };
  auto& results = stores.results;
  CatalogHost host(options, native, results, logger, store_options.data_dir, providers);
  // Upstream logins (toolmux login) where this instance's store is.
  host.set_logins(stores.shared
                      ? std::shared_ptr<UpstreamLogins>(pg_logins(stores.shared))
                      : std::shared_ptr<UpstreamLogins>(login_files(store_options.data_dir)));
  // Before the host starts: it reads the freeze from the store, and tells the
  // other instances what changes here.
  std::unique_ptr<ClusterLink> cluster;
  if (stores.shared) {
    auto conninfo = store_connection_string(options);
    auto linked = conninfo.ok() ? ClusterLink::start(*conninfo, stores.instance_id,
                                                     stores.shared->pool(), host, logger)
                                : Result<std::unique_ptr<ClusterLink>>(conninfo.status());
    if (!linked.ok()) {
      std::cerr << "toolmux: refusing to start: " << linked.message() << "\n";
      return 2;
    }
    cluster = std::move(*linked);
    stores.cluster = cluster.get();
  }
  Problems problems;
  auto catalog = host.start(problems);
  if (!catalog) {
    std::cerr << "toolmux: refusing to start, " << problems.size()
              << (problems.size() == 1 ? " problem" : " problems") << ":\n"
              << format_problems(problems);
    return 2;
  }
  // The catalog file's "results" section sets the store's limits.
  store_options.retention = catalog->limits.retention;
  store_options.max_bytes = catalog->limits.store_max_bytes;
  results->configure(store_options);
  // Started by hand in a terminal: say how a client connects instead of
  // waiting in silence (stderr only: stdout is MCP's).
  if (!options.http && ::isatty(STDIN_FILENO) == 1) {
    std::cerr << first_run_guidance(executable_path(), client_serve_args(options)) << std::flush;
  }
  const int code = options.http ? serve_http(host, stores, options, logger)
                                : serve_stdio(host, stores, options, logger);
  // No news from the others while the host stops.
  if (cluster) cluster->stop();
  host.stop();
  return code;
}

}  // namespace

int run_toolmux(const std::vector<std::string>& args, const std::vector<NativeTool>& native_tools,
                const NativeProviders& native_providers) {
  const CommandLine cl = parse_command_line(args);
  int code = 0;
  switch (cl.action) {
    case CommandLine::Action::version:
      std::cout << "toolmux " << TOOLMUX_VERSION << "\n";
      break;
    case CommandLine::Action::help:
      std::cout << usage_text();
      break;
    case CommandLine::Action::usage_error:
      std::cerr << "toolmux: " << cl.error << "\n\n" << usage_text();
      code = 2;
      break;
    case CommandLine::Action::check:
      code = run_check(cl, native_tools);
      break;
    case CommandLine::Action::search:
      code = run_search(cl, native_tools);
      break;
    case CommandLine::Action::journal:
      code = run_journal(cl, std::cout, std::cerr);
      break;
    case CommandLine::Action::audit:
      code = run_audit(cl, std::cout, std::cerr);
      break;
    case CommandLine::Action::freeze:
      code = run_freeze(cl, std::cout, std::cerr);
      break;
    case CommandLine::Action::results:
      code = run_results(cl, std::cout, std::cerr);
      break;
    case CommandLine::Action::store:
      code = run_store(cl, std::cout, std::cerr);
      break;
    case CommandLine::Action::import_config: {
      ImportOptions options = cl.import;
      options.toolmux_path = executable_path();
      options.schema_ref = catalog_schema_path(options.toolmux_path);
      code = run_import(options, std::cout, std::cerr);
      break;
    }
    case CommandLine::Action::login:
      code = run_login(cl, std::cout, std::cerr);
      break;
    case CommandLine::Action::logout:
      code = run_logout(cl, std::cout, std::cerr);
      break;
    case CommandLine::Action::doctor:
      code = run_doctor(cl.serve, native_tools, std::cout);
      break;
    case CommandLine::Action::serve:
      code = run_serve(cl.serve, native_tools, native_providers);
      break;
  }
  return code;
}

}  // namespace toolmux
