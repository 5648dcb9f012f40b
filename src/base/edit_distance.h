// Levenshtein distance, and the one "closest names" helper behind every "did
// you mean" suggestion (unknown catalog fields, tool names, alias targets and
// arguments, policy names). Pure functions; no state, no exceptions.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace toolmux {

// The fewest single-byte insertions, deletions and substitutions that turn `a`
// into `b`. O(|a|·|b|) time, O(|b|) memory: callers bound the lengths.
std::size_t edit_distance(std::string_view a, std::string_view b);

// How close a candidate must be to count.
struct Closeness {
  // At most this many edits away...
  std::size_t max_edits = 2;
  // ...or, when set, up to a third of the longer name's length, if that is more.
  bool scale_with_length = false;
  // A candidate that contains the name, or is contained in it, counts as
  // 0 edits away (a non-empty name only).
  bool containment_is_closest = false;
};

// The positions in `candidates` of the candidates close to `name`, closest
// first, at most `limit`; among equally close ones, the earlier in
// `candidates` comes first. Each comparison costs O(|name|·|candidate|), so
// callers bound the name's length when it comes from a caller.
std::vector<std::size_t> closest_names(const std::vector<std::string_view>& candidates,
                                       std::string_view name, std::size_t limit,
                                       const Closeness& closeness = {});

}  // namespace toolmux
