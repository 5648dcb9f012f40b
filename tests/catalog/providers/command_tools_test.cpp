#include "catalog/providers/command_tools.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/fixtures.h"
#include "tests/support/processes.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Argv = std::vector<std::string>;

namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

CommandSpec command(Argv argv) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.env_allow = {"PATH"};
  return spec;
}

ToolResult run(CommandSpec spec, const json& arguments, TestContext& context) {
  return make_command_handler(std::move(spec))(arguments, context);
}

ToolResult run(CommandSpec spec, const json& arguments = json::object()) {
  TestContext context;
  return run(std::move(spec), arguments, context);
}

}  // namespace

// --- expand_argv ----------------------------------------------------------

TEST_CASE("expand_argv keeps a value with spaces as one element") {
  CHECK(expand_argv({"wc", "-l", "--", "{path}"}, {{"path", "my file.txt"}}) ==
        Argv{"wc", "-l", "--", "my file.txt"});
}

TEST_CASE("expand_argv passes shell metacharacters through verbatim") {
  json args = {{"pattern", "; rm -rf x"}, {"path", "$(touch pwned) `id` *.txt | cat > y"}};
  CHECK(expand_argv({"grep", "-e", "{pattern}", "--", "{path}"}, args) ==
        Argv{"grep", "-e", "; rm -rf x", "--", "$(touch pwned) `id` *.txt | cat > y"});
}

TEST_CASE("expand_argv fills placeholders inside a larger element") {
  CHECK(expand_argv({"head", "--lines={n}", "-v{flag}x"}, {{"n", 5}, {"flag", "q"}}) ==
        Argv{"head", "--lines=5", "-vqx"});
}

TEST_CASE("expand_argv leaves out an element whose argument is absent") {
  Argv tmpl{"git", "log", "--max-count={count}", "--author", "{author}", "--", "{path}"};
  CHECK(expand_argv(tmpl, {{"path", "src"}}) == Argv{"git", "log", "--author", "--", "src"});
  CHECK(expand_argv(tmpl, json::object()) == Argv{"git", "log", "--author", "--"});
  CHECK(expand_argv(tmpl, {{"count", 3}, {"author", "ann"}, {"path", "a"}}) ==
        Argv{"git", "log", "--max-count=3", "--author", "ann", "--", "a"});
}

TEST_CASE("expand_argv expands an array filling a whole element to one element per item") {
  CHECK(expand_argv({"sha256sum", "--", "{paths}"}, {{"paths", {"a b", "c", 7, true}}}) ==
        Argv{"sha256sum", "--", "a b", "c", "7", "true"});
  CHECK(expand_argv({"sha256sum", "--", "{paths}"}, {{"paths", json::array()}}) ==
        Argv{"sha256sum", "--"});
  // Inside a larger element an array reads as compact JSON.
  CHECK(expand_argv({"tool", "--list={paths}"}, {{"paths", {"a", "b"}}}) ==
        Argv{"tool", "--list=[\"a\",\"b\"]"});
  // Nested arrays and objects as items read as compact JSON too.
  CHECK(expand_argv({"tool", "{items}"}, {{"items", {json::array({1, 2}), {{"k", "v"}}}}}) ==
        Argv{"tool", "[1,2]", "{\"k\":\"v\"}"});
}

TEST_CASE("expand_argv turns {{ and }} into literal braces") {
  CHECK(expand_argv({"printf", "{{}}", "{{{name}}}", "a}}b{{c"}, {{"name", "x"}}) ==
        Argv{"printf", "{}", "{x}", "a}b{c"});
  CHECK(expand_argv({"printf", "{{name}}"}, {{"name", "x"}}) == Argv{"printf", "{name}"});
  // An escaped brace never makes an element conditional.
  CHECK(expand_argv({"printf", "{{absent}}"}, json::object()) == Argv{"printf", "{absent}"});
}

TEST_CASE("expand_argv writes numbers, booleans, null and objects as JSON text") {
  Argv tmpl{"t", "{v}"};
  CHECK(expand_argv(tmpl, {{"v", 42}}) == Argv{"t", "42"});
  CHECK(expand_argv(tmpl, {{"v", -7}}) == Argv{"t", "-7"});
  CHECK(expand_argv(tmpl, {{"v", 18446744073709551615ull}}) == Argv{"t", "18446744073709551615"});
  CHECK(expand_argv(tmpl, {{"v", 3.0}}) == Argv{"t", "3"});
  CHECK(expand_argv(tmpl, {{"v", 2.5}}) == Argv{"t", "2.5"});
  CHECK(expand_argv(tmpl, {{"v", true}}) == Argv{"t", "true"});
  CHECK(expand_argv(tmpl, {{"v", false}}) == Argv{"t", "false"});
  CHECK(expand_argv(tmpl, {{"v", nullptr}}) == Argv{"t", "null"});
  CHECK(expand_argv(tmpl, {{"v", {{"b", 1}, {"a", "x y"}}}}) ==
        Argv{"t", "{\"a\":\"x y\",\"b\":1}"});
  CHECK(expand_argv(tmpl, {{"v", ""}}) == Argv{"t", ""});
}

