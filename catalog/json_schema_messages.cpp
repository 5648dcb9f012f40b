#include "catalog/json_schema_messages.h"

#include <algorithm>
#include <array>
#include <exception>
#include <set>

#include "catalog/bounded_regex.h"
#include "catalog/json_schema_audit.h"
#include "catalog/json_schema_text.h"
#include "src/base/problem.h"
#include "src/base/utf8.h"

namespace toolmux::json_schema {

using nlohmann::json;

namespace {

// Marks a description that is already the message to show after "<pointer>: ".
constexpr std::string_view kOwnMessage = "\x01toolmux\x01";

std::vector<std::string> context_tokens(const std::vector<std::string>& context) {
  std::vector<std::string> tokens;
  for (const std::string& part : context) {
    if (part == "<root>") continue;
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') {
      tokens.push_back(part.substr(1, part.size() - 2));
    } else {
      tokens.push_back(part);
    }
  }
  return tokens;
}

std::string pointer_of(const std::vector<std::string>& tokens) {
  std::string pointer;
  for (const std::string& token : tokens) pointer += "/" + pointer_token(token);
  return pointer;
}

bool type_matches(const json& value, const std::string& type) {
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  return type_name(value) == type;
}

// The schemas that apply to the value at a pointer (following $ref, allOf,
// anyOf, oneOf, then, else and schema dependencies), used to name the rule a
// violation broke.
class Locator {
 public:
  explicit Locator(const json& root) : root_(root) {}

  std::vector<const json*> at(const json& value, const std::vector<std::string>& tokens) const {
    std::vector<const json*> current;
    expand(&root_, current);
    const json* instance = &value;
    for (const std::string& token : tokens) {
      std::vector<const json*> next;
      const json* child = nullptr;
      if (instance->is_object()) {
        auto it = instance->find(token);
        if (it != instance->end()) child = &*it;
        for (const json* schema : current) {
          if (!schema->is_object()) continue;
          bool matched = false;
          auto props = schema->find("properties");
          if (props != schema->end() && props->is_object() && props->contains(token)) {
            expand(&(*props)[token], next);
            matched = true;
          }
          auto patterns = schema->find("patternProperties");
          if (patterns != schema->end() && patterns->is_object()) {
            for (auto p = patterns->begin(); p != patterns->end(); ++p) {
              if (BoundedRegex::matches(p.key(), token).value_or(false)) {
                expand(&p.value(), next);
                matched = true;
              }
            }
          }
          auto additional = schema->find("additionalProperties");
          if (!matched && additional != schema->end()) expand(&*additional, next);
        }
      } else if (instance->is_array()) {
        std::size_t index = 0;
        try {
          index = std::stoull(token);
        } catch (const std::exception&) {
          return {};
        }
        if (index < instance->size()) child = &(*instance)[index];
        for (const json* schema : current) {
          if (!schema->is_object()) continue;
          auto items = schema->find("items");
          if (items == schema->end()) continue;
          if (items->is_array()) {
            if (index < items->size()) {
              expand(&(*items)[index], next);
            } else if (schema->contains("additionalItems")) {
              expand(&(*schema)["additionalItems"], next);
            }
          } else {
            expand(&*items, next);
          }
        }
      }
      if (!child) return {};
      instance = child;
      current = std::move(next);
    }
    return current;
  }

