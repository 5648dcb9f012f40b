#include "src/app/catalog_fuzz.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "catalog/catalog_file.h"
#include "catalog/schema_fuzzer.h"
#include "src/base/problem.h"
#include "src/base/redact.h"
#include "src/base/terminal_text.h"
#include "src/base/untrusted_json.h"
#include "src/base/utf8.h"
#include "src/builtins/call_tool.h"
#include "src/pipeline/catch_tool_exceptions.h"
#include "src/pipeline/check_arguments.h"
#include "src/pipeline/check_result.h"
#include "src/pipeline/compose.h"
#include "src/pipeline/deadline.h"
#include "src/pipeline/invoke.h"
#include "src/pipeline/limit_result.h"
#include "src/pipeline/redact_result.h"
#include "src/pipeline/resolve_tool.h"
#include "src/pipeline/running_handlers.h"
#include "src/pipeline/unwrap_call_tool.h"
#include "src/session/session.h"

namespace toolmux {

using nlohmann::json;

namespace {

std::string where(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

std::string quoted(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// `text` cut to at most `most` bytes, "..." included, never inside a character.
std::string clipped(std::string text, std::size_t most = 300) {
  if (text.size() <= most) return text;
  text.resize(utf8_without_cut_tail(std::string_view(text).substr(0, most - 3)).size());
  return text + "...";
}

std::string shown(const json& value, std::size_t most = 300) {
  return clipped(value.dump(-1, ' ', false, json::error_handler_t::replace), most);
}

// The text blocks of `result`, joined by spaces.
std::string text_of(const ToolResult& result) {
  std::string text;
  for (const json& block : result.content) {
    if (block.is_object() && block.contains("text") && block["text"].is_string()) {
      text += (text.empty() ? "" : " ") + block["text"].get<std::string>();
    }
  }
  return text;
}

std::string unescape_token(const std::string& token) {
  std::string out;
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size()) {
      out += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += token[i];
    }
  }
  return out;
}

std::string first_token(const std::string& pointer) {
  if (pointer.empty()) return "";
  const std::size_t slash = pointer.find('/', 1);
  return unescape_token(pointer.substr(1, slash == std::string::npos ? slash : slash - 1));
}

// Whether `answer` names the argument a near miss breaks: its pointer, or
// (a missing or an extra property, reported at its object) its parent's
// pointer and its name.
bool names_argument(const std::string& answer, const std::string& pointer) {
  if (answer.find("argument " + where(pointer) + ":") != std::string::npos) return true;
  const std::size_t slash = pointer.rfind('/');
  if (slash == std::string::npos) return false;
  const std::string parent = pointer.substr(0, slash);
  const std::string name = unescape_token(pointer.substr(slash + 1));
  return answer.find("argument " + where(parent) + ":") != std::string::npos &&
         answer.find(quoted(name)) != std::string::npos;
}

struct Outcome {
  std::string reached;  // the tool the stand-in was called for; "" when refused
  std::string answer;   // the refusal
};

// The argument checks of a real tools/call, ending in a stand-in for the tool.
Outcome run_call(const std::shared_ptr<const Catalog>& catalog, const std::string& name,
                 const json& arguments) {
  std::string reached;
  const CallHandler checks =
      compose({stages::unwrap_call_tool(), stages::resolve_tool(), stages::check_arguments()},
              [&reached](ToolCall& call) {
                reached = call.tool->spec.name;
                return CallResult::answered(ToolResult::text("reached"));
              });
  ToolCall call;
  call.catalog = catalog;
  call.requested_name = name;
  call.principal = "local";
  // As text, so that the JSON boundary reads it as it reads a client's.
  call.raw_arguments = parse_untrusted_json(arguments.dump());
  CallResult out = checks(call);
  if (!reached.empty()) return {reached, ""};
  if (out.protocol_error) return {"", out.protocol_error->message};
  return {"", text_of(out.result)};
}

std::uint64_t name_hash(const std::string& name) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

struct Prepared {
  std::string name;                    // how it is called
  json arguments;                      // as sent
  const FuzzNearMiss* miss = nullptr;  // null for a valid case
};

class ToolFuzzer {
 public:
  ToolFuzzer(const std::shared_ptr<const Catalog>& catalog, const RegisteredTool& tool,
             const CatalogFuzzOptions& options)
      : catalog_(catalog), tool_(tool), options_(options) {
    report_.tool = tool.spec.name;
    for (const auto& [alias, canonical] : catalog->aliases.tools) {
      if (canonical == tool.spec.name) tool_aliases_.push_back(alias);
    }
    if (auto it = catalog->aliases.arguments.find(tool.spec.name);
        it != catalog->aliases.arguments.end()) {
      for (const auto& [alias, canonical] : it->second)
        argument_aliases_[canonical].push_back(alias);
    }
    if (auto it = catalog->policy.arguments.find(tool.spec.name);
        it != catalog->policy.arguments.end()) {
      fixed_ = it->second.fixed;
      defaults_ = it->second.defaults;
    }
  }

