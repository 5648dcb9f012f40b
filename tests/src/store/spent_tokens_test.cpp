// Spent tokens (src/store/spent_tokens.h): a token spends once, in memory
// (bounded), in files every process on a data directory sees, and in
// PostgreSQL for every instance on a database; expired tokens are forgotten,
// and a store that cannot be reached refuses rather than guessing.
#include "src/store/spent_tokens.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "src/store/pg_spent_tokens.h"
#include "src/store/spent_token_files.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"

using toolmux::testing::fresh_postgres_database;
using toolmux::testing::open_postgres_store;
using toolmux::testing::TempDir;

namespace toolmux {

namespace {

using Clock = std::chrono::system_clock;
const Clock::time_point kNow = Clock::time_point(std::chrono::seconds(1'800'000'000));
const Clock::time_point kLater = kNow + std::chrono::minutes(15);

// A clock the test moves.
struct FakeClock {
  std::shared_ptr<std::atomic<Clock::rep>> ticks =
      std::make_shared<std::atomic<Clock::rep>>(kNow.time_since_epoch().count());
  std::function<Clock::time_point()> fn() const {
    return [t = ticks] { return Clock::time_point(Clock::duration(t->load())); };
  }
  void set(Clock::time_point to) { *ticks = to.time_since_epoch().count(); }
};

bool spent_now(SpentTokens& tokens, const std::string& token, Clock::time_point expires = kLater) {
  Result<bool> r = tokens.spend(token, expires);
  INFO(r.message());
  REQUIRE(r.ok());
  return *r;
}

// Of `threads` spending one token at once through `stores` in turn, how many
// were told they spent it.
int winners(const std::vector<SpentTokens*>& stores, const std::string& token, int threads = 8) {
  std::atomic<int> won{0};
  std::vector<std::thread> all;
  for (int i = 0; i < threads; ++i) {
    all.emplace_back([&, i] {
      Result<bool> r = stores[static_cast<std::size_t>(i) % stores.size()]->spend(token, kLater);
      if (r.ok() && *r) ++won;
    });
  }
  for (auto& t : all) t.join();
  return won.load();
}

}  // namespace

TEST_CASE("a token spends once, and a malformed one is refused naming why", "[spent_tokens]") {
  MemorySpentTokens tokens;
  CHECK(spent_now(tokens, "tok-1"));
  CHECK_FALSE(spent_now(tokens, "tok-1"));
  CHECK(spent_now(tokens, "tok_2"));
  CHECK(winners({&tokens}, "raced") == 1);
  for (const std::string& bad : {std::string(), std::string("../x"), std::string("a.b"),
                                 std::string(SpentTokens::kMaxTokenChars + 1, 'a')}) {
    Result<bool> r = tokens.spend(bad, kLater);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().is_invalid_argument());
  }
}

TEST_CASE("in memory: when full, expired tokens make room, and unexpired ones refuse the next",
          "[spent_tokens]") {
  FakeClock clock;
  MemorySpentTokens tokens(2, clock.fn());
  CHECK(spent_now(tokens, "a", kNow + std::chrono::minutes(1)));
  CHECK(spent_now(tokens, "b", kLater));
  Result<bool> full = tokens.spend("c", kLater);
  REQUIRE_FALSE(full.ok());
  CHECK(full.status().is_resource_exhausted());
  CHECK(full.message() ==
        "toolmux remembers at most 2 used confirmations in memory (serve --no-journal), and all "
        "are recent");
  // Past a's expiry and the margin, a is forgotten; b is still spent.
  clock.set(kNow + std::chrono::minutes(1) + SpentTokens::kForgetAfter + std::chrono::seconds(1));
  CHECK(spent_now(tokens, "c"));
  CHECK_FALSE(spent_now(tokens, "b"));
}

TEST_CASE("in files: every opener of the folder sees a token spent, once, even at the same moment",
          "[spent_tokens]") {
  TempDir dir;
  const auto folder = dir.path() / "journal" / "spent";
  auto first = SpentTokenFiles::open(folder);
  auto second = SpentTokenFiles::open(folder);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(spent_now(**first, "tok-1"));
  CHECK_FALSE(spent_now(**second, "tok-1"));
  CHECK(winners({first->get(), second->get()}, "raced", 16) == 1);
  CHECK((std::filesystem::status(folder).permissions() & std::filesystem::perms::all) ==
        std::filesystem::perms::owner_all);

  // A token outlives its opener: a process started later refuses it too.
  first->reset();
  auto third = SpentTokenFiles::open(folder);
  REQUIRE(third.ok());
  CHECK_FALSE(spent_now(**third, "tok-1"));
}

TEST_CASE("in files: expired tokens are removed at open and by a later spend", "[spent_tokens]") {
  TempDir dir;
  const auto folder = dir.path() / "spent";
  FakeClock clock;
  auto files = SpentTokenFiles::open(folder, clock.fn());
  REQUIRE(files.ok());
  CHECK(spent_now(**files, "soon", kNow + std::chrono::minutes(1)));
  CHECK(spent_now(**files, "late", kLater));
  CHECK(std::filesystem::exists(folder / "soon"));

  clock.set(kNow + std::chrono::minutes(3));
  auto reopened = SpentTokenFiles::open(folder, clock.fn());
  REQUIRE(reopened.ok());
  CHECK_FALSE(std::filesystem::exists(folder / "soon"));
  CHECK(std::filesystem::exists(folder / "late"));
  CHECK_FALSE(spent_now(**reopened, "late"));

  clock.set(kLater + std::chrono::minutes(2));
  CHECK(spent_now(**files, "another"));  // the first spend past a minute sweeps
  CHECK_FALSE(std::filesystem::exists(folder / "late"));
}

TEST_CASE("in files: a symbolic link in place of the folder is refused", "[spent_tokens]") {
  TempDir dir;
  TempDir elsewhere;
  std::filesystem::create_symlink(elsewhere.path(), dir.path() / "spent");
  auto files = SpentTokenFiles::open(dir.path() / "spent");
  REQUIRE_FALSE(files.ok());
  CHECK(files.status().is_io_error());
  CHECK_THAT(files.message(), Catch::Contains((dir.path() / "spent").string()));
}

TEST_CASE("open_spent_tokens keeps them beside the journal in the data directory",
          "[spent_tokens]") {
  TempDir dir;
  JournalStoreOptions options;
  options.data_dir = dir.path();
  auto tokens = open_spent_tokens(options);
  REQUIRE(tokens.ok());
  CHECK(spent_now(**tokens, "tok-1"));
  CHECK(std::filesystem::exists(dir.path() / "journal" / "spent" / "tok-1"));
}

TEST_CASE(
    "in PostgreSQL: every instance on the database sees a token spent, once, until it expires",
    "[spent_tokens][postgres]") {
  const std::string database = fresh_postgres_database();
  FakeClock clock;
  PgSpentTokens first(open_postgres_store(database), clock.fn());
  PgSpentTokens second(open_postgres_store(database), clock.fn());
  CHECK(spent_now(first, "tok-1", kNow + std::chrono::minutes(1)));
  CHECK_FALSE(spent_now(second, "tok-1"));
  CHECK(winners({&first, &second}, "raced") == 1);

  // A spend a minute later deletes the rows past their expiry and the margin.
  clock.set(kNow + std::chrono::minutes(3));
  CHECK(spent_now(first, "another"));
  auto db = toolmux::testing::connect_postgres(database);
  auto rows = db->exec("SELECT token FROM toolmux_spent_tokens ORDER BY token");
  REQUIRE(rows.ok());
  REQUIRE(rows->rows() == 2);
  CHECK(rows->text(0, 0) == "another");
  CHECK(rows->text(1, 0) == "raced");
}

TEST_CASE("in PostgreSQL: a store that cannot be reached is unavailable, and spends nothing",
          "[spent_tokens][postgres]") {
  const std::string database = fresh_postgres_database();
  PgSpentTokens tokens(open_postgres_store(database));
  toolmux::testing::postgres_server().pause();
  Result<bool> r = tokens.spend("tok-1", kLater);
  toolmux::testing::postgres_server().resume();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().is_unavailable());
  CHECK(spent_now(tokens, "tok-1"));
}

}  // namespace toolmux
