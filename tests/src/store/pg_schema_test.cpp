#include "src/store/pg_schema.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/postgres_fixture.h"

using toolmux::testing::connect_postgres;
using toolmux::testing::fresh_postgres_database;

namespace toolmux {

TEST_CASE("migrations are applied once, by two openers at once", "[pg_schema]") {
  const std::string conninfo = fresh_postgres_database();
  // A migration that fails when it runs twice (CREATE TABLE without IF NOT
  // EXISTS) and is slow enough for the second opener to arrive meanwhile.
  const std::vector<PgMigration> migrations{
      {1, {"CREATE TABLE toolmux_once (v integer)", "SELECT pg_sleep(0.3)"}},
      {2, {"INSERT INTO toolmux_once VALUES (2)"}},
  };
  Result<int> first = Status::io_error("not run");
  Result<int> second = Status::io_error("not run");
  auto a = connect_postgres(conninfo);
  auto b = connect_postgres(conninfo);
  std::thread other([&] { second = migrate_pg_schema(*b, migrations); });
  first = migrate_pg_schema(*a, migrations);
  other.join();
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(*first == 2);
  CHECK(*second == 2);
  auto rows = a->exec("SELECT count(*) FROM toolmux_once");
  REQUIRE(rows.ok());
  CHECK(rows->integer(0, 0) == 1);
  auto versions = a->exec("SELECT version FROM toolmux_schema ORDER BY version");
  REQUIRE(versions.ok());
  REQUIRE(versions->rows() == 2);
  CHECK(versions->integer(1, 0) == 2);
}

TEST_CASE("this binary's migrations apply to an empty database", "[pg_schema]") {
  auto db = connect_postgres(fresh_postgres_database());
  Result<int> version = migrate_pg_schema(*db);
  REQUIRE(version.ok());
  CHECK(*version == pg_migrations().back().version);
  Result<int> again = migrate_pg_schema(*db);
  REQUIRE(again.ok());
  CHECK(*again == *version);
}

TEST_CASE("a database of the last release (version 6) is brought up to this one's", "[pg_schema]") {
  auto db = connect_postgres(fresh_postgres_database());
  const std::vector<PgMigration> released(pg_migrations().begin(), pg_migrations().begin() + 6);
  REQUIRE(released.back().version == 6);
  Result<int> old = migrate_pg_schema(*db, released);
  REQUIRE(old.ok());
  CHECK(*old == 6);
  CHECK(db->exec("SELECT to_regclass('toolmux_spent_tokens') IS NULL")->text(0, 0) == "t");
  Result<int> now = migrate_pg_schema(*db);
  REQUIRE(now.ok());
  CHECK(*now == pg_migrations().back().version);
  // Version 7: spent confirmation tokens, one row each.
  REQUIRE(db->exec("INSERT INTO toolmux_spent_tokens (token, expires_ns) VALUES ('t', 1)").ok());
  CHECK_FALSE(
      db->exec("INSERT INTO toolmux_spent_tokens (token, expires_ns) VALUES ('t', 2)").ok());
  // Version 8: upstream logins, one row per upstream name.
  CHECK(db->exec("SELECT count(*) FROM toolmux_upstream_logins")->text(0, 0) == "0");
}

TEST_CASE("a database newer than this binary is refused", "[pg_schema]") {
  auto db = connect_postgres(fresh_postgres_database());
  REQUIRE(migrate_pg_schema(*db).ok());
  const int known = pg_migrations().back().version;
  REQUIRE(
      db->exec("INSERT INTO toolmux_schema (version) VALUES ($1)", {PgParam::integer(known + 1)})
          .ok());
  Result<int> refused = migrate_pg_schema(*db);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.message() == "the store's schema is version " + std::to_string(known + 1) +
                                 "; this toolmux knows up to " + std::to_string(known) +
                                 ": upgrade toolmux");
}

TEST_CASE("a failed migration leaves nothing applied", "[pg_schema]") {
  auto db = connect_postgres(fresh_postgres_database());
  const std::vector<PgMigration> migrations{
      {1, {"CREATE TABLE toolmux_half (v integer)", "SELECT no_such_function()"}}};
  Result<int> failed = migrate_pg_schema(*db, migrations);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.message().starts_with("migration 1 of the store's schema failed: "));
  auto table = db->exec(
      "SELECT to_regclass('toolmux_half') IS NULL, "
      "to_regclass('toolmux_schema') IS NULL");
  REQUIRE(table.ok());
  CHECK(table->text(0, 0) == "t");
  CHECK(table->text(0, 1) == "t");
}

TEST_CASE("an advisory lock is held by one instance at a time", "[pg_schema]") {
  const std::string conninfo = fresh_postgres_database();
  PgPoolOptions options;
  options.conninfo = conninfo;
  auto pool = PgPool::make(options);
  REQUIRE(pool.ok());
  {
    auto held = PgExclusiveLock::try_take(**pool, kPgLockResultExpiry);
    REQUIRE(held.ok());
    REQUIRE(held->has_value());
    auto other = PgExclusiveLock::try_take(**pool, kPgLockResultExpiry);
    REQUIRE(other.ok());
    CHECK_FALSE(other->has_value());
    // The transaction-scoped lock on the same key is refused too.
    auto db = connect_postgres(conninfo);
    auto transaction = PgTransaction::begin(*db);
    REQUIRE(transaction.ok());
    auto xact = try_advisory_xact_lock(*transaction, kPgLockResultExpiry);
    REQUIRE(xact.ok());
    CHECK_FALSE(*xact);
  }
  auto after = PgExclusiveLock::try_take(**pool, kPgLockResultExpiry);
  REQUIRE(after.ok());
  CHECK(after->has_value());
}

}  // namespace toolmux
