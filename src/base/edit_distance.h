// Levenshtein distance, for "did you mean" suggestions (unknown catalog
// fields, unknown tool names).
#pragma once

#include <cstddef>
#include <string_view>

namespace toolmux {

// The fewest single-byte insertions, deletions and substitutions that turn `a`
// into `b`. O(|a|·|b|) time, O(|b|) memory: callers bound the lengths.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace toolmux
