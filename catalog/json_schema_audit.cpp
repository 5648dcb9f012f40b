#include "catalog/json_schema_audit.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "catalog/bounded_regex.h"
#include "catalog/json_schema_text.h"
#include "src/base/problem.h"

namespace toolmux::json_schema {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxSchemaDepth = 256;

// Subschemas nested, counting through $ref (valijson's own recursion).
constexpr std::size_t kMaxExpandedDepth = 256;

// Keywords that valijson's Draft 7 parser turns into constraints. Anything
// else is an annotation to it.
constexpr std::array<std::string_view, 33> kEnforced{"additionalItems",
                                                     "additionalProperties",
                                                     "allOf",
                                                     "anyOf",
                                                     "const",
                                                     "contains",
                                                     "dependencies",
                                                     "else",
                                                     "enum",
                                                     "exclusiveMaximum",
                                                     "exclusiveMinimum",
                                                     "format",
                                                     "if",
                                                     "items",
                                                     "maxItems",
                                                     "maxLength",
                                                     "maxProperties",
                                                     "maximum",
                                                     "minItems",
                                                     "minLength",
                                                     "minProperties",
                                                     "minimum",
                                                     "multipleOf",
                                                     "not",
                                                     "oneOf",
                                                     "pattern",
                                                     "patternProperties",
                                                     "properties",
                                                     "propertyNames",
                                                     "required",
                                                     "then",
                                                     "type",
                                                     "uniqueItems"};

// Standard keywords (of later drafts, or of draft 3) that the validator would
// silently ignore: a schema using them would not be enforced as written.
// ($anchor is not among them: it only names its schema for a "$ref": "#name",
// and such a $ref is refused, so an anchor changes nothing toolmux checks.)
constexpr std::array<std::string_view, 16> kNotEnforced{"prefixItems",      "unevaluatedProperties",
                                                        "unevaluatedItems", "dependentRequired",
                                                        "dependentSchemas", "minContains",
                                                        "maxContains",      "$dynamicRef",
                                                        "$dynamicAnchor",   "$recursiveRef",
                                                        "$recursiveAnchor", "$vocabulary",
                                                        "contentSchema",    "extends",
                                                        "disallow",         "divisibleBy"};

// JSON Schema 2020-12 (Core, 8.2.2): an anchor is a plain name,
// [A-Za-z_][-A-Za-z0-9._]*.
bool plain_name(const json& value) {
  if (!value.is_string()) return false;
  const auto& text = value.get_ref<const std::string&>();
  if (text.empty()) return false;
  const auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!letter(text[0]) && text[0] != '_') return false;
  return std::all_of(text.begin() + 1, text.end(), [&](char c) {
    return letter(c) || digit(c) || c == '_' || c == '-' || c == '.';
  });
}

constexpr std::array<std::string_view, 4> kSchemaMaps{"properties", "patternProperties", "$defs",
                                                      "definitions"};
constexpr std::array<std::string_view, 3> kSchemaArrays{"allOf", "anyOf", "oneOf"};
constexpr std::array<std::string_view, 8> kSingleSchemas{
    "not",      "if",           "then", "else", "additionalProperties", "additionalItems",
    "contains", "propertyNames"};

template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

bool is_standard_draft(std::string uri) {
  if (!uri.empty() && uri.back() == '#') uri.pop_back();
  for (const char* scheme : {"http://", "https://"}) {
    for (const char* draft : {"draft-04/schema", "draft-06/schema", "draft-07/schema",
                              "draft/2019-09/schema", "draft/2020-12/schema"}) {
      if (uri == std::string(scheme) + "json-schema.org/" + draft) return true;
    }
  }
  return false;
}

// Empty when `pattern` compiles, else PCRE2's reason.
std::string regex_problem(const std::string& pattern) {
  return BoundedRegex::compile(pattern).message();
}

// The pre-compilation check: knows which keywords hold subschemas and walks
// only those, so that data (enum, const, default, examples) and property names
// are never mistaken for keywords.
class SchemaChecker {
 public:
  SchemaChecker(const json& root, Problems& problems) : root_(root), problems_(problems) {}

  void run() {
    if (too_deep(root_, "", 0)) return;
    walk(root_, "");
    // $ref targets outside the walked positions are schemas too.
    for (std::size_t i = 0; i < refs_.size(); ++i) {
      const Ref ref = refs_[i];
      if (!ref.target) continue;
      if (!schemas_.count(ref.target_pointer)) walk(*ref.target, ref.target_pointer);
    }
    check_cycles();
    if (problems_.empty() && !refs_.empty()) check_expanded_depth();
  }

  // Schema positions with a "format" (a string).
  const std::vector<std::string>& formats() const { return formats_; }
  // Schema positions with a "pattern" (a string), and with "patternProperties".
  const std::vector<std::string>& patterns() const { return patterns_; }
  const std::vector<std::string>& pattern_properties() const { return pattern_properties_; }

