// Legacy HTTP sessions shared by several instances through one PostgreSQL
// store (src/store/pg_session_store.h): the store itself, SessionManager's
// copies, and the SSE event log read back on another instance.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "src/base/digest.h"
#include "src/session/session_manager.h"
#include "src/store/cluster_bus.h"
#include "src/store/pg_session_store.h"
#include "tests/support/eventually.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/quiet_logger.h"
#include "transports/http_streams.h"

using nlohmann::json;
using toolmux::testing::fresh_postgres_database;
using toolmux::testing::QuietLogger;
using namespace std::chrono_literals;

namespace toolmux {

namespace {

const std::stop_token kRunning;

std::unique_ptr<PgSessionStore> session_store(const std::string& conninfo, Logger& logger) {
  auto store = PgSessionStore::open(toolmux::testing::open_postgres_store(conninfo), logger);
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(*store);
}

struct EndedSink final : MessageSink {
  void send(const json&, const json&) override {}
  void session_ended() override { ended = true; }
  void look_again() override { ++looked; }
  std::atomic<bool> ended{false};
  std::atomic<int> looked{0};
};

// One "instance": its own pool, store and manager on the shared database.
struct Instance {
  Instance(const std::string& conninfo, SessionLimits limits = {})
      : store(session_store(conninfo, quiet.logger)),
        manager(
            limits, store.get(), nullptr,
            [](const std::string&) { return std::make_shared<EndedSink>(); }, quiet.logger) {}
  QuietLogger quiet;
  std::unique_ptr<PgSessionStore> store;
  SessionManager manager;
};

json response(const json& id) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", json::object()}};
}
json progress(int n) {
  return {{"jsonrpc", "2.0"},
          {"method", "notifications/progress"},
          {"params", {{"progressToken", "t"}, {"progress", n}}}};
}

}  // namespace

TEST_CASE("the session store is one for every instance: records, seqs, events, deletes",
          "[pg_session_store]") {
  QuietLogger quiet;
  const std::string db = fresh_postgres_database();
  auto a = session_store(db, quiet.logger);
  auto b = session_store(db, quiet.logger);
  CHECK(a->shared());

  REQUIRE(a->put_session("s1", {{"principal", "alice"}, {"label", "http-1"}, {"state", {{"x", 1}}}})
              .ok());
  auto loaded = b->load_session("s1");
  REQUIRE(loaded.ok());
  REQUIRE(loaded->has_value());
  CHECK((**loaded)["principal"] == "alice");
  CHECK((**loaded)["state"] == json{{"x", 1}});
  auto missing = b->load_session("nope");
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
  // A shared store restores nothing wholesale at start.
  CHECK(b->load_sessions().empty());

  // Seqs count up across instances, never twice.
  std::set<std::uint64_t> seqs;
  for (int i = 0; i < 10; ++i) {
    seqs.insert(a->next_seq("s1"));
    seqs.insert(b->next_seq("s1"));
  }
  CHECK(seqs.size() == 20);
  CHECK(*seqs.begin() == 1);
  CHECK(b->last_seq("s1") == 20);
  CHECK(a->next_seq("nope") == 0);

  a->append_event("s1", {21, 0, "zero", false});
  b->append_event("s1", {22, 7, "seven", false});
  a->append_event("s1", {23, 7, "seven's end", true});
  b->append_event("s1", {23, 7, "a seq again is not written twice", false});
  const auto all = b->events_after("s1", 21);
  REQUIRE(all.size() == 2);
  CHECK(all[0].data == "seven");
  CHECK(all[1].final);
  CHECK(all[1].data == "seven's end");
  const auto seven = a->stream_events_after("s1", 7, 0);
  REQUIRE(seven.size() == 2);
  CHECK(seven[0].seq == 22);

  b->trim_events("s1", 23);
  CHECK(a->events_after("s1", 0).size() == 1);

  b->delete_session("s1");
  auto deleted = a->load_session("s1");
  REQUIRE(deleted.ok());
  CHECK_FALSE(deleted->has_value());
  CHECK(a->events_after("s1", 0).empty());
  // A deleted session takes no more events.
  a->append_event("s1", {30, 0, "late", false});
  CHECK(a->events_after("s1", 0).empty());
}

