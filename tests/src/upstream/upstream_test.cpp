// Upstream's lifecycle with a real child (tests/data/upstreams/scripted.sh):
// restart with backoff after a crash and fail-fast meanwhile, the circuit
// breaker, the read-only retry, lazy start with the cached tool list, and
// list_changed; and with tests/data/upstreams/misbehaving.sh, broken answers.
#include "src/upstream/upstream.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/support/eventually.h"
#include "tests/support/quiet_logger.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace toolmux;
using nlohmann::json;
using toolmux::testing::QuietLogger;
using toolmux::testing::read_file;
using toolmux::testing::TempDir;
using toolmux::testing::TestContext;

namespace {

struct Scripted {
  TempDir dir;
  QuietLogger quiet;
  std::atomic<int> tools_changed{0};
  std::shared_ptr<Upstream> upstream;

  // `script`: the server, in tests/data/upstreams.
  explicit Scripted(UpstreamLifecycle lifecycle = {}, const fs::path& cache = {},
                    const std::string& script = "scripted.sh") {
    UpstreamSpec spec;
    spec.name = "scripted";
    spec.prefix = "scripted_";
    spec.argv = {(fs::path(TOOLMUX_TEST_DATA) / "upstreams" / script).string()};
    spec.env = {"PATH=/usr/bin:/bin", "RECEIVED=" + received().string()};
    spec.lifecycle = lifecycle;
    Upstream::Hooks hooks;
    hooks.on_tools_changed = [this](const std::string&) { ++tools_changed; };
    upstream = Upstream::create(spec, quiet.logger, cache, hooks);
    upstream->start();
  }
  ~Scripted() { upstream->stop(); }
  fs::path received() const { return dir.path() / "received"; }

  McpClient::Outcome call(const std::string& tool, SideEffect effect = SideEffect::remote_mutation,
                          std::chrono::milliseconds timeout = 5s) {
    TestContext context(timeout);
    return upstream->call_tool(tool, json::object(), context, effect);
  }
  // How many times the server was started (each start sends initialize).
  std::size_t starts() const {
    const std::string text = read_file(received());
    std::size_t count = 0;
    for (std::size_t at = text.find("\"method\":\"initialize\""); at != std::string::npos;
         at = text.find("\"method\":\"initialize\"", at + 1)) {
      ++count;
    }
    return count;
  }
};

UpstreamLifecycle quick() {
  UpstreamLifecycle lifecycle;
  lifecycle.start_timeout = 5s;
  lifecycle.restart_initial = 200ms;
  lifecycle.restart_max = 400ms;
  return lifecycle;
}

// scripted.sh, started on first use, writing what it receives to `received`.
UpstreamSpec lazy_scripted(const fs::path& received) {
  UpstreamSpec spec;
  spec.name = "scripted";
  spec.prefix = "scripted_";
  spec.argv = {(fs::path(TOOLMUX_TEST_DATA) / "upstreams" / "scripted.sh").string()};
  spec.env = {"PATH=/usr/bin:/bin", "RECEIVED=" + received.string()};
  spec.lifecycle = quick();
  spec.lifecycle.lazy = true;
  return spec;
}

// Calls `tool` until it is answered (or 5 s pass).
McpClient::Outcome call_until_answered(Scripted& s, const std::string& tool) {
  McpClient::Outcome outcome;
  for (int i = 0; i < 100; ++i) {
    outcome = s.call(tool);
    if (outcome.result) break;
    std::this_thread::sleep_for(50ms);
  }
  return outcome;
}

}  // namespace

TEST_CASE("a crashed upstream fails calls fast, is restarted after a delay, and serves again") {
  Scripted s(quick());
  REQUIRE(s.upstream->wait_started(5s));
  CHECK(s.upstream->state() == "serving");
  McpClient::Outcome crashed = s.call("crash");
  CHECK(crashed.failure == McpClient::Failure::gone);
  CHECK(crashed.error == "upstream \"scripted\" exited with status 1");

  const auto before = std::chrono::steady_clock::now();
  McpClient::Outcome refused = s.call("any");
  CHECK(std::chrono::steady_clock::now() - before < 150ms);  // fails fast, does not wait
  CHECK(refused.failure == McpClient::Failure::unavailable);
  INFO(refused.error);
  CHECK(refused.error.rfind("upstream \"scripted\" is unavailable: exited with status 1; toolmux "
                            "restarts it (attempt 1 in ",
                            0) == 0);

  McpClient::Outcome back = call_until_answered(s, "any");
  REQUIRE(back.result);
  CHECK((*back.result)["content"][0]["text"] == "called");
  CHECK(s.starts() == 2);
}

