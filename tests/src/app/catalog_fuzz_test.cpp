// `toolmux check --fuzz --run` (src/app/catalog_fuzz.h): each tool's valid
// cases sent to the real tool; a crash, a timeout or a bad result fails,
// naming the tool, the case and what was wrong; an isError answer warns;
// local_mutation tools run only when asked, in a throwaway root that is gone
// after; remote_mutation and destructive tools never run.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>

#include "src/app/catalog_fuzz.h"

using namespace toolmux;
namespace fs = std::filesystem;

namespace {

const std::string kCatalog = std::string(TOOLMUX_TEST_DATA) + "/catalogs/fuzz_run.json";

ServeOptions options_for(const std::string& file) {
  ServeOptions options;
  options.catalog_file = file;
  return options;
}

std::shared_ptr<const Catalog> catalog_of(const ServeOptions& options,
                                          const std::vector<NativeTool>& native = {}) {
  Problems problems;
  auto catalog = build_catalog(options, nullptr, problems, native);
  INFO(format_problems(problems));
  REQUIRE(catalog);
  return catalog;
}

const ToolRunReport& report_of(const std::vector<ToolRunReport>& reports, const std::string& tool) {
  for (const ToolRunReport& report : reports) {
    if (report.tool == tool) return report;
  }
  throw std::runtime_error("no report for " + tool);
}

// A folder the test works in, made the working directory while it lives.
class WorkingFolder {
 public:
  WorkingFolder() : before_(fs::current_path()) {
    std::string pattern = (fs::temp_directory_path() / "catalog-fuzz-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
    fs::current_path(path_);
  }
  ~WorkingFolder() {
    fs::current_path(before_);
    fs::remove_all(path_);
  }
  WorkingFolder(const WorkingFolder&) = delete;
  WorkingFolder& operator=(const WorkingFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path before_;
  fs::path path_;
};

}  // namespace

TEST_CASE("fuzz run: a well-behaved read_only tool passes every case it ran", "[catalog_fuzz]") {
  const ServeOptions options = options_for(kCatalog);
  const auto reports = run_catalog_fuzz(catalog_of(options), options, {}, {}, {});
  const ToolRunReport& echo = report_of(reports, "echo_word");
  CHECK(echo.skipped.empty());
  CHECK(echo.cases == kMaxRunCasesPerTool);
  CHECK(echo.passed == echo.cases);
  CHECK(echo.failure_count == 0);
  CHECK(echo.warning_count == 0);
}

TEST_CASE("fuzz run: a command killed by a signal on a valid case fails, naming the case",
          "[catalog_fuzz]") {
  const ServeOptions options = options_for(kCatalog);
  const auto reports = run_catalog_fuzz(catalog_of(options), options, {}, {}, {});
  const ToolRunReport& crash = report_of(reports, "crash_on_boom");
  REQUIRE(crash.failure_count > 0);
  CHECK(crash.passed > 0);  // "fine" passes
  CHECK(crash.failures.front().finding == "crashed");
  CHECK(crash.failures.front().arguments == nlohmann::json{{"mode", "boom"}});
  CHECK(crash.failures.front().answer.starts_with("command was killed by signal 11 (SIGSEGV)"));
  CHECK(run_failed(reports));
  const std::string text = format_run_reports("fuzz_run.json", reports, 0);
  CHECK_THAT(text, Catch::Contains("  crash_on_boom (read_only): "));
  CHECK_THAT(text,
             Catch::Contains("    FAIL crashed\n      call: crash_on_boom {\"mode\":\"boom\"}\n"
                             "      answer: command was killed by signal 11 (SIGSEGV)"));
}

TEST_CASE("fuzz run: text that is not UTF-8, a missing structuredContent and a timeout fail",
          "[catalog_fuzz]") {
  const ServeOptions options = options_for(kCatalog);
  const auto reports = run_catalog_fuzz(catalog_of(options), options, {}, {}, {});
  const ToolRunReport& utf8 = report_of(reports, "not_utf8");
  REQUIRE(utf8.failure_count == utf8.cases);
  CHECK(utf8.failures.front().finding == "bad result");
  CHECK(utf8.failures.front().answer == "command output is not valid UTF-8");

  const ToolRunReport& structured = report_of(reports, "no_structured_output");
  REQUIRE(structured.failure_count == structured.cases);
  CHECK(structured.failures.front().finding == "bad result");
  CHECK_THAT(structured.failures.front().answer,
             Catch::StartsWith("Tool \"no_structured_output\" returned no structuredContent "
                               "although it declares an outputSchema"));

  const ToolRunReport& slow = report_of(reports, "too_slow");
  REQUIRE(slow.failure_count == slow.cases);
  CHECK(slow.failures.front().finding == "timed out");
  CHECK_THAT(slow.failures.front().answer, Catch::Contains("timed out after 200 ms"));
  // Every case of those tools is counted, a few shown.
  CHECK(utf8.failures.size() == kMaxShownRunFailures);
  CHECK_THAT(format_run_reports("f", reports, 0),
             Catch::Contains("    and " + std::to_string(utf8.cases - kMaxShownRunFailures) +
                             " more failures not shown\n"));
}

TEST_CASE("fuzz run: a tool's own isError answer is a warning, not a failure", "[catalog_fuzz]") {
  const ServeOptions options = options_for(kCatalog);
  const auto reports = run_catalog_fuzz(catalog_of(options), options, {}, {}, {});
  const ToolRunReport& no = report_of(reports, "says_no");
  CHECK(no.failure_count == 0);
  CHECK(no.warning_count == no.cases);
  CHECK(no.warnings.front().finding == "error answer");
  CHECK_THAT(format_run_reports("f", reports, 0), Catch::Contains("    warning: error answer\n"));
}

TEST_CASE("fuzz run: a native tool that throws fails as crashed, its case redacted",
          "[catalog_fuzz]") {
  ToolSpec spec;
  spec.name = "thrower";
  spec.description = "Throws.";
  spec.input_schema = {
      {"type", "object"},
      {"properties", {{"password", {{"description", "A secret."}, {"type", "string"}}}}},
      {"required", {"password"}},
      {"additionalProperties", false}};
  spec.side_effect = "read_only";
  spec.timeout = std::chrono::milliseconds(2000);
  const std::vector<NativeTool> native{{spec,
                                        [](const nlohmann::json&, CallContext&) -> ToolResult {
                                          throw std::runtime_error("out of cheese");
                                        },
                                        {},
                                        {}}};
  const ServeOptions options;  // no catalog file: the built-ins and the native tool
  const auto reports = run_catalog_fuzz(catalog_of(options, native), options, native, {}, {});
  const ToolRunReport& thrower = report_of(reports, "thrower");
  REQUIRE(thrower.failure_count == thrower.cases);
  CHECK(thrower.failures.front().finding == "crashed");
  CHECK(thrower.failures.front().answer == "Tool \"thrower\" failed: out of cheese");
  CHECK(thrower.failures.front().arguments == nlohmann::json{{"password", "[REDACTED]"}});
}

TEST_CASE("fuzz run: mutations run only with the flag, in a throwaway root that is gone after",
          "[catalog_fuzz]") {
  const WorkingFolder here;
  const char* home_before = std::getenv("HOME");
  const ServeOptions options = options_for(kCatalog);
  const auto catalog = catalog_of(options);

  SECTION("without --fuzz-mutating no mutation runs") {
    const auto reports = run_catalog_fuzz(catalog, options, {}, {}, {});
    CHECK(report_of(reports, "write_note").skipped ==
          "local_mutation: runs only with --fuzz-mutating, in a throwaway root");
    CHECK(report_of(reports, "write_note").cases == 0);
  }
  SECTION("with it, the local_mutation tool runs in a throwaway root") {
    const auto reports = run_catalog_fuzz(catalog, options, {}, {}, FuzzRunOptions{true});
    const ToolRunReport& note = report_of(reports, "write_note");
    REQUIRE(note.skipped.empty());
    CHECK(note.where == "throwaway root");
    REQUIRE(note.warning_count == note.cases);
    REQUIRE(note.cases > 0);
    // It said where it ran: a fresh folder, its HOME too, deleted since.
    std::smatch where;
    const std::string& answer = note.warnings.front().answer;
    REQUIRE(std::regex_search(answer, where, std::regex("ran in (\\S+) home (\\S+)")));
    CHECK(where[1].str() == where[2].str());
    CHECK(fs::path(where[1].str()) != here.path());
    CHECK_THAT(where[1].str(), Catch::Contains("toolmux-fuzz-"));
    CHECK_FALSE(fs::exists(where[1].str()));
    // A command tool with its own cwd would write outside it.
    CHECK_THAT(report_of(reports, "write_in_workdir").skipped,
               Catch::StartsWith("local_mutation with its own cwd \""));
    CHECK_THAT(report_of(reports, "write_in_workdir").skipped,
               Catch::EndsWith("\": it would write outside the throwaway root"));
  }
  // Never: other systems' changes and destruction.
  const auto reports = run_catalog_fuzz(catalog, options, {}, {}, FuzzRunOptions{true});
  CHECK(report_of(reports, "post_message").skipped ==
        "remote_mutation: it changes other systems, which no throwaway root holds");
  CHECK(report_of(reports, "wipe").skipped == "destructive: never run");
  CHECK(report_of(reports, "call_tool").skipped ==
        "its cases are the other tools' cases, which each ran itself");
  // Nothing was written here, nor in the catalog's workdir; the process is as it was.
  CHECK(fs::is_empty(here.path()));
  CHECK_FALSE(fs::exists(fs::path(TOOLMUX_TEST_DATA) / "catalogs/workdir/fuzz-note.txt"));
  CHECK(fs::current_path() == here.path());
  CHECK((std::getenv("HOME") ? std::string(std::getenv("HOME")) : "") ==
        (home_before ? std::string(home_before) : ""));
}