 private:
  void expand(const json* schema, std::vector<const json*>& out) const {
    std::vector<const json*> pending{schema};
    std::set<const json*> seen;
    while (!pending.empty()) {
      const json* node = pending.back();
      pending.pop_back();
      if (!seen.insert(node).second) continue;
      if (!node->is_object()) continue;
      auto ref = node->find("$ref");
      if (ref != node->end() && ref->is_string()) {
        const Result<std::vector<std::string>> tokens = ref_tokens(ref->get<std::string>());
        std::string ignored;
        const json* target = tokens.ok() ? resolve_tokens(root_, *tokens, ignored) : nullptr;
        if (target) pending.push_back(target);
        continue;
      }
      out.push_back(node);
      std::vector<const json*> children;
      for (std::string_view key : {"allOf", "anyOf", "oneOf"}) {
        auto it = node->find(key);
        if (it == node->end() || !it->is_array()) continue;
        for (const json& sub : *it) children.push_back(&sub);
      }
      for (std::string_view key : {"then", "else"}) {
        auto it = node->find(key);
        if (it != node->end()) children.push_back(&*it);
      }
      auto deps = node->find("dependencies");
      if (deps != node->end() && deps->is_object()) {
        for (const json& dep : *deps) {
          if (!dep.is_array()) children.push_back(&dep);
        }
      }
      pending.insert(pending.end(), children.rbegin(), children.rend());
    }
  }

  const json& root_;
};

// Returns the candidate schemas' values for `keyword` whose check fails for
// `value` (`fails` decides); when none fails, all values of the keyword.
template <typename Fails>
std::vector<json> keyword_values(const std::vector<const json*>& schemas, const char* keyword,
                                 Fails fails) {
  std::vector<json> failing;
  std::vector<json> all;
  for (const json* schema : schemas) {
    auto it = schema->find(keyword);
    if (it == schema->end()) continue;
    all.push_back(*it);
    if (fails(*it)) failing.push_back(*it);
  }
  return failing.empty() ? all : failing;
}

std::string number_text(const json& number) { return number.dump(); }

// "5.000000" (std::to_string) -> "5"
std::string trim_number(std::string text) {
  if (text.find('.') != std::string::npos) {
    while (!text.empty() && text.back() == '0') text.pop_back();
    if (!text.empty() && text.back() == '.') text.pop_back();
  }
  return text;
}

std::string after(const std::string& text, std::string_view prefix) {
  return text.substr(prefix.size());
}

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.rfind(prefix, 0) == 0;
}

// Text between the first pair of single quotes ('x').
std::string quoted_name(const std::string& text) {
  const std::size_t open = text.find('\'');
  const std::size_t close = text.rfind('\'');
  if (open == std::string::npos || close <= open) return "";
  return text.substr(open + 1, close - open - 1);
}

// Errors valijson adds on top of a more specific one.
bool is_wrapper(const std::string& description) {
  static constexpr std::array<std::string_view, 8> kWrappers{
      "Failed to validate item #",
      "Failed to validate against schema associated with",
      "Failed to validate against additional properties schema",
      "Failed to validate against child schema #",
      "Failed to validate against any schemas allowed by anyOf",
      "Failed to validate against any child schemas allowed by oneOf",
      "Failed to validate against a conditional schema",
      "Failed to validate against dependent schema"};
  for (std::string_view prefix : kWrappers) {
    if (starts_with(description, prefix)) return true;
  }
  return false;
}

std::string join_values(const std::vector<json>& values, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += separator;
    out += brief(values[i]);
  }
  return out;
}

struct Translator {
  const json& schema;
  const json& value;
  Locator locator{schema};

