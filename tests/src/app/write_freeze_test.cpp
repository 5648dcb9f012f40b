#include "src/app/write_freeze.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "src/base/redact.h"
#include "tests/support/temp_dir.h"

using toolmux::freeze_writes;
using toolmux::kMaxFreezeReasonBytes;
using toolmux::read_write_freeze;
using toolmux::thaw_writes;
using toolmux::testing::TempDir;

namespace {

std::size_t files_in(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("write freeze: on with a reason, off, and off again") {
  TempDir dir;
  CHECK_FALSE(read_write_freeze(dir.path()));
  REQUIRE(freeze_writes(dir.path(), "migrating the database until 14:00").ok());
  CHECK(read_write_freeze(dir.path()) == "migrating the database until 14:00");
  CHECK(toolmux::testing::read_file(dir / "write-freeze") == "migrating the database until 14:00");
  CHECK(files_in(dir.path()) == 1);  // no temporary file left behind
  // On again replaces the reason.
  REQUIRE(freeze_writes(dir.path(), "").ok());
  CHECK(read_write_freeze(dir.path()) == "");
  REQUIRE(thaw_writes(dir.path()).ok());
  CHECK_FALSE(read_write_freeze(dir.path()));
  CHECK(thaw_writes(dir.path()).ok());  // already off
}

TEST_CASE("write freeze: the data directory is created when missing, and missing is off") {
  TempDir dir;
  const auto nested = dir / "state" / "toolmux";
  CHECK_FALSE(read_write_freeze(nested));
  CHECK(thaw_writes(nested).ok());
  REQUIRE(freeze_writes(nested, "x").ok());
  CHECK(read_write_freeze(nested) == "x");
}

TEST_CASE("write freeze: the reason is cleaned and cut at a character boundary") {
  TempDir dir;
  // Control characters (a terminal escape, newlines) become spaces; the ends are trimmed.
  REQUIRE(freeze_writes(dir.path(), "  line one\nline two\x1b[31m\n").ok());
  CHECK(read_write_freeze(dir.path()) == "line one line two [31m");
  // So do C1 controls (U+009B is CSI) and the bidirectional controls.
  REQUIRE(freeze_writes(dir.path(),
                        "a\xc2\x9b"
                        "2Jb\xe2\x80\xae"
                        "c")
              .ok());
  CHECK(read_write_freeze(dir.path()) == "a 2Jb c");
  // 499 bytes and a 2-byte character: the character would end past the limit.
  REQUIRE(freeze_writes(dir.path(), std::string(kMaxFreezeReasonBytes - 1, 'a') + "\xc3\xa9").ok());
  CHECK(read_write_freeze(dir.path()) == std::string(kMaxFreezeReasonBytes - 1, 'a'));
  // A file an operator wrote by hand: bad UTF-8 is replaced, a long one cut.
  dir.write("write-freeze", "bad \xff byte");
  CHECK(read_write_freeze(dir.path()) == "bad \xef\xbf\xbd byte");
  dir.write("write-freeze", std::string(1 << 20, 'z'));
  CHECK(read_write_freeze(dir.path()) == std::string(kMaxFreezeReasonBytes, 'z'));
  dir.write("write-freeze", "\n");
  CHECK(read_write_freeze(dir.path()) == "");
}

TEST_CASE("write freeze: the reason is redacted when written and when read") {
  TempDir dir;
  const std::string token = "ghp_aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jK2mN5p";
  REQUIRE(freeze_writes(dir.path(), "rotating " + token + "; db password=hunter2-Xy9").ok());
  const std::string redacted =
      "rotating [REDACTED:github_token]; db password=[REDACTED:secret_value]";
  CHECK(toolmux::testing::read_file(dir / "write-freeze") == redacted);
  CHECK(read_write_freeze(dir.path()) == redacted);
  // A file written by hand, with a secret this process knows (a server knows
  // its upstreams' fromEnv values; `toolmux freeze on` does not).
  const std::string known = "write-freeze-test-secret-Qz81";
  dir.write("write-freeze", "key " + known + " leaked");
  toolmux::register_secret(known);
  CHECK(read_write_freeze(dir.path()) == "key [REDACTED] leaked");
  // Redacted before it is cut: a token across the limit is not left half shown.
  const std::string near_end(kMaxFreezeReasonBytes - 10, 'a');
  REQUIRE(freeze_writes(dir.path(), near_end + " " + token).ok());
  CHECK(read_write_freeze(dir.path()) ==
        (near_end + " [REDACTED:github_token]").substr(0, kMaxFreezeReasonBytes));
  CHECK(toolmux::clean_freeze_reason("see " + token) == "see [REDACTED:github_token]");
}

TEST_CASE("write freeze: a file that cannot be read counts as on, and says why") {
  TempDir dir;
  std::filesystem::create_directory(dir / "write-freeze");
  auto reason = read_write_freeze(dir.path());
  REQUIRE(reason);
  CHECK(*reason == "the write freeze file " + (dir / "write-freeze").string() +
                       " exists but could not be read (Is a directory), so writes are refused");
  auto thaw = thaw_writes(dir.path());
  CHECK(thaw.is_io_error());
  CHECK(thaw.message().find("could not remove " + (dir / "write-freeze").string()) == 0);
}

TEST_CASE("write freeze: a symbolic link planted at the old temporary name is not followed") {
  TempDir dir;
  const auto victim = dir.write("victim", "untouched");
  std::filesystem::create_symlink(victim,
                                  dir / ("write-freeze." + std::to_string(::getpid()) + ".tmp"));
  REQUIRE(freeze_writes(dir.path(), "maintenance").ok());
  CHECK(toolmux::testing::read_file(victim) == "untouched");
  CHECK_FALSE(std::filesystem::is_symlink(dir / "write-freeze"));
  CHECK(read_write_freeze(dir.path()) == "maintenance");
}

TEST_CASE("write freeze: a data directory that cannot be created is an error naming it") {
  TempDir dir;
  dir.write("file", "not a folder");
  auto status = freeze_writes(dir / "file" / "state", "x");
  CHECK(status.is_io_error());
  CHECK(status.message().find("could not create the data directory " +
                              (dir / "file" / "state").string()) == 0);
}
