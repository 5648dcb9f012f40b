// The line matching of search_file_contents: a query as a plain substring or
// a PCRE2 regular expression (catalog/bounded_regex.h), tried on each line of
// a text, collecting the matching lines.
//
// Every line's matching is bounded: a regex sees at most kRegexWindowBytes of
// a line (cut at a character boundary) and runs under kRegexMatchLimit steps;
// a line that needs more is counted as unchecked, not matched. Hits stop at
// LineSearch::max_results. A LineMatcher is immutable after it is made and
// may be used from any thread; a LineSearch belongs to one search (one
// thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/bounded_regex.h"
#include "catalog/tool.h"
#include "src/base/status.h"

namespace toolmux {

class LineMatcher {
 public:
  // Of a line, what the regex is given.
  static constexpr std::size_t kRegexWindowBytes = std::size_t{16} * 1024;
  // PCRE2's steps for one line.
  static constexpr std::uint32_t kRegexMatchLimit = 100'000;

  // A matcher of `query`: a substring (ASCII letters folded unless
  // `case_sensitive`), or with `regex` a PCRE2 pattern. Fails with
  // invalid_argument `invalid regex "<query>": <PCRE2's reason>`.
  static Result<LineMatcher> create(const std::string& query, bool regex, bool case_sensitive);

  enum class Match { hit, miss, unchecked };

  // `line` holds no newline. Sets `window_cut` when a regex only saw a prefix.
  Match matches(std::string_view line, bool& window_cut) const;

  bool regex_mode() const { return regex_mode_; }

 private:
  LineMatcher() = default;

  bool regex_mode_ = false;
  bool case_sensitive_ = true;
  std::string query_;  // substring mode; lower-cased unless case_sensitive_
  std::shared_ptr<const BoundedRegex> regex_;
};

// A matching line: where, and its text cut at LineSearch::kMaxLineChars
// characters ("…" marks the cut).
struct LineHit {
  std::string path;
  std::size_t line;  // from 1
  std::string text;
};

// What a search over one or more texts found so far.
struct LineSearch {
  static constexpr std::size_t kMaxLineChars = 300;

  std::size_t max_results = 100;
  std::vector<LineHit> hits;  // in the order found
  bool capped = false;        // another hit was found after max_results
  bool cancelled = false;
  std::size_t window_cut_lines = 0;  // lines a regex saw only the start of
  std::size_t unchecked_lines = 0;   // lines the regex hit its matching limit on
};

// Tries `matcher` on each line of `text` ('\n' ends a line; a '\r' before it
// is not part of it) and adds the hits, named `path`, to `search`. Returns
// false when the whole search must stop: it is capped, or `context` was
// cancelled (looked at every 64 lines with a regex, 4096 without).
bool search_lines(std::string_view text, const std::string& path, const LineMatcher& matcher,
                  CallContext& context, LineSearch& search);

}  // namespace toolmux