TEST_CASE("expand_argv refuses a template that check_command_spec refuses") {
  CHECK_THROWS_AS(expand_argv({}, json::object()), std::invalid_argument);
  CHECK_THROWS_AS(expand_argv({"t", "{open"}, json::object()), std::invalid_argument);
  CHECK_THROWS_AS(expand_argv({"t", "close}"}, json::object()), std::invalid_argument);
  CHECK_THROWS_AS(expand_argv({"t", "{}"}, json::object()), std::invalid_argument);
  CHECK_THROWS_AS(expand_argv({"{prog}"}, {{"prog", "rm"}}), std::invalid_argument);
}

// --- check_command_spec -----------------------------------------------------

namespace {
json schema_with(std::initializer_list<const char*> names) {
  json properties = json::object();
  for (const char* name : names) properties[name] = {{"type", "string"}};
  return {{"type", "object"}, {"properties", properties}};
}
}  // namespace

TEST_CASE("check_command_spec accepts a good command") {
  CommandSpec spec = command({"wc", "-l", "--", "{path}", "{{literal}}"});
  spec.cwd = "/tmp";
  spec.env = {{"LC_ALL", "C"}};
  CHECK(check_command_spec(spec, schema_with({"path"})).empty());
}

TEST_CASE("check_command_spec reports every problem with its pointer") {
  CommandSpec spec;
  spec.argv = {"{prog}", "{path}", "{nope}", "bad{", "x}y", "{}"};
  spec.cwd = "relative/dir";
  spec.env_allow = {"PATH", "1BAD", "HAS-DASH"};
  spec.env = {{"GOOD", "1"}, {"bad name", "2"}};
  spec.max_output_bytes = 0;
  Problems problems = check_command_spec(spec, schema_with({"path", "prog"}));
  INFO(format_problems(problems));
  CHECK(has_problem(problems, "/argv/0", "must not contain a placeholder"));
  CHECK(has_problem(problems, "/argv/2", "placeholder {nope} names no property"));
  CHECK(has_problem(problems, "/argv/3", "unbalanced '{'"));
  CHECK(has_problem(problems, "/argv/4", "unbalanced '}'"));
  CHECK(has_problem(problems, "/argv/5", "empty placeholder"));
  CHECK(has_problem(problems, "/cwd", "not an absolute path"));
  CHECK(has_problem(problems, "/envAllow/1", "\"1BAD\" is not a valid environment variable"));
  CHECK(has_problem(problems, "/envAllow/2", "\"HAS-DASH\""));
  CHECK(has_problem(problems, "/env/bad name", "not a valid environment variable"));
  CHECK(has_problem(problems, "/maxOutputBytes", "at least 1"));
  CHECK(problems.size() == 10);
}

TEST_CASE("check_command_spec refuses an empty argv and placeholders without a schema") {
  CHECK(has_problem(check_command_spec(CommandSpec{}, schema_with({})), "/argv", "argv is empty"));
  CHECK(has_problem(check_command_spec(command({"cat", "{x}"}), json::object()), "/argv/1",
                    "placeholder {x}"));
}

// --- the handler ------------------------------------------------------------

TEST_CASE("a command's stdout becomes the text result") {
  auto result = run(command({"printf", "%s|", "{a}", "{b}", "{c}"}),
                    {{"a", "x y"}, {"b", "; rm -rf x"}, {"c", {"1", "2"}}});
  CHECK_FALSE(result.is_error);
  CHECK(text_of(result) == "x y|; rm -rf x|1|2|");
}

TEST_CASE("a non-zero exit is an error carrying stderr and stdout") {
  auto result = run(command({"sh", "-c", "echo partial; echo 'it broke' >&2; exit 3"}));
  CHECK(result.is_error);
  CHECK(text_of(result) == "command exited with status 3\nstderr:\nit broke\n\nstdout:\npartial\n");

  auto quiet = run(command({"false"}));
  CHECK(quiet.is_error);
  CHECK(text_of(quiet) == "command exited with status 1");
}

TEST_CASE("a command killed by a signal is an error naming it") {
  auto result = run(command({"sh", "-c", "kill -KILL $$"}));
  CHECK(result.is_error);
  CHECK(starts_with(text_of(result), "command was killed by signal 9"));
}

TEST_CASE("a missing program is an error naming it") {
  auto result = run(command({"toolmux-no-such-program", "x"}));
  CHECK(result.is_error);
  CHECK(text_of(result) ==
        "the command could not be started: no such program: toolmux-no-such-program");
}

