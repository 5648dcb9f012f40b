#include "src/base/shared_library.h"

#include <zlib.h>

#include <catch2/catch.hpp>

using toolmux::SharedLibrary;

TEST_CASE("a library that is not there is an error naming it, its use and its package") {
  auto opened = SharedLibrary::open("libtoolmux-absent.so.9", "the frobnicator", "libfrob9");
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.status().is_unavailable());
  const std::string& message = opened.message();
  CHECK(message.find("the frobnicator needs libtoolmux-absent.so.9") != std::string::npos);
  CHECK(message.find("Debian package libfrob9") != std::string::npos);
  CHECK(message.find("could not be loaded") != std::string::npos);
}

TEST_CASE("a function is bound with the type of its declaration, and a missing one is named") {
  auto zlib = SharedLibrary::open("libz.so.1", "compression", "zlib1g");
  REQUIRE(zlib.ok());
  decltype(&::zlibVersion) version = nullptr;
  REQUIRE(zlib->bind(version, "zlibVersion").ok());
  // The same function the loader bound for this test's own link to zlib.
  CHECK(std::string(version()) == std::string(::zlibVersion()));

  decltype(&::zlibVersion) absent = nullptr;
  const toolmux::Status missing = zlib->bind(absent, "zlibNoSuchFunction");
  CHECK_FALSE(missing.ok());
  CHECK(absent == nullptr);
  CHECK(missing.message() ==
        "libz.so.1 has no function zlibNoSuchFunction: it is older than the version toolmux "
        "was built with");
}
