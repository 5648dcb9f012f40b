#include "src/app/self_path.h"

#include <filesystem>
#include <system_error>

namespace toolmux {

std::string executable_path() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec || path.empty() ? "toolmux" : path.string();
}

std::string catalog_schema_path(const std::string& executable) {
  const std::filesystem::path folder = std::filesystem::path(executable).parent_path();
  if (folder.empty()) return "";
  for (const char* relative :
       {"../share/toolmux/catalog.schema.json", "../schema/catalog.schema.json"}) {
    std::error_code ec;
    const auto candidate = std::filesystem::weakly_canonical(folder / relative, ec);
    if (!ec && std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
  }
  return "";
}

}  // namespace toolmux
