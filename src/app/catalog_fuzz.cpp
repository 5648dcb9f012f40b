#include "src/app/catalog_fuzz.h"

#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "catalog/schema_fuzzer.h"
#include "src/base/problem.h"
#include "src/base/terminal_text.h"
#include "src/base/untrusted_json.h"
#include "src/builtins/call_tool.h"
#include "src/pipeline/check_arguments.h"
#include "src/pipeline/compose.h"
#include "src/pipeline/resolve_tool.h"
#include "src/pipeline/unwrap_call_tool.h"

namespace toolmux {

using nlohmann::json;

namespace {

std::string where(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

std::string quoted(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string shown(const json& value, std::size_t most = 300) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > most) text = text.substr(0, most - 3) + "...";
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
  std::string answer;
  for (const json& block : out.result.content) {
    if (block.is_object() && block.contains("text") && block["text"].is_string()) {
      answer += (answer.empty() ? "" : " ") + block["text"].get<std::string>();
    }
  }
  return {"", answer};
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

}  // namespace toolmux
