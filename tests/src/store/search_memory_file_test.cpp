#include "src/store/search_memory_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/captured_log.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"

using namespace std::chrono_literals;
using nlohmann::json;
using toolmux::testing::CapturedLog;
using toolmux::testing::eventually;
using toolmux::testing::read_file;
using toolmux::testing::TempDir;

namespace toolmux {

namespace {

namespace fs = std::filesystem;

void click(SearchMemory& memory, std::string_view query, const std::string& tool) {
  memory.record(SearchMemory::terms(query), tool);
}

}  // namespace

TEST_CASE("the search memory is saved at shutdown, owner-only, and loaded at the next start",
          "[search_memory_file]") {
  TempDir dir;
  CapturedLog log;
  const fs::path data = dir.path() / "data";  // made when missing
  {
    auto memory = std::make_shared<SearchMemory>();
    SearchMemoryFile file(data, memory, log.logger, 0ms);
    CHECK(file.path() == data / "search-memory");
    CHECK(memory->term_count() == 0);
    click(*memory, "report a bug", "create_issue");
  }
  struct stat st {};
  REQUIRE(::stat((data / "search-memory").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // Only normalized terms and tool names, never the query's text.
  const std::string saved = read_file(data / "search-memory");
  CHECK(saved.find("bug") != std::string::npos);
  CHECK(saved.find("report a bug") == std::string::npos);
  CHECK_FALSE(fs::exists(data / "search-memory.damaged"));

  auto memory = std::make_shared<SearchMemory>();
  SearchMemoryFile file(data, memory, log.logger, 0ms);
  // The count decays by the second (30 days' half life): a save and load a
  // second apart read 0.9999997, not 1.
  const auto bug = memory->associations("bug");
  REQUIRE(bug.size() == 1);
  CHECK(bug[0].first == "create_issue");
  CHECK(bug[0].second == Approx(1.0).epsilon(1e-5));
  CHECK(log.lines("search_memory_unreadable").empty());
  // Nothing changed since the load: nothing to write.
  const auto written = fs::last_write_time(file.path());
  std::this_thread::sleep_for(20ms);
  REQUIRE(file.save_now().ok());
  CHECK(fs::last_write_time(file.path()) == written);
}

TEST_CASE("the search memory is saved on a timer when it changed", "[search_memory_file]") {
  TempDir dir;
  CapturedLog log;
  auto memory = std::make_shared<SearchMemory>();
  SearchMemoryFile file(dir.path(), memory, log.logger, 20ms);
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(fs::exists(file.path()));  // nothing learned, nothing written
  click(*memory, "list the pods", "pods_list");
  REQUIRE(eventually([&file] { return fs::exists(file.path()); }, 10s));
  SearchMemory copy;
  REQUIRE(copy.from_bytes(read_file(file.path())).ok());
  CHECK(copy.associations("pod").size() == 1);
}

TEST_CASE("a damaged search memory file is logged, set aside and replaced, never fatal",
          "[search_memory_file]") {
  TempDir dir;
  CapturedLog log;
  dir.write("search-memory", "TMSM this is not what toolmux wrote");
  {
    auto memory = std::make_shared<SearchMemory>();
    SearchMemoryFile file(dir.path(), memory, log.logger, 0ms);
    CHECK(memory->term_count() == 0);
    const auto lines = log.lines("search_memory_unreadable");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0]["level"] == "warning");
    CHECK(lines[0]["path"] == (dir.path() / "search-memory").string());
    CHECK(lines[0]["reason"].get<std::string>().rfind("the search memory is", 0) == 0);
    CHECK(lines[0]["moved_to"] == (dir.path() / "search-memory.damaged").string());
    CHECK(read_file(dir.path() / "search-memory.damaged") == "TMSM this is not what toolmux wrote");
    CHECK_FALSE(fs::exists(file.path()));
    click(*memory, "report a bug", "create_issue");
  }
  SearchMemory reloaded;
  REQUIRE(reloaded.from_bytes(read_file(dir.path() / "search-memory")).ok());
  CHECK(reloaded.associations("bug").size() == 1);
}

TEST_CASE("reading the file: missing, too large, not a file, a link", "[search_memory_file]") {
  TempDir dir;
  CHECK(read_search_memory_file(dir.path() / "none").status().is_not_found());
  const fs::path large = dir.path() / "large";
  {
    std::FILE* f = std::fopen(large.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fclose(f);
    fs::resize_file(large, SearchMemory::kMaxBytes + 1);
  }
  Result<std::string> too_large = read_search_memory_file(large);
  CHECK(too_large.status().is_resource_exhausted());
  CHECK(too_large.message() ==
        "cannot read " + large.string() + ": the file is larger than 67108864 bytes");
  CHECK(read_search_memory_file(dir.path()).status().is_invalid_argument());
  fs::create_symlink(large, dir.path() / "link");
  CHECK(read_search_memory_file(dir.path() / "link").status().is_invalid_argument());
}

TEST_CASE("a symbolic link at the old temporary name does not stop a save, and is not followed",
          "[search_memory_file]") {
  TempDir dir;
  const auto victim = dir.write("victim", "untouched");
  const fs::path file = dir / "search-memory";
  fs::create_symlink(victim, file.string() + "." + std::to_string(::getpid()) + ".tmp");
  REQUIRE(write_search_memory_file(file, "bytes").ok());
  CHECK(read_file(file) == "bytes");
  CHECK(read_file(victim) == "untouched");
}

TEST_CASE("a save that fails is logged and leaves no temporary file", "[search_memory_file]") {
  TempDir dir;
  CapturedLog log;
  // The data directory is a file: nothing can be written in it.
  const fs::path data = dir.write("data", "a file");
  auto memory = std::make_shared<SearchMemory>();
  {
    SearchMemoryFile file(data, memory, log.logger, 0ms);
    click(*memory, "report a bug", "create_issue");
    Status status = file.save_now();
    CHECK(status.is_io_error());
    const auto lines = log.lines("search_memory_not_saved");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0]["reason"] == status.message());
  }  // tries again at shutdown, and fails again: still no crash
  CHECK(log.lines("search_memory_not_saved").size() == 2);

  // A folder where the file should be: the rename fails, the temporary goes.
  TempDir other;
  fs::create_directories(other.path() / "search-memory" / "inside");
  CHECK(write_search_memory_file(other.path() / "search-memory", "bytes").is_io_error());
  std::vector<fs::path> left;
  for (const auto& entry : fs::directory_iterator(other.path())) left.push_back(entry.path());
  CHECK(left == std::vector<fs::path>{other.path() / "search-memory"});
}

}  // namespace toolmux
