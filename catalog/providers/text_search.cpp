#include "catalog/providers/text_search.h"

#include <algorithm>
#include <utility>

#include "catalog/providers/root_set.h"
#include "src/base/utf8.h"

namespace toolmux {

namespace {

char lower_char(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lower(std::string text) {
  for (char& c : text) c = lower_char(c);
  return text;
}

// `line` cut after kMaxLineChars characters, with "…" when cut.
std::string cut_line(std::string_view line) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < line.size(); ++chars) {
    if (chars == LineSearch::kMaxLineChars) return std::string(line.substr(0, i)) + "\xE2\x80\xA6";
    const Utf8Char c = decode_utf8(line, i);
    i += c.valid ? c.length : 1;
  }
  return std::string(line);
}

}  // namespace

Result<LineMatcher> LineMatcher::create(const std::string& query, bool regex, bool case_sensitive) {
  LineMatcher matcher;
  matcher.regex_mode_ = regex;
  matcher.case_sensitive_ = case_sensitive;
  if (!regex) {
    matcher.query_ = case_sensitive ? query : lower(query);
    return matcher;
  }
  RegexLimits limits;
  limits.match_limit = kRegexMatchLimit;
  auto compiled = BoundedRegex::compile(query, BoundedRegex::Flavour::pcre, case_sensitive, limits);
  if (!compiled.ok()) {
    return Status::invalid_argument("invalid regex " + quote_path(query) + ": " +
                                    compiled.message());
  }
  matcher.regex_ = std::move(compiled).value();
  return matcher;
}

LineMatcher::Match LineMatcher::matches(std::string_view line, bool& window_cut) const {
  if (!regex_mode_) {
    if (case_sensitive_) {
      return line.find(query_) != std::string_view::npos ? Match::hit : Match::miss;
    }
    const auto it = std::search(line.begin(), line.end(), query_.begin(), query_.end(),
                                [](char a, char b) { return lower_char(a) == b; });
    return it != line.end() ? Match::hit : Match::miss;
  }
  if (line.size() > kRegexWindowBytes) {
    // Not inside a UTF-8 character: the matcher takes valid UTF-8 only.
    line = utf8_prefix(line, kRegexWindowBytes);
    window_cut = true;
  }
  switch (regex_->search(line)) {
    case BoundedRegex::Match::found:
      return Match::hit;
    case BoundedRegex::Match::not_found:
      return Match::miss;
    case BoundedRegex::Match::too_costly:
      break;
  }
  return Match::unchecked;
}

bool search_lines(std::string_view text, const std::string& path, const LineMatcher& matcher,
                  CallContext& context, LineSearch& search) {
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    // A regex may spend up to its match limit on each line: look more often.
    if (line_number % (matcher.regex_mode() ? 64 : 4096) == 0 && context.cancelled()) {
      search.cancelled = true;
      return false;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    bool window_cut = false;
    const LineMatcher::Match result = matcher.matches(line, window_cut);
    if (window_cut) ++search.window_cut_lines;
    if (result == LineMatcher::Match::unchecked) ++search.unchecked_lines;
    if (result != LineMatcher::Match::hit) continue;
    if (search.hits.size() == search.max_results) {
      search.capped = true;
      return false;
    }
    search.hits.push_back({path, line_number, cut_line(line)});
  }
  return true;
}

}  // namespace toolmux
