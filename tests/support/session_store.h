// A SessionStore in a test's temporary folder.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "src/store/session_store.h"
#include "tests/support/temp_dir.h"

namespace toolmux::testing {

// Opens the store in `dir` (its "sessions" folder); the test fails when it cannot.
inline std::unique_ptr<SessionStore> open_session_store(const TempDir& dir) {
  auto store = SessionStore::open(dir.path());
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

}  // namespace toolmux::testing
