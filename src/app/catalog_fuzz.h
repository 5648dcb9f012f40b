// `toolmux check --fuzz`: every tool of a catalog is called with the cases
// catalog/schema_fuzzer.h generates from its input schema, through the same
// argument checks a real tools/call takes (the unwrap_call_tool, resolve_tool
// and check_arguments stages of src/pipeline/: call_tool, tool aliases, argument
// aliases, the policy's defaults and fixed values, the JSON boundary, the
// input schema), with a stand-in for the tool: nothing is run.
//
// A valid case must reach the stand-in; a near miss must be refused with an
// error that names its argument (its pointer, or its parent's pointer and its
// name for a missing or extra property). Anything else is a failure, and so
// is a schema no valid case can be built for. The catalog is only read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/assembly/tool_catalog.h"

namespace toolmux {

struct CatalogFuzzOptions {
  std::size_t cases = 20;  // valid cases per tool; near misses follow from them
  std::uint64_t seed = 1;
};

struct FuzzFailure {
  std::string finding;       // e.g. "valid case refused", "near miss at /count accepted (...)"
  std::string called_as;     // the name the call used (the tool, an alias or call_tool)
  nlohmann::json arguments;  // as sent
  std::string answer;        // what the checks said ("" when the call reached the tool)
};

struct ToolFuzzReport {
  std::string tool;
  std::size_t cases = 0;   // valid cases and near misses run
  std::size_t passed = 0;  // of those
  std::vector<FuzzFailure> failures;
  std::vector<std::string> notes;  // what was not generated, or left out, and why
};

// One report per tool of the catalog, in registration order.
std::vector<ToolFuzzReport> fuzz_catalog(const std::shared_ptr<const Catalog>& catalog,
                                         const CatalogFuzzOptions& options);

// The report `toolmux check --fuzz` prints, tool by tool, ending with a
// summary line that starts with `file`.
std::string format_fuzz_reports(const std::string& file, const std::vector<ToolFuzzReport>& reports,
                                const CatalogFuzzOptions& options);

}  // namespace toolmux
