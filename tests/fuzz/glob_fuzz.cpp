// The filesystem tools' glob matcher (catalog/providers/glob.h) on any
// pattern and path. The input is the pattern, a NUL byte, then the path.
//
// Invariants: the path with its special characters quoted matches itself;
// "*" matches any name and "**" any path; a one-segment pattern and name match
// as a path exactly when they match as a name; "**/" in front of a pattern
// keeps every match, also one folder deeper.
#include <string>

#include "catalog/providers/glob.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// `path` with '*', '?', '[' and '\' quoted: a pattern matching only itself.
std::string quoted(std::string_view path) {
  std::string out;
  for (const char c : path) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

bool one_segment(std::string_view text) {
  return !text.empty() && text != "." && text.find('/') == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = toolmux::fuzz::split_input(toolmux::fuzz::as_text(data, size), 2);
  const std::string_view pattern = parts[0];
  const std::string_view path = parts[1];

  const bool matched = toolmux::glob_matches(pattern, path);
  FUZZ_CHECK(toolmux::glob_matches(quoted(path), path), "a quoted path matches itself");
  FUZZ_CHECK(toolmux::glob_matches("**", path), "\"**\" matches any path");
  if (one_segment(path)) {
    FUZZ_CHECK(toolmux::glob_matches_name("*", path), "\"*\" matches any name");
    if (one_segment(pattern) && pattern != "**") {
      FUZZ_CHECK(toolmux::glob_matches_name(pattern, path) == matched,
                 "a name matches as a path exactly when it matches as a name");
    }
  }
  const std::string deeper = "**/" + std::string(pattern);
  if (matched) {
    FUZZ_CHECK(toolmux::glob_matches(deeper, path), "\"**/\" in front keeps a match");
    FUZZ_CHECK(toolmux::glob_matches(deeper, "sub/" + std::string(path)),
               "\"**/\" in front matches one folder deeper");
  }
  return 0;
}
