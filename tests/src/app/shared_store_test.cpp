// Where the connection string of --store postgresql comes from
// (src/app/shared_store.h): never repeated in a message.
#include "src/app/shared_store.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <string>

#include "tests/support/fifo.h"
#include "tests/support/temp_dir.h"

using toolmux::ServeOptions;
using toolmux::store_connection_string;
using toolmux::StoreKind;
using toolmux::testing::FifoGuard;
using toolmux::testing::TempDir;

namespace {

ServeOptions postgresql(const std::string& url_file = "") {
  ServeOptions options;
  options.store = StoreKind::postgresql;
  options.store_url_file = url_file;
  return options;
}

}  // namespace

TEST_CASE("the connection string comes from TOOLMUX_POSTGRES_URL, trimmed", "[shared_store]") {
  ::setenv("TOOLMUX_POSTGRES_URL", "  host=/run/pg dbname=toolmux \n", 1);
  auto url = store_connection_string(postgresql());
  REQUIRE(url.ok());
  CHECK(*url == "host=/run/pg dbname=toolmux");
}

TEST_CASE("the first line of --store-url-file wins over the variable", "[shared_store]") {
  TempDir dir;
  const auto file = dir.write("url", "\tpostgresql://toolmux:s3cret@db/toolmux \nsecond line\n");
  ::setenv("TOOLMUX_POSTGRES_URL", "host=/elsewhere", 1);
  auto url = store_connection_string(postgresql(file.string()));
  REQUIRE(url.ok());
  CHECK(*url == "postgresql://toolmux:s3cret@db/toolmux");
}

TEST_CASE("a missing, unreadable or empty source is named, never its content", "[shared_store]") {
  TempDir dir;
  ::unsetenv("TOOLMUX_POSTGRES_URL");
  auto none = store_connection_string(postgresql());
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().is_invalid_argument());
  CHECK(none.message() ==
        "--store postgresql needs a connection string: set TOOLMUX_POSTGRES_URL or give "
        "--store-url-file FILE");

  ::setenv("TOOLMUX_POSTGRES_URL", "   ", 1);
  CHECK(store_connection_string(postgresql()).message() == none.message());

  const std::string missing = (dir.path() / "no-such-file").string();
  auto unreadable = store_connection_string(postgresql(missing));
  REQUIRE_FALSE(unreadable.ok());
  CHECK(unreadable.message() ==
        "--store-url-file: cannot read " + missing + ": No such file or directory");

  const auto blank = dir.write("blank", "\n password=s3cret\n");
  auto empty = store_connection_string(postgresql(blank.string()));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.message() == "--store-url-file " + blank.string() +
                               ": its first line is empty; it should be the connection string "
                               "(postgresql://... or host=... dbname=...)");
  CHECK(empty.message().find("s3cret") == std::string::npos);
}

TEST_CASE("a --store-url-file that is a FIFO is refused at once, never waited on",
          "[shared_store]") {
  TempDir dir;
  const FifoGuard fifo(dir / "url");
  auto url = store_connection_string(postgresql(fifo.path().string()));
  CHECK_FALSE(fifo.fired());
  CHECK(url.status().is_invalid_argument());
  CHECK(url.message() == "--store-url-file: cannot read " + fifo.path().string() +
                             ": it is a FIFO (named pipe), not a regular file");
}