TEST_CASE("sessions no instance touched for the idle time expire once, by one sweep",
          "[pg_session_store]") {
  QuietLogger quiet;
  const std::string db = fresh_postgres_database();
  auto a = session_store(db, quiet.logger);
  auto b = session_store(db, quiet.logger);
  auto clock = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  a->now = [&] { return clock; };
  b->now = [&] { return clock; };
  REQUIRE(a->put_session("old", {{"principal", "p"}}).ok());
  REQUIRE(a->put_session("used", {{"principal", "p"}}).ok());
  clock += 50min;
  b->touch_session("used");
  clock += 20min;
  const auto ended = b->expire_sessions(1h);
  CHECK(ended == std::vector<std::string>{"old"});
  CHECK(a->expire_sessions(1h).empty());
  CHECK(a->load_session("used")->has_value());
}

TEST_CASE("a session made on one instance is found, kept current and ended on another",
          "[shared_sessions]") {
  const std::string db = fresh_postgres_database();
  Instance a(db);
  Instance b(db);
  std::vector<std::string> ended_on_b;
  b.manager.set_end_listener([&](const std::string& id) { ended_on_b.push_back(id); });

  auto made = a.manager.create("alice");
  REQUIRE(made);
  const std::string id = made->id();
  made->set_initialized("2025-06-18", {{"sampling", json::object()}}, {{"name", "client"}});

  // Another instance finds it, as its principal's only.
  CHECK_FALSE(b.manager.find(id, "mallory"));
  auto copy = b.manager.find(id, "alice");
  REQUIRE(copy);
  CHECK(copy->label() == made->label());
  CHECK(copy->protocol_version() == "2025-06-18");

  // What changes on b reaches a's copy at its next request.
  copy->set_log_level(LogLevel::error);
  auto again = a.manager.find(id, "alice");
  REQUIRE(again);
  CHECK(again->log_level() == LogLevel::error);

  // Ended on b: a forgets its copy at the next request, and its calls end.
  CHECK(b.manager.end(id, "alice"));
  CHECK(ended_on_b == std::vector<std::string>{id});
  CHECK_FALSE(a.manager.find(id, "alice"));
  CHECK(std::dynamic_pointer_cast<EndedSink>(made->owned_sink())->ended);
  CHECK(a.manager.count() == 0);
}

TEST_CASE("a change the store missed while it was down is written again, not undone",
          "[shared_sessions]") {
  const std::string db = fresh_postgres_database();
  Instance a(db);
  Instance b(db);
  auto made = a.manager.create("alice");
  REQUIRE(made);
  made->set_initialized("2025-11-25", json::object(), {{"name", "client"}});
  REQUIRE(a.manager.keep(made->id()).ok());
  const std::string id = made->id();

  toolmux::testing::postgres_server().pause();
  made->set_log_level(LogLevel::debug);  // logging/setLevel, answered; not stored
  toolmux::testing::postgres_server().resume();
  // The next requests on a: its copy was brought "up to date" from the older
  // record, and the level went back to the default.
  CHECK(toolmux::testing::eventually(
      [&] {
        auto copy = a.manager.find(id, "alice");
        const auto stored = b.store->load_session(id);
        return copy && copy->log_level() == LogLevel::debug && stored.ok() && stored->has_value() &&
               (**stored)["state"]["logLevel"] == "debug";
      },
      6s));
  CHECK(made->log_level() == LogLevel::debug);
  auto on_b = b.manager.find(id, "alice");
  REQUIRE(on_b);
  CHECK(on_b->log_level() == LogLevel::debug);
}

TEST_CASE("an ending another instance announces drops the copy here by the id's digest",
          "[shared_sessions]") {
  const std::string db = fresh_postgres_database();
  Instance a(db);
  auto made = a.manager.create("alice");
  REQUIRE(made);
  REQUIRE(a.manager.keep(made->id()).ok());
  a.manager.forget_ended_elsewhere(sha256_hex("some other id"));
  CHECK(a.manager.count() == 1);
  a.manager.forget_ended_elsewhere(sha256_hex(made->id()));
  CHECK(a.manager.count() == 0);
  CHECK(std::dynamic_pointer_cast<EndedSink>(made->owned_sink())->ended);
  // The store still has it: only the copy went.
  CHECK(a.store->load_session(made->id())->has_value());
}

TEST_CASE("news of events stored elsewhere has the session's streams here look again",
          "[shared_sessions]") {
  const std::string db = fresh_postgres_database();
  Instance a(db);
  auto made = a.manager.create("alice");
  REQUIRE(made);
  auto sink = std::dynamic_pointer_cast<EndedSink>(made->owned_sink());
  a.manager.look_again_elsewhere(sha256_hex("some other id"));
  CHECK(sink->looked == 0);
  a.manager.look_again_elsewhere(sha256_hex(made->id()));
  a.manager.look_again_elsewhere(sha256_hex(made->id()));
  CHECK(sink->looked == 2);
  CHECK_FALSE(sink->ended);
}

