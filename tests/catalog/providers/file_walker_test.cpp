#include "catalog/providers/file_walker.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

namespace fs = std::filesystem;
using toolmux::FileWalker;
using toolmux::Location;
using toolmux::RootSet;
using toolmux::WalkEntry;
using toolmux::WalkLimits;
using toolmux::testing::TempDir;
using toolmux::testing::TestContext;
using toolmux::testing::write_file;

namespace {

RootSet open_roots(const std::vector<fs::path>& roots) {
  toolmux::Problems problems;
  std::optional<RootSet> set = RootSet::open(roots, problems);
  REQUIRE(set);
  return std::move(*set);
}

// Every entry a walk from `path` visits, as "search_path -> display".
struct Walked {
  std::vector<std::string> entries;
  std::vector<std::string> notes;
  bool finished = false;
};

Walked walk(const RootSet& roots, const std::string& path, TestContext& context,
            WalkLimits limits = {}) {
  toolmux::Result<Location> location = roots.resolve(path);
  REQUIRE(location.ok());
  toolmux::Result<std::vector<toolmux::SearchStart>> starts =
      toolmux::search_starts(roots, *location);
  INFO(starts.message());
  REQUIRE(starts.ok());
  Walked out;
  FileWalker walker(context, limits);
  out.finished = true;
  for (toolmux::SearchStart& start : *starts) {
    if (!walker.walk(start.fd.get(), start.search_prefix, start.display_prefix,
                     [&](const WalkEntry& entry) {
                       out.entries.push_back(entry.search_path + " -> " + entry.display);
                       return true;
                     })) {
      out.finished = false;
      break;
    }
  }
  out.notes = walker.notes();
  return out;
}

}  // namespace

TEST_CASE("a walk visits files in name order and never follows a symlink", "[file_walker]") {
  TempDir dir;
  write_file(dir / "root/b.txt", "");
  write_file(dir / "root/a/z.txt", "");
  write_file(dir / "root/a/y/x.txt", "");
  write_file(dir / "outside/secret.txt", "");
  fs::create_directory_symlink(dir / "outside", dir / "root/link");
  RootSet roots = open_roots({dir / "root"});
  TestContext context;

  const Walked all = walk(roots, ".", context);
  CHECK(all.finished);
  CHECK(all.entries == std::vector<std::string>{"a/y/x.txt -> a/y/x.txt", "a/z.txt -> a/z.txt",
                                                "b.txt -> b.txt", "link -> link"});
  CHECK(all.notes.empty());
  // Below a folder: matched relative to it, shown relative to the root.
  CHECK(walk(roots, "a", context).entries ==
        std::vector<std::string>{"y/x.txt -> a/y/x.txt", "z.txt -> a/z.txt"});
}

TEST_CASE("with several roots, '.' walks each, in name order", "[file_walker]") {
  TempDir dir;
  write_file(dir / "zeta/1.txt", "");
  write_file(dir / "alpha/2.txt", "");
  RootSet roots = open_roots({dir / "zeta", dir / "alpha"});
  TestContext context;
  CHECK(walk(roots, ".", context).entries ==
        std::vector<std::string>{"alpha/2.txt -> alpha/2.txt", "zeta/1.txt -> zeta/1.txt"});
  toolmux::Result<Location> file = roots.resolve("alpha/2.txt");
  REQUIRE(file.ok());
  const auto starts = toolmux::search_starts(roots, *file);
  REQUIRE_FALSE(starts.ok());
  CHECK(starts.message() == "\"alpha/2.txt\" is a file, not a directory");
}

TEST_CASE("a walk is bounded in depth and entries, and says so", "[file_walker]") {
  TempDir dir;
  write_file(dir / "root/a/b/c/deep.txt", "");
  write_file(dir / "root/a/top.txt", "");
  RootSet roots = open_roots({dir / "root"});
  TestContext context;

  WalkLimits shallow;
  shallow.max_depth = 2;
  const Walked bounded = walk(roots, ".", context, shallow);
  CHECK(bounded.finished);
  CHECK(bounded.entries == std::vector<std::string>{"a/top.txt -> a/top.txt"});
  CHECK(bounded.notes ==
        std::vector<std::string>{"did not look inside \"a/b/c\": more than 2 folders deep"});

  WalkLimits few;
  few.max_entries = 3;  // a, a/b, a/b/c: the fourth entry stops it
  const Walked stopped = walk(roots, ".", context, few);
  CHECK_FALSE(stopped.finished);
  CHECK(stopped.entries.empty());
  CHECK(stopped.notes ==
        std::vector<std::string>{"stopped after looking at 3 entries; narrow the path"});
}

TEST_CASE("a cancelled walk stops before the next entry", "[file_walker]") {
  TempDir dir;
  write_file(dir / "root/a.txt", "");
  RootSet roots = open_roots({dir / "root"});
  TestContext context;
  context.cancel = true;
  toolmux::Result<Location> location = roots.resolve(".");
  REQUIRE(location.ok());
  auto starts = toolmux::search_starts(roots, *location);
  REQUIRE(starts.ok());
  FileWalker walker(context);
  CHECK_FALSE(walker.walk(starts->front().fd.get(), "", "", [](const WalkEntry&) { return true; }));
  CHECK(walker.cancelled());
}
