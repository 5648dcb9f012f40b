#include "catalog/uri_template.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace toolmux {
namespace {

// Longer URIs match no template: the matcher's table is one bit per URI byte
// and template part, so this bounds its memory and time.
constexpr std::size_t kMaxMatchedUriBytes = 8192;
// Longer templates match nothing (a routable template has a handful of parts).
constexpr std::size_t kMaxTemplateParts = 256;
// Positions the search may try before it answers "no match" when a template
// names a variable more than once (about 1 ms). Only such a template can make
// the search backtrack: matching with repeated variables is NP-complete.
constexpr std::size_t kMaxSearchSteps = std::size_t{1} << 16;

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

struct Part {
  std::string literal;  // when name is empty
  std::string name;
  bool reserved = false;    // {+name}
  std::size_t var = kNone;  // the variable's index, in order of first appearance
  bool first = false;       // the variable's first appearance
};

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '%') {
      return false;
    }
  }
  return true;
}

std::optional<std::vector<Part>> parse(std::string_view tmpl) {
  std::vector<Part> parts;
  std::vector<std::string_view> names;
  std::size_t i = 0;
  while (i < tmpl.size()) {
    if (parts.size() == kMaxTemplateParts) return std::nullopt;
    if (tmpl[i] == '}') return std::nullopt;
    if (tmpl[i] != '{') {
      std::size_t next = tmpl.find_first_of("{}", i);
      if (next == std::string_view::npos) next = tmpl.size();
      Part literal;
      literal.literal = std::string(tmpl.substr(i, next - i));
      parts.push_back(std::move(literal));
      i = next;
      continue;
    }
    const std::size_t close = tmpl.find('}', i);
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view expr = tmpl.substr(i + 1, close - i - 1);
    Part var;
    if (!expr.empty() && expr[0] == '+') {
      var.reserved = true;
      expr.remove_prefix(1);
    }
    if (!valid_name(expr)) return std::nullopt;
    // Two variables in a row could split the text anywhere: not routable.
    if (!parts.empty() && !parts.back().name.empty()) return std::nullopt;
    var.name = std::string(expr);
    var.var = static_cast<std::size_t>(std::find(names.begin(), names.end(), expr) - names.begin());
    var.first = var.var == names.size();
    if (var.first) names.push_back(expr);
    parts.push_back(std::move(var));
    i = close + 1;
  }
  return parts;
}

// Where `literal` (not empty) occurs in `text`, as a bit per start position
// (Knuth-Morris-Pratt: linear in both, whatever they hold).
std::vector<bool> occurrences(std::string_view literal, std::string_view text) {
  std::vector<std::size_t> border(literal.size(), 0);
  for (std::size_t i = 1, k = 0; i < literal.size(); ++i) {
    while (k > 0 && literal[i] != literal[k]) k = border[k - 1];
    if (literal[i] == literal[k]) ++k;
    border[i] = k;
  }
  std::vector<bool> at(text.size() + 1, false);
  for (std::size_t i = 0, k = 0; i < text.size(); ++i) {
    while (k > 0 && text[i] != literal[k]) k = border[k - 1];
    if (text[i] == literal[k]) ++k;
    if (k == literal.size()) {
      at[i + 1 - k] = true;
      k = border[k - 1];
    }
  }
  return at;
}

// Matches one URI against one parsed template in two passes. First, a table
// (dynamic programming from the last part back): fits_[p][at] says whether
// parts p.. can match uri[at..] if each appearance of a variable could take
// its own value; that costs parts x URI length. Then a search in the old
// order (each variable's longest value first, so a trailing literal matches
// its last occurrence) that only tries positions the table allows: with
// distinct names the table is exact and the first try succeeds; a repeated
// name must take the same value again, which the table ignores, so the
// search may backtrack, and gives up (no match) after kMaxSearchSteps.
class Matcher {
 public:
  Matcher(const std::vector<Part>& parts, std::string_view uri)
      : parts_(parts), uri_(uri), simple_end_(uri.size() + 1, uri.size()) {
    for (std::size_t at = uri.size(); at-- > 0;) {
      const char c = uri[at];
      simple_end_[at] = (c == '/' || c == '?' || c == '#') ? at : simple_end_[at + 1];
    }
    fill_table();
  }