  std::string message(const std::vector<std::string>& tokens, const std::string& d) const {
    // Property names in the pointer are the caller's: its start is enough.
    const std::string where = tokens.empty() ? "/" : clip_for_message(pointer_of(tokens));
    std::string ignored_pointer;
    const json* target = resolve_tokens(value, tokens, ignored_pointer);
    const json& v = target ? *target : value;
    const auto schemas = [&] { return locator.at(value, tokens); };
    const std::string got = type_name(v);
    if (starts_with(d, kOwnMessage)) return where + ": " + after(d, kOwnMessage);

    if (d == "Value type not permitted by 'type' constraint.") {
      std::vector<std::string> expected;
      const auto types = keyword_values(schemas(), "type", [&](const json& t) {
        if (t.is_string()) return !type_matches(v, t.get<std::string>());
        if (t.is_array()) {
          return std::none_of(t.begin(), t.end(), [&](const json& one) {
            return one.is_string() && type_matches(v, one.get<std::string>());
          });
        }
        return false;
      });
      for (const json& t : types) {
        for (const json& one : t.is_array() ? t : json::array({t})) {
          if (one.is_string() && std::find(expected.begin(), expected.end(),
                                           one.get<std::string>()) == expected.end()) {
            expected.push_back(one.get<std::string>());
          }
        }
      }
      std::string list;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        if (i) list += i + 1 == expected.size() ? " or " : ", ";
        list += expected[i];
      }
      if (list.empty()) return where + ": " + got + " is not an allowed type here";
      return where + ": expected " + list + ", got " + got;
    }
    if (starts_with(d, "Missing required property '")) {
      return where + ": missing required property " + quote(quoted_name(d));
    }
    if (starts_with(d, "Object contains a property that could not be validated")) {
      // valijson names only the first; name them all.
      std::vector<std::string> extra;
      if (v.is_object()) {
        for (const json* s : schemas()) {
          auto additional = s->find("additionalProperties");
          if (additional == s->end() || *additional != false) continue;
          for (auto it = v.begin(); it != v.end(); ++it) {
            bool known = s->contains("properties") && (*s)["properties"].is_object() &&
                         (*s)["properties"].contains(it.key());
            auto patterns = s->find("patternProperties");
            if (!known && patterns != s->end() && patterns->is_object()) {
              for (auto p = patterns->begin(); p != patterns->end() && !known; ++p) {
                known = BoundedRegex::matches(p.key(), it.key()).value_or(false);
              }
            }
            if (!known && std::find(extra.begin(), extra.end(), it.key()) == extra.end()) {
              extra.push_back(it.key());
            }
          }
        }
      }
      if (extra.empty()) extra.push_back(quoted_name(d));
      std::string names;
      for (std::size_t i = 0; i < extra.size(); ++i) {
        if (i) names += ", ";
        names += quote(extra[i]);
      }
      return where + (extra.size() == 1 ? ": property " : ": properties ") + names +
             (extra.size() == 1 ? " is" : " are") + " not allowed";
    }
    if (d == "Failed to match against any enum values.") {
      const auto values = keyword_values(schemas(), "enum", [&](const json& e) {
        return e.is_array() && std::find(e.begin(), e.end(), v) == e.end();
      });
      if (values.empty() || !values.front().is_array()) {
        return where + ": " + brief(v) + " is not one of the allowed values";
      }
      std::vector<json> options(values.front().begin(), values.front().end());
      if (options.size() > 12) {
        options.resize(12);
        return where + ": must be one of " + join_values(options, ", ") + ", ... got " + brief(v);
      }
      return where + ": must be one of " + join_values(options, ", ") + ", got " + brief(v);
    }
    if (d == "Failed to match expected value set by 'const' constraint.") {
      const auto values = keyword_values(schemas(), "const", [&](const json& c) { return c != v; });
      if (values.empty()) return where + ": does not equal the required constant value";
      return where + ": must be " + brief(values.front()) + ", got " + brief(v);
    }
    struct Bound {
      std::string_view prefix;
      const char* keyword;
      const char* words;
    };
    static constexpr std::array<Bound, 4> kBounds{{
        {"Expected number less than or equal to ", "maximum", "at most"},
        {"Expected number less than ", "exclusiveMaximum", "less than"},
        {"Expected number greater than or equal to ", "minimum", "at least"},
        {"Expected number greater than ", "exclusiveMinimum", "greater than"},
    }};
    for (const Bound& bound : kBounds) {
      if (!starts_with(d, bound.prefix)) continue;
      std::string limit = trim_number(after(d, bound.prefix));
      const auto values =
          keyword_values(schemas(), bound.keyword, [](const json&) { return false; });
      for (const json& candidate : values) {
        if (candidate.is_number() &&
            trim_number(std::to_string(candidate.get<double>())) == limit) {
          limit = number_text(candidate);
          break;
        }
      }
      return where + ": must be " + bound.words + " " + limit + ", got " + brief(v);
    }
    if (starts_with(d, "Value should be a multiple of ")) {
      std::string divisor = trim_number(after(d, "Value should be a multiple of "));
      const auto values =
          keyword_values(schemas(), "multipleOf", [](const json&) { return false; });
      if (values.size() == 1 && values.front().is_number()) divisor = number_text(values.front());
      return where + ": must be a multiple of " + divisor + ", got " + brief(v);
    }
    struct Count {
      std::string_view prefix;
      const char* words;
      const char* unit;
    };
    static constexpr std::array<Count, 6> kCounts{{
        {"Array should contain no more than ", "at most", "items"},
        {"Array should contain no fewer than ", "at least", "items"},
        {"String should be no more than ", "at most", "characters"},
        {"String should be no fewer than ", "at least", "characters"},
        {"Object should have no more than ", "at most", "properties"},
        {"Object should have no fewer than ", "at least", "properties"},
    }};
    for (const Count& count : kCounts) {
      if (!starts_with(d, count.prefix)) continue;
      const std::string rest = after(d, count.prefix);
      const std::string limit = rest.substr(0, rest.find(' '));
      std::size_t actual = v.is_string() ? utf8_length(v.get<std::string>()) : v.size();
      const std::string unit = count.unit;
      if (unit == "characters") {
        return where + ": must be " + count.words + " " + limit + " characters long, got " +
               std::to_string(actual);
      }
      return where + ": must have " + count.words + " " + limit + " " + unit + ", got " +
             std::to_string(actual);
    }
    if (d == "Failed to match regex specified by 'pattern' constraint.") {
      const auto values = keyword_values(schemas(), "pattern", [&](const json& p) {
        return p.is_string() && v.is_string() &&
               !BoundedRegex::matches(p.get<std::string>(), v.get<std::string>()).value_or(true);
      });
      if (values.empty()) return where + ": does not match the required pattern";
      return where + ": does not match the pattern " + brief(values.front());
    }
    if (starts_with(d, "String should be a valid ")) {
      const auto values = keyword_values(schemas(), "format", [](const json&) { return false; });
      std::string format =
          values.empty() ? after(d, "String should be a valid ") : brief(values.front());
      if (!values.empty() && values.front().is_string()) format = values.front();
      return where + ": " + brief(v) + " is not a valid " + format + " (format \"" + format + "\")";
    }
    if (starts_with(d, "Elements at indexes #")) {
      std::string rest = after(d, "Elements at indexes #");
      const std::string first = rest.substr(0, rest.find(' '));
      const std::size_t hash = rest.find('#');
      const std::string second =
          hash == std::string::npos ? "?" : rest.substr(hash + 1, rest.find(' ', hash) - hash - 1);
      return where + ": items " + first + " and " + second + " are equal, but items must be unique";
    }
    if (starts_with(d, "Failed to any values against subschema in 'contains'")) {
      return where + ": no item matches the \"contains\" schema";
    }
    if (starts_with(d, "Target should not validate against schema specified in 'not'")) {
      return where + ": must not match the \"not\" schema";
    }
    if (d == "Failed to validate against exactly one child schema.") {
      return where + ": matches more than one of the \"oneOf\" schemas";
    }
    if (starts_with(d, "Missing dependency '")) {
      return where + ": missing property " + quote(quoted_name(d)) +
             ", required by \"dependencies\" when another property is present";
    }
    if (d == "Array contains more items than allowed by items constraint.") {
      return where + ": has more items than \"items\" lists, and \"additionalItems\" is false";
    }
    if (starts_with(d, "Cannot validate item #")) {
      return where + ": has more items than \"items\" lists, and \"additionalItems\" is false";
    }
    // Wrappers, kept only when nothing more specific was reported.
    if (starts_with(d, "Failed to validate item #")) {
      std::string rest = after(d, "Failed to validate item #");
      const std::string index = rest.substr(0, rest.find(' '));
      if (d.find("corresponding item schema") != std::string::npos) {
        return where + ": does not match its schema in \"items\"";
      }
      if (d.find("additional items schema") != std::string::npos) {
        return where + "/" + index + ": does not match the \"additionalItems\" schema";
      }
      return where + (tokens.empty() ? "" : "/") + index + ": does not match the \"items\" schema";
    }
    if (starts_with(d, "Failed to validate against schema associated with property name '")) {
      const std::string name = quoted_name(d);
      for (const json* s : schemas()) {
        auto props = s->find("properties");
        if (props != s->end() && props->is_object() && props->contains(name) &&
            (*props)[name] == false) {
          return (tokens.empty() ? "" : where) + "/" + pointer_token(name) + ": property " +
                 quote(name) + " is not allowed";
        }
      }
      return (tokens.empty() ? "" : where) + "/" + pointer_token(name) + ": property " +
             quote(name) + " does not match its schema (or is not allowed)";
    }
    if (starts_with(d, "Failed to validate against schema associated with pattern '")) {
      return where + ": a property matching " + quote(quoted_name(d)) +
             " does not match its schema in \"patternProperties\"";
    }
    if (starts_with(d, "Failed to validate against additional properties schema")) {
      return where + ": a property does not match the \"additionalProperties\" schema";
    }
    if (starts_with(d, "Failed to validate against child schema #")) {
      return where + ": does not match subschema #" +
             trim_number(after(d, "Failed to validate against child schema #")).substr(0, 4);
    }
    if (starts_with(d, "Failed to validate against any schemas allowed by anyOf")) {
      return where + ": matches none of the \"anyOf\" schemas";
    }
    if (starts_with(d, "Failed to validate against any child schemas allowed by oneOf")) {
      return where + ": matches none of the \"oneOf\" schemas";
    }
    if (starts_with(d, "Failed to validate against a conditional schema")) {
      return where + ": does not match the \"then\"/\"else\" schema its \"if\" selects";
    }
    if (starts_with(d, "Failed to validate against dependent schema")) {
      return where + ": does not match a schema in \"dependencies\"";
    }
    return where + ": " + d;
  }
};

}  // namespace

