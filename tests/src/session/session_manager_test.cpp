#include "src/session/session_manager.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "src/store/lazy_result_store.h"
#include "src/store/session_store.h"
#include "tests/support/eventually.h"
#include "tests/support/session_store.h"
#include "tests/support/temp_dir.h"

using nlohmann::json;
using toolmux::LazyResultStore;
using toolmux::Logger;
using toolmux::LogLevel;
using toolmux::MessageSink;
using toolmux::ResultStore;
using toolmux::ResultStoreOptions;
using toolmux::Session;
using toolmux::SessionLimits;
using toolmux::SessionManager;
using toolmux::SessionStore;
using toolmux::testing::eventually;
using toolmux::testing::open_session_store;
using toolmux::testing::TempDir;
using namespace std::chrono_literals;

namespace {

// A sink that only notes that its session ended.
struct EndedSink final : MessageSink {
  void send(const json&, const json&) override {}
  void session_ended() override { ended = true; }
  std::atomic<bool> ended{false};
};

std::shared_ptr<EndedSink> sink_of(const Session& session) {
  return std::dynamic_pointer_cast<EndedSink>(session.owned_sink());
}

// A manager and what it is built on; `store` and `results` are optional.
struct Fixture {
  explicit Fixture(SessionLimits limits = {}, SessionStore* store = nullptr,
                   std::shared_ptr<LazyResultStore> results = nullptr)
      : manager(
            limits, store, std::move(results),
            [](const std::string&) { return std::make_shared<EndedSink>(); }, logger) {}

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> log{std::fopen("/dev/null", "w"), &std::fclose};
  Logger logger{log.get(), LogLevel::emergency};
  SessionManager manager;
};

// Limits with an idle timeout and sweep interval (the cap as by default).
SessionLimits idle_limits(std::chrono::seconds idle, std::chrono::milliseconds sweep) {
  SessionLimits limits;
  limits.idle_timeout = idle;
  limits.sweep_interval = sweep;
  return limits;
}

}  // namespace

TEST_CASE("create mints distinct unguessable ids and labels, find gives the session back") {
  Fixture f;
  std::set<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    auto session = f.manager.create("local");
    REQUIRE(session);
    CHECK(session->id().size() >= 43);  // 256 bits, base64url
    const auto& id = session->id();
    CHECK(std::all_of(id.begin(), id.end(), [](char c) { return c >= 0x21 && c <= 0x7e; }));
    ids.insert(session->id());
  }
  CHECK(ids.size() == 50);
  CHECK(f.manager.count() == 50);
  auto first = f.manager.find(*ids.begin(), "local");
  REQUIRE(first);
  CHECK(first->id() == *ids.begin());
  CHECK(first->principal() == "local");
  CHECK(first->label().rfind("http-", 0) == 0);
  CHECK(f.manager.find("no-such-id", "local") == nullptr);
}

TEST_CASE("past max_sessions create gives null, ending one makes room") {
  SessionLimits limits;
  limits.max_sessions = 2;
  Fixture f(limits);
  auto a = f.manager.create("local");
  auto b = f.manager.create("local");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(f.manager.create("local") == nullptr);
  CHECK(f.manager.create("someone else") == nullptr);
  // The open ones are undisturbed.
  CHECK(f.manager.find(a->id(), "local") == a);
  CHECK(f.manager.find(b->id(), "local") == b);
  CHECK(f.manager.end(a->id(), "local"));
  CHECK(f.manager.create("local") != nullptr);
  CHECK(f.manager.count() == 2);
}

TEST_CASE("another principal neither finds nor ends a session") {
  Fixture f;
  auto alice = f.manager.create("alice");
  REQUIRE(alice);
  CHECK(f.manager.find(alice->id(), "bob") == nullptr);
  CHECK(f.manager.find(alice->id(), "") == nullptr);
  CHECK_FALSE(f.manager.end(alice->id(), "bob"));
  CHECK_FALSE(sink_of(*alice)->ended);
  CHECK(f.manager.find(alice->id(), "alice") == alice);
}

