// The glob patterns of the filesystem tools (find_files "pattern",
// search_file_contents "file_pattern"), exposed for tests and fuzzing; the
// matcher lives in filesystem_tools.cpp, where the tools use it.
//
// In a segment: '*' any run of characters, '?' one character, [abc] [a-z]
// [!a] [^a] classes (a '[' without its ']' is an ordinary character), '\'
// quotes the next character; characters are UTF-8 (a byte that starts no
// valid sequence is a character of its own). Pure functions, no state.
#pragma once

#include <string_view>

namespace toolmux {

// One name (no '/') against one pattern segment.
bool glob_matches_name(std::string_view pattern, std::string_view name);

// A relative path against a pattern, segment by segment ('/' separates, empty
// and "." segments are ignored on both sides), where a "**" segment stands
// for any number of folders, none included. An empty pattern matches only
// the empty path (find_files refuses it).
bool glob_matches(std::string_view pattern, std::string_view path);

}  // namespace toolmux