  // Generates the cases; the first valid case and near miss are kept for call_tool.
  void generate() {
    cases_ = generate_fuzz_cases(tool_.spec.input_schema,
                                 options_.seed ^ name_hash(tool_.spec.name), options_.cases);
    for (const std::string& why : cases_.impossible) {
      report_.failures.push_back(
          FuzzFailure{"no valid arguments can be built: " + why +
                          ", so no call of this tool can pass its input schema",
                      tool_.spec.name, json(nullptr), ""});
    }
    for (const std::string& why : cases_.skipped) report_.notes.push_back("not generated: " + why);
    std::size_t inexact_refused = 0;
    std::string inexact_reason;
    for (std::size_t i = 0; i < cases_.valid.size(); ++i) {
      const FuzzValidCase& valid = cases_.valid[i];
      if (!valid.exact && tool_.input_schema) {
        json full = valid.arguments;
        if (full.is_object()) {
          for (auto it = fixed_.begin(); it != fixed_.end(); ++it) full[it.key()] = it.value();
        }
        if (!tool_.input_schema.validate(full).empty()) {
          ++inexact_refused;
          inexact_reason = valid.inexact_reason;
          continue;
        }
      }
      json arguments = without_fixed(valid.arguments);
      // Every other case by an alias of the tool, every third with argument aliases.
      std::string name = tool_.spec.name;
      if (!tool_aliases_.empty() && i % 2 == 1) {
        name = tool_aliases_[(i / 2) % tool_aliases_.size()];
      }
      if (!argument_aliases_.empty() && i % 3 == 2 && arguments.is_object()) {
        for (const auto& [canonical, aliases] : argument_aliases_) {
          if (!arguments.contains(canonical)) continue;
          json value = std::move(arguments[canonical]);
          arguments.erase(canonical);
          arguments[aliases[(i / 3) % aliases.size()]] = std::move(value);
        }
      }
      prepared_.push_back(Prepared{name, std::move(arguments), nullptr});
    }
    if (inexact_refused > 0) {
      report_.notes.push_back(
          std::to_string(inexact_refused) +
          " generated cases left out: the fuzzer could not build them exactly (" + inexact_reason +
          ") and the schema refuses them");
    }
    std::set<std::string> left_out;
    for (const FuzzNearMiss& miss : cases_.near_misses) {
      const std::string top = first_token(miss.pointer);
      if (!miss.pointer.empty() && fixed_.contains(top)) {
        left_out.insert("near misses of " + quoted(top) +
                        " left out: the operator's policy fixes it, so callers cannot set it");
        continue;
      }
      if (miss.rule == "missing required property" && miss.pointer == "/" + pointer_token(top) &&
          defaults_.contains(top)) {
        left_out.insert("a missing " + quoted(top) +
                        " is not a near miss: the operator's policy gives it a default");
        continue;
      }
      prepared_.push_back(Prepared{tool_.spec.name, without_fixed(miss.arguments), &miss});
    }
    report_.notes.insert(report_.notes.end(), left_out.begin(), left_out.end());
  }