TEST_CASE("end cancels the session's calls, closes its sink and forgets it") {
  Fixture f;
  auto session = f.manager.create("local");
  REQUIRE(session);
  auto control = session->begin_call(json(1));
  REQUIRE(control);
  CHECK(f.manager.end(session->id(), "local"));
  CHECK(control->cancelled());
  CHECK(sink_of(*session)->ended);
  CHECK(f.manager.find(session->id(), "local") == nullptr);
  CHECK(f.manager.count() == 0);
  CHECK_FALSE(f.manager.end(session->id(), "local"));
}

TEST_CASE("end deletes the session's record and its offloaded results, and no one else's") {
  TempDir dir;
  auto store = open_session_store(dir);
  ResultStoreOptions options;
  options.data_dir = dir.path();
  auto results = std::make_shared<LazyResultStore>(options);
  Fixture f({}, store.get(), results);
  auto gone = f.manager.create("local");
  auto kept = f.manager.create("local");
  REQUIRE(f.manager.keep(gone->id()).ok());
  REQUIRE(f.manager.keep(kept->id()).ok());
  auto opened = results->get();
  REQUIRE(opened.ok());
  ResultStore* rs = *opened;
  const auto gone_put = rs->put(gone->id(), "text of the ended session");
  const auto kept_put = rs->put(kept->id(), "text of the other");
  REQUIRE(gone_put.ok());
  REQUIRE(kept_put.ok());
  const std::string& gone_result = *gone_put;
  const std::string& kept_result = *kept_put;
  CHECK(store->load_sessions().size() == 2);

  REQUIRE(f.manager.end(gone->id(), "local"));
  const auto gone_read = rs->read(gone->id(), gone_result, 0, 100);
  CHECK_FALSE(gone_read.ok());
  CHECK(gone_read.status().is_not_found());
  CHECK(rs->read(kept->id(), kept_result, 0, 100).ok());
  auto records = store->load_sessions();
  REQUIRE(records.size() == 1);
  CHECK(records[0].first == kept->id());
}

TEST_CASE("a session is in the store once kept, and one never kept ends without it") {
  TempDir dir;
  auto store = open_session_store(dir);
  Fixture f({}, store.get());
  auto kept = f.manager.create("alice");
  auto failed = f.manager.create("alice");
  // Not before its initialize succeeded: a client may never learn its id.
  CHECK(store->load_sessions().empty());
  REQUIRE(f.manager.keep(kept->id()).ok());
  auto stored = store->load_sessions();
  REQUIRE(stored.size() == 1);
  CHECK(stored[0].first == kept->id());
  CHECK(stored[0].second["principal"] == "alice");
  CHECK(stored[0].second["label"] == kept->label());
  // Changes after it are written through.
  kept->set_log_level(LogLevel::debug);
  CHECK(store->load_sessions()[0].second["state"]["logLevel"] == "debug");
  CHECK(f.manager.end(failed->id(), "alice"));
  CHECK(store->load_sessions().size() == 1);
  CHECK(f.manager.keep(failed->id()).is_not_found());
}

TEST_CASE("expire_idle ends sessions idle past the limit, not those with a call in flight") {
  Fixture f(idle_limits(0s, 3600s));  // expiry only by the explicit calls below
  auto idle = f.manager.create("local");
  auto busy = f.manager.create("local");
  auto control = busy->begin_call(json("call"));
  std::this_thread::sleep_for(2ms);
  CHECK(f.manager.expire_idle() == 1);
  CHECK(sink_of(*idle)->ended);
  CHECK(f.manager.find(idle->id(), "local") == nullptr);
  CHECK_FALSE(control->cancelled());
  // Its call ends: now it is idle too.
  busy->end_call(json("call"));
  std::this_thread::sleep_for(2ms);
  CHECK(f.manager.expire_idle() == 1);
  CHECK(f.manager.count() == 0);
}

