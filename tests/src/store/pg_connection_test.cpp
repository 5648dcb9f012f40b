#include "src/store/pg_connection.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/support/postgres_fixture.h"

using toolmux::testing::connect_postgres;
using toolmux::testing::fresh_postgres_database;
using toolmux::testing::PostgresServer;

namespace toolmux {

namespace {

PgPoolOptions pool_options(std::string conninfo) {
  PgPoolOptions options;
  options.conninfo = std::move(conninfo);
  return options;
}

}  // namespace

TEST_CASE("parameters with quotes round-trip, a NUL in text is refused, bytes keep it",
          "[pg_connection]") {
  auto db = connect_postgres(fresh_postgres_database());
  const std::string quoted = "it's a \"test\"'); DROP TABLE x; --\\";
  auto text = db->exec("SELECT $1::text", {PgParam::text(quoted)});
  REQUIRE(text.ok());
  CHECK(text->text(0, 0) == quoted);

  auto nul = db->exec("SELECT $1::text", {PgParam::text(std::string("a\0b", 3))});
  REQUIRE_FALSE(nul.ok());
  CHECK(nul.status().is_invalid_argument());
  CHECK(nul.message() == "parameter $1 holds a NUL byte, which PostgreSQL's text cannot hold");

  const std::string binary("\0\x01\xff'\\x00", 8);
  auto bytes = db->exec("SELECT $1::bytea, length($1::bytea)", {PgParam::bytes(binary)});
  REQUIRE(bytes.ok());
  CHECK(bytes->bytes(0, 0) == binary);
  CHECK(bytes->integer(0, 1) == 8);

  auto null = db->exec("SELECT $1::text IS NULL, $1::text", {PgParam::null()});
  REQUIRE(null.ok());
  CHECK(null->text(0, 0) == "t");
  CHECK(null->is_null(0, 1));
}

TEST_CASE("an SQL error is an io_error with the server's message", "[pg_connection]") {
  auto db = connect_postgres(fresh_postgres_database());
  auto failed = db->exec("SELECT * FROM no_such_table");
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().is_io_error());
  CHECK(failed.message().find("relation \"no_such_table\" does not exist") != std::string::npos);
  CHECK(db->last_sqlstate() == "42P01");
  CHECK_FALSE(db->broken());
}

TEST_CASE("each connection has a statement timeout", "[pg_connection]") {
  PgConnectOptions options;
  options.statement_timeout = std::chrono::milliseconds(200);
  auto db = PgConnection::connect(fresh_postgres_database(), options);
  REQUIRE(db.ok());
  auto shown = (*db)->exec("SHOW statement_timeout");
  REQUIRE(shown.ok());
  CHECK(shown->text(0, 0) == "200ms");
  auto slow = (*db)->exec("SELECT pg_sleep(5)");
  REQUIRE_FALSE(slow.ok());
  CHECK(slow.message().find("statement timeout") != std::string::npos);
}

TEST_CASE("a transaction is rolled back when an exception leaves its scope", "[pg_connection]") {
  auto db = connect_postgres(fresh_postgres_database());
  REQUIRE(db->exec("CREATE TABLE t (v text)").ok());
  try {
    auto transaction = PgTransaction::begin(*db);
    REQUIRE(transaction.ok());
    REQUIRE(transaction->exec("INSERT INTO t VALUES ($1)", {PgParam::text("lost")}).ok());
    throw std::runtime_error("mid-way");
  } catch (const std::runtime_error&) {
  }
  {
    auto transaction = PgTransaction::begin(*db);
    REQUIRE(transaction.ok());
    REQUIRE(transaction->exec("INSERT INTO t VALUES ($1)", {PgParam::text("kept")}).ok());
    REQUIRE(transaction->commit().ok());
  }
  auto rows = db->exec("SELECT v FROM t");
  REQUIRE(rows.ok());
  REQUIRE(rows->rows() == 1);
  CHECK(rows->text(0, 0) == "kept");
}

