#include "src/base/file_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "tests/support/fifo.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using toolmux::AtomicWriteOptions;
using toolmux::read_regular_file;
using toolmux::SymbolicLinks;
using toolmux::write_file_atomically;
using toolmux::testing::FifoGuard;
using toolmux::testing::read_file;
using toolmux::testing::TempDir;

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("read_regular_file reads a file whole, within its bound", "[file_io]") {
  TempDir dir;
  const fs::path file = dir.write("a.json", "0123456789");
  CHECK(*read_regular_file(file, 10) == "0123456789");
  const auto large = read_regular_file(file, 9);
  CHECK(large.status().is_resource_exhausted());
  CHECK(large.message() == "cannot read " + file.string() + ": the file is larger than 9 bytes");
  const auto missing = read_regular_file(dir / "none", 10);
  CHECK(missing.status().is_not_found());
  CHECK(missing.message() ==
        "cannot read " + (dir / "none").string() + ": No such file or directory");
  fs::create_symlink(file, dir / "link");
  CHECK(*read_regular_file(dir / "link", 10) == "0123456789");
  const auto refused = read_regular_file(dir / "link", 10, SymbolicLinks::refuse);
  CHECK(refused.status().is_invalid_argument());
  CHECK(refused.message() ==
        "cannot read " + (dir / "link").string() + ": it is a symbolic link, not a regular file");
}

TEST_CASE("read_regular_file refuses at once what is not a regular file, a FIFO too", "[file_io]") {
  TempDir dir;
  const FifoGuard fifo(dir / "fifo");
  const auto started = std::chrono::steady_clock::now();
  const auto from_fifo = read_regular_file(fifo.path(), 1024);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
  CHECK_FALSE(fifo.fired());
  CHECK(from_fifo.status().is_invalid_argument());
  CHECK(from_fifo.message() ==
        "cannot read " + fifo.path().string() + ": it is a FIFO (named pipe), not a regular file");
  CHECK(read_regular_file(dir.path(), 1024).message() ==
        "cannot read " + dir.path().string() + ": it is a directory, not a regular file");
  CHECK(read_regular_file("/dev/zero", 1024).message() ==
        "cannot read /dev/zero: it is a character device, not a regular file");
}

TEST_CASE("write_file_atomically replaces the file, never what a symbolic link names",
          "[file_io]") {
  TempDir dir;
  const fs::path victim = dir.write("victim", "keep me");
  const fs::path target = dir / "out.json";
  REQUIRE(write_file_atomically(target, "first").ok());
  CHECK(read_file(target) == "first");
  AtomicWriteOptions owner_only;
  owner_only.mode = 0600;
  REQUIRE(write_file_atomically(target, "second", owner_only).ok());
  CHECK(read_file(target) == "second");
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  AtomicWriteOptions exact;
  exact.exact_mode = 0640;
  REQUIRE(write_file_atomically(target, "third", exact).ok());
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);

  // A symbolic link at the name itself is replaced by the file, its target untouched.
  fs::create_symlink(victim, dir / "linked.json");
  REQUIRE(write_file_atomically(dir / "linked.json", "new").ok());
  CHECK_FALSE(fs::is_symlink(dir / "linked.json"));
  CHECK(read_file(dir / "linked.json") == "new");
  CHECK(read_file(victim) == "keep me");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"linked.json", "out.json", "victim"});
}

TEST_CASE(
    "write_file_atomically without replace keeps the file there, and a failure leaves nothing",
    "[file_io]") {
  TempDir dir;
  AtomicWriteOptions once;
  once.replace = false;
  REQUIRE(write_file_atomically(dir / "key", "first", once).ok());
  const toolmux::Status again = write_file_atomically(dir / "key", "second", once);
  CHECK(again.is_io_error());
  CHECK(again.message() == "cannot write " + (dir / "key").string() + ": File exists");
  CHECK(read_file(dir / "key") == "first");

  fs::create_directories(dir / "folder" / "inside");
  const toolmux::Status over_folder = write_file_atomically(dir / "folder", "x");
  CHECK(over_folder.is_io_error());
  CHECK(names_in(dir.path()) == std::vector<std::string>{"folder", "key"});
  CHECK(write_file_atomically(dir / "no-such-folder" / "x", "x").message() ==
        "cannot write " + (dir / "no-such-folder" / "x").string() + ": No such file or directory");
}
