// What the libFuzzer targets share: an invariant check that reports and aborts
// (libFuzzer then saves the input as a crash), and splitting one input into
// parts. Header-only; each target is single-threaded unless it says otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

// An invariant a target asserts: on failure, names it and where, and aborts.
#define FUZZ_CHECK(condition, what)                                                             \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      std::fprintf(stderr, "invariant broken at %s:%d: %s\n  (%s)\n", __FILE__, __LINE__, what, \
                   #condition);                                                                 \
      std::abort();                                                                             \
    }                                                                                           \
  } while (false)

namespace toolmux::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input cut at each NUL byte into at most `count` parts (the last part
// keeps any further NULs); missing parts are empty.
inline std::vector<std::string_view> split_input(std::string_view input, std::size_t count) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < count) {
    const std::size_t nul = input.find('\0');
    if (nul == std::string_view::npos) break;
    parts.push_back(input.substr(0, nul));
    input.remove_prefix(nul + 1);
  }
  parts.push_back(input);
  parts.resize(count);
  return parts;
}

}  // namespace toolmux::fuzz
