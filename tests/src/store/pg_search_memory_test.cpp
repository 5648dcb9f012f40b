#include "src/store/pg_search_memory.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/store/pg_schema.h"
#include "tests/support/captured_log.h"
#include "tests/support/eventually.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/quiet_logger.h"

using toolmux::testing::CapturedLog;
using toolmux::testing::connect_postgres;
using toolmux::testing::eventually;
using toolmux::testing::fresh_postgres_database;
using toolmux::testing::open_postgres_store;
using toolmux::testing::QuietLogger;

namespace toolmux {

namespace {

// A wall clock the test moves, shared by the instances of a test.
struct FakeClock {
  std::chrono::system_clock::time_point now{std::chrono::hours(500000)};
};

SearchMemoryOptions with_clock(FakeClock& clock) {
  SearchMemoryOptions options;
  options.now = [&clock] { return clock.now; };
  return options;
}

// One instance: its own memory, kept in the shared store by hand (no thread).
struct Instance {
  std::shared_ptr<PgStore> store;
  std::shared_ptr<SearchMemory> memory;
  std::unique_ptr<PgSearchMemory> keeper;
  Instance(const std::string& db, const SearchMemoryOptions& options, Logger& logger)
      : store(open_postgres_store(db)), memory(std::make_shared<SearchMemory>(options)) {
    PgSearchMemoryOptions keeping;
    keeping.period = std::chrono::milliseconds(0);
    keeper = std::make_unique<PgSearchMemory>(store->pool(), memory, logger, keeping);
  }
  void click(std::string_view query, const std::string& tool) {
    memory->record(SearchMemory::terms(query), tool);
  }
  std::vector<std::pair<std::string, double>> learned(std::string_view term) const {
    return memory->associations(term);
  }
};

// Two instances on a fresh database, with one clock; memories of these
// bounds.
template <class Log = QuietLogger>
struct TwoInstances {
  explicit TwoInstances(std::size_t max_terms = 20000, std::size_t max_tools = 8)
      : a(db, bounded(max_terms, max_tools), log.logger),
        b(db, bounded(max_terms, max_tools), log.logger) {}
  SearchMemoryOptions bounded(std::size_t max_terms, std::size_t max_tools) {
    SearchMemoryOptions options = with_clock(clock);
    options.max_terms = max_terms;
    options.max_tools = max_tools;
    return options;
  }
  std::string db = fresh_postgres_database();
  FakeClock clock;
  Log log;
  Instance a;
  Instance b;
};

using Learned = std::vector<std::pair<std::string, double>>;

}  // namespace

TEST_CASE("a tool called after a search through one instance ranks higher on the others",
          "[pg_search_memory]") {
  TwoInstances<> two;
  Instance& a = two.a;
  Instance& b = two.b;
  a.click("open a bug", "create_issue");
  REQUIRE(a.keeper->sync_now().ok());
  REQUIRE(b.keeper->sync_now().ok());
  CHECK(b.learned("bug") == Learned{{"create_issue", 1.0}});
  CHECK(b.memory->boosts(SearchMemory::terms("file a bug")).count("create_issue") == 1);

  // The counts add up across instances, each instance's clicks counted once.
  b.click("bug", "create_issue");
  b.click("bug", "list_issues");
  REQUIRE(b.keeper->sync_now().ok());
  REQUIRE(a.keeper->sync_now().ok());
  REQUIRE(b.keeper->sync_now().ok());
  CHECK(a.learned("bug") == Learned{{"create_issue", 2.0}, {"list_issues", 1.0}});
  CHECK(b.learned("bug") == a.learned("bug"));
  CHECK(a.learned("open") == Learned{{"create_issue", 1.0}});

  // An instance that starts later reads everything the store holds.
  Instance c(two.db, with_clock(two.clock), two.log.logger);
  REQUIRE(c.keeper->sync_now().ok());
  CHECK(c.learned("bug") == a.learned("bug"));
}

TEST_CASE("stored counts decay with the same half life, and a click adds to the decayed count",
          "[pg_search_memory]") {
  TwoInstances<> two;
  Instance& a = two.a;
  Instance& b = two.b;
  a.click("bug", "create_issue");
  a.click("bug", "create_issue");
  REQUIRE(a.keeper->sync_now().ok());
  two.clock.now += std::chrono::hours(24 * 30);  // one half life
  b.click("bug", "create_issue");
  REQUIRE(b.keeper->sync_now().ok());
  REQUIRE(a.keeper->sync_now().ok());
  REQUIRE(a.learned("bug").size() == 1);
  CHECK(a.learned("bug")[0].second == Approx(2.0));  // 2 halved, plus 1
  CHECK(b.learned("bug")[0].second == Approx(2.0));
}

TEST_CASE("the store is trimmed to the memory's bounds, by one instance at a time",
          "[pg_search_memory]") {
  // Each instance's memory holds its bounds; the store gets what every
  // instance sent, so it can hold more until it is trimmed.
  TwoInstances<> two(3, 2);
  Instance& a = two.a;
  Instance& b = two.b;
  const std::string& db = two.db;
  for (const char* term : {"alpha", "bravo", "charlie"}) a.click(term, "t1");
  for (int i = 0; i < 3; ++i) a.click("alpha", "t2");
  REQUIRE(a.keeper->sync_now().ok());
  for (const char* term : {"delta", "echo"}) b.click(term, "t1");
  b.click("alpha", "t3");
  REQUIRE(b.keeper->sync_now().ok());
  auto raw = connect_postgres(db);
  auto count = [&raw](const std::string& where) {
    auto rows = raw->exec("SELECT count(*) FROM toolmux_search_memory WHERE " + where);
    REQUIRE(rows.ok());
    return rows->integer(0, 0);
  };
  REQUIRE(count("true") == 7);
  // A pair a year old is forgotten.
  REQUIRE(raw->exec("INSERT INTO toolmux_search_memory VALUES ('foxtrot', 't1', 1, $1, 0)",
                    {PgParam::integer(500000LL * 3600 - 365LL * 24 * 3600)})
              .ok());

  // Another holds the lock: nothing is trimmed.
  {
    auto held = PgExclusiveLock::try_take(b.store->pool(), kPgLockSearchMemoryTrim);
    REQUIRE(held.ok());
    REQUIRE(held->has_value());
    auto none = a.keeper->trim_now();
    REQUIRE(none.ok());
    CHECK(*none == 0);
  }
  auto trimmed = a.keeper->trim_now();
  REQUIRE(trimmed.ok());
  CHECK(*trimmed == 1 + 1 + 2);  // foxtrot; alpha's weakest tool; the two weakest terms
  CHECK(count("term = 'foxtrot'") == 0);
  CHECK(count("term = 'alpha'") == 2);
  CHECK(count("term = 'alpha' AND tool = 't2'") == 1);
  CHECK(count("true") == 4);
}

TEST_CASE("clicks that cannot be sent are kept and sent when the store answers again",
          "[pg_search_memory]") {
  TwoInstances<CapturedLog> two;
  Instance& a = two.a;
  Instance& b = two.b;
  CapturedLog& log = two.log;
  auto raw = connect_postgres(two.db);
  REQUIRE(raw->exec("ALTER TABLE toolmux_search_memory RENAME TO away").ok());
  a.click("bug", "create_issue");
  const Status failed = a.keeper->sync_now();
  CHECK_FALSE(failed.ok());
  CHECK_FALSE(a.keeper->sync_now().ok());
  // The failure is logged once, not at every period.
  REQUIRE(log.lines("search_memory_not_shared").size() == 1);
  CHECK(log.lines("search_memory_not_shared")[0]["reason"].get<std::string>().find(
            "toolmux_search_memory") != std::string::npos);
  // Learning here goes on meanwhile.
  CHECK(a.learned("bug") == Learned{{"create_issue", 1.0}});
  a.click("bug", "create_issue");
  REQUIRE(raw->exec("ALTER TABLE away RENAME TO toolmux_search_memory").ok());
  REQUIRE(a.keeper->sync_now().ok());
  CHECK(log.lines("search_memory_shared").size() == 1);
  REQUIRE(b.keeper->sync_now().ok());
  CHECK(b.learned("bug") == Learned{{"create_issue", 2.0}});
}

TEST_CASE("rows written by someone else are read as untrusted", "[pg_search_memory]") {
  const std::string db = fresh_postgres_database();
  FakeClock clock;
  QuietLogger log;
  Instance a(db, with_clock(clock), log.logger);
  auto raw = connect_postgres(db);
  const std::string now = std::to_string(500000LL * 3600);
  REQUIRE(raw->exec("INSERT INTO toolmux_search_memory VALUES "
                    "('bug', 'create_issue', 2, " +
                    now +
                    ", 1), "
                    "('1234567', 'digits', 1, " +
                    now +
                    ", 2), "
                    "('bug', 'not_a_number', 'NaN', " +
                    now +
                    ", 3), "
                    "('bug', 'endless', 'Infinity', " +
                    now +
                    ", 4), "
                    "('bug', 'negative', -1, " +
                    now +
                    ", 5), "
                    "('bug', '', 1, " +
                    now + ", 6)")
              .ok());
  REQUIRE(a.keeper->sync_now().ok());
  CHECK(a.learned("bug") == Learned{{"create_issue", 2.0}});
  CHECK(a.memory->term_count() == 1);
}

TEST_CASE("a keeper's thread reads what another instance sent, and sends its outbox at the end",
          "[pg_search_memory]") {
  const std::string db = fresh_postgres_database();
  QuietLogger log;
  auto store_a = open_postgres_store(db);
  auto store_b = open_postgres_store(db);
  auto memory_a = std::make_shared<SearchMemory>();
  auto memory_b = std::make_shared<SearchMemory>();
  PgSearchMemoryOptions fast;
  fast.period = std::chrono::milliseconds(50);
  auto keeper_b = std::make_unique<PgSearchMemory>(store_b->pool(), memory_b, log.logger, fast);
  {
    PgSearchMemoryOptions never;
    never.period = std::chrono::hours(1);  // the thread syncs once, at its start
    PgSearchMemory keeper_a(store_a->pool(), memory_a, log.logger, never);
    memory_a->record(SearchMemory::terms("open a bug"), "create_issue");
  }  // sent by the destructor
  CHECK(
      eventually([&] { return !memory_b->associations("bug").empty(); }, std::chrono::seconds(5)));
}

}  // namespace toolmux