  void run() {
    for (const Prepared& call : prepared_) check(call, call.name, call.arguments);
  }

  // The first valid case and near miss, called through call_tool.
  void run_through_call_tool(ToolFuzzReport& into) const {
    bool valid_done = false;
    bool miss_done = false;
    for (const Prepared& call : prepared_) {
      bool& done = call.miss ? miss_done : valid_done;
      if (done) continue;
      done = true;
      const json wrapped{{"name", call.name}, {"arguments", call.arguments}};
      check_into(into, call, kCallTool, wrapped);
    }
  }

  ToolFuzzReport& report() { return report_; }

  // The first `most` valid cases generate() prepared.
  std::vector<Prepared> valid_calls(std::size_t most) const {
    std::vector<Prepared> calls;
    for (const Prepared& call : prepared_) {
      if (calls.size() == most) break;
      if (!call.miss) calls.push_back(call);
    }
    return calls;
  }

 private:
  json without_fixed(json arguments) const {
    if (!arguments.is_object()) return arguments;
    for (auto it = fixed_.begin(); it != fixed_.end(); ++it) arguments.erase(it.key());
    return arguments;
  }

  void check(const Prepared& call, const std::string& name, const json& arguments) {
    check_into(report_, call, name, arguments);
  }

  void check_into(ToolFuzzReport& into, const Prepared& call, const std::string& name,
                  const json& arguments) const {
    ++into.cases;
    const Outcome outcome = run_call(catalog_, name, arguments);
    if (!call.miss) {
      if (outcome.reached == tool_.spec.name) {
        ++into.passed;
      } else if (!outcome.reached.empty()) {
        into.failures.push_back(FuzzFailure{"valid case reached tool " + quoted(outcome.reached) +
                                                " instead of " + quoted(tool_.spec.name),
                                            name, arguments, ""});
      } else {
        into.failures.push_back(FuzzFailure{
            "valid case refused: the schema refuses arguments its own keywords (and examples, "
            "defaults, enums) allow; two rules contradict each other or a given value breaks one",
            name, arguments, outcome.answer});
      }
      return;
    }
    const FuzzNearMiss& miss = *call.miss;
    const std::string label = "near miss at " + where(miss.pointer) + " (" + miss.rule + ")";
    if (!outcome.reached.empty()) {
      into.failures.push_back(FuzzFailure{
          label + " reached the tool: the schema says it is invalid, but the call was let through",
          name, arguments, ""});
    } else if (!names_argument(outcome.answer, miss.pointer)) {
      into.failures.push_back(
          FuzzFailure{label + " was refused without naming " + where(miss.pointer), name, arguments,
                      outcome.answer});
    } else {
      ++into.passed;
    }
  }

