#include "src/store/state_key.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

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

}  // namespace toolmux
