#include "src/store/state_key.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include <thread>

#include "src/store/pg_store.h"
#include "tests/support/fifo.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"

using toolmux::testing::TempDir;

namespace toolmux {

TEST_CASE("the state key is made once, readable only by its owner, and read back after",
          "[state_key]") {
  TempDir dir;
  const auto data = dir.path() / "data";  // made when missing
  Result<SealingKey> first = load_or_create_state_key(data);
  REQUIRE(first.ok());
  struct stat st {};
  REQUIRE(::stat((data / "state.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(st.st_size == 32);
  Result<SealingKey> again = load_or_create_state_key(data);
  REQUIRE(again.ok());
  CHECK(again->bytes == first->bytes);
  // What one seals, the other opens: a restart keeps the states it made.
  CHECK(open_sealed(*again, seal(*first, "state")) == "state");
}

TEST_CASE("a state key file of the wrong size is refused, not replaced", "[state_key]") {
  TempDir dir;
  std::ofstream(dir.path() / "state.key") << "short";
  Result<SealingKey> key = load_or_create_state_key(dir.path());
  REQUIRE_FALSE(key.ok());
  CHECK(key.status().is_invalid_argument());
  CHECK(key.message().find("state.key is not 32 bytes") != std::string::npos);
  CHECK(std::filesystem::file_size(dir.path() / "state.key") == 5);
}

TEST_CASE("a symbolic link at the old temporary name is not followed, and a FIFO is not waited on",
          "[state_key]") {
  TempDir dir;
  const auto victim = dir.write("victim", "untouched");
  std::filesystem::create_symlink(victim, dir / ("state.key.tmp." + std::to_string(::getpid())));
  Result<SealingKey> key = load_or_create_state_key(dir.path());
  REQUIRE(key.ok());
  CHECK(testing::read_file(victim) == "untouched");
  CHECK(std::filesystem::file_size(dir / "state.key") == 32);

  TempDir other;
  const testing::FifoGuard fifo(other / "state.key");
  Result<SealingKey> from_fifo = load_or_create_state_key(other.path());
  CHECK_FALSE(fifo.fired());
  CHECK(from_fifo.status().is_io_error());
  CHECK(from_fifo.message() == "the state key: cannot read " + fifo.path().string() +
                                   ": it is a FIFO (named pipe), not a regular file");
}

}  // namespace toolmux

namespace toolmux {

TEST_CASE("with PostgreSQL every instance gets the same state key", "[state_key]") {
  const std::string conninfo = testing::fresh_postgres_database();
  auto instance = [&] {
    PgStoreOptions options;
    options.conninfo = conninfo;
    auto store = PgStore::open(options);
    REQUIRE(store.ok());
    return *store;
  };
  auto first = instance();
  auto second = instance();
  // Both at once: one insert wins, both read it.
  Result<SealingKey> a = Status::io_error("not run");
  std::thread other([&] { a = load_or_create_state_key(*first); });
  Result<SealingKey> b = load_or_create_state_key(*second);
  other.join();
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->bytes == b->bytes);
  CHECK(open_sealed(*b, seal(*a, "state")) == "state");
  // And later, as a restarted instance would.
  Result<SealingKey> again = load_or_create_state_key(*instance());
  REQUIRE(again.ok());
  CHECK(again->bytes == a->bytes);
  // Another database (another deployment) has a key of its own.
  PgStoreOptions elsewhere;
  elsewhere.conninfo = testing::fresh_postgres_database();
  auto other_store = PgStore::open(elsewhere);
  REQUIRE(other_store.ok());
  Result<SealingKey> foreign = load_or_create_state_key(**other_store);
  REQUIRE(foreign.ok());
  CHECK(foreign->bytes != a->bytes);
}

}  // namespace toolmux
