#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "src/base/edit_distance.h"

using toolmux::Closeness;
using toolmux::closest_names;
using toolmux::edit_distance;

TEST_CASE("edit_distance counts single-byte insertions, deletions and substitutions") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("name", "name") == 0);
  CHECK(edit_distance("name", "nme") == 1);
  CHECK(edit_distance("name", "names") == 1);
  CHECK(edit_distance("name", "nave") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
}

TEST_CASE("closest_names gives the candidates within two edits, closest first") {
  const std::vector<std::string_view> known = {"timeout", "tools", "title", "upstreams"};
  CHECK(closest_names(known, "tols", 5) == std::vector<std::size_t>{1});
  CHECK(closest_names(known, "timout", 5) == std::vector<std::size_t>{0});
  CHECK(closest_names(known, "completely_different", 5).empty());
  CHECK(closest_names({}, "x", 5).empty());
  // Three edits away is not close.
  CHECK(closest_names(known, "tmt", 5).empty());
}

TEST_CASE("closest_names keeps the candidates' order among equally close ones, up to the limit") {
  const std::vector<std::string_view> names = {"bat", "cat", "hat", "at"};
  CHECK(closest_names(names, "at", 10) == std::vector<std::size_t>{3, 0, 1, 2});
  CHECK(closest_names(names, "mat", 2) == std::vector<std::size_t>{0, 1});
  CHECK(closest_names(names, "mat", 0).empty());
}

TEST_CASE("closest_names can count containment as closest and allow long names more edits") {
  const Closeness loose{.max_edits = 2, .scale_with_length = true, .containment_is_closest = true};
  const std::vector<std::string_view> tools = {"read_text_file", "search_file_contents", "list"};
  // "file_contents" is inside "search_file_contents".
  CHECK(closest_names(tools, "file_contents", 3, loose) == std::vector<std::size_t>{1});
  // Four edits from a 14-character name: allowed with scaling (14 / 3 = 4), not without.
  REQUIRE(edit_distance("rd_txt_fil", "read_text_file") == 4);
  CHECK(closest_names(tools, "rd_txt_fil", 3, loose) == std::vector<std::size_t>{0});
  CHECK(closest_names(tools, "rd_txt_fil", 3).empty());
}
