#include "src/store/pg_tool_lists.h"

#include <catch2/catch.hpp>

#include "src/store/pg_schema.h"
#include "tests/support/postgres_fixture.h"

using nlohmann::json;
using toolmux::testing::connect_postgres;
using toolmux::testing::fresh_postgres_database;

namespace toolmux {

namespace {

std::unique_ptr<PgPool> migrated_pool(const std::string& conninfo) {
  auto connection = connect_postgres(conninfo);
  REQUIRE(migrate_pg_schema(*connection).ok());
  PgPoolOptions options;
  options.conninfo = conninfo;
  auto pool = PgPool::make(options);
  REQUIRE(pool.ok());
  return std::move(*pool);
}

}  // namespace

TEST_CASE("an upstream's tool list written by one instance is read by another, the last one kept",
          "[pg_tool_lists]") {
  const std::string db = fresh_postgres_database();
  auto a = migrated_pool(db);
  auto b = migrated_pool(db);
  auto none = read_pg_tool_list(*b, "github");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  const std::vector<json> first = {{{"name", "create_issue"}, {"description", "Opens an issue"}}};
  REQUIRE(write_pg_tool_list(*a, "github", first).ok());
  const std::vector<json> second = {{{"name", "create_issue"}}, {{"name", "close_issue"}}};
  REQUIRE(write_pg_tool_list(*a, "github", second).ok());
  auto read = read_pg_tool_list(*b, "github");
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK(**read == second);
  auto other = read_pg_tool_list(*b, "memory");
  REQUIRE(other.ok());
  CHECK_FALSE(other->has_value());
}

TEST_CASE("a row that is not a JSON array reads as no list, and a list too large is not written",
          "[pg_tool_lists]") {
  const std::string db = fresh_postgres_database();
  auto pool = migrated_pool(db);
  auto raw = connect_postgres(db);
  REQUIRE(raw->exec("INSERT INTO toolmux_tool_lists VALUES ('x', '{\"not\": \"a list\"}', 0), "
                    "('y', '[1, 2', 0)")
              .ok());
  for (const char* name : {"x", "y"}) {
    auto read = read_pg_tool_list(*pool, name);
    REQUIRE(read.ok());
    CHECK_FALSE(read->has_value());
  }
  const std::vector<json> huge = {{{"name", std::string(kMaxStoredToolListBytes, 'n')}}};
  const Status refused = write_pg_tool_list(*pool, "big", huge);
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("over the 16777216 kept") != std::string::npos);
}

}  // namespace toolmux
