#include "src/store/cluster_bus.h"

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/eventually.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/quiet_logger.h"

using nlohmann::json;
using toolmux::testing::connect_postgres;
using toolmux::testing::eventually;
using toolmux::testing::fresh_postgres_database;
using toolmux::testing::postgres_server;
using toolmux::testing::QuietLogger;

namespace toolmux {

namespace {

// What one instance's bus delivered, in order.
struct Heard {
  std::mutex mutex;
  std::vector<ClusterEvent> events;

  ClusterBus::Handler handler() {
    return [this](const ClusterEvent& event) {
      std::lock_guard lock(mutex);
      events.push_back(event);
    };
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return events.size();
  }
  std::vector<ClusterEvent> all() {
    std::lock_guard lock(mutex);
    return events;
  }
};

ClusterBusOptions bus_options(const std::string& conninfo, const std::string& id) {
  ClusterBusOptions options;
  options.conninfo = conninfo;
  options.instance_id = id;
  options.backoff_min = std::chrono::milliseconds(50);
  options.backoff_max = std::chrono::milliseconds(200);
  return options;
}

std::unique_ptr<ClusterBus> start_bus(const std::string& conninfo, const std::string& id,
                                      Heard& heard, Logger& logger) {
  auto bus = ClusterBus::start(bus_options(conninfo, id), heard.handler(), logger);
  if (!bus.ok()) throw std::runtime_error(bus.message());
  return std::move(*bus);
}

}  // namespace

TEST_CASE("an event published by one instance reaches the others, not itself", "[cluster_bus]") {
  QuietLogger quiet;
  const std::string db = fresh_postgres_database();
  Heard heard_a;
  Heard heard_b;
  Heard heard_c;
  auto a = start_bus(db, "instance-a", heard_a, quiet.logger);
  auto b = start_bus(db, "instance-b", heard_b, quiet.logger);
  auto c = start_bus(db, "instance-c", heard_c, quiet.logger);

  REQUIRE(a->publish("list_changed", {{"upstream", "github"}}).ok());
  REQUIRE(eventually([&] { return heard_b.count() == 1 && heard_c.count() == 1; }));
  const ClusterEvent got = heard_b.all().front();
  CHECK(got.kind == "list_changed");
  CHECK(got.from == "instance-a");
  CHECK(got.data == json{{"upstream", "github"}});
  CHECK(heard_c.all().front().kind == "list_changed");

  // b's own event goes to a and c only; a never heard its own.
  REQUIRE(b->publish("reload").ok());
  REQUIRE(eventually([&] { return heard_a.count() == 1 && heard_c.count() == 2; }));
  CHECK(heard_a.all().front().kind == "reload");
  CHECK(heard_a.all().front().data == json::object());
  CHECK(heard_b.count() == 1);
  CHECK(a->delivered() == 1);
}

TEST_CASE("a payload that is not a toolmux event is dropped, and the next one still arrives",
          "[cluster_bus]") {
  QuietLogger quiet;
  const std::string db = fresh_postgres_database();
  Heard heard;
  auto bus = start_bus(db, "listener", heard, quiet.logger);
  auto raw = connect_postgres(db);
  for (const std::string& payload :
       {std::string("not json"), std::string(R"({"v":1,"from":"x","kind":"reload"})"),
        std::string(R"({"v":2,"from":"x","kind":"reload","data":{}})"),
        std::string(R"({"v":1,"from":"x","kind":7,"data":{}})"),
        std::string(R"({"v":1,"from":"x","kind":"reload","data":{},"data":{}})"),
        std::string(R"([{"v":1}])")}) {
    REQUIRE(raw->exec("SELECT pg_notify('toolmux_events', $1)", {PgParam::text(payload)}).ok());
  }
  // Another channel is not the bus's.
  REQUIRE(raw->exec("SELECT pg_notify('elsewhere', $1)",
                    {PgParam::text(R"({"v":1,"from":"x","kind":"reload","data":{}})")})
              .ok());
  REQUIRE(raw->exec("SELECT pg_notify('toolmux_events', $1)",
                    {PgParam::text(R"({"v":1,"from":"x","kind":"freeze","data":{"on":true}})")})
              .ok());
  REQUIRE(eventually([&] { return heard.count() == 1; }));
  CHECK(heard.all().front().kind == "freeze");
  CHECK(heard.all().front().data == json{{"on", true}});
}

TEST_CASE("publish refuses an event over the size limit and data that is not an object",
          "[cluster_bus]") {
  QuietLogger quiet;
  const std::string db = fresh_postgres_database();
  Heard heard;
  auto bus = start_bus(db, "a", heard, quiet.logger);
  const Status big = bus->publish("reload", {{"text", std::string(kMaxClusterEventBytes, 'x')}});
  REQUIRE(big.is_invalid_argument());
  CHECK(big.message().find("over the limit of 4000") != std::string::npos);
  CHECK(bus->publish("reload", json::array()).is_invalid_argument());
}

TEST_CASE("an unreachable store at start is an error naming where, not a hang", "[cluster_bus]") {
  QuietLogger quiet;
  const std::string missing =
      "host=" + (postgres_server().dir() / "nowhere").string() + " port=5432 dbname=x user=toolmux";
  Heard heard;
  auto bus = ClusterBus::start(bus_options(missing, "a"), heard.handler(), quiet.logger);
  REQUIRE_FALSE(bus.ok());
  CHECK(bus.status().is_unavailable());
  CHECK(bus.message().find("database x") != std::string::npos);
}

TEST_CASE("after the server comes back the bus says resync, then hears events again",
          "[cluster_bus]") {
  QuietLogger quiet;
  const std::string db = fresh_postgres_database();
  Heard heard_a;
  Heard heard_b;
  auto a = start_bus(db, "a", heard_a, quiet.logger);
  auto b = start_bus(db, "b", heard_b, quiet.logger);

  postgres_server().pause();
  // While the server is down, publishing fails plainly.
  const Status down = a->publish("reload");
  CHECK(down.is_unavailable());
  postgres_server().resume();

  REQUIRE(eventually([&] { return heard_a.count() == 1 && heard_b.count() == 1; },
                     std::chrono::seconds(10)));
  CHECK(heard_a.all().front().kind == "resync");
  CHECK(heard_a.all().front().from.empty());
  CHECK(heard_b.all().front().kind == "resync");

  REQUIRE(a->publish("freeze", {{"on", false}}).ok());
  REQUIRE(eventually([&] { return heard_b.count() == 2; }));
  CHECK(heard_b.all().back().kind == "freeze");
}

TEST_CASE("a session_ended event names a digest of the id, never the id", "[cluster_bus]") {
  const std::string digest = session_id_digest("secret-session-id");
  CHECK(digest.size() == 64);
  CHECK(digest.find("secret") == std::string::npos);
  CHECK(digest == session_id_digest("secret-session-id"));
  CHECK(digest != session_id_digest("secret-session-ie"));
}

}  // namespace toolmux
