// Regular expressions whose matching cost is bounded, for every pattern that
// meets untrusted text: JSON Schema "pattern" and "patternProperties" (tool
// arguments, upstream results) and search_file_contents.
//
// The engine is PCRE2 (Debian libpcre2-8). Its interpreter keeps its
// backtracking state on the heap, not the stack, so no subject length can
// overflow a thread's stack (std::regex recurses once per character: a
// 40,000-character argument crashed the server), and every match runs under a
// match limit, a depth limit and a heap limit: a pattern that would backtrack
// catastrophically on some text answers `too_costly` instead of running on.
//
// Syntax: the ECMAScript flavour asks PCRE2 for JavaScript's behaviour where
// the two differ and PCRE2 has a switch for it ($ matches only at the very
// end, \uXXXX and \u{...} escapes, [^] and [] classes, a back-reference to an
// unset group matches empty). What PCRE2 cannot do is refused at compile time
// with PCRE2's reason (a lookbehind of variable length, for one). Subjects and
// patterns are UTF-8 and matched by code point.
//
// A compiled BoundedRegex is immutable and may be searched from many threads
// at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace toolmux {

struct RegexLimits {
  // PCRE2's count of calls of its internal match function, for one search.
  std::uint32_t match_limit = 1'000'000;
  // Nested backtracking points, for one search.
  std::uint32_t depth_limit = 10'000;
  // Heap for backtracking, in KiB, for one search.
  std::uint32_t heap_limit_kib = 16 * 1024;
};

class BoundedRegex {
 public:
  enum class Flavour {
    ecmascript,  // JSON Schema patterns (ECMA-262 as far as PCRE2 allows)
    pcre,        // PCRE2's own syntax (search_file_contents)
  };
  enum class Match { found, not_found, too_costly };

  // The compiled pattern (never null), or an invalid_argument Status with
  // PCRE2's reason and the offset when `pattern` does not compile (or is
  // longer than kMaxPatternBytes; resource_exhausted when out of memory).
  static Result<std::shared_ptr<const BoundedRegex>> compile(std::string_view pattern,
                                                             Flavour flavour, bool case_sensitive,
                                                             RegexLimits limits = {});
  // Convenience for ECMAScript, case-sensitive, default limits.
  static Result<std::shared_ptr<const BoundedRegex>> compile(std::string_view pattern) {
    return compile(pattern, Flavour::ecmascript, true);
  }

  // Whether the pattern matches anywhere in `text` (unanchored, as JSON Schema
  // "pattern" and grep do). `too_costly` when a limit stopped the search, and
  // also when `text` is not valid UTF-8.
  Match search(std::string_view text) const;

  // For messages and generators: whether ECMAScript `pattern` matches
  // `text`; nullopt when that cannot be decided (the pattern does not compile,
  // or matching hit a limit). Compiles the pattern on every call.
  static std::optional<bool> matches(std::string_view pattern, std::string_view text);

  const std::string& pattern() const { return pattern_; }

  ~BoundedRegex();
  BoundedRegex(const BoundedRegex&) = delete;
  BoundedRegex& operator=(const BoundedRegex&) = delete;

  struct Impl;

 private:
  BoundedRegex(std::string pattern, std::unique_ptr<Impl> impl);
  std::string pattern_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolmux
