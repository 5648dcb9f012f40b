#include "src/tool_catalog.h"

#include "catalog/catalog_file.h"
#include "catalog/providers/filesystem_tools.h"

namespace toolmux {

std::shared_ptr<ToolRegistry> build_tool_registry(const ServeOptions& options, Problems& problems) {
  auto registry = std::make_shared<ToolRegistry>();
  FilesystemToolOptions fs;
  fs.roots = options.roots;
  if (fs.roots.empty()) fs.roots.push_back(std::filesystem::current_path());
  fs.allow_writes = options.allow_writes;
  const std::size_t before = problems.size();
  Problems fs_problems = register_filesystem_tools(*registry, fs);
  problems.insert(problems.end(), fs_problems.begin(), fs_problems.end());

  if (!options.catalog_file.empty()) {
    CatalogLoad load = load_catalog_file(options.catalog_file);
    problems.insert(problems.end(), load.problems.begin(), load.problems.end());
    if (load.problems.empty()) {
      Problems reg = register_catalog(*registry, load.catalog);
      problems.insert(problems.end(), reg.begin(), reg.end());
    }
  }
  if (problems.size() != before) return nullptr;
  return registry;
}

}  // namespace toolmux
