#include "catalog/uri_template.h"

#include <cctype>

namespace toolmux {
namespace {

// Matching backtracks over each variable's length: longer URIs match no
// template, so a crafted one cannot make it slow.
constexpr std::size_t kMaxMatchedUriBytes = 8192;

struct Part {
  std::string literal;  // when name is empty
  std::string name;
  bool reserved = false;  // {+name}
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
  std::size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] == '}') return std::nullopt;
    if (tmpl[i] != '{') {
      std::size_t next = tmpl.find_first_of("{}", i);
      if (next == std::string_view::npos) next = tmpl.size();
      parts.push_back({std::string(tmpl.substr(i, next - i)), "", false});
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
    parts.push_back(std::move(var));
    i = close + 1;
  }
  return parts;
}

bool match_from(const std::vector<Part>& parts, std::size_t p, std::string_view uri, std::size_t at,
                std::map<std::string, std::string>& out) {
  if (p == parts.size()) return at == uri.size();
  const Part& part = parts[p];
  if (part.name.empty()) {
    if (uri.compare(at, part.literal.size(), part.literal) != 0) return false;
    return match_from(parts, p + 1, uri, at + part.literal.size(), out);
  }
  // The longest value first, so that a trailing literal matches its last occurrence.
  std::size_t end = at;
  while (end < uri.size() &&
         (part.reserved || (uri[end] != '/' && uri[end] != '?' && uri[end] != '#'))) {
    ++end;
  }
  for (std::size_t stop = end; stop > at; --stop) {
    // A variable named twice must take the same value at both places.
    const std::string_view value = uri.substr(at, stop - at);
    const auto [it, fresh] = out.try_emplace(part.name, value);
    if (!fresh && it->second != value) continue;
    if (match_from(parts, p + 1, uri, stop, out)) return true;
    if (fresh) out.erase(it);
  }
  return false;
}

}  // namespace

std::optional<std::map<std::string, std::string>> match_uri_template(std::string_view uri_template,
                                                                     std::string_view uri) {
  if (uri.size() > kMaxMatchedUriBytes) return std::nullopt;
  auto parts = parse(uri_template);
  if (!parts) return std::nullopt;
  std::map<std::string, std::string> values;
  if (!match_from(*parts, 0, uri, 0, values)) return std::nullopt;
  return values;
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
