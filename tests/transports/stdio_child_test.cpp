#include "transports/stdio_child.h"

#include <signal.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace toolmux;
using namespace std::chrono_literals;

namespace {

ChildCommand command(std::vector<std::string> argv) {
  ChildCommand out;
  out.argv = std::move(argv);
  out.env = {"PATH=/usr/bin:/bin"};
  return out;
}

// Collects stderr lines from the child's stderr thread.
struct Lines {
  std::mutex mutex;
  std::vector<std::string> lines;
  StdioChild::StderrSink sink() {
    return [this](std::string_view line) {
      std::lock_guard lock(mutex);
      lines.emplace_back(line);
    };
  }
  std::vector<std::string> get() {
    std::lock_guard lock(mutex);
    return lines;
  }
};

// Running (a zombie left for a parent that never reaps does not count).
bool process_exists(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
}

}  // namespace

TEST_CASE("a child's stdin and stdout carry lines both ways") {
  auto started = StdioChild::start(command({"cat"}), nullptr);
  REQUIRE(started.ok());
  CHECK(started.message().empty());
  auto child = std::move(started).value();
  REQUIRE(child->transport().write_line(R"({"jsonrpc":"2.0","method":"one"})"));
  REQUIRE(child->transport().write_line("second line"));
  auto first = child->transport().read_line();
  REQUIRE(first);
  CHECK(first->text == R"({"jsonrpc":"2.0","method":"one"})");
  auto second = child->transport().read_line();
  REQUIRE(second);
  CHECK(second->text == "second line");
  CHECK_FALSE(child->exit_description());
  const pid_t pid = child->pid();
  child->stop();
  CHECK_FALSE(process_exists(pid));
  CHECK(child->exit_description());
}

TEST_CASE("a child's stderr is handed over line by line, long lines cut") {
  Lines lines;
  auto started = StdioChild::start(
      command({"sh", "-c",
               "echo first >&2; printf 'second\\r\\n' >&2; head -c 10000 /dev/zero | tr '\\0' x "
               ">&2; echo >&2; echo done"}),
      lines.sink());
  REQUIRE(started.ok());
  auto child = std::move(started).value();
  auto out = child->transport().read_line();
  REQUIRE(out);
  CHECK(out->text == "done");
  CHECK_FALSE(child->transport().read_line());  // the child exited: end of its stdout
  child->stop();
  auto got = lines.get();
  REQUIRE(got.size() == 3);
  CHECK(got[0] == "first");
  CHECK(got[1] == "second");
  CHECK(got[2] == std::string(StdioChild::kMaxStderrLine, 'x'));
}

TEST_CASE("a child that exits at once is detected with its status") {
  auto started = StdioChild::start(command({"sh", "-c", "exit 3"}), nullptr);
  REQUIRE(started.ok());
  auto child = std::move(started).value();
  CHECK_FALSE(child->transport().read_line());
  auto status = child->exit_description(2000ms);
  REQUIRE(status);
  CHECK(*status == "exited with status 3");
  CHECK_FALSE(child->transport().write_line("to nobody"));  // EPIPE, not SIGPIPE
}

TEST_CASE("a child that cannot start is an error, not a child") {
  auto child = StdioChild::start(command({"toolmux-no-such-program"}), nullptr);
  CHECK_FALSE(child.ok());
  CHECK(child.message() == "no such program: toolmux-no-such-program");
  CHECK(child.status().is_not_found());
}

TEST_CASE("stop ends the child's whole process group, even one that ignores SIGTERM") {
  // The shell ignores SIGTERM and leaves a grandchild sleeping in its group.
  auto spawned =
      StdioChild::start(command({"sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait"}), nullptr);
  REQUIRE(spawned.ok());
  auto child = std::move(spawned).value();
  auto line = child->transport().read_line();
  REQUIRE(line);
  const pid_t grandchild = static_cast<pid_t>(std::stol(line->text));
  const pid_t pid = child->pid();
  const auto started = std::chrono::steady_clock::now();
  child->stop(200ms);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  CHECK_FALSE(process_exists(pid));
  // The grandchild was killed (a zombie until whoever inherited it reaps it).
  for (int i = 0; i < 100 && process_exists(grandchild); ++i) ::usleep(10000);
  CHECK_FALSE(process_exists(grandchild));
  CHECK(child->exit_description());
}
