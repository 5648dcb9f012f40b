// UpstreamSet and register_upstream_tools with real children: the scripted
// server (tests/data/upstreams/scripted.sh), whose tools include two that
// break the tool contract, beside an upstream that exits at once.
#include "src/upstream/upstreams.h"

#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace toolmux;
using toolmux::testing::read_file;
using toolmux::testing::TempDir;

namespace {

UpstreamSpec upstream(const std::string& name, std::vector<std::string> argv, const fs::path& dir) {
  UpstreamSpec spec;
  spec.name = name;
  spec.prefix = name + "_";
  spec.argv = std::move(argv);
  spec.env = {"PATH=/usr/bin:/bin", "RECEIVED=" + (dir / (name + ".received")).string()};
  return spec;
}

}  // namespace

TEST_CASE("upstream tools join the registry, contract breakers and broken upstreams are logged") {
  TempDir dir;
  const fs::path log_path = dir.path() / "log";
  std::FILE* log_file = std::fopen(log_path.c_str(), "w");
  REQUIRE(log_file);
  Logger logger(log_file);
  ToolRegistry registry;
  const fs::path script = fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "scripted.sh";
  UpstreamSpec scripted = upstream("scripted", {script.string()}, dir.path());
  scripted.exclude = {"first"};
  scripted.tools["second"].pinned = true;
  scripted.tools["second"].side_effect = "destructive";
  scripted.tools["typo"].description = "Names a tool the upstream does not have.";
  {
    UpstreamSet set(logger, {}, {});
    UpstreamSpec broken =
        upstream("broken", {"sh", "-c", "echo cannot start >&2; exit 3"}, dir.path());
    broken.lifecycle.restart_initial = 10s;
    set.update({broken, scripted});
    REQUIRE(set.list().size() == 2);
    CHECK(set.find("scripted")->state() == "serving");
    UpstreamTools started = register_upstream_tools(set.list(), registry, logger);
    CHECK(started.upstreams_with_tools == 1);
    CHECK(started.tool_upstream ==
          std::map<std::string, std::string>{{"scripted_second", "scripted"}});
    CHECK(started.pinned == std::vector<std::string>{"scripted_second"});
    REQUIRE(registry.tools().size() == 1);
    const RegisteredTool* second = registry.find("scripted_second");
    REQUIRE(second);
    CHECK(second->spec.side_effect == "destructive");
    CHECK(second->spec.timeout == kUpstreamDefaultTimeout);
    set.stop();
  }
  std::fclose(log_file);
  const std::string log = read_file(log_path);
  INFO(log);
  CHECK(
      log.find(
          R"("event":"upstream_failed","level":"error","reason":"upstream \"broken\" exited with status 3")") !=
      std::string::npos);
  CHECK(log.find(R"("line":"cannot start")") != std::string::npos);
  CHECK(log.find(R"("event":"upstream_tool_left_out")") != std::string::npos);
  CHECK(log.find(R"("reason":"/name: tool \"scripted_bad name\": name contains U+0020 (space))") !=
        std::string::npos);
  CHECK(log.find(R"("tool":"bad name","ts")") != std::string::npos);
  CHECK(log.find(R"("tool":"outside","ts")") != std::string::npos);
  CHECK(log.find(R"("event":"upstream_unknown_tool","field":"tools")") != std::string::npos);
  CHECK(log.find(R"("registered":1)") != std::string::npos);
}

TEST_CASE(
    "update keeps an unchanged upstream running, replaces a changed one, stops a removed one") {
  TempDir dir;
  std::FILE* sink = std::fopen("/dev/null", "w");
  REQUIRE(sink);
  {
    Logger logger(sink);
    UpstreamSet set(logger, {}, {});
    const fs::path script = fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "scripted.sh";
    UpstreamSpec spec = upstream("scripted", {script.string()}, dir.path());
    set.update({spec});
    const auto first = set.find("scripted");
    REQUIRE(first);
    CHECK(first->state() == "serving");

    spec.prefix = "other_";  // not the connection: kept, with the new settings
    set.update({spec});
    CHECK(set.find("scripted") == first);
    CHECK(first->spec().prefix == "other_");

    spec.env.push_back("EXTRA=1");  // the connection: a new process
    set.update({spec});
    const auto second = set.find("scripted");
    CHECK(second != first);
    CHECK(second->state() == "serving");
    CHECK(first->state() == "stopped");

    set.update({});
    CHECK(set.list().empty());
    CHECK_FALSE(set.find("scripted"));
  }
  std::fclose(sink);
}