std::string own_message(std::string_view message) {
  return std::string(kOwnMessage) + std::string(message);
}

std::vector<std::string> schema_error_messages(const json& schema, const json& value,
                                               const std::vector<ValidatorError>& errors) {
  struct Error {
    std::vector<std::string> tokens;
    std::string pointer;
    const std::string* description;
  };
  std::vector<Error> located;
  for (const ValidatorError& error : errors) {
    auto tokens = context_tokens(error.context);
    std::string pointer = pointer_of(tokens);
    located.push_back(Error{std::move(tokens), std::move(pointer), &error.description});
  }
  // Drop a wrapper when a specific error was reported at or below it.
  std::vector<std::string> specific;
  for (const Error& error : located) {
    if (!is_wrapper(*error.description)) specific.push_back(error.pointer);
  }
  const Translator translator{schema, value};
  std::vector<std::string> messages;
  for (const Error& error : located) {
    if (is_wrapper(*error.description)) {
      const bool covered = std::any_of(specific.begin(), specific.end(), [&](const std::string& p) {
        return p.rfind(error.pointer, 0) == 0 &&
               (p.size() == error.pointer.size() || p[error.pointer.size()] == '/');
      });
      if (covered) continue;
    }
    std::string message = translator.message(error.tokens, *error.description);
    if (std::find(messages.begin(), messages.end(), message) == messages.end()) {
      messages.push_back(std::move(message));
    }
  }
  if (messages.empty()) messages.push_back("/: does not match the schema");
  return messages;
}

}  // namespace toolmux::json_schema