TEST_CASE("health() gives the phase, the last error and when, the restarts, the breaker's end") {
  UpstreamLifecycle lifecycle = quick();
  lifecycle.restart_initial = 500ms;
  lifecycle.restart_max = 500ms;
  lifecycle.breaker = true;
  lifecycle.breaker_failures = 2;
  lifecycle.breaker_cooldown = 10s;
  Scripted s(lifecycle);
  REQUIRE(s.upstream->wait_started(5s));
  Upstream::Health h = s.upstream->health();
  CHECK(h.phase == "serving");
  CHECK(h.state == "serving");
  CHECK(h.last_error.empty());
  CHECK_FALSE(h.last_error_at);
  CHECK(h.restarts == 0);
  CHECK(h.tools > 0);
  CHECK_FALSE(h.breaker_until);
  CHECK_FALSE(h.next_attempt);

  const auto crashed_at = std::chrono::system_clock::now();
  CHECK(s.call("crash").failure == McpClient::Failure::gone);
  for (int i = 0; i < 100 && h.phase != "restarting"; ++i) {
    std::this_thread::sleep_for(10ms);
    h = s.upstream->health();
  }
  CHECK(h.phase == "restarting");
  CHECK(h.state.rfind("restarting: exited with status 1; next attempt in ", 0) == 0);
  CHECK(h.last_error == "exited with status 1");
  REQUIRE(h.last_error_at);
  CHECK(*h.last_error_at >= crashed_at - 1s);
  REQUIRE(h.next_attempt);
  CHECK(*h.next_attempt > std::chrono::system_clock::now());
  CHECK(*h.next_attempt < std::chrono::system_clock::now() + 1s);

  REQUIRE(call_until_answered(s, "any").result);
  h = s.upstream->health();
  CHECK(h.phase == "serving");
  CHECK(h.restarts == 1);
  CHECK(h.last_error == "exited with status 1");  // kept once it serves again
  CHECK_FALSE(h.next_attempt);

  CHECK(s.call("hang", SideEffect::read_only, 100ms).failure == McpClient::Failure::timed_out);
  CHECK(s.call("hang", SideEffect::read_only, 100ms).failure == McpClient::Failure::timed_out);
  h = s.upstream->health();
  CHECK(h.phase == "breaker_open");
  CHECK(h.state.rfind("circuit open after 2 failed calls in a row", 0) == 0);
  REQUIRE(h.breaker_until);
  CHECK(*h.breaker_until > std::chrono::system_clock::now() + 8s);
  CHECK(*h.breaker_until < std::chrono::system_clock::now() + 11s);
  CHECK(h.last_error != "exited with status 1");  // the call's error now
  CHECK_FALSE(h.last_error.empty());
}

TEST_CASE("a read_only call whose upstream was lost under it is tried again, others never are") {
  SECTION("read_only: answered after the restart") {
    Scripted s(quick());
    REQUIRE(s.upstream->wait_started(5s));
    McpClient::Outcome outcome = s.call("crash_once", SideEffect::read_only);
    REQUIRE(outcome.result);
    CHECK((*outcome.result)["content"][0]["text"] == "called");
    CHECK(s.starts() == 2);
  }
  SECTION("remote_mutation: the loss is the answer, sent once") {
    Scripted s(quick());
    REQUIRE(s.upstream->wait_started(5s));
    McpClient::Outcome outcome = s.call("crash_once", SideEffect::remote_mutation);
    CHECK(outcome.failure == McpClient::Failure::gone);
    const std::string received = read_file(s.received());
    CHECK(received.find("crash_once") == received.rfind("crash_once"));
  }
  SECTION("read_only with no retries configured") {
    UpstreamLifecycle lifecycle = quick();
    lifecycle.read_only_retries = 0;
    Scripted s(lifecycle);
    REQUIRE(s.upstream->wait_started(5s));
    CHECK(s.call("crash_once", SideEffect::read_only).failure == McpClient::Failure::gone);
  }
}

