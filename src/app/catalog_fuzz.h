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
//
// `toolmux check --fuzz --run` then runs the tools for real: see
// run_catalog_fuzz below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/assembly/native.h"
#include "src/assembly/serve_options.h"
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

// `toolmux check --fuzz --run`: the first valid cases of each tool (at most
// kMaxRunCasesPerTool, the same cases fuzz_catalog checks) sent to the real
// tool, through the stages of a client's tools/call that judge a call and its
// answer: unwrap_call_tool, resolve_tool, check_arguments, deadline (the
// tool's own timeout), catch_tool_exceptions, then check_result,
// redact_result and limit_result (nothing offloaded). Not run: authorize,
// confirm and the journal (the operator runs the check; nobody is asked).
//
// A crash (a command killed by a signal, a native tool that throws), a
// timeout, a result the boundary refuses (not UTF-8, not JSON, too deep, not
// matching its outputSchema), a command that cannot start, or a valid case
// refused is a failure; the tool's own isError answer is a warning.
//
// Only read_only tools run, where they are. With `mutating`, local_mutation
// tools run too, in a throwaway root: a fresh temporary directory that is the
// filesystem tools' only root and, while they run, the process's working
// directory, HOME, TMPDIR and PWD (so those of command tools that leave "cwd"
// out); it is deleted after. A command tool with its own "cwd" would write
// outside it and is skipped. remote_mutation and destructive tools, upstream
// tools and call_tool (its cases are the others') never run; each skipped tool
// says why. Changes the process's working directory and environment while
// the mutating tools run: call it from one thread, with no other running.
struct FuzzRunOptions {
  bool mutating = false;  // --fuzz-mutating
};

inline constexpr std::size_t kMaxRunCasesPerTool = 10;
// Failures and warnings kept per tool, to bound the report; the rest are counted.
inline constexpr std::size_t kMaxShownRunFailures = 3;
inline constexpr std::size_t kMaxShownRunWarnings = 1;

struct RunFinding {
  std::string finding;       // e.g. "crashed", "bad result", "error answer"
  std::string called_as;     // the name the call used
  nlohmann::json arguments;  // as sent, redacted
  std::string answer;        // what came back, redacted and clipped
};

struct ToolRunReport {
  std::string tool;
  std::string side_effect;
  std::string skipped;  // why it did not run; "" when it ran
  std::string where;    // "" (in place) or "throwaway root"
  std::size_t cases = 0;
  std::size_t passed = 0;
  std::size_t failure_count = 0;
  std::size_t warning_count = 0;
  std::vector<RunFinding> failures;  // the first kMaxShownRunFailures
  std::vector<RunFinding> warnings;  // the first kMaxShownRunWarnings
};

// One report per tool of `catalog` (built from `serve` and `native`), in
// registration order. `serve` and `native` build the throwaway root's
// catalog; `serve.catalog_file` says which tools are command tools.
std::vector<ToolRunReport> run_catalog_fuzz(const std::shared_ptr<const Catalog>& catalog,
                                            const ServeOptions& serve,
                                            const std::vector<NativeTool>& native,
                                            const CatalogFuzzOptions& options,
                                            const FuzzRunOptions& run);

// The report `toolmux check --fuzz --run` prints after format_fuzz_reports,
// ending with a summary line that starts with `file`.
std::string format_run_reports(const std::string& file, const std::vector<ToolRunReport>& reports,
                               std::size_t declared_upstreams);

// Whether any report has a failure.
bool run_failed(const std::vector<ToolRunReport>& reports);

}  // namespace toolmux
