#include "catalog/providers/glob.h"

#include <cstddef>
#include <cstdint>

#include "src/base/utf8.h"

namespace toolmux {

namespace {

// Decodes the character at text[i]; a byte that starts no valid sequence is
// read alone (as a value no character has).
std::size_t decode_char(std::string_view text, std::size_t i, std::uint32_t& cp) {
  const Utf8Char c = decode_utf8(text, i);
  cp = c.valid ? c.code_point : 0x110000u + static_cast<unsigned char>(text[i]);
  return c.valid ? c.length : 1;
}

// Matches a bracket expression starting at pattern[p] == '['. Returns the
// position after its ']' and sets `matched`, or npos when there is no closing
// ']' (the '[' is then an ordinary character).
std::size_t match_class(std::string_view pattern, std::size_t p, std::uint32_t c, bool& matched) {
  std::size_t i = p + 1;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negate = true;
    ++i;
  }
  bool found = false;
  bool first = true;
  while (i < pattern.size()) {
    if (pattern[i] == ']' && !first) {
      matched = found != negate;
      return i + 1;
    }
    first = false;
    if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
    std::uint32_t lo = 0;
    i += decode_char(pattern, i, lo);
    std::uint32_t hi = lo;
    if (i + 1 < pattern.size() && pattern[i] == '-' && pattern[i + 1] != ']') {
      ++i;
      if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
      i += decode_char(pattern, i, hi);
    }
    if (c >= lo && c <= hi) found = true;
  }
  return std::string_view::npos;
}

// One path segment against one pattern segment: '*' any run of characters,
// '?' one character, [abc] [a-z] [!a] classes, '\' quotes the next character.
// Backtracks only to the last '*', so the cost is at most pattern times text.
bool match_segment(std::string_view pattern, std::string_view text) {
  constexpr std::size_t npos = std::string_view::npos;
  std::size_t p = 0, t = 0, star_p = npos, star_t = 0;
  while (t < text.size()) {
    bool advanced = false;
    if (p < pattern.size()) {
      const char pc = pattern[p];
      std::uint32_t tc = 0;
      const std::size_t tl = decode_char(text, t, tc);
      if (pc == '*') {
        while (p < pattern.size() && pattern[p] == '*') ++p;
        star_p = p;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        t += tl;
        advanced = true;
      } else {
        bool matched = false;
        const std::size_t end = pc == '[' ? match_class(pattern, p, tc, matched) : npos;
        if (end != npos) {
          if (matched) {
            p = end;
            t += tl;
            advanced = true;
          }
        } else {
          const std::size_t at = pc == '\\' && p + 1 < pattern.size() ? p + 1 : p;
          std::uint32_t want = 0;
          const std::size_t pl = decode_char(pattern, at, want);
          if (want == tc) {
            p = at + pl;
            t += tl;
            advanced = true;
          }
        }
      }
    }
    if (advanced) continue;
    if (star_p == npos) return false;
    std::uint32_t skipped = 0;
    star_t += decode_char(text, star_t, skipped);
    t = star_t;
    p = star_p;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<std::string> split_segments(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (!segment.empty() && segment != ".") out.emplace_back(segment);
    start = end + 1;
  }
  return out;
}

}  // namespace

Glob::Glob(std::string_view pattern) : segments_(split_segments(pattern)) {}

// Whether segments [pi..] match parts [si..], for every pi from the last
// segment back, one row of si at a time: no recursion (a pattern may have any
// number of segments) and memory for two rows only.
bool Glob::matches(std::string_view path) const {
  const std::vector<std::string> parts = split_segments(path);
  const std::size_t n = parts.size();
  std::vector<unsigned char> next(n + 1, 0);  // the row of pi + 1
  std::vector<unsigned char> row(n + 1, 0);
  next[n] = 1;  // past the last segment: only the end of the path
  for (std::size_t pi = segments_.size(); pi-- > 0;) {
    if (segments_[pi] == "**") {
      row[n] = next[n];
      for (std::size_t si = n; si-- > 0;) row[si] = (next[si] != 0 || row[si + 1] != 0) ? 1 : 0;
    } else {
      row[n] = 0;
      for (std::size_t si = n; si-- > 0;) {
        row[si] = (next[si + 1] != 0 && match_segment(segments_[pi], parts[si])) ? 1 : 0;
      }
    }
    row.swap(next);
  }
  return next[0] != 0;
}

bool glob_matches_name(std::string_view pattern, std::string_view name) {
  return match_segment(pattern, name);
}

bool glob_matches(std::string_view pattern, std::string_view path) {
  return Glob(pattern).matches(path);
}

}  // namespace toolmux