TEST_CASE("the circuit breaker opens after reads fail in a row, then lets one probe through") {
  UpstreamLifecycle lifecycle = quick();
  lifecycle.breaker = true;
  lifecycle.breaker_failures = 2;
  lifecycle.breaker_cooldown = 500ms;
  Scripted s(lifecycle);
  REQUIRE(s.upstream->wait_started(5s));
  constexpr SideEffect kRead = SideEffect::read_only;
  CHECK(s.call("hang", kRead, 100ms).failure == McpClient::Failure::timed_out);
  CHECK(s.call("any", kRead).result);  // an answer resets the run
  CHECK(s.call("hang", kRead, 100ms).failure == McpClient::Failure::timed_out);
  CHECK(s.call("hang", kRead, 100ms).failure == McpClient::Failure::timed_out);

  McpClient::Outcome refused = s.call("any", kRead);
  CHECK(refused.failure == McpClient::Failure::unavailable);
  INFO(refused.error);
  CHECK(refused.error.find("2 calls in a row failed (circuit breaker open)") != std::string::npos);
  CHECK(s.upstream->state().rfind("circuit open after 2 failed calls in a row", 0) == 0);
  // A write is not the breaker's to refuse: it goes through, open or not.
  CHECK(s.call("any", SideEffect::remote_mutation).result);
  CHECK(s.upstream->state().rfind("circuit open after 2 failed calls in a row", 0) == 0);

  std::this_thread::sleep_for(600ms);
  SECTION("a failed probe opens it again") {
    CHECK(s.call("hang", kRead, 100ms).failure == McpClient::Failure::timed_out);
    CHECK(s.call("any", kRead).failure == McpClient::Failure::unavailable);
  }
  SECTION("an answered probe closes it") {
    CHECK(s.call("any", kRead).result);
    CHECK(s.call("any", kRead).result);
    CHECK(s.upstream->state() == "serving");
  }
}

TEST_CASE("writes never count toward the breaker, and without a circuitBreaker section it is off") {
  SECTION("on: writes that get no answer leave it closed") {
    UpstreamLifecycle lifecycle = quick();
    lifecycle.breaker = true;
    lifecycle.breaker_failures = 2;
    lifecycle.breaker_cooldown = 10s;
    Scripted s(lifecycle);
    REQUIRE(s.upstream->wait_started(5s));
    for (int i = 0; i < 3; ++i) {
      CHECK(s.call("hang", SideEffect::destructive, 100ms).failure ==
            McpClient::Failure::timed_out);
    }
    CHECK(s.upstream->state() == "serving");
    CHECK(s.call("any", SideEffect::read_only).result);
  }
  SECTION("off (the default): reads that get no answer are never refused for it") {
    UpstreamLifecycle lifecycle = quick();
    lifecycle.breaker_failures = 2;
    Scripted s(lifecycle);
    REQUIRE(s.upstream->wait_started(5s));
    for (int i = 0; i < 3; ++i) {
      CHECK(s.call("hang", SideEffect::read_only, 100ms).failure == McpClient::Failure::timed_out);
    }
    CHECK(s.upstream->state() == "serving");
    CHECK(s.call("any", SideEffect::read_only).result);
  }
}

TEST_CASE("a lazy upstream starts on first use, its tools known from the last run") {
  TempDir cache_dir;
  const fs::path cache = cache_dir.path() / "scripted.json";
  UpstreamLifecycle lifecycle = quick();
  lifecycle.lazy = true;
  {
    // No earlier run: started at once to learn its tools, which are cached.
    Scripted first(lifecycle, cache);
    CHECK(first.upstream->wait_started(5s));
    CHECK(first.upstream->tools().size() == 4);
    CHECK(fs::exists(cache));
  }
  Scripted s(lifecycle, cache);
  CHECK_FALSE(s.upstream->wait_started(5s));  // at once: nothing to wait for
  CHECK(s.upstream->state() == "not started (starts on first use)");
  CHECK(s.upstream->tools().size() == 4);  // from the cache
  CHECK_FALSE(fs::exists(s.received()));
  McpClient::Outcome outcome = s.call("any");
  REQUIRE(outcome.result);
  CHECK((*outcome.result)["content"][0]["text"] == "called");
  CHECK(s.upstream->state() == "serving");
  CHECK(s.starts() == 1);
}

TEST_CASE("a lazy upstream's tools come from the shared store first, and each listing goes there") {
  TempDir dir;
  QuietLogger quiet;
  const UpstreamSpec spec = lazy_scripted(dir.path() / "received");
  std::mutex mutex;  // written on the upstream's thread
  std::vector<std::pair<std::string, std::size_t>> written;
  const auto writes = [&] {
    std::lock_guard lock(mutex);
    return written;
  };
  Upstream::Hooks hooks;
  hooks.read_tools = [](const std::string& name) -> std::optional<std::vector<json>> {
    if (name != "scripted") return std::nullopt;
    return std::vector<json>{
        {{"name", "from_another_instance"}, {"inputSchema", {{"type", "object"}}}}};
  };
  hooks.write_tools = [&](const std::string& name, const std::vector<json>& tools) {
    std::lock_guard lock(mutex);
    written.emplace_back(name, tools.size());
  };
  auto upstream = Upstream::create(spec, quiet.logger, dir.path() / "none.json", hooks);
  upstream->start();
  // Known from the store: not started to learn them.
  CHECK_FALSE(upstream->wait_started(1s));
  REQUIRE(upstream->tools().size() == 1);
  CHECK(upstream->tools()[0]["name"] == "from_another_instance");
  CHECK_FALSE(fs::exists(dir.path() / "received"));
  // Its first use lists its real tools, which go to the store.
  TestContext context(5s);
  CHECK(upstream->call_tool("any", json::object(), context, SideEffect::read_only).result);
  REQUIRE(testing::eventually([&] { return !writes().empty(); }));
  CHECK(writes().front() == std::make_pair(std::string("scripted"), std::size_t{4}));
  upstream->stop();
}

