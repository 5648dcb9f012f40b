#include "src/tool_catalog.h"

#include "catalog/catalog_file.h"
#include "catalog/providers/filesystem_tools.h"
#include "src/call_tool.h"
#include "src/result_tools.h"

namespace toolmux {

std::shared_ptr<const Catalog> build_catalog(const ServeOptions& options,
                                             const std::shared_ptr<LazyResultStore>& results,
                                             Problems& problems) {
  auto registry = std::make_shared<ToolRegistry>();
  auto catalog = std::make_shared<Catalog>();
  const std::size_t before = problems.size();
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

  if (!options.catalog_file.empty()) {
    CatalogLoad load = load_catalog_file(options.catalog_file);
    take(load.problems);
    if (load.problems.empty()) {
      take(register_catalog(*registry, load.catalog));
      catalog->aliases = std::move(load.catalog.aliases);
      catalog->policy = std::move(load.catalog.policy);
      catalog->limits = load.catalog.results;
      catalog->command_tool_count = load.catalog.command_tools.size();
    }
  }
  if (problems.size() != before) return nullptr;

  for (const auto& tool : registry->tools()) {
    nlohmann::json published = tool->descriptor;
    published["inputSchema"] =
        catalog->policy.advertised_schema(tool->spec.name, tool->descriptor["inputSchema"]);
    catalog->published.push_back(std::move(published));
  }
  catalog->registry = std::move(registry);
  return catalog;
}

}  // namespace toolmux