  std::optional<std::map<std::string, std::string>> run() {
    std::size_t vars = 0;
    bool repeats = false;
    for (const Part& part : parts_) {
      vars += part.first ? 1 : 0;
      repeats = repeats || (!part.name.empty() && !part.first);
    }
    values_.assign(vars, {0, 0});
    // Without a repeated name the first position the table allows succeeds:
    // the search is linear and needs no cap.
    budget_ = repeats ? kMaxSearchSteps : static_cast<std::size_t>(-1);
    if (!search(0, 0)) return std::nullopt;
    std::map<std::string, std::string> out;
    for (const Part& part : parts_) {
      if (part.first)
        out.emplace(part.name, uri_.substr(values_[part.var].first, values_[part.var].second));
    }
    return out;
  }

 private:
  // The end of the longest value a variable may take from `at` on.
  std::size_t value_end(const Part& part, std::size_t at) const {
    return part.reserved ? uri_.size() : simple_end_[at];
  }

  void fill_table() {
    const std::size_t n = uri_.size();
    fits_.assign(parts_.size() + 1, std::vector<bool>(n + 1, false));
    fits_[parts_.size()][n] = true;
    std::vector<std::size_t> next_fit(n + 2, kNone);  // the first s >= i where row p + 1 fits
    for (std::size_t p = parts_.size(); p-- > 0;) {
      const Part& part = parts_[p];
      const std::vector<bool>& after = fits_[p + 1];
      std::vector<bool>& row = fits_[p];
      if (part.name.empty()) {
        const std::size_t len = part.literal.size();
        if (len > n) continue;
        const std::vector<bool> found = occurrences(part.literal, uri_);
        for (std::size_t at = 0; at + len <= n; ++at) row[at] = found[at] && after[at + len];
        continue;
      }
      next_fit[n + 1] = kNone;
      for (std::size_t s = n + 1; s-- > 0;) next_fit[s] = after[s] ? s : next_fit[s + 1];
      // A value is one character or more.
      for (std::size_t at = 0; at < n; ++at) row[at] = next_fit[at + 1] <= value_end(part, at);
    }
  }

  bool spend(std::size_t steps) {
    if (steps > budget_) {
      budget_ = 0;
      return false;
    }
    budget_ -= steps;
    return true;
  }

  // Whether parts p.. match uri[at..] given the values bound so far (the
  // recursion is as deep as the template has parts, at most kMaxTemplateParts).
  bool search(std::size_t p, std::size_t at) {
    if (!fits_[p][at]) return false;
    if (p == parts_.size()) return true;
    const Part& part = parts_[p];
    if (part.name.empty()) return search(p + 1, at + part.literal.size());
    auto& [start, length] = values_[part.var];
    if (!part.first) {
      // Again the value it took first, and a value this appearance allows.
      if (at + length > value_end(part, at) || !spend(length)) return false;
      if (uri_.compare(at, length, uri_.substr(start, length)) != 0) return false;
      return search(p + 1, at + length);
    }
    for (std::size_t stop = value_end(part, at); stop > at; --stop) {
      if (!spend(1)) return false;
      if (!fits_[p + 1][stop]) continue;
      start = at;
      length = stop - at;
      if (search(p + 1, stop)) return true;
    }
    return false;
  }

  const std::vector<Part>& parts_;
  std::string_view uri_;
  std::vector<std::size_t> simple_end_;  // per position: where a simple value must end
  std::vector<std::vector<bool>> fits_;
  std::vector<std::pair<std::size_t, std::size_t>> values_;  // per variable: start, length
  std::size_t budget_ = 0;
};

}  // namespace

std::optional<std::map<std::string, std::string>> match_uri_template(std::string_view uri_template,
                                                                     std::string_view uri) {
  if (uri.size() > kMaxMatchedUriBytes) return std::nullopt;
  const auto parts = parse(uri_template);
  if (!parts) return std::nullopt;
  return Matcher(*parts, uri).run();
}

std::optional<std::vector<std::string>> uri_template_variables(std::string_view uri_template) {
  auto parts = parse(uri_template);
  if (!parts) return std::nullopt;
  std::vector<std::string> names;
  for (const Part& p : *parts) {
    if (!p.name.empty()) names.push_back(p.name);
  }
  return names;
}

}  // namespace toolmux
