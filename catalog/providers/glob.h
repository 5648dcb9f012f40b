// The glob patterns of the filesystem tools (find_files "pattern",
// search_file_contents "file_pattern").
//
// In a segment: '*' any run of characters, '?' one character, [abc] [a-z]
// [!a] [^a] classes (a '[' without its ']' is an ordinary character), '\'
// quotes the next character; characters are UTF-8 (a byte that starts no
// valid sequence is a character of its own). Across segments, a "**" segment
// stands for any number of folders, none included. Matching recurses on
// nothing and keeps two rows of one bit per path segment, so a pattern of
// any length is safe; its cost grows with pattern length times path length
// (the tools cap patterns at 1024 characters). Pure functions and an
// immutable class: no state, safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace toolmux {

// One name (no '/') against one pattern segment.
bool glob_matches_name(std::string_view pattern, std::string_view name);

// A relative path against a pattern, segment by segment ('/' separates, empty
// and "." segments are ignored on both sides), where a "**" segment stands
// for any number of folders, none included. An empty pattern matches only
// the empty path (find_files refuses it).
bool glob_matches(std::string_view pattern, std::string_view path);

// A pattern split into its segments once, to be matched against many paths
// (glob_matches(pattern, path) == Glob(pattern).matches(path)).
class Glob {
 public:
  explicit Glob(std::string_view pattern);
  // No segments: the pattern was empty, "/" or "." only.
  bool empty() const { return segments_.empty(); }
  bool matches(std::string_view path) const;

 private:
  std::vector<std::string> segments_;
};

}  // namespace toolmux
