// Upstream and the era of the server it keeps serving, with real children:
// a modern one (tests/data/upstreams/modern.sh) is listened to through
// subscriptions/listen, which carries toolmux's resource subscriptions, and
// its list changes re-list its tools; a legacy one
// (tests/data/upstreams/scripted.sh) is probed once, not at every restart.
#include "src/upstream/upstream.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/eventually.h"
#include "tests/support/quiet_logger.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace toolmux;
using nlohmann::json;
using toolmux::testing::eventually;
using toolmux::testing::QuietLogger;
using toolmux::testing::read_file;
using toolmux::testing::TempDir;
using toolmux::testing::TestContext;

namespace {

struct Served {
  TempDir dir;
  QuietLogger quiet;
  std::atomic<int> tools_changed{0};
  std::shared_ptr<Upstream> upstream;

  explicit Served(const std::string& script) {
    UpstreamSpec spec;
    spec.name = "up";
    spec.prefix = "up_";
    spec.argv = {(fs::path(TOOLMUX_TEST_DATA) / "upstreams" / script).string()};
    spec.env = {"PATH=/usr/bin:/bin", "RECEIVED=" + received().string()};
    spec.lifecycle.start_timeout = 5s;
    spec.lifecycle.restart_initial = 200ms;
    spec.lifecycle.restart_max = 400ms;
    Upstream::Hooks hooks;
    hooks.on_tools_changed = [this](const std::string&) { ++tools_changed; };
    upstream = Upstream::create(spec, quiet.logger, {}, hooks);
    upstream->start();
  }
  ~Served() { upstream->stop(); }
  fs::path received() const { return dir.path() / "received"; }

  // The requests the server received with `method`, once there are `count` (or 5 s passed).
  std::vector<json> requests(const std::string& method, std::size_t count = 0) {
    std::vector<json> out;
    eventually(
        [&] {
          out.clear();
          std::istringstream in(read_file(received()));
          for (std::string line; std::getline(in, line);) {
            json parsed = json::parse(line);
            if (parsed.value("method", "") == method) out.push_back(std::move(parsed));
          }
          return out.size() >= count;
        },
        5s);
    return out;
  }
};

bool listed(const Upstream& upstream, const std::string& tool) {
  for (const json& t : upstream.tools()) {
    if (t["name"] == tool) return true;
  }
  return false;
}

}  // namespace

TEST_CASE(
    "a modern upstream serves, says its protocol, and its list changes come by subscription") {
  Served s("modern.sh");
  REQUIRE(s.upstream->wait_started(10s));
  CHECK(s.upstream->state() == "serving (protocol 2026-07-28)");
  CHECK(s.upstream->era() == ProtocolEra::modern);
  CHECK(s.upstream->protocol() == "2026-07-28");
  CHECK(s.upstream->tools().size() == 2);

  // One subscription, for what the server says it tells (no resource subscribed yet).
  const std::vector<json> listens = s.requests("subscriptions/listen", 1);
  REQUIRE(listens.size() == 1);
  CHECK(listens[0]["params"]["notifications"] ==
        json::parse(R"({"toolsListChanged":true,"resourcesListChanged":true})"));

  const int changes = s.tools_changed;
  TestContext context;
  REQUIRE(s.upstream->call_tool("change", json::object(), context, SideEffect::read_only).result);
  CHECK(eventually([&] { return listed(*s.upstream, "third"); }, 5s));
  CHECK(s.tools_changed == changes + 1);
}

TEST_CASE("a modern upstream's resource subscriptions go in its subscriptions/listen") {
  Served s("modern.sh");
  REQUIRE(s.upstream->wait_started(10s));
  REQUIRE(s.requests("subscriptions/listen", 1).size() == 1);

  REQUIRE(s.upstream->subscribe_resource("file:///a").ok());
  std::vector<json> listens = s.requests("subscriptions/listen", 2);
  REQUIRE(listens.size() == 2);
  CHECK(listens[1]["params"]["notifications"]["resourceSubscriptions"] ==
        json::array({"file:///a"}));
  // The one before was ended.
  const std::vector<json> cancelled = s.requests("notifications/cancelled", 1);
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0]["params"]["requestId"] == listens[0]["id"]);

  // The same URI again changes nothing; its removal opens one without it.
  REQUIRE(s.upstream->subscribe_resource("file:///a").ok());
  s.upstream->unsubscribe_resource("file:///a");
  listens = s.requests("subscriptions/listen", 3);
  REQUIRE(listens.size() == 3);
  CHECK_FALSE(listens[2]["params"]["notifications"].contains("resourceSubscriptions"));
}

TEST_CASE("resource subscriptions of one upstream are bounded, the refusal naming the limit") {
  Served s("modern.sh");
  REQUIRE(s.upstream->wait_started(10s));
  for (std::size_t i = 0; i < Upstream::kMaxResourceSubscriptions; ++i) {
    REQUIRE(s.upstream->subscribe_resource("file:///r" + std::to_string(i)).ok());
  }
  const toolmux::Status refused = s.upstream->subscribe_resource("file:///one-more");
  CHECK(refused.message() ==
        "toolmux subscribes to at most 1000 resources of upstream \"up\"; file:///one-more is one "
        "too many");
  CHECK(s.upstream->subscribe_resource("file:///r0").ok());  // one it has
}

TEST_CASE("stopping an upstream while it starts returns: the client it started is closed") {
  // The probe waits for a server that does not answer it: stop() comes while
  // the start is under way. The client that start made was closed under the
  // upstream's lock, while its reader thread waited for that lock to say the
  // child had exited: stop() never returned.
  TempDir dir;
  QuietLogger quiet;
  UpstreamSpec spec;
  spec.name = "up";
  spec.argv = {(fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "scripted.sh").string()};
  spec.env = {"PATH=/usr/bin:/bin", "RECEIVED=" + (dir.path() / "received").string(),
              "DISCOVER=silent"};
  spec.lifecycle.probe_timeout = 500ms;
  auto upstream = Upstream::create(spec, quiet.logger, {}, {});
  upstream->start();
  std::this_thread::sleep_for(100ms);
  auto stopped = std::make_shared<std::atomic<bool>>(false);
  std::thread([upstream, stopped] {
    upstream->stop();
    *stopped = true;
  }).detach();
  // (When it hangs, the upstream is left to the detached thread.)
  REQUIRE(eventually([&] { return stopped->load(); }, 10s));
  CHECK(upstream->state() == "stopped");
}

TEST_CASE("a legacy upstream is probed once: a restart goes straight to initialize") {
  Served s("scripted.sh");
  REQUIRE(s.upstream->wait_started(10s));
  CHECK(s.upstream->state() == "serving");
  CHECK(s.upstream->era() == ProtocolEra::legacy);
  CHECK(s.upstream->protocol() == "2025-11-25");
  TestContext context;
  CHECK(s.upstream->call_tool("crash", json::object(), context, SideEffect::remote_mutation)
            .failure == McpClient::Failure::gone);
  REQUIRE(s.requests("initialize", 2).size() == 2);
  CHECK(s.requests("server/discover").size() == 1);
  // No subscription: a legacy server tells its changes unasked.
  CHECK(s.requests("subscriptions/listen").empty());
}
