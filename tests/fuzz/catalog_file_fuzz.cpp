// The catalog file loader (catalog/catalog_file.h) on any file content, then
// registration of what it loaded.
//
// Invariants: loading and registering never throw; a file with problems
// leaves the catalog empty; every problem has a message, a pointer that is ""
// or starts with '/', and both are valid UTF-8 (they are shown as JSON and in
// logs); loading the same text twice gives the same problems; a clean file
// registers either whole (every command tool) or not at all (problems, and
// the registry untouched).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "catalog/catalog_file.h"
#include "catalog/providers/catalog_tools.h"
#include "src/base/untrusted_json.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// One file per process, rewritten for each input, in the folder the fuzzer
// runs in (scripts/fuzz.sh: a scratch folder).
const std::filesystem::path& catalog_path() {
  static const std::filesystem::path path =
      std::filesystem::current_path() / ("catalog_fuzz_" + std::to_string(getpid()) + ".json");
  return path;
}

toolmux::CatalogLoad load(std::string_view text) {
  {
    std::ofstream out(catalog_path(), std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  try {
    return toolmux::load_catalog_file(catalog_path());
  } catch (...) {
    FUZZ_CHECK(false, "load_catalog_file never throws");
  }
  return {};
}

bool same_problems(const toolmux::Problems& a, const toolmux::Problems& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].pointer != b[i].pointer || a[i].message != b[i].message) return false;
  }
  return true;
}

void check_problems(const toolmux::Problems& problems) {
  for (const auto& problem : problems) {
    FUZZ_CHECK(!problem.message.empty(), "a problem has a message");
    FUZZ_CHECK(problem.pointer.empty() || problem.pointer.front() == '/',
               "a problem's pointer is \"\" or starts with '/'");
    FUZZ_CHECK(toolmux::is_valid_utf8(problem.pointer) && toolmux::is_valid_utf8(problem.message),
               "a problem is valid UTF-8");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = toolmux::fuzz::as_text(data, size);
  const toolmux::CatalogLoad first = load(text);
  check_problems(first.problems);
  const toolmux::CatalogLoad second = load(text);
  FUZZ_CHECK(same_problems(first.problems, second.problems), "loading is deterministic");
  if (!first.problems.empty()) {
    FUZZ_CHECK(first.catalog.command_tools.empty() && first.catalog.upstreams.empty(),
               "a file with problems leaves the catalog empty");
    return 0;
  }
  toolmux::ToolRegistry registry;
  toolmux::Problems problems;
  try {
    problems = toolmux::register_catalog(registry, first.catalog);
  } catch (...) {
    FUZZ_CHECK(false, "register_catalog never throws");
  }
  check_problems(problems);
  if (problems.empty()) {
    FUZZ_CHECK(registry.tools().size() == first.catalog.command_tools.size(),
               "a clean catalog registers every command tool");
  } else {
    FUZZ_CHECK(registry.tools().empty(), "a refused catalog registers nothing");
  }
  return 0;
}
