#include "catalog/json_schema.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <optional>
#include <regex>  // only to name the type of valijson's unused regex cache
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

// Without this valijson prints and calls abort() on a schema it cannot parse.
// Only this file includes valijson, so the setting is the same everywhere.
#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "catalog/bounded_regex.h"
#include "catalog/string_formats.h"
#include "catalog/untrusted_json.h"
#include "catalog/utf8.h"

namespace toolmux {

using nlohmann::json;

// valijson matches "pattern" and "patternProperties" with std::regex, whose
// matcher recurses once per character of the text (a long argument overflows
// the stack), and its "date"/"time"/"date-time" formats too. None of those
// keywords reaches valijson: the schema it compiles has them replaced by
// toolmux's own keywords (kPatternKeyword, kPatternPropertiesKeyword,
// kFormatKeyword), each naming an entry below, whose constraints match with
// BoundedRegex and check formats by hand.
struct PatternRule {
  std::shared_ptr<const BoundedRegex> regex;
  // The same schema's maxLength: a longer string fails that, and is not matched.
  std::optional<std::uint64_t> max_length;
};

struct PatternPropertiesRule {
  std::set<std::string> named;  // the same schema's "properties"
  std::vector<std::pair<std::shared_ptr<const BoundedRegex>, std::string>> patterns;  // -> pointer
  std::vector<std::unique_ptr<valijson::Schema>> pattern_schemas;  // one per pattern
  bool has_additional = false;                                     // "additionalProperties" present
  bool additional_false = false;
  std::string additional;  // its pointer, when a schema
  std::unique_ptr<valijson::Schema> additional_schema;
};

struct CompiledSchema::Impl {
  json source;    // as given
  json enforced;  // what valijson compiles (the keywords above replaced)
  valijson::Schema schema;
  std::vector<PatternRule> patterns;
  std::vector<PatternPropertiesRule> pattern_properties;
};

namespace {

constexpr std::size_t kMaxSchemaDepth = 256;

// toolmux's own keywords in the schema valijson compiles (CompiledSchema::Impl).
constexpr const char* kPatternKeyword = "x-toolmux-pattern";
constexpr const char* kPatternPropertiesKeyword = "x-toolmux-pattern-properties";
constexpr const char* kFormatKeyword = "x-toolmux-format";
constexpr const char* kPatternSchemas = "x-toolmux-pattern-schemas";
constexpr const char* kAdditionalSchema = "x-toolmux-additional-schema";
// An error description that is already the message to show after "<pointer>: ".
constexpr std::string_view kOwnMessage = "\x01toolmux\x01";

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
constexpr std::array<std::string_view, 17> kNotEnforced{
    "prefixItems",      "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
    "dependentSchemas", "minContains",           "maxContains",      "$anchor",
    "$dynamicRef",      "$dynamicAnchor",        "$recursiveRef",    "$recursiveAnchor",
    "$vocabulary",      "contentSchema",         "extends",          "disallow",
    "divisibleBy"};

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

// Names from a caller (property names) may be megabytes long: quote their start.
std::string json_quote(const std::string& text) {
  return json(clip_for_message(text)).dump(-1, ' ', false, json::error_handler_t::replace) +
         clipped_size_note(text);
}

std::string type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

// Short rendering of a value for a message.
std::string brief(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// Empty when `pattern` compiles, else PCRE2's reason.
std::string regex_problem(const std::string& pattern) {
  std::string error;
  return BoundedRegex::compile(pattern, error) ? std::string() : error;
}

// RFC 6901 tokens of a "#/..." reference, decoded the way valijson decodes them
// (~1, ~0, then %XX). nullopt (with a reason) when valijson would read it
// differently from the standard.
std::optional<std::vector<std::string>> ref_tokens(const std::string& ref, std::string& reason) {
  std::vector<std::string> tokens;
  if (ref == "#") return tokens;
  std::string_view rest = std::string_view(ref).substr(1);  // "/a/b"
  while (!rest.empty()) {
    rest.remove_prefix(1);  // '/'
    const std::size_t slash = rest.find('/');
    std::string raw(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    if (raw.empty()) {
      reason = "has an empty reference token";
      return std::nullopt;
    }
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else if (raw[i] == '~') {
        reason = "has an invalid ~ escape";
        return std::nullopt;
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
        reason = "has an invalid %-escape";
        return std::nullopt;
      }
      const int high = hex(token[i + 1]);
      const int low = hex(token[i + 2]);
      if (high < 0 || low < 0) {
        reason = "has an invalid %-escape";
        return std::nullopt;
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
const json* resolve(const json& root, const std::vector<std::string>& tokens,
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
      } else if (key.rfind("x-toolmux-", 0) == 0) {
        problem(at, "keyword " + json_quote(key) + " is reserved by toolmux");
      } else if (key == "$schema") {
        if (!value.is_string() || !is_standard_draft(value.get<std::string>())) {
          problem(at, "$schema " + brief(value) +
                          " is not a standard JSON Schema draft (draft-04, draft-06, draft-07, "
                          "2019-09 or 2020-12)");
        }
      } else if (one_of(kNotEnforced, key)) {
        problem(at, "keyword " + json_quote(key) + " is not enforced by toolmux's validator");
      } else if (has_ref && one_of(kEnforced, key)) {
        problem(at, "keyword " + json_quote(key) +
                        " next to $ref is not enforced by toolmux's validator; move it into "
                        "an allOf");
      }
      if (one_of(kSchemaMaps, key)) {
        if (!value.is_object()) {
          problem(at, json_quote(key) + " must be an object of schemas, got " + type_name(value));
          continue;
        }
        if (key == "patternProperties") pattern_properties_.push_back(pointer);
        for (auto member = value.begin(); member != value.end(); ++member) {
          const std::string member_at = at + "/" + pointer_token(member.key());
          if (key == "patternProperties") {
            const std::string why = regex_problem(member.key());
            if (!why.empty()) {
              problem(member_at, "pattern " + json_quote(member.key()) +
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
          problem(at, json_quote(key) + " must be a non-empty array of schemas");
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
          problem(at, "pattern " + json_quote(value.get<std::string>()) +
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
    if (text != "#" && text.rfind("#/", 0) != 0) {
      problem(at, "$ref " + json_quote(text) +
                      " refers outside the schema; only references inside the document "
                      "(#/...) are allowed");
      return;
    }
    std::string reason;
    const auto tokens = ref_tokens(text, reason);
    if (!tokens) {
      problem(at, "$ref " + json_quote(text) + " " + reason);
      return;
    }
    std::string target_pointer;
    const json* target = resolve(root_, *tokens, target_pointer);
    if (!target) {
      problem(at, "$ref " + json_quote(text) + " points at nothing");
      return;
    }
    if (!target->is_object() && !target->is_boolean()) {
      problem(at,
              "$ref " + json_quote(text) + " points at " + type_name(*target) + ", not a schema");
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

// ---- turning valijson's errors into messages ----

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
        std::string reason;
        const auto tokens = ref_tokens(ref->get<std::string>(), reason);
        std::string ignored;
        const json* target = tokens ? resolve(root_, *tokens, ignored) : nullptr;
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
    const json* target = resolve(value, tokens, ignored_pointer);
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
      return where + ": missing required property " + json_quote(quoted_name(d));
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
        names += json_quote(extra[i]);
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
      return where + ": missing property " + json_quote(quoted_name(d)) +
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
                 json_quote(name) + " is not allowed";
        }
      }
      return (tokens.empty() ? "" : where) + "/" + pointer_token(name) + ": property " +
             json_quote(name) + " does not match its schema (or is not allowed)";
    }
    if (starts_with(d, "Failed to validate against schema associated with pattern '")) {
      return where + ": a property matching " + json_quote(quoted_name(d)) +
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

// ---- the keywords toolmux checks itself (see CompiledSchema::Impl) ----

std::string shown_pattern(const std::string& pattern) { return brief(json(pattern)); }

class PatternCheck final : public valijson::constraints::PolyConstraint {
 public:
  explicit PatternCheck(const PatternRule* rule) : rule_(rule) {}

  bool validate(const valijson::adapters::Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString()) return true;
    const std::string text = target.asString();
    // maxLength first: a string too long for it is reported by it alone, and
    // never handed to the matcher.
    if (rule_->max_length && utf8_length(text) > *rule_->max_length) return true;
    switch (rule_->regex->search(text)) {
      case BoundedRegex::Match::found:
        return true;
      case BoundedRegex::Match::not_found:
        if (results) {
          results->pushError(context, "Failed to match regex specified by 'pattern' constraint.");
        }
        return false;
      case BoundedRegex::Match::too_costly:
        if (results) {
          results->pushError(context, std::string(kOwnMessage) +
                                          "could not be matched against the pattern " +
                                          shown_pattern(rule_->regex->pattern()) +
                                          " within toolmux's matching limits");
        }
        return false;
    }
    return false;
  }

 private:
  valijson::constraints::Constraint* cloneInto(void* memory) const override {
    return new (memory) PatternCheck(*this);
  }
  size_t sizeOf() const override { return sizeof(PatternCheck); }

  const PatternRule* rule_;
};

class FormatCheck final : public valijson::constraints::PolyConstraint {
 public:
  explicit FormatCheck(std::string format) : format_(std::move(format)) {}

  bool validate(const valijson::adapters::Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString()) return true;  // JSON Schema: a format applies to strings only
    const std::string text = target.asString();
    const bool ok = format_ == "date"   ? is_rfc3339_date(text)
                    : format_ == "time" ? is_rfc3339_time(text)
                                        : is_rfc3339_date_time(text);
    if (!ok && results) results->pushError(context, "String should be a valid " + format_);
    return ok;
  }

 private:
  valijson::constraints::Constraint* cloneInto(void* memory) const override {
    return new (memory) FormatCheck(*this);
  }
  size_t sizeOf() const override { return sizeof(FormatCheck); }

  std::string format_;
};

// "properties" + "patternProperties" + "additionalProperties" of one schema:
// valijson checks the named properties; this the rest, as valijson would.
class PatternPropertiesCheck final : public valijson::constraints::PolyConstraint {
 public:
  explicit PatternPropertiesCheck(const PatternPropertiesRule* rule) : rule_(rule) {}

  bool validate(const valijson::adapters::Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    using valijson::adapters::NlohmannJsonAdapter;
    if (!target.isObject()) return true;
    // valijson hands a constraint the adapter it validates with.
    const auto* object = dynamic_cast<const NlohmannJsonAdapter*>(&target);
    if (!object) {
      if (results) results->pushError(context, std::string(kOwnMessage) + "could not be checked");
      return false;
    }
    bool valid = true;
    bool reported_unknown = false;
    for (const auto& member : object->asObject()) {
      const std::string& name = member.first;
      std::vector<std::string> member_context = context;
      member_context.push_back("[" + name + "]");
      bool matched = rule_->named.count(name) > 0;
      for (std::size_t i = 0; i < rule_->patterns.size(); ++i) {
        const BoundedRegex& regex = *rule_->patterns[i].first;
        const BoundedRegex::Match match = regex.search(name);
        if (match == BoundedRegex::Match::not_found) continue;
        if (match == BoundedRegex::Match::too_costly) {
          if (results) {
            results->pushError(
                context, std::string(kOwnMessage) + "property name " + json_quote(name) +
                             " could not be matched against the pattern " +
                             shown_pattern(regex.pattern()) + " within toolmux's matching limits");
          }
          valid = false;
          matched = true;  // undecided: not reported again as an extra property
          continue;
        }
        matched = true;
        if (!validate_member(*rule_->pattern_schemas[i], member.second, member_context, results)) {
          if (results) {
            results->pushError(context,
                               "Failed to validate against schema associated with "
                               "pattern '" +
                                   regex.pattern() + "'.");
          }
          valid = false;
        }
      }
      if (matched || !rule_->has_additional) continue;
      if (rule_->additional_false) {
        if (results && !reported_unknown) {
          results->pushError(context,
                             "Object contains a property that could not be validated using "
                             "'properties' or 'additionalProperties' constraints: '" +
                                 name + "'.");
        }
        reported_unknown = true;
        valid = false;
      } else if (!validate_member(*rule_->additional_schema, member.second, member_context,
                                  results)) {
        if (results) {
          results->pushError(context, "Failed to validate against additional properties schema");
        }
        valid = false;
      }
    }
    return valid;
  }

 private:
  static bool validate_member(const valijson::Schema& schema,
                              const valijson::adapters::NlohmannJsonAdapter& value,
                              const std::vector<std::string>& context,
                              valijson::ValidationResults* results) {
    // The visitor wants std::regex's cache; no schema here leaves valijson a
    // pattern to use it for.
    std::unordered_map<std::string, std::regex> unused;
    valijson::ValidationVisitor<valijson::adapters::NlohmannJsonAdapter> visitor(
        value, context, true, results, unused);
    return visitor.validateSchema(schema);
  }

  valijson::constraints::Constraint* cloneInto(void* memory) const override {
    return new (memory) PatternPropertiesCheck(*this);
  }
  size_t sizeOf() const override { return sizeof(PatternPropertiesCheck); }

  const PatternPropertiesRule* rule_;
};

// Builds the constraints of toolmux's keywords, whose values index `impl`'s rules.
class RuleBuilder final : public valijson::ConstraintBuilder {
 public:
  enum class Kind { pattern, pattern_properties, format };
  RuleBuilder(const CompiledSchema::Impl& impl, Kind kind) : impl_(impl), kind_(kind) {}

  valijson::constraints::Constraint* make(const valijson::adapters::Adapter& value) const override {
    if (kind_ == Kind::format) return new FormatCheck(value.asString());
    const auto index = static_cast<std::size_t>(value.asInteger());
    if (kind_ == Kind::pattern) return new PatternCheck(&impl_.patterns.at(index));
    return new PatternPropertiesCheck(&impl_.pattern_properties.at(index));
  }

 private:
  const CompiledSchema::Impl& impl_;
  Kind kind_;
};

void populate(const CompiledSchema::Impl& impl, const json& document, valijson::Schema& schema) {
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  // The parser owns (and deletes) its builders.
  parser.addConstraintBuilder(kPatternKeyword, new RuleBuilder(impl, RuleBuilder::Kind::pattern));
  parser.addConstraintBuilder(kPatternPropertiesKeyword,
                              new RuleBuilder(impl, RuleBuilder::Kind::pattern_properties));
  parser.addConstraintBuilder(kFormatKeyword, new RuleBuilder(impl, RuleBuilder::Kind::format));
  valijson::adapters::NlohmannJsonAdapter adapter(document);
  parser.populateSchema(adapter, schema);  // no fetchDoc: nothing is ever fetched
}

// A "$ref" to `pointer`, escaped the way valijson decodes references.
std::string reference_to(const std::string& pointer) {
  std::string ref = "#";
  for (char c : pointer) {
    if (c == '%') {
      ref += "%25";
    } else {
      ref += c;
    }
  }
  return ref;
}

// Rewrites impl.enforced so that valijson never sees "pattern",
// "patternProperties" or "format", and fills impl's rules. Only keys of
// objects change, so every pointer (and every $ref) stays valid.
void replace_regex_keywords(CompiledSchema::Impl& impl, const SchemaChecker& checker) {
  json& enforced = impl.enforced;
  for (const std::string& position : checker.formats()) {
    json& node = enforced.at(json::json_pointer(position));
    const json& format = node["format"];
    // Other formats are annotations (valijson would still call asString on
    // every value, which throws for an object).
    if (format == "date" || format == "time" || format == "date-time") {
      node[kFormatKeyword] = format;
    }
    node.erase("format");
  }
  for (const std::string& position : checker.patterns()) {
    json& node = enforced.at(json::json_pointer(position));
    std::string ignored;
    PatternRule rule;
    rule.regex = BoundedRegex::compile(node["pattern"].get<std::string>(), ignored);
    auto max_length = node.find("maxLength");
    if (max_length != node.end() && max_length->is_number_unsigned()) {
      rule.max_length = max_length->get<std::uint64_t>();
    }
    node[kPatternKeyword] = impl.patterns.size();
    node.erase("pattern");
    impl.patterns.push_back(std::move(rule));
  }
  // Innermost first: renaming an outer schema's keys would break the pointers
  // of the schemas inside it.
  const auto& positions = checker.pattern_properties();
  impl.pattern_properties.resize(positions.size());
  for (std::size_t index = positions.size(); index-- > 0;) {
    const std::string& position = positions[index];
    json& node = enforced.at(json::json_pointer(position));
    PatternPropertiesRule rule;
    auto named = node.find("properties");
    if (named != node.end() && named->is_object()) {
      for (auto it = named->begin(); it != named->end(); ++it) rule.named.insert(it.key());
    }
    for (auto it = node["patternProperties"].begin(); it != node["patternProperties"].end(); ++it) {
      std::string ignored;
      rule.patterns.emplace_back(BoundedRegex::compile(it.key(), ignored),
                                 position + "/" + kPatternSchemas + "/" + pointer_token(it.key()));
    }
    auto additional = node.find("additionalProperties");
    if (additional != node.end() && *additional != true) {
      rule.has_additional = true;
      rule.additional_false = *additional == false;
      rule.additional = position + "/" + kAdditionalSchema;
    }
    // Kept under names valijson ignores, where the $refs below can reach them.
    node[kPatternPropertiesKeyword] = index;
    node[kPatternSchemas] = std::move(node["patternProperties"]);
    node.erase("patternProperties");
    if (additional != node.end()) {
      node[kAdditionalSchema] = std::move(node["additionalProperties"]);
      node.erase("additionalProperties");
    }
    impl.pattern_properties[index] = std::move(rule);
  }
  // The subschemas of patternProperties and additionalProperties, each
  // compiled as the whole document with a root "$ref" to it (valijson ignores
  // the siblings of $ref), so their own $refs resolve as in the original.
  const auto compile_at = [&impl](const std::string& pointer) {
    json document = impl.enforced;
    document["$ref"] = reference_to(pointer);
    auto schema = std::make_unique<valijson::Schema>();
    populate(impl, document, *schema);
    return schema;
  };
  for (PatternPropertiesRule& rule : impl.pattern_properties) {
    for (const auto& [regex, pointer] : rule.patterns) {
      (void)regex;
      rule.pattern_schemas.push_back(compile_at(pointer));
    }
    if (rule.has_additional && !rule.additional_false) {
      rule.additional_schema = compile_at(rule.additional);
    }
  }
}

}  // namespace

CompiledSchema::CompiledSchema(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledSchema::~CompiledSchema() = default;

const json& CompiledSchema::source() const { return impl_->source; }

std::shared_ptr<const CompiledSchema> CompiledSchema::compile(const json& schema,
                                                              Problems& problems) {
  Problems found;
  SchemaChecker checker(schema, found);
  checker.run();
  if (!found.empty()) {
    problems.insert(problems.end(), found.begin(), found.end());
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->source = schema;
  impl->enforced = schema;
  try {
    replace_regex_keywords(*impl, checker);
    populate(*impl, impl->enforced, impl->schema);
  } catch (const std::exception& error) {
    problems.push_back(Problem{"", std::string("schema does not compile: ") + error.what()});
    return nullptr;
  } catch (...) {
    problems.push_back(Problem{"", "schema does not compile"});
    return nullptr;
  }
  return std::shared_ptr<const CompiledSchema>(new CompiledSchema(std::move(impl)));
}

std::vector<std::string> CompiledSchema::validate(const json& value) const {
  struct Error {
    std::vector<std::string> tokens;
    std::string pointer;
    std::string description;
  };
  std::vector<Error> errors;
  try {
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter target(value);
    if (validator.validate(impl_->schema, target, &results)) return {};
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
      auto tokens = context_tokens(error.context);
      std::string pointer = pointer_of(tokens);
      errors.push_back(Error{std::move(tokens), std::move(pointer), error.description});
    }
  } catch (const std::exception& error) {
    return {std::string("/: could not be validated: ") + error.what()};
  }
  // Drop a wrapper when a specific error was reported at or below it.
  std::vector<std::string> specific;
  for (const Error& error : errors) {
    if (!is_wrapper(error.description)) specific.push_back(error.pointer);
  }
  const Translator translator{impl_->source, value};
  std::vector<std::string> messages;
  for (const Error& error : errors) {
    if (is_wrapper(error.description)) {
      const bool covered = std::any_of(specific.begin(), specific.end(), [&](const std::string& p) {
        return p.rfind(error.pointer, 0) == 0 &&
               (p.size() == error.pointer.size() || p[error.pointer.size()] == '/');
      });
      if (covered) continue;
    }
    std::string message = translator.message(error.tokens, error.description);
    if (std::find(messages.begin(), messages.end(), message) == messages.end()) {
      messages.push_back(std::move(message));
    }
  }
  if (messages.empty()) messages.push_back("/: does not match the schema");
  return messages;
}

}  // namespace toolmux
