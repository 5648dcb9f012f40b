// Small helpers shared by the catalog tests: test data, problems and results.
#pragma once

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "src/base/problem.h"

namespace toolmux::testing {

using nlohmann::json;

// The JSON document tests/data/schemas/<name>.
inline json load_schema(const std::string& name) {
  std::ifstream in(std::string(TOOLMUX_TEST_DATA) + "/schemas/" + name);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

// Whether a problem at exactly `pointer` has a message containing `fragment`.
inline bool has_problem(const Problems& problems, const std::string& pointer,
                        const std::string& fragment) {
  return std::any_of(problems.begin(), problems.end(), [&](const Problem& p) {
    return p.pointer == pointer && p.message.find(fragment) != std::string::npos;
  });
}

// The text of a result that must be exactly one text block.
inline std::string text_of(const ToolResult& result) {
  REQUIRE(result.content.is_array());
  REQUIRE(result.content.size() == 1);
  REQUIRE(result.content[0]["type"] == "text");
  return result.content[0]["text"].get<std::string>();
}

// `depth` nested JSON arrays around `inner`: "[[" + inner + "]]".
inline std::string nested_arrays(std::size_t depth, const std::string& inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

}  // namespace toolmux::testing