  std::shared_ptr<const Catalog> catalog_;
  const RegisteredTool& tool_;
  CatalogFuzzOptions options_;
  ToolFuzzReport report_;
  FuzzCases cases_;
  std::vector<Prepared> prepared_;
  std::vector<std::string> tool_aliases_;
  std::map<std::string, std::vector<std::string>> argument_aliases_;
  json fixed_ = json::object();
  json defaults_ = json::object();
};

}  // namespace

std::vector<ToolFuzzReport> fuzz_catalog(const std::shared_ptr<const Catalog>& catalog,
                                         const CatalogFuzzOptions& options) {
  std::vector<ToolFuzzReport> reports;
  std::vector<std::unique_ptr<ToolFuzzer>> fuzzers;
  const RegisteredTool* call_tool = nullptr;
  for (const auto& tool : catalog->registry->tools()) {
    // call_tool forwards to the tool it names: its cases are the other tools'.
    if (tool->spec.name == kCallTool) {
      call_tool = tool.get();
      continue;
    }
    auto fuzzer = std::make_unique<ToolFuzzer>(catalog, *tool, options);
    fuzzer->generate();
    fuzzer->run();
    fuzzers.push_back(std::move(fuzzer));
  }
  for (const auto& tool : catalog->registry->tools()) {
    if (tool.get() == call_tool) {
      ToolFuzzReport report;
      report.tool = kCallTool;
      report.notes.push_back(
          "its cases are each other tool's first valid case and first near miss, called through "
          "it");
      for (const auto& fuzzer : fuzzers) fuzzer->run_through_call_tool(report);
      reports.push_back(std::move(report));
      continue;
    }
    for (const auto& fuzzer : fuzzers) {
      if (fuzzer->report().tool == tool->spec.name) reports.push_back(std::move(fuzzer->report()));
    }
  }
  return reports;
}

std::string format_fuzz_reports(const std::string& file, const std::vector<ToolFuzzReport>& reports,
                                const CatalogFuzzOptions& options) {
  std::ostringstream out;
  // Names, findings and answers quote the catalog and generated arguments:
  // nothing in them reaches the terminal as a control character.
  out << terminal_text(file) << ": fuzzing " << reports.size() << " tools with " << options.cases
      << " valid cases each and near misses derived from them (seed " << options.seed << ")\n";
  std::size_t cases = 0;
  std::size_t failures = 0;
  std::size_t failing_tools = 0;
  for (const ToolFuzzReport& report : reports) {
    cases += report.cases;
    failures += report.failures.size();
    if (!report.failures.empty()) ++failing_tools;
    out << "  " << terminal_text(report.tool) << ": " << report.cases << " cases, " << report.passed
        << " passed";
    if (!report.failures.empty()) out << ", " << report.failures.size() << " FAILED";
    out << "\n";
    for (const FuzzFailure& failure : report.failures) {
      out << "    FAIL " << terminal_text(failure.finding) << "\n";
      if (!failure.arguments.is_null()) {
        out << "      call: " << terminal_text(failure.called_as) << " "
            << terminal_text(shown(failure.arguments)) << "\n";
      }
      if (!failure.answer.empty()) out << "      answer: " << terminal_text(failure.answer) << "\n";
    }
    for (const std::string& note : report.notes) out << "    note: " << terminal_text(note) << "\n";
  }
  if (failures == 0) {
    out << terminal_text(file) << ": ok, all " << cases << " cases passed\n";
  } else {
    out << terminal_text(file) << ": " << failures << (failures == 1 ? " failure" : " failures")
        << " in " << failing_tools << (failing_tools == 1 ? " tool" : " tools") << " (" << cases
        << " cases)\n";
  }
  return out.str();
}

namespace {

using Clock = std::chrono::steady_clock;

// How long the run waits, at its end, for handlers that outlived their
// deadline (a native tool that does not look at cancelled()).
constexpr std::chrono::seconds kStragglerWait{5};

// What command tools answer (catalog/providers/command_tools.cpp) when the
// command was killed by a signal, printed text that is not UTF-8, or could not
// start: for a client an isError answer like any other, for the run a failure.
constexpr std::string_view kCommandSignal = "command was killed by signal ";
constexpr std::string_view kCommandNotUtf8 = "command output is not valid UTF-8";
constexpr std::string_view kCommandNotStarted = "the command could not be started: ";

// The context of a call the run makes: nobody to show progress or logs to, or
// to ask; stopped by its CallControl (the deadline).
class FuzzCallContext final : public CallContext {
 public:
  explicit FuzzCallContext(std::shared_ptr<CallControl> control) : control_(std::move(control)) {}
  bool cancelled() const override { return control_->stop_requested(); }
  Clock::time_point deadline() const override { return control_->deadline(); }
  std::stop_token stop_token() const override { return control_->stop_token(); }
  void report_progress(double /*progress*/, std::optional<double> /*total*/,
                       std::string_view /*message*/) override {}
  void log(LogLevel /*level*/, const json& /*data*/) override {}
  bool logs(LogLevel /*level*/) const override { return false; }
  const std::string& principal() const override { return principal_; }