TEST_CASE("a command past its deadline is killed with its whole process group") {
  TempDir dir;
  auto pidfile = dir.path() / "pid";
  auto spec = command({"sh", "-c", "sleep 30 & echo $! > \"$1\"; sleep 30", "sh", "{pidfile}"});
  TestContext context(400ms);
  auto start = Clock::now();
  auto result = run(spec, {{"pidfile", pidfile.string()}}, context);
  CHECK(Clock::now() - start < 5s);
  CHECK(result.is_error);
  CHECK(text_of(result) == "timed out after 400 ms");
  std::string pid_text = read_file(pidfile);
  REQUIRE_FALSE(pid_text.empty());
  CHECK(eventually_gone(static_cast<pid_t>(std::stol(pid_text))));
}

TEST_CASE("cancelling the call kills the command") {
  TestContext context;
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    context.cancel = true;
  });
  auto start = Clock::now();
  auto result = run(command({"sleep", "30"}), json::object(), context);
  canceller.join();
  CHECK(Clock::now() - start < 5s);
  CHECK(result.is_error);
  CHECK(text_of(result) == "cancelled");
}

TEST_CASE("output past the cap is cut and marked") {
  auto spec = command({"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a"});
  spec.max_output_bytes = 10;
  auto result = run(spec);
  CHECK_FALSE(result.is_error);
  CHECK(text_of(result) == "aaaaaaaaaa\n[toolmux: output truncated at 10 bytes of 3000000]");
}

TEST_CASE("a cap that splits a UTF-8 character cuts before it") {
  auto spec = command({"printf", "ab\xC3\xA9\xC3\xA9"});  // "abéé"
  spec.max_output_bytes = 3;
  auto result = run(spec);
  CHECK_FALSE(result.is_error);
  CHECK(text_of(result) == "ab\n[toolmux: output truncated at 3 bytes of 6]");
}

TEST_CASE("output that is not valid UTF-8 is an error") {
  auto result = run(command({"printf", "\\377\\376ok"}));
  CHECK(result.is_error);
  CHECK(text_of(result) == "command output is not valid UTF-8");
}

TEST_CASE("invalid UTF-8 on stderr of a failing command still makes a valid result") {
  auto result = run(command({"sh", "-c", "printf 'bad \\377 byte' >&2; exit 2"}));
  CHECK(result.is_error);
  CHECK(text_of(result) == "command exited with status 2\nstderr:\nbad \xEF\xBF\xBD byte");
  CHECK_NOTHROW(result.to_json().dump());
}

TEST_CASE("only allow-listed variables and fixed ones reach the command") {
  ::setenv("TOOLMUX_TEST_ALLOWED", "yes", 1);
  ::setenv("TOOLMUX_TEST_SECRET", "leak", 1);
  ::setenv("TOOLMUX_TEST_OVERRIDDEN", "inherited", 1);
  auto spec = command({"/usr/bin/env"});
  spec.env_allow = {"TOOLMUX_TEST_ALLOWED", "TOOLMUX_TEST_OVERRIDDEN", "TOOLMUX_TEST_UNSET"};
  spec.env = {{"FIXED", "a b"}, {"TOOLMUX_TEST_OVERRIDDEN", "fixed"}};
  auto result = run(spec);
  ::unsetenv("TOOLMUX_TEST_ALLOWED");
  ::unsetenv("TOOLMUX_TEST_SECRET");
  ::unsetenv("TOOLMUX_TEST_OVERRIDDEN");
  CHECK_FALSE(result.is_error);
  std::string text = text_of(result);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("TOOLMUX_RUN_ID=", 0) != 0) lines.push_back(line);  // the run's marker
  }
  std::sort(lines.begin(), lines.end());
  CHECK(lines == std::vector<std::string>{"FIXED=a b", "TOOLMUX_TEST_ALLOWED=yes",
                                          "TOOLMUX_TEST_OVERRIDDEN=fixed"});
}

TEST_CASE("a command runs in its working directory") {
  TempDir dir;
  auto spec = command({"pwd"});
  spec.cwd = dir.path();
  auto result = run(spec);
  CHECK(text_of(result) == dir.path().string() + "\n");
}

TEST_CASE("a long command reports progress about once a second") {
  TestContext context;
  auto result = run(command({"sleep", "2.3"}), json::object(), context);
  CHECK_FALSE(result.is_error);
  auto progress = context.progress();
  REQUIRE(progress.size() == 2);
  CHECK(progress[0].progress == 1.0);
  CHECK(progress[0].message == "running for 1s");
  CHECK_FALSE(progress[0].total);
  CHECK(progress[1].progress == 2.0);
  CHECK(progress[1].message == "running for 2s");
}

TEST_CASE("an argument with a NUL character is refused rather than cut") {
  auto result = run(command({"echo", "{v}"}), {{"v", std::string("a\0b", 3)}});
  CHECK(result.is_error);
  CHECK(text_of(result).find("NUL") != std::string::npos);
}

TEST_CASE("a command handler can run on many threads at once") {
  auto handler = make_command_handler(command({"sh", "-c", "echo \"$1\"", "sh", "{n}"}));
  std::vector<std::string> outputs(6);
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      TestContext context;
      outputs[i] = handler({{"n", std::to_string(i)}}, context).content[0]["text"];
    });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < 6; ++i) CHECK(outputs[i] == std::to_string(i) + "\n");
}