TEST_CASE("an event stored by one instance reaches a stream waiting on another at once",
          "[shared_sessions]") {
  QuietLogger quiet;
  const std::string db = fresh_postgres_database();
  auto store_a = session_store(db, quiet.logger);
  auto store_b = session_store(db, quiet.logger);
  store_a->set_append_notice("instance-a");
  REQUIRE(store_a->put_session("s", {{"principal", "p"}}).ok());
  SessionStreams a("s", store_a.get());
  SessionStreams b("s", store_b.get());
  // Instance b's bus: the news of a's events has b's streams look again.
  std::atomic<int> heard{0};
  auto bus = ClusterBus::start(
      [&db] {
        ClusterBusOptions options;
        options.conninfo = db;
        options.instance_id = "instance-b";
        return options;
      }(),
      [&](const ClusterEvent& event) {
        if (event.kind == "session_events" && event.data.value("session", "") == sha256_hex("s")) {
          ++heard;
          b.look_again();
        }
      },
      quiet.logger);
  REQUIRE(bus.ok());

  auto exchange = a.open_exchange(json(1));
  a.send(progress(1), json(1));
  auto decision = a.await_decision(exchange);
  REQUIRE(decision.kind == SessionStreams::Decision::Kind::sse);
  auto first = a.next(decision.cursor, 50ms, kRunning);
  REQUIRE_FALSE(first.events.empty());
  auto resumed = b.resume(format_event_id(decision.cursor.stream, first.events.front().seq));
  REQUIRE(resumed);
  // b waits for the rest (it looks by itself only every 2 s); a answers
  // 100 ms later.
  std::thread answer([&a] {
    std::this_thread::sleep_for(100ms);
    a.send(response(1), json(1));
  });
  const auto waiting = std::chrono::steady_clock::now();
  auto rest = b.next(*resumed, 5000ms, kRunning);
  const auto waited = std::chrono::steady_clock::now() - waiting;
  answer.join();
  REQUIRE(rest.events.size() == 1);
  CHECK(json::parse(rest.events[0].data)["id"] == 1);
  CHECK(waited < 1000ms);
  CHECK(heard >= 1);
  // No news for an event a deleted session did not take.
  const int before = heard;
  store_a->delete_session("s");
  store_a->append_event("s", {100, 0, "{}", false});
  std::this_thread::sleep_for(200ms);
  CHECK(heard == before);
}

TEST_CASE("a session's SSE events sent by one instance are resumed on another",
          "[shared_sessions]") {
  QuietLogger quiet;
  const std::string db = fresh_postgres_database();
  auto store_a = session_store(db, quiet.logger);
  auto store_b = session_store(db, quiet.logger);
  REQUIRE(store_a->put_session("s", {{"principal", "p"}}).ok());

  // Instance a answers a request on an SSE stream: progress, then the response.
  SessionStreams a("s", store_a.get());
  auto exchange = a.open_exchange(json(1));
  a.send(progress(1), json(1));
  auto decision = a.await_decision(exchange);
  REQUIRE(decision.kind == SessionStreams::Decision::Kind::sse);
  const std::uint64_t stream = decision.cursor.stream;
  a.send(progress(2), json(1));
  a.send(response(1), json(1));

  // Instance b, where the client reconnects after the first event.
  SessionStreams b("s", store_b.get());
  auto first = a.next(decision.cursor, 50ms, kRunning);
  REQUIRE_FALSE(first.events.empty());
  auto resumed = b.resume(format_event_id(stream, first.events.front().seq));
  REQUIRE(resumed);
  auto rest = b.next(*resumed, 200ms, kRunning);
  REQUIRE(rest.events.size() == 2);
  CHECK(json::parse(rest.events[0].data)["params"]["progress"] == 2);
  CHECK(json::parse(rest.events[1].data)["id"] == 1);
  CHECK(rest.end);

  // b's own messages on the session's stream take seqs after a's.
  b.send({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}}, nullptr);
  const auto zero = store_a->stream_events_after("s", 0, 0);
  REQUIRE(zero.size() == 1);
  CHECK(zero[0].seq > rest.events[1].seq);
}

}  // namespace toolmux