TEST_CASE("a lazy upstream not started re-lists from the shared store, still not started") {
  TempDir dir;
  QuietLogger quiet;
  const UpstreamSpec spec = lazy_scripted(dir.path() / "received");
  std::mutex mutex;  // the store, read on the upstream's thread
  std::vector<json> stored = {{{"name", "first"}, {"inputSchema", {{"type", "object"}}}}};
  std::atomic<int> changed{0};
  std::atomic<int> written{0};
  Upstream::Hooks hooks;
  hooks.read_tools = [&](const std::string&) -> std::optional<std::vector<json>> {
    std::lock_guard lock(mutex);
    return stored;
  };
  hooks.write_tools = [&](const std::string&, const std::vector<json>&) { ++written; };
  hooks.on_tools_changed = [&](const std::string&) { ++changed; };
  auto upstream = Upstream::create(spec, quiet.logger, dir.path() / "none.json", hooks);
  upstream->start();
  CHECK_FALSE(upstream->wait_started(1s));
  REQUIRE(upstream->tools().size() == 1);
  // Another instance's copy listed one more tool and put it in the store.
  {
    std::lock_guard lock(mutex);
    stored.push_back({{"name", "second"}, {"inputSchema", {{"type", "object"}}}});
  }
  upstream->request_relist();
  CHECK(testing::eventually([&] { return upstream->tools().size() == 2 && changed == 1; }));
  CHECK(written == 0);  // it came from there
  CHECK(upstream->state() == "not started (starts on first use)");
  CHECK_FALSE(fs::exists(dir.path() / "received"));
  upstream->stop();
}

TEST_CASE("list_changed from the upstream re-lists its tools") {
  Scripted s(quick());
  REQUIRE(s.upstream->wait_started(5s));
  CHECK(s.tools_changed == 1);
  CHECK(s.upstream->tools().size() == 4);
  REQUIRE(s.call("change").result);
  for (int i = 0; i < 100 && s.tools_changed < 2; ++i) std::this_thread::sleep_for(20ms);
  CHECK(s.tools_changed == 2);
  const auto tools = s.upstream->tools();
  REQUIRE(tools.size() == 5);
  CHECK(tools[1]["name"] == "third");
}

TEST_CASE("an upstream that cannot start says why, and keeps being retried") {
  QuietLogger quiet;
  UpstreamSpec spec;
  spec.name = "broken";
  spec.argv = {"sh", "-c", "echo nope >&2; exit 3"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.lifecycle = quick();
  auto upstream = Upstream::create(spec, quiet.logger, {}, {});
  upstream->start();
  CHECK_FALSE(upstream->wait_started(5s));
  TestContext context;
  McpClient::Outcome outcome =
      upstream->call_tool("any", json::object(), context, SideEffect::read_only);
  CHECK(outcome.failure == McpClient::Failure::unavailable);
  CHECK(outcome.error.rfind("upstream \"broken\" is unavailable: upstream \"broken\" exited with "
                            "status 3; toolmux restarts it",
                            0) == 0);
  upstream->stop();
}

TEST_CASE("broken answers fail their calls at once and count toward the breaker, no restart") {
  UpstreamLifecycle lifecycle = quick();
  lifecycle.breaker = true;
  lifecycle.breaker_failures = 2;
  lifecycle.breaker_cooldown = 10s;
  Scripted s(lifecycle, {}, "misbehaving.sh");
  REQUIRE(s.upstream->wait_started(5s));
  // Not JSON, then a result that is not MCP's: each fails at once, long
  // before its deadline, as an answer that is no valid answer.
  McpClient::Outcome unreadable = s.call("not_json", SideEffect::read_only, 20s);
  CHECK(unreadable.failure == McpClient::Failure::invalid);
  CHECK(unreadable.error.rfind("upstream \"scripted\" sent a message toolmux cannot read", 0) == 0);
  McpClient::Outcome misshapen = s.call("text_not_string", SideEffect::read_only, 20s);
  CHECK(misshapen.failure == McpClient::Failure::invalid);
  CHECK(misshapen.error ==
        "upstream \"scripted\" answered tools/call with a result MCP does not allow: "
        "/content/0/text must be a string (it is a number)");
  CHECK(s.upstream->state().rfind("circuit open after 2 failed calls in a row", 0) == 0);
  CHECK(s.starts() == 1);  // it was never taken for lost
}