TEST_CASE("an unparsable connection string is refused without repeating it", "[pg_connection]") {
  auto pool = PgPool::make(pool_options("host=x password=secret nonsense"));
  REQUIRE_FALSE(pool.ok());
  CHECK(pool.status().is_invalid_argument());
  CHECK(pool.message().find("secret") == std::string::npos);
  CHECK(pool.message().find("does not parse") != std::string::npos);
}

TEST_CASE("the pool's bound: past the maximum, acquire answers busy after its timeout",
          "[pg_connection]") {
  PgPoolOptions options = pool_options(fresh_postgres_database());
  options.max_connections = 2;
  options.acquire_timeout = std::chrono::milliseconds(300);
  auto pool = PgPool::make(options);
  REQUIRE(pool.ok());
  auto first = (*pool)->acquire();
  auto second = (*pool)->acquire();
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK((*pool)->open_connections() == 2);
  const auto start = std::chrono::steady_clock::now();
  auto third = (*pool)->acquire();
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(third.ok());
  CHECK(third.status().is_unavailable());
  CHECK(third.message() == "the store is busy: all 2 connections to it are in use");
  CHECK(waited >= std::chrono::milliseconds(300));

  // A connection given back is taken by a waiter, and reused, not reopened.
  std::thread giver([lease = std::move(*first)]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto gone = std::move(lease);
  });
  auto fourth = (*pool)->acquire();
  giver.join();
  REQUIRE(fourth.ok());
  CHECK((*pool)->open_connections() == 2);
}

TEST_CASE("a stopped server gives unavailable naming where, and after back-off it is reached again",
          "[pg_connection]") {
  PostgresServer server;  // its own: this test stops it
  const std::string conninfo = server.create_database();
  PgPoolOptions options = pool_options(conninfo);
  options.acquire_timeout = std::chrono::milliseconds(500);
  options.backoff_min = std::chrono::milliseconds(100);
  options.backoff_max = std::chrono::milliseconds(400);
  auto pool = PgPool::make(options);
  REQUIRE(pool.ok());
  {
    auto lease = (*pool)->acquire();
    REQUIRE(lease.ok());
    REQUIRE((*lease)->exec("SELECT 1").ok());
  }
  server.pause();

  // The idle connection is found closed and dropped; connecting fails.
  auto down = (*pool)->acquire();
  REQUIRE_FALSE(down.ok());
  CHECK(down.status().is_unavailable());
  const std::string where = "host " + server.dir().string() + " port 5432 database t1";
  CHECK(down.message().find("cannot reach the store at " + where) != std::string::npos);
  // During the back-off, acquire answers at once.
  const auto start = std::chrono::steady_clock::now();
  auto retrying = (*pool)->acquire();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(50));
  REQUIRE_FALSE(retrying.ok());
  CHECK(retrying.message().starts_with("the store is unreachable (retrying): cannot reach"));
  CHECK((*pool)->open_connections() == 0);

  server.resume();
  Result<PgLease> back = Status::unavailable("not yet");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!back.ok() && std::chrono::steady_clock::now() < until) {
    back = (*pool)->acquire();
    if (!back.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(back.ok());
  CHECK((*back)->exec("SELECT 1").ok());
}

TEST_CASE("a connection lost mid-use is unavailable, and is not given back to the pool",
          "[pg_connection]") {
  const std::string conninfo = fresh_postgres_database();
  auto pool = PgPool::make(pool_options(conninfo));
  REQUIRE(pool.ok());
  auto killer = connect_postgres(conninfo);
  {
    auto lease = (*pool)->acquire();
    REQUIRE(lease.ok());
    auto pid = (*lease)->exec("SELECT pg_backend_pid()");
    REQUIRE(pid.ok());
    REQUIRE(killer->exec("SELECT pg_terminate_backend($1)", {PgParam::text(pid->text(0, 0))}).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto lost = (*lease)->exec("SELECT 1");
    REQUIRE_FALSE(lost.ok());
    CHECK(lost.status().is_unavailable());
    CHECK(lost.message().starts_with("lost the connection to the store at host "));
  }
  CHECK((*pool)->open_connections() == 0);
  auto again = (*pool)->acquire();
  REQUIRE(again.ok());
  CHECK((*again)->exec("SELECT 1").ok());
}

}  // namespace toolmux
