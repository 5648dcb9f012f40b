// URI template matching (catalog/uri_template.h) on any template and URI.
// The input is the template, a NUL byte, then the URI.
//
// Invariants: a template whose variables cannot be listed matches nothing; a
// match gives a value for each variable and no other; each value is non-empty
// and a simple {name}'s has no '/', '?' or '#'; expanding the template with
// the values it matched gives back the URI (values are returned as they
// appear); and expanding a template with values the fuzzer picks gives a URI
// the template matches (not necessarily with the same split, but one that
// expands back to the same URI), unless it names a variable twice and the
// search gave up.
#include <map>
#include <set>
#include <string>

#include "catalog/uri_template.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using Values = std::map<std::string, std::string>;

// The template with each {name} and {+name} replaced by values[name]; the
// template is one match_uri_template reads (so braces are well formed).
std::string expand(std::string_view tmpl, const Values& values) {
  std::string out;
  std::size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] != '{') {
      out += tmpl[i++];
      continue;
    }
    const std::size_t close = tmpl.find('}', i);
    std::string_view name = tmpl.substr(i + 1, close - i - 1);
    if (!name.empty() && name.front() == '+') name.remove_prefix(1);
    out += values.at(std::string(name));
    i = close + 1;
  }
  return out;
}

// Whether every place `name` appears is {+name} (a value may then hold '/').
bool is_reserved(std::string_view tmpl, const std::string& name) {
  return tmpl.find("{" + name + "}") == std::string_view::npos;
}

void check_match(std::string_view tmpl, const std::vector<std::string>& names, std::string_view uri,
                 const Values& values) {
  FUZZ_CHECK(values.size() <= names.size(), "a match gives no variable the template lacks");
  for (const auto& name : names) {
    const auto it = values.find(name);
    FUZZ_CHECK(it != values.end(), "a match gives a value to every variable");
    FUZZ_CHECK(!it->second.empty(), "a matched value is not empty");
    if (!is_reserved(tmpl, name)) {
      FUZZ_CHECK(it->second.find_first_of("/?#") == std::string::npos,
                 "a simple variable's value has no '/', '?' or '#'");
    }
  }
  FUZZ_CHECK(expand(tmpl, values) == uri, "expanding the matched values gives back the URI");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = toolmux::fuzz::split_input(toolmux::fuzz::as_text(data, size), 2);
  const std::string_view tmpl = parts[0];
  const std::string_view uri = parts[1];

  const auto names = toolmux::uri_template_variables(tmpl);
  const auto matched = toolmux::match_uri_template(tmpl, uri);
  if (!names) {
    FUZZ_CHECK(!matched, "a template that cannot be read matches nothing");
    return 0;
  }
  if (matched) check_match(tmpl, *names, uri, *matched);

  // Expansion with values cut from the URI part: each variable gets the next
  // piece up to a ';' (a simple variable's piece stops at '/', '?' and '#'
  // too), or "v" when that piece is empty. The template matches the result.
  Values values;
  std::string_view rest = uri;
  for (const auto& name : *names) {
    const std::size_t cut = rest.find_first_of(is_reserved(tmpl, name) ? ";" : ";/?#");
    std::string value(rest.substr(0, cut));
    rest.remove_prefix(cut == std::string_view::npos ? rest.size() : cut + 1);
    values[name] = value.empty() ? "v" : value;
  }
  const std::string expanded = expand(tmpl, values);
  if (expanded.size() > 8192) return 0;  // over the URI bound, which matches nothing
  const auto rematched = toolmux::match_uri_template(tmpl, expanded);
  if (!rematched) {
    // One that names a variable twice may give up on a long search
    // (uri_template.h); other templates always find their match.
    const std::set<std::string> distinct(names->begin(), names->end());
    FUZZ_CHECK(distinct.size() < names->size(), "a template matches its own expansion");
    return 0;
  }
  check_match(tmpl, *names, expanded, *rematched);
  return 0;
}
