#include "src/store/pg_write_freeze.h"

#include <catch2/catch.hpp>

#include "tests/support/postgres_fixture.h"

using toolmux::testing::fresh_postgres_database;
using toolmux::testing::open_postgres_store;

namespace toolmux {

TEST_CASE("the freeze is off in a new store, on after freeze, off after thaw, seen by every pool",
          "[pg_write_freeze]") {
  const std::string db = fresh_postgres_database();
  auto a = open_postgres_store(db);
  auto b = open_postgres_store(db);
  auto off = read_pg_write_freeze(b->pool());
  REQUIRE(off.ok());
  CHECK_FALSE(off->has_value());

  const auto first = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  REQUIRE(freeze_pg_writes(a->pool(), "migration at 10:00", first).ok());
  auto on = read_pg_write_freeze(b->pool());
  REQUIRE(on.ok());
  REQUIRE(on->has_value());
  CHECK((*on)->reason == "migration at 10:00");
  CHECK((*on)->since == first);

  // A new reason keeps the time it was first switched on.
  REQUIRE(freeze_pg_writes(b->pool(), "still migrating", first + std::chrono::hours(1)).ok());
  auto again = read_pg_write_freeze(a->pool());
  REQUIRE(again.ok());
  CHECK((*again)->reason == "still migrating");
  CHECK((*again)->since == first);

  REQUIRE(thaw_pg_writes(a->pool()).ok());
  auto thawed = read_pg_write_freeze(b->pool());
  REQUIRE(thawed.ok());
  CHECK_FALSE(thawed->has_value());
  // Thawing what is not frozen is no error.
  CHECK(thaw_pg_writes(a->pool()).ok());
}

TEST_CASE("a stopped store is an unavailable answer, not a freeze state", "[pg_write_freeze]") {
  const std::string db = fresh_postgres_database();
  auto store = open_postgres_store(db);
  toolmux::testing::postgres_server().pause();
  auto read = read_pg_write_freeze(store->pool());
  toolmux::testing::postgres_server().resume();
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().is_unavailable());
}

}  // namespace toolmux