 private:
  std::shared_ptr<CallControl> control_;
  std::string principal_ = "local";
};

// The stages of a client's tools/call that judge a call and its answer
// (src/pipeline/call_pipeline.h), without the access rules, the confirmation,
// the journal and the record: run_catalog_fuzz's header says why.
CallHandler run_pipeline(const std::shared_ptr<RunningHandlers>& running) {
  CallChain chain;
  chain.request = {stages::unwrap_call_tool(), stages::resolve_tool()};
  chain.handler = {stages::check_arguments(), stages::deadline(running),
                   stages::catch_tool_exceptions()};
  chain.result = {stages::check_result(), stages::redact_result(), stages::limit_result(nullptr)};
  return compose(chain, invoke_tool());
}

struct Verdict {
  std::string finding;  // "" when the case passed
  bool warning = false;
};

Verdict judge(const CallResult& out, bool command) {
  if (out.protocol_error) return {"answered with a JSON-RPC error: " + out.protocol_error->message};
  switch (out.outcome) {
    case CallOutcome::ok:
      return {};
    case CallOutcome::crashed:
      return {"crashed"};
    case CallOutcome::timed_out:
      return {"timed out"};
    case CallOutcome::bad_result:
      return {"bad result"};
    case CallOutcome::invalid_arguments:
      return {"valid case refused"};
    case CallOutcome::tool_error: {
      if (!command) return {"error answer", true};
      const std::string text = text_of(out.result);
      if (text.starts_with(kCommandSignal)) return {"crashed"};
      if (text.starts_with(kCommandNotUtf8)) return {"bad result"};
      if (text.starts_with(kCommandNotStarted)) return {"could not start"};
      return {"error answer", true};
    }
    default:
      return {std::string(call_outcome_name(out.outcome))};
  }
}

void run_tool(const CallHandler& pipeline, const std::shared_ptr<const Catalog>& catalog,
              const RegisteredTool& tool, bool command, const CatalogFuzzOptions& options,
              ToolRunReport& report) {
  ToolFuzzer fuzzer(catalog, tool, options);
  fuzzer.generate();
  const std::vector<Prepared> calls =
      fuzzer.valid_calls(std::min(options.cases, kMaxRunCasesPerTool));
  if (calls.empty()) {
    report.skipped = "no valid case was generated for it";
    return;
  }
  for (const Prepared& prepared : calls) {
    ToolCall call;
    call.catalog = catalog;
    call.requested_name = prepared.name;
    call.principal = "local";
    call.raw_arguments = parse_untrusted_json(prepared.arguments.dump());
    call.control = std::make_shared<CallControl>();
    call.context = std::make_shared<FuzzCallContext>(call.control);
    const CallResult out = pipeline(call);
    ++report.cases;
    const Verdict verdict = judge(out, command);
    if (verdict.finding.empty()) {
      ++report.passed;
      continue;
    }
    std::size_t& count = verdict.warning ? report.warning_count : report.failure_count;
    std::vector<RunFinding>& kept = verdict.warning ? report.warnings : report.failures;
    ++count;
    if (kept.size() < (verdict.warning ? kMaxShownRunWarnings : kMaxShownRunFailures)) {
      kept.push_back(RunFinding{verdict.finding, prepared.name, redact_json(prepared.arguments),
                                clipped(redact(text_of(out.result)))});
    }
  }
}

// Why `tool` does not run, or "" when it does (a local_mutation tool in the
// throwaway root). `commands`: the catalog file's command tools, by name, with
// the working directory each declares.
std::string why_not_run(const Catalog& catalog, const RegisteredTool& tool,
                        const std::map<std::string, std::filesystem::path>& commands,
                        bool mutating) {
  const std::string& name = tool.spec.name;
  if (name == kCallTool) return "its cases are the other tools' cases, which each ran itself";
  if (catalog.tool_upstream.contains(name)) return "an upstream's tool: it reaches another server";
  switch (tool.side_effect) {
    case SideEffect::read_only:
      return "";
    case SideEffect::remote_mutation:
      return "remote_mutation: it changes other systems, which no throwaway root holds";
    case SideEffect::destructive:
      return "destructive: never run";
    case SideEffect::local_mutation:
      break;
  }
  if (!mutating) return "local_mutation: runs only with --fuzz-mutating, in a throwaway root";
  if (auto it = commands.find(name); it != commands.end() && !it->second.empty()) {
    return "local_mutation with its own cwd " + quoted(it->second.string()) +
           ": it would write outside the throwaway root";
  }
  return "";
}

// A fresh temporary directory, made the process's working directory and its
// HOME, TMPDIR and PWD while this lives; then all restored and the directory
// deleted with what it holds. error() says why there is none.
class ThrowawayRoot {
 public:
  ThrowawayRoot() {
    std::error_code ec;
    std::string pattern =
        (std::filesystem::temp_directory_path(ec) / "toolmux-fuzz-XXXXXX").string();
    if (ec || mkdtemp(pattern.data()) == nullptr) {
      error_ = ec ? ec.message() : std::strerror(errno);
      return;
    }
    path_ = pattern;
    previous_dir_ = std::filesystem::current_path(ec);
    std::filesystem::current_path(path_, ec);
    if (ec) {
      error_ = "cannot enter " + path_.string() + ": " + ec.message();
      return;
    }
    for (const char* name : {"HOME", "TMPDIR", "PWD"}) {
      const char* value = std::getenv(name);
      previous_env_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
      setenv(name, path_.c_str(), 1);
    }
  }
  ~ThrowawayRoot() {
    for (const auto& [name, value] : previous_env_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    std::error_code ec;
    if (!previous_dir_.empty()) std::filesystem::current_path(previous_dir_, ec);
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ThrowawayRoot(const ThrowawayRoot&) = delete;
  ThrowawayRoot& operator=(const ThrowawayRoot&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path previous_dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> previous_env_;
  std::string error_;
};

// Runs the reports' tools (`which`, indices into `reports`) in a throwaway
// root, with a catalog built again from `serve` with that root as its only one.
void run_in_throwaway_root(const CallHandler& pipeline, RunningHandlers& running,
                           const ServeOptions& serve, const std::vector<NativeTool>& native,
                           const std::map<std::string, std::filesystem::path>& commands,
                           const CatalogFuzzOptions& options, const std::vector<std::size_t>& which,
                           std::vector<ToolRunReport>& reports) {
  // Read before the working directory changes: a relative name would then miss it.
  ServeOptions in_root = serve;
  if (!in_root.catalog_file.empty())
    in_root.catalog_file = std::filesystem::absolute(serve.catalog_file);
  ThrowawayRoot root;
  auto skip_all = [&](const std::string& why) {
    for (std::size_t i : which) reports[i].skipped = why;
  };
  if (!root.error().empty()) return skip_all("no throwaway root could be made: " + root.error());
  in_root.roots = {root.path()};
  Problems problems;
  const auto catalog = build_catalog(in_root, nullptr, problems, native);
  if (!catalog) {
    return skip_all("the catalog does not build with a throwaway root: " +
                    (problems.empty() ? std::string("no reason given") : problems.front().message));
  }
  for (std::size_t i : which) {
    ToolRunReport& report = reports[i];
    const RegisteredTool* tool = catalog->registry->find(report.tool);
    if (!tool) {
      report.skipped = "not in the catalog built with a throwaway root";
      continue;
    }
    report.where = "throwaway root";
    run_tool(pipeline, catalog, *tool, commands.contains(report.tool), options, report);
  }
  // Nothing the tools started may go on in the root once it is gone.
  running.wait_until_idle(kStragglerWait);
}

}  // namespace

std::vector<ToolRunReport> run_catalog_fuzz(const std::shared_ptr<const Catalog>& catalog,
                                            const ServeOptions& serve,
                                            const std::vector<NativeTool>& native,
                                            const CatalogFuzzOptions& options,
                                            const FuzzRunOptions& run) {
  std::map<std::string, std::filesystem::path> commands;
  if (!serve.catalog_file.empty()) {
    const CatalogLoad load = load_catalog_file(serve.catalog_file);
    for (const CommandTool& tool : load.catalog.command_tools)
      commands[tool.spec.name] = tool.command.cwd;
  }
  auto running = std::make_shared<RunningHandlers>();
  const CallHandler pipeline = run_pipeline(running);
  std::vector<ToolRunReport> reports;
  std::vector<std::size_t> in_root;
  for (const auto& tool : catalog->registry->tools()) {
    ToolRunReport report;
    report.tool = tool->spec.name;
    report.side_effect = std::string(side_effect_name(tool->side_effect));
    report.skipped = why_not_run(*catalog, *tool, commands, run.mutating);
    if (report.skipped.empty()) {
      if (tool->side_effect == SideEffect::read_only) {
        run_tool(pipeline, catalog, *tool, commands.contains(report.tool), options, report);
      } else {
        in_root.push_back(reports.size());
      }
    }
    reports.push_back(std::move(report));
  }
  if (!in_root.empty()) {
    run_in_throwaway_root(pipeline, *running, serve, native, commands, options, in_root, reports);
  }
  running->wait_until_idle(kStragglerWait);
  return reports;
}

bool run_failed(const std::vector<ToolRunReport>& reports) {
  for (const ToolRunReport& report : reports) {
    if (report.failure_count > 0) return true;
  }
  return false;
}

std::string format_run_reports(const std::string& file, const std::vector<ToolRunReport>& reports,
                               std::size_t declared_upstreams) {
  std::ostringstream out;
  out << terminal_text(file) << ": running up to " << kMaxRunCasesPerTool
      << " valid cases of each tool for real\n";
  std::size_t cases = 0;
  std::size_t failures = 0;
  std::size_t warnings = 0;
  std::size_t failing_tools = 0;
  std::size_t skipped = 0;
  auto list = [&out](const char* label, const std::vector<RunFinding>& findings, std::size_t count,
                     const char* noun) {
    for (const RunFinding& finding : findings) {
      out << "    " << label << " " << terminal_text(finding.finding) << "\n"
          << "      call: " << terminal_text(finding.called_as) << " "
          << terminal_text(shown(finding.arguments)) << "\n";
      if (!finding.answer.empty()) out << "      answer: " << terminal_text(finding.answer) << "\n";
    }
    if (count > findings.size()) {
      const std::size_t more = count - findings.size();
      out << "    and " << more << " more " << noun << (more == 1 ? "" : "s") << " not shown\n";
    }
  };
  for (const ToolRunReport& report : reports) {
    out << "  " << terminal_text(report.tool) << " (" << report.side_effect << "): ";
    if (!report.skipped.empty()) {
      ++skipped;
      out << "not run: " << terminal_text(report.skipped) << "\n";
      continue;
    }
    cases += report.cases;
    failures += report.failure_count;
    warnings += report.warning_count;
    if (report.failure_count > 0) ++failing_tools;
    out << report.cases << " run";
    if (!report.where.empty()) out << " in a " << report.where;
    out << ", " << report.passed << " passed";
    if (report.failure_count > 0) out << ", " << report.failure_count << " FAILED";
    if (report.warning_count > 0) out << ", " << report.warning_count << " answered isError";
    out << "\n";
    list("FAIL", report.failures, report.failure_count, "failure");
    list("warning:", report.warnings, report.warning_count, "warning");
  }
  if (declared_upstreams > 0) {
    out << "  upstreams: " << declared_upstreams
        << " declared, not run: check does not start them, and their tools reach other servers\n";
  }
  out << terminal_text(file) << ": run: ";
  if (failures == 0) {
    out << "ok, " << cases << " cases run";
  } else {
    out << failures << (failures == 1 ? " failure" : " failures") << " in " << failing_tools
        << (failing_tools == 1 ? " tool" : " tools") << " (" << cases << " cases run";
  }
  out << (failures == 0 ? ", " : "; ") << warnings << (warnings == 1 ? " warning" : " warnings")
      << ", " << skipped << (skipped == 1 ? " tool" : " tools") << " not run"
      << (failures == 0 ? "" : ")") << "\n";
  return out.str();
}

}  // namespace toolmux
