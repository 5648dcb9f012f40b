#include "src/app/toolmux.h"

#include <cstdio>
#include <iostream>

#include "src/app/catalog_fuzz.h"
#include "src/app/catalog_host.h"
#include "src/app/cli.h"
#include "src/app/serve_http.h"
#include "src/app/serve_stdio.h"
#include "src/app/store_commands.h"
#include "src/base/logger.h"
#include "src/base/utf8.h"

namespace toolmux {
namespace {

int run_check(const CommandLine& cl, const std::vector<NativeTool>& native) {
  const std::filesystem::path& file = cl.check_file;
  const ServeOptions& options = cl.serve;
  Problems problems;
  auto catalog = build_catalog(options, nullptr, problems, native);
  if (!catalog) {
    std::cout << file.string() << ": " << problems.size()
              << (problems.size() == 1 ? " problem" : " problems") << "\n"
              << format_problems(problems);
    return 1;
  }
  std::cout << file.string() << ": ok, " << catalog->command_tool_count << " command tools ("
            << catalog->registry->tools().size() << " tools with the built-ins)";
  // check reads the upstreams section only: their tools are known once serve starts them.
  if (catalog->declared_upstreams > 0) {
    std::cout << ", " << catalog->declared_upstreams << " upstream MCP server"
              << (catalog->declared_upstreams == 1 ? "" : "s") << " (not started)";
  }
  std::cout << "\n";
  const CheckFuzzOptions& fuzz = cl.check_fuzz;
  if (!fuzz.fuzz) return 0;
  const CatalogFuzzOptions options_of_fuzz{fuzz.cases, fuzz.seed};
  const auto reports = fuzz_catalog(catalog, options_of_fuzz);
  std::cout << format_fuzz_reports(file.string(), reports, options_of_fuzz);
  for (const ToolFuzzReport& report : reports) {
    if (!report.failures.empty()) return 1;
  }
  return 0;
}

int run_search(const CommandLine& cl, const std::vector<NativeTool>& native) {
  Problems problems;
  auto catalog = build_catalog(cl.serve, nullptr, problems, native);
  if (!catalog) {
    std::cerr << format_problems(problems);
    return 1;
  }
  auto searchable = catalog->search->get();
  const nlohmann::json found = search_tools(*searchable, cl.search_query, cl.search_limit, "local");
  if (found.empty()) {
    std::cout << "No tools match \"" << cl.search_query << "\".\n";
    return 1;
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    std::string description = found[i]["description"];
    if (utf8_length(description) > 100) {
      description = description.substr(0, utf8_byte_offset(description, 97)) + "...";
    }
    std::cout << i + 1 << ". " << found[i]["name"].get<std::string>() << "  " << description
              << "\n";
  }
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
  ResultStoreOptions store_options;
  store_options.data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  auto results = std::make_shared<LazyResultStore>(store_options);
  CatalogHost host(options, native, results, logger, store_options.data_dir, providers);
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
  const int code = options.http ? serve_http(host, results, options, logger)
                                : serve_stdio(host, results, options, logger);
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
    case CommandLine::Action::serve:
      code = run_serve(cl.serve, native_tools, native_providers);
      break;
  }
  return code;
}

}  // namespace toolmux