 private:
  struct Ref {
    std::string at;      // pointer of the object holding $ref
    std::string text;    // the $ref value
    const json* target;  // null when unresolved or refused
    std::string target_pointer;
  };

  void problem(std::string pointer, std::string message) {
    problems_.push_back(Problem{std::move(pointer), std::move(message)});
  }

  // Bounded recursion (at most kMaxSchemaDepth + 1 levels).
  bool too_deep(const json& node, const std::string& pointer, std::size_t depth) {
    if (!node.is_structured()) return false;
    if (depth + 1 > kMaxSchemaDepth) {
      problem(pointer, "schema nested deeper than " + std::to_string(kMaxSchemaDepth) + " levels");
      return true;
    }
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (too_deep(it.value(), pointer + "/" + pointer_token(it.key()), depth + 1)) return true;
      }
    } else {
      std::size_t index = 0;
      for (const json& child : node) {
        if (too_deep(child, pointer + "/" + std::to_string(index++), depth + 1)) return true;
      }
    }
    return false;
  }

  void walk(const json& node, const std::string& pointer) {
    if (!schemas_.emplace(pointer, &node).second) return;
    if (node.is_boolean()) return;
    if (!node.is_object()) {
      problem(pointer, "a schema must be an object or a boolean, got " + type_name(node));
      return;
    }
    const bool has_ref = node.contains("$ref");
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string& key = it.key();
      const json& value = it.value();
      const std::string at = pointer + "/" + pointer_token(key);
      if (key == "$ref") {
        check_ref(value, pointer, at);
      } else if (key == "$id" || (key == "id" && value.is_string())) {
        problem(at, key + " " + brief(value) +
                        " is not allowed: a schema must be self-contained, without a base URI");
      } else if (key == "$anchor" && !plain_name(value)) {
        problem(at, "$anchor " + brief(value) +
                        " is not a plain name (a letter or _, then letters, digits, -, _ or .)");
      } else if (key.rfind("x-toolmux-", 0) == 0) {
        problem(at, "keyword " + quote(key) + " is reserved by toolmux");
      } else if (key == "$schema") {
        if (!value.is_string() || !is_standard_draft(value.get<std::string>())) {
          problem(at, "$schema " + brief(value) +
                          " is not a standard JSON Schema draft (draft-04, draft-06, draft-07, "
                          "2019-09 or 2020-12)");
        }
      } else if (one_of(kNotEnforced, key)) {
        problem(at, "keyword " + quote(key) + " is not enforced by toolmux's validator");
      } else if (has_ref && one_of(kEnforced, key)) {
        problem(at, "keyword " + quote(key) +
                        " next to $ref is not enforced by toolmux's validator; move it into "
                        "an allOf");
      }
      if (one_of(kSchemaMaps, key)) {
        if (!value.is_object()) {
          problem(at, quote(key) + " must be an object of schemas, got " + type_name(value));
          continue;
        }
        if (key == "patternProperties") pattern_properties_.push_back(pointer);
        for (auto member = value.begin(); member != value.end(); ++member) {
          const std::string member_at = at + "/" + pointer_token(member.key());
          if (key == "patternProperties") {
            const std::string why = regex_problem(member.key());
            if (!why.empty()) {
              problem(member_at, "pattern " + quote(member.key()) +
                                     " is not a valid regular expression: " + why);
            }
          }
          walk(member.value(), member_at);
        }
      } else if (key == "dependencies") {
        if (!value.is_object()) {
          problem(at, "\"dependencies\" must be an object, got " + type_name(value));
          continue;
        }
        for (auto member = value.begin(); member != value.end(); ++member) {
          if (!member.value().is_array()) {
            walk(member.value(), at + "/" + pointer_token(member.key()));
          }
        }
      } else if (key == "items") {
        if (value.is_array()) {
          for (std::size_t i = 0; i < value.size(); ++i) {
            walk(value[i], at + "/" + std::to_string(i));
          }
        } else {
          walk(value, at);
        }
      } else if (one_of(kSchemaArrays, key)) {
        if (!value.is_array() || value.empty()) {
          problem(at, quote(key) + " must be a non-empty array of schemas");
          continue;
        }
        for (std::size_t i = 0; i < value.size(); ++i) {
          walk(value[i], at + "/" + std::to_string(i));
        }
      } else if (one_of(kSingleSchemas, key)) {
        walk(value, at);
      } else if (key == "format" && value.is_string()) {
        formats_.push_back(pointer);
      } else if (key == "pattern" && value.is_string()) {
        patterns_.push_back(pointer);
        const std::string why = regex_problem(value.get<std::string>());
        if (!why.empty()) {
          problem(at, "pattern " + quote(value.get<std::string>()) +
                          " is not a valid regular expression: " + why);
        }
      }
    }
  }

  void check_ref(const json& value, const std::string& holder, const std::string& at) {
    if (!value.is_string()) {
      problem(at, "$ref must be a string, got " + type_name(value));
      return;
    }
    const std::string text = value.get<std::string>();
    if (text.size() > 1 && text[0] == '#' && text[1] != '/') {
      problem(at, "$ref " + quote(text) +
                      " names an anchor; toolmux follows only JSON pointers inside the "
                      "document (#/...): point at the anchored schema by its path");
      return;
    }
    if (text != "#" && text.rfind("#/", 0) != 0) {
      problem(at, "$ref " + quote(text) +
                      " refers outside the schema; only references inside the document "
                      "(#/...) are allowed");
      return;
    }
    const Result<std::vector<std::string>> tokens = ref_tokens(text);
    if (!tokens.ok()) {
      problem(at, "$ref " + quote(text) + " " + tokens.message());
      return;
    }
    std::string target_pointer;
    const json* target = resolve_tokens(root_, *tokens, target_pointer);
    if (!target) {
      problem(at, "$ref " + quote(text) + " points at nothing");
      return;
    }
    if (!target->is_object() && !target->is_boolean()) {
      problem(at, "$ref " + quote(text) + " points at " + type_name(*target) + ", not a schema");
      return;
    }
    ref_targets_[holder] = target_pointer;
    refs_.push_back(Ref{holder, text, target, target_pointer});
  }

  // The subschemas valijson builds from the schema at `pointer`. With
  // `same_value_only`, just those that validate the same value again (a cycle
  // of them never ends); otherwise all of them. $defs and definitions are
  // built only when referenced, so they are not children.
  std::vector<std::string> edges(const std::string& pointer, bool same_value_only) const {
    std::vector<std::string> out;
    auto found = schemas_.find(pointer);
    if (found == schemas_.end() || !found->second->is_object()) return out;
    const json& node = *found->second;
    if (node.contains("$ref")) {
      auto target = ref_targets_.find(pointer);
      if (target != ref_targets_.end()) out.push_back(target->second);
      return out;  // valijson ignores the siblings of $ref
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string& key = it.key();
      const json& value = it.value();
      const std::string at = pointer + "/" + pointer_token(key);
      const bool same_value = one_of(kSchemaArrays, key) || key == "not" || key == "if" ||
                              key == "then" || key == "else" || key == "dependencies";
      if (same_value_only && !same_value) continue;
      if (one_of(kSchemaArrays, key) || (key == "items" && value.is_array())) {
        if (!value.is_array()) continue;
        for (std::size_t i = 0; i < value.size(); ++i) out.push_back(at + "/" + std::to_string(i));
      } else if (key == "properties" || key == "patternProperties" || key == "dependencies") {
        if (!value.is_object()) continue;
        for (auto member = value.begin(); member != value.end(); ++member) {
          if (!member.value().is_array()) out.push_back(at + "/" + pointer_token(member.key()));
        }
      } else if (one_of(kSingleSchemas, key) || key == "items") {
        out.push_back(at);
      }
    }
    return out;
  }

  // valijson builds a schema by recursion, following $ref: a chain of
  // references can make that recursion far deeper than the document is
  // nested. Longest path from the root, not counting edges back into the
  // path (recursive schemas).
  void check_expanded_depth() {
    std::map<std::string, std::size_t> memo;  // pointer -> levels below, inclusive
    std::set<std::string> on_path;
    struct Frame {
      std::string pointer;
      std::vector<std::string> children;
      std::size_t deepest;
    };
    std::vector<Frame> stack;
    stack.push_back(Frame{"", edges("", false), 0});
    on_path.insert("");
    std::size_t result = 0;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.children.empty()) {
        const std::size_t levels = frame.deepest + 1;
        memo[frame.pointer] = levels;
        on_path.erase(frame.pointer);
        stack.pop_back();
        if (stack.empty()) {
          result = levels;
        } else {
          stack.back().deepest = std::max(stack.back().deepest, levels);
        }
        continue;
      }
      std::string next = std::move(frame.children.back());
      frame.children.pop_back();
      if (on_path.count(next)) continue;
      auto known = memo.find(next);
      if (known != memo.end()) {
        frame.deepest = std::max(frame.deepest, known->second);
        continue;
      }
      if (stack.size() > kMaxExpandedDepth) {
        result = stack.size() + 1;
        break;
      }
      on_path.insert(next);
      auto children = edges(next, false);
      stack.push_back(Frame{std::move(next), std::move(children), 0});
    }
    if (result > kMaxExpandedDepth) {
      problem("", "schema nested deeper than " + std::to_string(kMaxExpandedDepth) +
                      " levels once $ref is followed");
    }
  }

  void check_cycles() {
    if (refs_.empty()) return;
    // Iterative depth-first search; 1 = on the stack, 2 = done.
    std::map<std::string, int> state;
    std::set<std::string> reported;
    for (const auto& [start, node] : schemas_) {
      (void)node;
      if (state[start] != 0) continue;
      std::vector<std::pair<std::string, std::vector<std::string>>> stack;
      state[start] = 1;
      stack.emplace_back(start, edges(start, true));
      while (!stack.empty()) {
        auto& [current, pending] = stack.back();
        if (pending.empty()) {
          state[current] = 2;
          stack.pop_back();
          continue;
        }
        const std::string next = pending.back();
        pending.pop_back();
        const int seen = state[next];
        if (seen == 1) {
          // The cycle runs from `next` to `current`; blame its first $ref.
          std::string blame = current;
          for (auto it = stack.begin(); it != stack.end(); ++it) {
            if (it->first == next) {
              for (auto jt = it; jt != stack.end(); ++jt) {
                const json* schema = schemas_.at(jt->first);
                if (schema->is_object() && schema->contains("$ref")) {
                  blame = jt->first;
                  break;
                }
              }
              break;
            }
          }
          if (reported.insert(blame).second) {
            const json* schema = schemas_.at(blame);
            const std::string text =
                schema->is_object() && schema->contains("$ref") ? brief((*schema)["$ref"]) : "";
            problem(blame + (text.empty() ? "" : "/$ref"),
                    "$ref " + text +
                        " leads back to itself without descending into the value, so "
                        "validation would never end");
          }
        } else if (seen == 0) {
          state[next] = 1;
          stack.emplace_back(next, edges(next, true));
        }
      }
    }
  }

  const json& root_;
  Problems& problems_;
  std::map<std::string, const json*> schemas_;  // every walked schema position
  std::vector<Ref> refs_;
  std::map<std::string, std::string> ref_targets_;  // pointer of a $ref's object -> target
  std::vector<std::string> formats_;
  std::vector<std::string> patterns_;
  std::vector<std::string> pattern_properties_;
};

}  // namespace

