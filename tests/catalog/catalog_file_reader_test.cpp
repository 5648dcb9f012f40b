#include "catalog/catalog_file_reader.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using nlohmann::json;
using toolmux::Problem;
using toolmux::Problems;
using toolmux::catalog_file::ObjectReader;

namespace {

// "pointer: message" lines, for whole comparisons.
std::vector<std::string> lines(const Problems& problems) {
  std::vector<std::string> out;
  for (const Problem& problem : problems) out.push_back(problem.pointer + ": " + problem.message);
  return out;
}

constexpr std::uint64_t kNoMax = std::numeric_limits<std::uint64_t>::max();

}  // namespace

TEST_CASE("unknown fields are reported at their pointer, with a close known name") {
  const json object = {{"nmae", 1}, {"zzzzzz", 2}, {"name", 3}};
  Problems problems;
  ObjectReader reader(object, "/tools/0", problems);
  reader.reject_unknown({"name", "description"});
  CHECK(lines(problems) ==
        std::vector<std::string>{"/tools/0/nmae: unknown field \"nmae\" (did you mean \"name\"?)",
                                 "/tools/0/zzzzzz: unknown field \"zzzzzz\""});
}

TEST_CASE("a field of the wrong type or missing is reported once, and marked") {
  const json object = {{"name", 7}, {"flag", "yes"}, {"tags", {"a", 2}}, {"env", "x"}};
  Problems problems;
  ObjectReader reader(object, "/x", problems);
  CHECK_FALSE(reader.string("name", true));
  CHECK_FALSE(reader.string("description", true));
  CHECK_FALSE(reader.string("title", false));
  CHECK_FALSE(reader.boolean("flag"));
  CHECK_FALSE(reader.strings("tags", false));
  CHECK(reader.object("env", false) == nullptr);
  CHECK(lines(problems) == std::vector<std::string>{"/x/name: expected a string, got an integer",
                                                    "/x: missing required field \"description\"",
                                                    "/x/flag: expected a boolean, got a string",
                                                    "/x/tags/1: expected a string, got an integer",
                                                    "/x/env: expected an object, got a string"});
  CHECK(reader.reported() ==
        std::set<std::string>{"/name", "/description", "/flag", "/tags", "/env"});
}

TEST_CASE("integers are read within their range, and the range is named") {
  const json object = {{"ok", 5}, {"low", 0}, {"high", 11}, {"negative", -1}, {"open", 0}};
  Problems problems;
  ObjectReader reader(object, "", problems);
  CHECK(reader.integer("ok", true, 1, 10) == std::uint64_t{5});
  CHECK_FALSE(reader.integer("low", true, 1, 10));
  CHECK_FALSE(reader.integer("high", true, 1, 10));
  CHECK_FALSE(reader.integer("negative", true, 0, 10));
  CHECK_FALSE(reader.integer("open", true, 1, kNoMax));
  CHECK(lines(problems) ==
        std::vector<std::string>{"/low: low must be between 1 and 10, not 0",
                                 "/high: high must be between 1 and 10, not 11",
                                 "/negative: negative must be between 0 and 10, not -1",
                                 "/open: open must be at least 1, not 0"});
}

TEST_CASE("object members that are not objects are problems, and the others are read") {
  const json object = {{"tools", {{"a", {{"x", 1}}}, {"b", 2}}}};
  Problems problems;
  ObjectReader reader(object, "/upstreams/u", problems);
  std::vector<std::string> read;
  reader.object_members("tools", "what to change in the tool",
                        [&](const std::string& key, const json&, const std::string& at) {
                          read.push_back(key + " at " + at);
                        });
  CHECK(read == std::vector<std::string>{"a at /upstreams/u/tools/a"});
  CHECK(lines(problems) ==
        std::vector<std::string>{"/upstreams/u/tools/b: expected an object (what to change in "
                                 "the tool), got an integer"});
}

TEST_CASE("problems under a field already reported are left out") {
  const Problems found{{"/name", "a"}, {"/name/x", "b"}, {"/names", "c"}, {"", "d"}};
  CHECK(lines(toolmux::catalog_file::without_reported(found, {"/name"})) ==
        std::vector<std::string>{"/names: c", ": d"});
}

TEST_CASE("read_file reads a file whole, and names the path when it cannot") {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("catalog_file_reader_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const auto file = folder / "catalog.json";
  std::ofstream(file) << "{\"tools\": []}\n";
  Problems problems;
  CHECK(toolmux::catalog_file::read_file(file, problems) == std::string("{\"tools\": []}\n"));
  CHECK_FALSE(toolmux::catalog_file::read_file(folder / "missing.json", problems));
  CHECK_FALSE(toolmux::catalog_file::read_file(folder, problems));
  REQUIRE(problems.size() == 2);
  CHECK_THAT(problems[0].message, Catch::Contains((folder / "missing.json").string()) &&
                                      Catch::Contains("No such file or directory"));
  CHECK_THAT(problems[1].message, Catch::Contains("it is a directory, not a regular file"));

  std::ofstream(file) << std::string(toolmux::catalog_file::kMaxFileBytes + 1, ' ');
  problems.clear();
  CHECK_FALSE(toolmux::catalog_file::read_file(file, problems));
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].message, Catch::Contains("larger than 16777216 bytes"));
  std::filesystem::remove_all(folder);
}
