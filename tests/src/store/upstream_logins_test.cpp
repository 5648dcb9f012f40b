// The logins `toolmux login` keeps (src/store/upstream_logins.h): in the data
// directory's files and in PostgreSQL, one contract.
#include "src/store/upstream_logins.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"

using toolmux::testing::fresh_postgres_database;
using toolmux::testing::open_postgres_store;
using toolmux::testing::TempDir;

namespace toolmux {
namespace {

// What both implementations do alike.
void check_contract(UpstreamLogins& logins) {
  auto none = logins.read("tickets");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  REQUIRE(logins.write("tickets", R"({"first": 1})").ok());
  REQUIRE(logins.write("tickets", R"({"second": 2})").ok());
  REQUIRE(logins.write("docs.v2", R"({"other": 3})").ok());
  auto read = logins.read("tickets");
  REQUIRE(read.ok());
  CHECK(read->value_or("") == R"({"second": 2})");
  const Status big = logins.write("tickets", std::string(UpstreamLogins::kMaxLoginBytes + 1, 'x'));
  CHECK(big.is_invalid_argument());
  CHECK(big.message().find("over the 65536 kept") != std::string::npos);
  CHECK(logins.read("tickets")->value_or("") == R"({"second": 2})");  // the big one not kept
  auto removed = logins.remove("tickets");
  REQUIRE(removed.ok());
  CHECK(*removed);
  auto again = logins.remove("tickets");
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
  CHECK_FALSE(logins.read("tickets")->has_value());
  CHECK(logins.read("docs.v2")->value_or("") == R"({"other": 3})");
}

}  // namespace

TEST_CASE("logins in the data directory: kept, replaced, removed, readable by their owner only") {
  TempDir dir;
  auto logins = login_files(dir.path());
  CHECK(logins->where() == (dir.path() / "logins").string());
  check_contract(*logins);
  struct stat folder {};
  REQUIRE(::stat((dir.path() / "logins").c_str(), &folder) == 0);
  CHECK((folder.st_mode & 0777) == 0700);
  struct stat file {};
  REQUIRE(::stat((dir.path() / "logins" / "docs.v2.json").c_str(), &file) == 0);
  CHECK((file.st_mode & 0777) == 0600);
}

TEST_CASE("a login file that is a symbolic link is not read through") {
  TempDir dir;
  auto logins = login_files(dir.path());
  REQUIRE(logins->write("x", "{}").ok());
  { std::ofstream(dir.path() / "elsewhere") << R"({"planted": true})"; }
  std::filesystem::create_symlink(dir.path() / "elsewhere", dir.path() / "logins" / "up.json");
  auto read = logins->read("up");
  REQUIRE_FALSE(read.ok());
  CHECK(read.message().find("up.json") != std::string::npos);
}

TEST_CASE("logins in PostgreSQL: kept, replaced, removed, seen by every instance", "[pg_logins]") {
  const std::string db = fresh_postgres_database();
  auto logins = pg_logins(open_postgres_store(db));
  check_contract(*logins);
  auto other = pg_logins(open_postgres_store(db));
  CHECK(other->read("docs.v2")->value_or("") == R"({"other": 3})");
  CHECK(other->where().rfind("PostgreSQL (", 0) == 0);
}

}  // namespace toolmux