TEST_CASE("a session used within the idle limit is not expired") {
  Fixture f(idle_limits(1s, 3600s));
  auto session = f.manager.create("local");
  std::this_thread::sleep_for(700ms);
  REQUIRE(f.manager.find(session->id(), "local"));  // marks it used
  std::this_thread::sleep_for(700ms);
  CHECK(f.manager.expire_idle() == 0);
  std::this_thread::sleep_for(400ms);
  CHECK(f.manager.expire_idle() == 1);
}

TEST_CASE("a held session (an open stream) does not idle out, its release counts as a use") {
  Fixture f(idle_limits(1s, 3600s));
  auto listening = f.manager.create("local");
  auto quiet = f.manager.create("local");
  f.manager.hold(listening->id());
  f.manager.hold(listening->id());  // two streams
  f.manager.hold("no-such-id");     // ignored
  std::this_thread::sleep_for(1100ms);
  CHECK(f.manager.expire_idle() == 1);
  CHECK(sink_of(*quiet)->ended);
  f.manager.release(listening->id());
  CHECK(f.manager.expire_idle() == 0);  // one stream still open
  f.manager.release(listening->id());
  f.manager.release(listening->id());   // more releases than holds: ignored
  CHECK(f.manager.expire_idle() == 0);  // just released: used now
  std::this_thread::sleep_for(1100ms);
  CHECK(f.manager.expire_idle() == 1);
  CHECK(sink_of(*listening)->ended);
}

TEST_CASE("the sweeper expires idle sessions by itself") {
  Fixture f(idle_limits(0s, 20ms));
  auto session = f.manager.create("local");
  CHECK(eventually([&] { return f.manager.count() == 0; }));
  CHECK(sink_of(*session)->ended);
}

TEST_CASE("sessions in the store are restored with their state, labels go on after theirs") {
  TempDir dir;
  auto store = open_session_store(dir);
  std::string id;
  {
    Fixture f({}, store.get());
    auto bob = f.manager.create("bob");  // http-1
    REQUIRE(f.manager.keep(bob->id()).ok());
    auto session = f.manager.create("alice");
    REQUIRE(f.manager.keep(session->id()).ok());
    session->set_initialized("2025-06-18", {{"elicitation", json::object()}}, {{"name", "client"}});
    session->set_log_level(LogLevel::debug);
    session->add_discovered({"read_text_file", "find_files"});
    id = session->id();
    std::this_thread::sleep_for(100ms);  // the list_changed of the burst
  }
  Fixture f({}, store.get());
  CHECK(f.manager.count() == 2);
  CHECK(f.manager.find(id, "bob") == nullptr);
  auto restored = f.manager.find(id, "alice");
  REQUIRE(restored);
  CHECK(restored->label() == "http-2");
  CHECK(restored->initialized());
  CHECK(restored->protocol_version() == "2025-06-18");
  CHECK(restored->client_capabilities().contains("elicitation"));
  CHECK(restored->client_info()["name"] == "client");
  CHECK(restored->log_level() == LogLevel::debug);
  CHECK(restored->discovered("read_text_file"));
  CHECK(restored->discovered("find_files"));
  CHECK_FALSE(restored->discovered("list_directory"));
  auto next = f.manager.create("alice");
  REQUIRE(next);
  CHECK(next->label() == "http-3");
  REQUIRE(f.manager.keep(next->id()).ok());

  // An ended session is not restored again.
  REQUIRE(f.manager.end(id, "alice"));
  Fixture again({}, store.get());
  CHECK(again.manager.count() == 2);
  CHECK(again.manager.find(id, "alice") == nullptr);
}

TEST_CASE("a restored session counts against max_sessions") {
  TempDir dir;
  auto store = open_session_store(dir);
  {
    Fixture f({}, store.get());
    for (int i = 0; i < 2; ++i) REQUIRE(f.manager.keep(f.manager.create("local")->id()).ok());
  }
  SessionLimits limits;
  limits.max_sessions = 2;
  Fixture f(limits, store.get());
  CHECK(f.manager.count() == 2);
  CHECK(f.manager.create("local") == nullptr);
}
