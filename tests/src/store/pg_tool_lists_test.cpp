#include "src/store/pg_tool_lists.h"

#include <catch2/catch.hpp>

#include "tests/support/postgres_fixture.h"

using nlohmann::json;
using toolmux::testing::connect_postgres;
using toolmux::testing::fresh_postgres_database;
using toolmux::testing::open_postgres_store;

namespace toolmux {

TEST_CASE("an upstream's tool list written by one instance is read by another, the last one kept",
          "[pg_tool_lists]") {
  const std::string db = fresh_postgres_database();
  auto a = open_postgres_store(db);
  auto b = open_postgres_store(db);
  auto none = read_pg_tool_list(b->pool(), "github");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  const std::vector<json> first = {{{"name", "create_issue"}, {"description", "Opens an issue"}}};
  REQUIRE(write_pg_tool_list(a->pool(), "github", first).ok());
  const std::vector<json> second = {{{"name", "create_issue"}}, {{"name", "close_issue"}}};
  REQUIRE(write_pg_tool_list(a->pool(), "github", second).ok());
  auto read = read_pg_tool_list(b->pool(), "github");
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK(**read == second);
  auto other = read_pg_tool_list(b->pool(), "memory");
  REQUIRE(other.ok());
  CHECK_FALSE(other->has_value());
}

TEST_CASE("a row that is not a JSON array reads as no list, and a list too large is not written",
          "[pg_tool_lists]") {
  const std::string db = fresh_postgres_database();
  auto store = open_postgres_store(db);
  auto raw = connect_postgres(db);
  REQUIRE(raw->exec("INSERT INTO toolmux_tool_lists VALUES ('x', '{\"not\": \"a list\"}', 0), "
                    "('y', '[1, 2', 0)")
              .ok());
  for (const char* name : {"x", "y"}) {
    auto read = read_pg_tool_list(store->pool(), name);
    REQUIRE(read.ok());
    CHECK_FALSE(read->has_value());
  }
  const std::vector<json> huge = {{{"name", std::string(kMaxStoredToolListBytes, 'n')}}};
  const Status refused = write_pg_tool_list(store->pool(), "big", huge);
  CHECK(refused.is_invalid_argument());
  CHECK(refused.message().find("over the 16777216 kept") != std::string::npos);
}

}  // namespace toolmux