// RFC 6901 tokens of a "#/..." reference, decoded the way valijson decodes them
// (~1, ~0, then %XX). Fails (with the reason) when valijson would read it
// differently from the standard.
Result<std::vector<std::string>> ref_tokens(const std::string& ref) {
  std::vector<std::string> tokens;
  if (ref == "#") return tokens;
  std::string_view rest = std::string_view(ref).substr(1);  // "/a/b"
  while (!rest.empty()) {
    rest.remove_prefix(1);  // '/'
    const std::size_t slash = rest.find('/');
    std::string raw(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    if (raw.empty()) {
      return Status::invalid_argument("has an empty reference token");
    }
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else if (raw[i] == '~') {
        return Status::invalid_argument("has an invalid ~ escape");
      } else {
        token += raw[i];
      }
    }
    std::string decoded;
    for (std::size_t i = 0; i < token.size(); ++i) {
      if (token[i] != '%') {
        decoded += token[i];
        continue;
      }
      const auto hex = [](char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      if (i + 2 >= token.size()) {
        return Status::invalid_argument("has an invalid %-escape");
      }
      const int high = hex(token[i + 1]);
      const int low = hex(token[i + 2]);
      if (high < 0 || low < 0) {
        return Status::invalid_argument("has an invalid %-escape");
      }
      decoded += static_cast<char>(high * 16 + low);
      i += 2;
    }
    tokens.push_back(std::move(decoded));
  }
  return tokens;
}

// Resolves tokens in `root`; returns the node and sets `pointer` to its
// canonical JSON pointer, or null when there is nothing there.
const json* resolve_tokens(const json& root, const std::vector<std::string>& tokens,
                           std::string& pointer) {
  const json* node = &root;
  pointer.clear();
  for (const std::string& token : tokens) {
    if (node->is_object()) {
      auto it = node->find(token);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array()) {
      if (token.empty() || token.size() > 18 ||
          !std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          (token.size() > 1 && token[0] == '0')) {
        return nullptr;
      }
      const std::size_t index = std::stoull(token);
      if (index >= node->size()) return nullptr;
      node = &(*node)[index];
    } else {
      return nullptr;
    }
    pointer += '/';
    pointer += pointer_token(token);
  }
  return node;
}

std::optional<OwnKeywordPositions> audit_schema(const json& schema, Problems& problems) {
  Problems found;
  SchemaChecker checker(schema, found);
  checker.run();
  if (!found.empty()) {
    problems.insert(problems.end(), found.begin(), found.end());
    return std::nullopt;
  }
  return OwnKeywordPositions{checker.formats(), checker.patterns(), checker.pattern_properties()};
}

}  // namespace toolmux::json_schema
