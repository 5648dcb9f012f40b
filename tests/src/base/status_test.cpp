#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "src/base/status.h"

using toolmux::Result;
using toolmux::Status;

TEST_CASE("a default Status is success with no message") {
  Status s;
  CHECK(s.ok());
  CHECK(s.message().empty());
  CHECK(s == Status::ok_status());
  CHECK(s.to_string() == "OK");
}

TEST_CASE("each factory makes a failure with its code and the message as given") {
  CHECK(Status::invalid_argument("bad path").is_invalid_argument());
  CHECK(Status::not_found("no such file").is_not_found());
  CHECK(Status::out_of_range("offset 9 is past the end").is_out_of_range());
  CHECK(Status::io_error("disk full").is_io_error());
  CHECK(Status::unavailable("upstream down").is_unavailable());
  CHECK(Status::resource_exhausted("too many").is_resource_exhausted());

  Status s = Status::not_found("no such file: a.txt");
  CHECK_FALSE(s.ok());
  CHECK_FALSE(s.is_io_error());
  CHECK(s.message() == "no such file: a.txt");
  CHECK(s.to_string() == "NotFound: no such file: a.txt");
  CHECK(s != Status::io_error("no such file: a.txt"));
}

TEST_CASE("a Result holds a value or the failure that says why there is none") {
  Result<std::string> good = std::string("text");
  REQUIRE(good.ok());
  CHECK(good.status().ok());
  CHECK(*good == "text");
  CHECK(good->size() == 4);

  Result<std::string> bad = Status::invalid_argument("the URL has no host");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().is_invalid_argument());
  CHECK(bad.message() == "the URL has no host");
  CHECK_THROWS(bad.value());
}

TEST_CASE("a Result can hold a move-only value and give it up") {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  REQUIRE(r.ok());
  std::unique_ptr<int> taken = std::move(r).value();
  CHECK(*taken == 7);
}
