#include "catalog/schema_fuzzer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "catalog/bounded_regex.h"
#include "catalog/string_formats.h"
#include "src/base/problem.h"
#include "src/base/utf8.h"

namespace toolmux {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxRefHops = 64;
// Schema positions read (allOf members, branches) in one generate_fuzz_cases.
constexpr std::size_t kMaxCollects = 1'000'000;
// Numbers beyond this are not exact in a double: bounds there are not fuzzed.
constexpr double kExactLimit = 9007199254740992.0;  // 2^53

// splitmix64: fully specified, so cases are the same on every platform
// (std::uniform_*_distribution are not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // In [0, n); 0 when n is 0.
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool chance(std::size_t one_in) { return below(one_in) == 0; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {  // inclusive, lo <= hi
    const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    if (span == UINT64_MAX) return static_cast<std::int64_t>(next());
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + next() % (span + 1));
  }

 private:
  std::uint64_t state_;
};

std::string quote(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string shown(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

std::string where(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

std::optional<double> number_at(const json& schema, const char* key) {
  auto it = schema.find(key);
  if (it == schema.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<std::size_t> count_at(const json& schema, const char* key) {
  auto it = schema.find(key);
  if (it == schema.end() || !it->is_number() || it->get<double>() < 0) return std::nullopt;
  const double value = it->get<double>();
  if (value > 1e15) return static_cast<std::size_t>(1e15);
  return static_cast<std::size_t>(std::ceil(value));
}

// The types a "type" keyword allows, or nullopt when there is none.
std::optional<std::vector<std::string>> types_of(const json& schema) {
  auto it = schema.find("type");
  if (it == schema.end()) return std::nullopt;
  std::vector<std::string> out;
  for (const json& t : it->is_array() ? *it : json::array({*it})) {
    if (t.is_string()) out.push_back(t.get<std::string>());
  }
  return out;
}

bool type_allows(const std::vector<std::string>& types, const json& value) {
  for (const std::string& t : types) {
    if (t == "integer" && value.is_number_integer()) return true;
    if (t == "number" && value.is_number()) return true;
    if (t == "string" && value.is_string()) return true;
    if (t == "boolean" && value.is_boolean()) return true;
    if (t == "null" && value.is_null()) return true;
    if (t == "array" && value.is_array()) return true;
    if (t == "object" && value.is_object()) return true;
  }
  return false;
}

// What a schema position says, with $ref followed and allOf merged: the rules
// that always apply ("must"), and the branches of which some apply.
struct View {
  json must = json::object();
  bool never = false;                                             // a false schema is part of it
  std::vector<std::vector<const json*>> any_of;                   // pick one of each (anyOf, oneOf)
  std::vector<std::pair<const json*, const json*>> conditionals;  // if, then (then may be null)
  std::string inexact;  // why a value built from it may still be refused
};

class Generator {
 public:
  Generator(const json& root, std::uint64_t seed, const FuzzLimits& limits)
      : root_(root), rng_(seed), limits_(limits) {}

  FuzzCases run(std::size_t count) {
    FuzzCases out;
    if (!root_.is_object() && !root_.is_boolean()) {
      out.skipped.push_back("/: the input schema is not a schema");
      return out;
    }
    std::set<std::string> skipped;
    std::set<std::string> impossible;
    for (std::size_t i = 0; i < count; ++i) {
      author_values_ = i == 0;
      nodes_ = 0;
      work_ = 0;
      inexact_.clear();
      failure_.reset();
      std::optional<json> value = generate(&root_, "", 0);
      if (value) {
        out.valid.push_back(FuzzValidCase{std::move(*value), inexact_.empty(), inexact_});
      } else if (failure_) {
        (failure_->impossible ? impossible : skipped).insert(failure_->message);
      }
    }
    for (const std::string& note : optional_notes_) skipped.insert(note);
    // A branch or an optional part that allows nothing is not a fault when
    // some case could be built.
    if (!out.valid.empty()) {
      skipped.insert(impossible.begin(), impossible.end());
      impossible.clear();
    }
    out.skipped.assign(skipped.begin(), skipped.end());
    out.impossible.assign(impossible.begin(), impossible.end());
    std::set<std::pair<std::string, std::string>> seen;
    for (const FuzzValidCase& valid : out.valid) {
      near_misses(valid.arguments, valid.arguments, &root_, "", 0, seen, out.near_misses);
    }
    return out;
  }

 private:
  struct Failure {
    std::string message;
    bool impossible;
  };

  // ---- reading the schema ----

  const json* deref(const json* schema) const {
    for (std::size_t hops = 0; hops < kMaxRefHops; ++hops) {
      if (!schema->is_object()) return schema;
      auto ref = schema->find("$ref");
      if (ref == schema->end() || !ref->is_string()) return schema;
      const std::string text = ref->get<std::string>();
      if (text == "#") {
        schema = &root_;
        continue;
      }
      if (text.rfind("#/", 0) != 0) return nullptr;
      // Unescape as the schema check does (~1, ~0, then %XX).
      std::string pointer;
      for (std::size_t i = 1; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(text[i + 1]) &&
            std::isxdigit(text[i + 2])) {
          pointer += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          pointer += text[i];
        }
      }
      try {
        schema = &root_.at(json::json_pointer(pointer));
      } catch (const std::exception&) {
        return nullptr;
      }
    }
    return nullptr;  // a chain of references this long is not followed
  }

  static void merge(json& must, const std::string& key, const json& value, std::string& inexact,
                    const std::string& pointer) {
    auto it = must.find(key);
    if (it == must.end()) {
      must[key] = value;
      return;
    }
    json& old = *it;
    static const std::set<std::string> kLower{"minimum", "exclusiveMinimum", "minLength",
                                              "minItems", "minProperties"};
    static const std::set<std::string> kUpper{"maximum", "exclusiveMaximum", "maxLength",
                                              "maxItems", "maxProperties"};
    if (key == "properties" && old.is_object() && value.is_object()) {
      for (auto p = value.begin(); p != value.end(); ++p) {
        if (old.contains(p.key())) {
          old[p.key()] = json{{"allOf", json::array({old[p.key()], p.value()})}};
        } else {
          old[p.key()] = p.value();
        }
      }
    } else if (key == "required" && old.is_array() && value.is_array()) {
      for (const json& name : value) {
        if (std::find(old.begin(), old.end(), name) == old.end()) old.push_back(name);
      }
    } else if ((kLower.count(key) || kUpper.count(key)) && old.is_number() && value.is_number()) {
      const bool lower = kLower.count(key) > 0;
      if (lower ? value.get<double>() > old.get<double>() : value.get<double>() < old.get<double>())
        old = value;
    } else if (key == "type") {
      std::vector<std::string> a = *types_of(must);
      std::vector<std::string> b = *types_of(json{{"type", value}});
      json both = json::array();
      for (const std::string& t : a) {
        for (const std::string& u : b) {
          if (t == u || (t == "number" && u == "integer")) both.push_back(u);
          if (t == "integer" && u == "number") both.push_back(t);
        }
      }
      old = both;
    } else if (key == "enum" && old.is_array() && value.is_array()) {
      json both = json::array();
      for (const json& v : old) {
        if (std::find(value.begin(), value.end(), v) != value.end()) both.push_back(v);
      }
      old = both;
    } else if ((key == "items" || key == "additionalProperties" || key == "additionalItems") &&
               old != value) {
      if (old == false || value == false) {
        old = false;
      } else {
        old = json{{"allOf", json::array({old, value})}};
      }
    } else if (old != value && key != "description" && key != "title" && key != "examples" &&
               key != "default" && key != "$comment") {
      inexact = where(pointer) + ": two \"" + key + "\" in one allOf";
    }
  }

  // Collects a schema position; `must_only` leaves branches out (for near misses).
  void collect(const json* schema, View& view, const std::string& pointer, std::size_t depth) {
    // allOf over $refs may fan out: each schema position's reading is bounded too.
    if (depth > kMaxRefHops || ++collects_ > kMaxCollects) {
      view.inexact = where(pointer) + ": allOf nested too deep or too wide";
      return;
    }
    schema = deref(schema);
    if (!schema) {
      view.inexact = where(pointer) + ": a $ref that could not be followed";
      return;
    }
    if (schema->is_boolean()) {
      if (!schema->get<bool>()) view.never = true;
      return;
    }
    if (!schema->is_object()) return;
    for (auto it = schema->begin(); it != schema->end(); ++it) {
      const std::string& key = it.key();
      const json& value = it.value();
      if (key == "allOf" && value.is_array()) {
        for (const json& sub : value) collect(&sub, view, pointer, depth + 1);
      } else if ((key == "anyOf" || key == "oneOf") && value.is_array() && !value.empty()) {
        std::vector<const json*> branches;
        for (const json& sub : value) branches.push_back(&sub);
        view.any_of.push_back(std::move(branches));
        if (key == "oneOf") view.inexact = where(pointer) + ": oneOf";
      } else if (key == "not") {
        view.inexact = where(pointer) + ": not";
      } else if (key == "if") {
        auto then = schema->find("then");
        view.conditionals.emplace_back(&value, then == schema->end() ? nullptr : &*then);
      } else if (key == "then" || key == "else") {
        continue;  // with "if"; a value that meets "if" and "then" meets the conditional
      } else if (key == "propertyNames" || key == "contains" || key == "dependencies" ||
                 key == "patternProperties") {
        merge(view.must, key, value, view.inexact, pointer);
        view.inexact = where(pointer) + ": " + key;
      } else if (key != "$ref" && key != "$defs" && key != "definitions") {
        merge(view.must, key, value, view.inexact, pointer);
      }
    }
  }

  // ---- valid values ----

  std::optional<json> fail(const std::string& pointer, const std::string& why, bool impossible) {
    if (!failure_) failure_ = Failure{where(pointer) + ": " + why, impossible};
    return std::nullopt;
  }

  std::optional<json> generate(const json* schema, const std::string& pointer, std::size_t depth) {
    if (depth > 2 * limits_.max_depth) {
      return fail(pointer,
                  "the schema requires values nested deeper than " +
                      std::to_string(2 * limits_.max_depth) +
                      " levels, more than the fuzzer builds",
                  false);
    }
    // Branches tried and given up on do not count as values, but as work.
    if (++nodes_ > limits_.max_nodes || ++work_ > 10 * limits_.max_nodes) {
      return fail(pointer,
                  "a case would hold more than " + std::to_string(limits_.max_nodes) + " values",
                  false);
    }
    View view;
    collect(schema, view, pointer, 0);
    // One branch of each anyOf/oneOf, tried in a random order until one can
    // be built; "if" and "then" together.
    return build_with_branches(view, 0, pointer, depth);
  }

  std::optional<json> build_with_branches(View view, std::size_t group, const std::string& pointer,
                                          std::size_t depth) {
    if (group == view.any_of.size()) {
      const auto conditionals = std::move(view.conditionals);
      view.conditionals.clear();
      for (const auto& [condition, then] : conditionals) {
        collect(condition, view, pointer, 1);
        if (then) collect(then, view, pointer, 1);
      }
      // Branches inside "if" or "then" are not chosen: the value may miss them.
      if (view.any_of.size() > group || !view.conditionals.empty()) {
        view.inexact = where(pointer) + ": anyOf, oneOf or if inside if/then";
      }
      if (!view.inexact.empty() && inexact_.empty()) inexact_ = view.inexact;
      return build(view, pointer, depth);
    }
    const auto& branches = view.any_of[group];
    const std::size_t start = rng_.below(branches.size());
    for (std::size_t k = 0; k < branches.size() && k < 8; ++k) {
      View chosen = view;
      collect(branches[(start + k) % branches.size()], chosen, pointer, 1);
      const std::size_t nodes = nodes_;
      auto saved = failure_;
      if (auto value = build_with_branches(std::move(chosen), group + 1, pointer, depth)) {
        failure_ = saved;
        return value;
      }
      nodes_ = nodes;
    }
    return std::nullopt;
  }

  // The schema's own examples and default, when this case uses them.
  std::optional<json> author_value(const json& must) {
    std::vector<json> values;
    auto examples = must.find("examples");
    if (examples != must.end() && examples->is_array()) {
      values.assign(examples->begin(), examples->end());
    }
    if (must.contains("default")) values.push_back(must["default"]);
    if (values.empty()) return std::nullopt;
    return values[rng_.below(values.size())];
  }

  std::optional<json> build(const View& view, const std::string& pointer, std::size_t depth) {
    const json& must = view.must;
    if (view.never) return fail(pointer, "the schema is false: no value is allowed", true);
    if (must.contains("const")) return must["const"];
    if (auto it = must.find("enum"); it != must.end() && it->is_array()) {
      if (it->empty()) return fail(pointer, "no value is in every \"enum\" that applies", true);
      return (*it)[rng_.below(it->size())];
    }
    if (author_values_ || rng_.chance(4)) {
      if (auto value = author_value(must)) return value;
    }
    std::vector<std::string> types;
    if (auto declared = types_of(must)) {
      types = *declared;
      if (types.empty()) return fail(pointer, "no type is allowed by every \"type\"", true);
    } else if (must.contains("properties") || must.contains("required")) {
      types = {"object"};
    } else if (must.contains("items") || must.contains("minItems") || must.contains("maxItems")) {
      types = {"array"};
    } else if (must.contains("pattern") || must.contains("minLength") ||
               must.contains("maxLength") || must.contains("format")) {
      types = {"string"};
    } else if (must.contains("minimum") || must.contains("maximum") ||
               must.contains("multipleOf") || must.contains("exclusiveMinimum") ||
               must.contains("exclusiveMaximum")) {
      types = {"number"};
    } else {
      types = {"string", "integer", "boolean", "null"};
    }
    const std::string type = types[rng_.below(types.size())];
    if (type == "null") return json(nullptr);
    if (type == "boolean") return json(rng_.chance(2));
    if (type == "integer" || type == "number") return number(must, type == "integer", pointer);
    if (type == "string") return string(must, pointer);
    if (type == "array") return array(must, pointer, depth);
    if (type == "object") return object(must, pointer, depth);
    return fail(pointer, "unknown type " + quote(type), false);
  }

  std::optional<json> number(const json& must, bool integer, const std::string& pointer) {
    const auto minimum = number_at(must, "minimum");
    const auto maximum = number_at(must, "maximum");
    const auto ex_min = number_at(must, "exclusiveMinimum");
    const auto ex_max = number_at(must, "exclusiveMaximum");
    for (const auto& bound : {minimum, maximum, ex_min, ex_max}) {
      if (bound && std::fabs(*bound) >= kExactLimit / 2) {
        if (inexact_.empty()) inexact_ = where(pointer) + ": bounds beyond 2^52";
        return json(0);
      }
    }
    // In whole numbers first.
    double lo = -1000;
    double hi = 1000;
    const bool has_lo = minimum || ex_min;
    const bool has_hi = maximum || ex_max;
    double lo_real = -1e300;
    double hi_real = 1e300;
    if (minimum) lo_real = *minimum;
    if (ex_min) lo_real = std::max(lo_real, *ex_min);
    if (maximum) hi_real = *maximum;
    if (ex_max) hi_real = std::min(hi_real, *ex_max);
    if (has_lo) {
      lo = std::max(minimum ? std::ceil(*minimum) : -1e300,
                    ex_min ? std::floor(*ex_min) + 1 : -1e300);
    }
    if (has_hi) {
      hi =
          std::min(maximum ? std::floor(*maximum) : 1e300, ex_max ? std::ceil(*ex_max) - 1 : 1e300);
    }
    if (has_lo && !has_hi) hi = lo + 1000;
    if (has_hi && !has_lo) lo = hi - 1000;
    const std::string range = "no " + std::string(integer ? "integer" : "number") +
                              " meets its bounds (minimum, maximum, exclusiveMinimum, "
                              "exclusiveMaximum)";
    if (auto m = number_at(must, "multipleOf"); m && *m > 0) {
      if (*m != std::floor(*m) && inexact_.empty()) {
        inexact_ = where(pointer) + ": multipleOf " + shown(must["multipleOf"]);
      }
      const double first = std::ceil(lo / *m);
      const double last = std::floor(hi / *m);
      if (first > last) {
        return fail(pointer, "no multiple of " + shown(must["multipleOf"]) + " meets its bounds",
                    true);
      }
      const double k = first + static_cast<double>(rng_.below(
                                   static_cast<std::size_t>(std::min(last - first, 1000.0)) + 1));
      const double value = k * *m;
      if (value == std::floor(value)) return json(static_cast<std::int64_t>(value));
      return json(value);
    }
    if (lo > hi) {
      // Only a fraction may lie between the bounds.
      const double mid = (lo_real + hi_real) / 2;
      const bool fits = (!minimum || mid >= *minimum) && (!ex_min || mid > *ex_min) &&
                        (!maximum || mid <= *maximum) && (!ex_max || mid < *ex_max);
      if (!integer && has_lo && has_hi && fits) return json(mid);
      return fail(pointer, range, true);
    }
    const std::int64_t value =
        rng_.between(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi));
    if (!integer && rng_.chance(3)) {
      const double half = static_cast<double>(value) + 0.5;
      if (half <= hi_real && half < (ex_max ? *ex_max : 1e300) && half >= lo_real) {
        return json(half);
      }
    }
    return json(value);
  }

  std::optional<json> string(const json& must, const std::string& pointer) {
    const std::size_t min_length = count_at(must, "minLength").value_or(0);
    const auto max_length = count_at(must, "maxLength");
    if (max_length && min_length > *max_length) {
      return fail(pointer,
                  "minLength " + std::to_string(min_length) + " is above maxLength " +
                      std::to_string(*max_length),
                  true);
    }
    if (auto pattern = must.find("pattern"); pattern != must.end() && pattern->is_string()) {
      // Never guessed: only the schema's own strings are known to be meant.
      std::vector<json> own;
      for (const char* key : {"examples", "default"}) {
        auto it = must.find(key);
        if (it == must.end()) continue;
        for (const json& v :
             it->is_array() && std::string(key) == "examples" ? *it : json::array({*it})) {
          if (v.is_string()) own.push_back(v);
        }
      }
      if (own.empty()) {
        return fail(pointer,
                    "no examples, default or enum to take a string matching the pattern " +
                        shown(*pattern) + " from (the fuzzer does not guess strings for patterns)",
                    false);
      }
      return own[rng_.below(own.size())];
    }
    if (min_length > limits_.max_chars) {
      return fail(pointer,
                  "minLength " + std::to_string(min_length) + " is above the " +
                      std::to_string(limits_.max_chars) + " characters the fuzzer builds",
                  false);
    }
    const std::string format = must.value("format", "");
    if (format == "date" || format == "time" || format == "date-time") {
      if (min_length > 0 || max_length) {
        if (inexact_.empty()) inexact_ = where(pointer) + ": format with length bounds";
      }
      const auto two = [](std::size_t n) {
        return std::string(1, static_cast<char>('0' + n / 10)) + static_cast<char>('0' + n % 10);
      };
      const std::string date = std::to_string(1970 + rng_.below(100)) + "-" +
                               two(1 + rng_.below(12)) + "-" + two(1 + rng_.below(28));
      const std::string time = two(rng_.below(24)) + ":" + two(rng_.below(60)) + ":" +
                               two(rng_.below(60)) + (rng_.chance(2) ? "Z" : "+02:00");
      if (format == "date") return json(date);
      if (format == "time") return json(time);
      return json(date + "T" + time);
    }
    std::size_t top = std::min(max_length.value_or(min_length + 12), min_length + 12);
    const std::size_t length = min_length + rng_.below(top - min_length + 1);
    // Letters, digits, punctuation and multi-byte characters: lengths count
    // code points, not bytes.
    static const std::vector<std::string> kAlphabet{
        "a", "b", "z", "A", "Q", "0", "7", " ", "_", "-", ".", "\xC3\xA9", "\xE6\x97\xA5"};
    std::string text;
    for (std::size_t i = 0; i < length; ++i) text += kAlphabet[rng_.below(kAlphabet.size())];
    return json(text);
  }

  std::optional<json> array(const json& must, const std::string& pointer, std::size_t depth) {
    const std::size_t min_items = count_at(must, "minItems").value_or(0);
    const auto max_items = count_at(must, "maxItems");
    if (max_items && min_items > *max_items) {
      return fail(pointer,
                  "minItems " + std::to_string(min_items) + " is above maxItems " +
                      std::to_string(*max_items),
                  true);
    }
    if (min_items > limits_.max_items) {
      return fail(pointer,
                  "minItems " + std::to_string(min_items) + " is above the " +
                      std::to_string(limits_.max_items) + " items the fuzzer builds",
                  false);
    }
    std::size_t count = min_items;
    if (depth < limits_.max_depth) {
      const std::size_t top = std::min(max_items.value_or(min_items + 3), min_items + 3);
      count = min_items + rng_.below(top - min_items + 1);
    }
    static const json kAny = true;
    const json* items = &kAny;
    const json* tuple = nullptr;
    if (auto it = must.find("items"); it != must.end()) {
      if (it->is_array()) {
        tuple = &*it;
      } else {
        items = &*it;
      }
    }
    const json* additional = &kAny;
    if (auto it = must.find("additionalItems"); it != must.end()) additional = &*it;
    if (tuple && count > tuple->size() && *additional == false) {
      if (min_items > tuple->size()) {
        return fail(pointer,
                    "minItems " + std::to_string(min_items) + " is above the " +
                        std::to_string(tuple->size()) +
                        " items \"items\" lists, and \"additionalItems\" is false",
                    true);
      }
      count = tuple->size();
    }
    const bool unique = must.value("uniqueItems", false);
    json out = json::array();
    for (std::size_t i = 0; i < count; ++i) {
      const json* schema = tuple ? (i < tuple->size() ? &(*tuple)[i] : additional) : items;
      const std::string at = pointer + "/" + std::to_string(i);
      std::optional<json> item;
      for (int attempt = 0; attempt < 4; ++attempt) {
        item = generate(schema, at, depth + 1);
        if (!item || !unique || std::find(out.begin(), out.end(), *item) == out.end()) break;
      }
      if (!item) return std::nullopt;
      if (unique && std::find(out.begin(), out.end(), *item) != out.end()) {
        if (out.size() >= min_items) break;
        if (inexact_.empty()) inexact_ = where(pointer) + ": uniqueItems";
      }
      out.push_back(std::move(*item));
    }
    return out;
  }

  std::optional<json> object(const json& must, const std::string& pointer, std::size_t depth) {
    static const json kAny = true;
    const json empty = json::object();
    const json& properties =
        must.contains("properties") && must["properties"].is_object() ? must["properties"] : empty;
    const json* additional = &kAny;
    if (auto it = must.find("additionalProperties"); it != must.end()) additional = &*it;
    const auto pattern_schema = [&](const std::string& name) -> const json* {
      auto patterns = must.find("patternProperties");
      if (patterns == must.end() || !patterns->is_object()) return nullptr;
      for (auto p = patterns->begin(); p != patterns->end(); ++p) {
        if (BoundedRegex::matches(p.key(), name).value_or(false)) return &p.value();
      }
      return nullptr;
    };
    const auto schema_of = [&](const std::string& name) -> const json* {
      if (properties.contains(name)) return &properties[name];
      if (const json* s = pattern_schema(name)) return s;
      return additional;
    };
    std::vector<std::string> names;
    if (auto required = must.find("required"); required != must.end() && required->is_array()) {
      for (const json& name : *required) {
        if (!name.is_string()) continue;
        const std::string n = name.get<std::string>();
        if (*schema_of(n) == false) {
          return fail(pointer,
                      "required property " + quote(n) +
                          (properties.contains(n)
                               ? " has the schema false"
                               : " is not in \"properties\" and \"additionalProperties\" "
                                 "is false"),
                      true);
        }
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
      }
    }
    const std::size_t required_count = names.size();
    if (auto most = count_at(must, "maxProperties"); most && required_count > *most) {
      return fail(pointer,
                  std::to_string(required_count) +
                      " required properties are more than maxProperties " + std::to_string(*most),
                  true);
    }
    if (depth < limits_.max_depth) {
      for (auto p = properties.begin(); p != properties.end(); ++p) {
        if (std::find(names.begin(), names.end(), p.key()) != names.end()) continue;
        if (p.value() == false) continue;
        if (author_values_ || rng_.chance(2)) names.push_back(p.key());
      }
    }
    const std::size_t fewest = count_at(must, "minProperties").value_or(0);
    for (std::size_t extra = 0; names.size() < fewest && extra < fewest + 8; ++extra) {
      std::string name;
      for (auto p = properties.begin(); p != properties.end() && name.empty(); ++p) {
        if (std::find(names.begin(), names.end(), p.key()) == names.end() && p.value() != false) {
          name = p.key();
        }
      }
      if (name.empty() && *additional != false) name = "extra_" + std::to_string(extra);
      if (name.empty()) {
        return fail(
            pointer,
            "minProperties " + std::to_string(fewest) + " is more than the properties it allows",
            true);
      }
      names.push_back(name);
    }
    if (auto most = count_at(must, "maxProperties"); most && names.size() > *most) {
      names.resize(std::max<std::size_t>(*most, required_count));
    }
    if (auto deps = must.find("dependencies"); deps != must.end() && deps->is_object()) {
      for (std::size_t i = 0; i < names.size() && i < 1000; ++i) {
        auto dep = deps->find(names[i]);
        if (dep == deps->end() || !dep->is_array()) continue;
        for (const json& needed : *dep) {
          if (needed.is_string() &&
              std::find(names.begin(), names.end(), needed.get<std::string>()) == names.end()) {
            names.push_back(needed.get<std::string>());
          }
        }
      }
    }
    json out = json::object();
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string at = pointer + "/" + pointer_token(names[i]);
      const bool required = i < required_count;
      const std::size_t nodes = nodes_;
      auto saved = failure_;
      std::optional<json> value = generate(schema_of(names[i]), at, depth + 1);
      if (!value) {
        if (required) return std::nullopt;
        // An optional property that cannot be built is left out.
        if (failure_ && !saved) optional_notes_.insert(failure_->message);
        failure_ = saved;
        nodes_ = nodes;
        continue;
      }
      out[names[i]] = std::move(*value);
    }
    return out;
  }

  // ---- near misses ----

  void add(const json& whole, const std::string& pointer, const std::string& rule,
           const std::function<void(json&)>& change,
           std::set<std::pair<std::string, std::string>>& seen, std::vector<FuzzNearMiss>& out) {
    if (out.size() >= limits_.max_near_misses) return;
    if (!seen.emplace(pointer, rule).second) return;
    json copy = whole;
    change(copy);
    out.push_back(FuzzNearMiss{std::move(copy), pointer, rule});
  }

  void near_misses(const json& whole, const json& value, const json* schema,
                   const std::string& pointer, std::size_t depth,
                   std::set<std::pair<std::string, std::string>>& seen,
                   std::vector<FuzzNearMiss>& out) {
    if (depth > limits_.max_depth || out.size() >= limits_.max_near_misses) return;
    View view;
    collect(schema, view, pointer, 0);
    const json& must = view.must;
    const json::json_pointer at(pointer);
    const auto set_to = [&](const json& replacement) {
      return [at, replacement](json& doc) { doc[at] = replacement; };
    };
    // The arguments object itself: absent, null and {} are one to the server.
    const bool root = pointer.empty();
    if (auto types = types_of(must); types && !types->empty() && !root) {
      for (const json& candidate : {json("not the right type"), json(7), json(0.5), json(true),
                                    json(nullptr), json::object(), json::array()}) {
        if (!type_allows(*types, candidate)) {
          std::string expected;
          for (const std::string& t : *types) expected += (expected.empty() ? "" : " or ") + t;
          add(whole, pointer, "wrong type (expected " + expected + ")", set_to(candidate), seen,
              out);
          break;
        }
      }
    }
    if (auto it = must.find("enum"); it != must.end() && it->is_array() && !it->empty() && !root) {
      json candidate = (*it)[0].is_string() ? json((*it)[0].get<std::string>() + "-not-listed")
                                            : json("not-listed");
      for (int i = 0; std::find(it->begin(), it->end(), candidate) != it->end() && i < 8; ++i) {
        candidate = candidate.get<std::string>() + "x";
      }
      if (std::find(it->begin(), it->end(), candidate) == it->end()) {
        add(whole, pointer, "not in enum", set_to(candidate), seen, out);
      }
    }
    if (auto it = must.find("const"); it != must.end() && !root) {
      const json candidate = *it == json("other") ? json("another") : json("other");
      add(whole, pointer, "not the const value", set_to(candidate), seen, out);
    }
    if (value.is_number()) number_misses(whole, value, must, pointer, seen, out);
    if (value.is_string()) string_misses(whole, must, pointer, seen, out);
    if (value.is_array()) {
      const auto min_items = count_at(must, "minItems");
      if (min_items && *min_items > 0 && *min_items <= value.size() + 1) {
        json shorter = value;
        shorter.erase(shorter.begin() + static_cast<std::ptrdiff_t>(*min_items - 1), shorter.end());
        add(whole, pointer, "fewer than minItems " + std::to_string(*min_items), set_to(shorter),
            seen, out);
      }
      const auto max_items = count_at(must, "maxItems");
      if (max_items && !value.empty() && *max_items < limits_.max_items) {
        json longer = value;
        while (longer.size() <= *max_items) longer.push_back(value.back());
        add(whole, pointer, "more than maxItems " + std::to_string(*max_items), set_to(longer),
            seen, out);
      }
      if (must.value("uniqueItems", false) && !value.empty() && value.size() < limits_.max_items) {
        json repeated = value;
        repeated.push_back(value.front());
        add(whole, pointer, "a repeated item (uniqueItems)", set_to(repeated), seen, out);
      }
      auto items = must.find("items");
      for (std::size_t i = 0; items != must.end() && i < value.size() && i < 3; ++i) {
        const json* item_schema =
            items->is_array() ? (i < items->size() ? &(*items)[i] : nullptr) : &*items;
        if (item_schema) {
          near_misses(whole, value[i], item_schema, pointer + "/" + std::to_string(i), depth + 1,
                      seen, out);
        }
      }
    }
    if (value.is_object()) {
      if (auto required = must.find("required"); required != must.end() && required->is_array()) {
        for (const json& name : *required) {
          if (!name.is_string() || !value.contains(name.get<std::string>())) continue;
          const std::string key = name.get<std::string>();
          add(
              whole, pointer + "/" + pointer_token(key), "missing required property",
              [at, key](json& doc) { doc[at].erase(key); }, seen, out);
        }
      }
      if (must.value("additionalProperties", json(true)) == false) {
        const std::string extra = "fuzz_extra_property";
        bool known = must.contains("properties") && must["properties"].is_object() &&
                     must["properties"].contains(extra);
        if (auto patterns = must.find("patternProperties");
            patterns != must.end() && patterns->is_object()) {
          for (auto p = patterns->begin(); p != patterns->end() && !known; ++p) {
            known = BoundedRegex::matches(p.key(), extra).value_or(true);
          }
        }
        if (!known && !value.contains(extra)) {
          add(
              whole, pointer + "/" + extra, "extra property (additionalProperties is false)",
              [at, extra](json& doc) { doc[at][extra] = "x"; }, seen, out);
        }
      }
      if (auto properties = must.find("properties");
          properties != must.end() && properties->is_object()) {
        for (auto p = properties->begin(); p != properties->end(); ++p) {
          if (!value.contains(p.key())) continue;
          near_misses(whole, value[p.key()], &p.value(), pointer + "/" + pointer_token(p.key()),
                      depth + 1, seen, out);
        }
      }
    }
  }

  void number_misses(const json& whole, const json& value, const json& must,
                     const std::string& pointer,
                     std::set<std::pair<std::string, std::string>>& seen,
                     std::vector<FuzzNearMiss>& out) {
    const json::json_pointer at(pointer);
    const bool integer_only = [&] {
      auto types = types_of(must);
      return types && std::find(types->begin(), types->end(), "number") == types->end();
    }();
    const auto emit = [&](const std::string& rule, double candidate) {
      if (std::fabs(candidate) >= kExactLimit) return;
      json replacement = candidate == std::floor(candidate)
                             ? json(static_cast<std::int64_t>(candidate))
                             : json(candidate);
      add(
          whole, pointer, rule, [at, replacement](json& doc) { doc[at] = replacement; }, seen, out);
    };
    const auto step = [&](double bound, bool down) {
      // A whole number just past the bound when one is allowed, else half a step.
      const double whole_step = down ? std::floor(bound) - 1 : std::ceil(bound) + 1;
      return integer_only || bound == std::floor(bound) ? whole_step : bound + (down ? -0.5 : 0.5);
    };
    if (auto m = number_at(must, "minimum"))
      emit("below minimum " + shown(must["minimum"]), step(*m, true));
    if (auto m = number_at(must, "maximum"))
      emit("above maximum " + shown(must["maximum"]), step(*m, false));
    if (auto m = number_at(must, "exclusiveMinimum")) {
      emit("not above exclusiveMinimum " + shown(must["exclusiveMinimum"]), *m);
    }
    if (auto m = number_at(must, "exclusiveMaximum")) {
      emit("not below exclusiveMaximum " + shown(must["exclusiveMaximum"]), *m);
    }
    if (auto m = number_at(must, "multipleOf"); m && *m > 0 && *m == std::floor(*m) && *m >= 2) {
      const double base = value.get<double>();
      const double candidate = base + 1;
      if (std::fmod(candidate, *m) != 0) {
        emit("not a multiple of " + shown(must["multipleOf"]), candidate);
      }
    }
  }

  void string_misses(const json& whole, const json& must, const std::string& pointer,
                     std::set<std::pair<std::string, std::string>>& seen,
                     std::vector<FuzzNearMiss>& out) {
    const json::json_pointer at(pointer);
    const auto replace = [&](const std::string& rule, const std::string& text) {
      json replacement = text;
      add(
          whole, pointer, rule, [at, replacement](json& doc) { doc[at] = replacement; }, seen, out);
    };
    if (auto n = count_at(must, "minLength"); n && *n > 0 && *n <= limits_.max_chars) {
      replace("under minLength " + std::to_string(*n), std::string(*n - 1, 'a'));
    }
    if (auto n = count_at(must, "maxLength"); n && *n < limits_.max_chars) {
      replace("over maxLength " + std::to_string(*n), std::string(*n + 1, 'a'));
    }
    if (auto pattern = must.find("pattern"); pattern != must.end() && pattern->is_string()) {
      const std::size_t min_length = count_at(must, "minLength").value_or(0);
      // Non-matching text that keeps to the length bounds when it can, so
      // that the pattern is the rule it breaks.
      for (const std::string& base : {std::string("~"), std::string("0"), std::string(" "),
                                      std::string("a"), std::string("/"), std::string("")}) {
        std::string text = base;
        while (!text.empty() && utf8_length(text) < min_length) text += base;
        if (BoundedRegex::matches(pattern->get<std::string>(), text) == false) {
          replace("not matching the pattern " + shown(*pattern), text);
          break;
        }
      }
    }
    const std::string format = must.value("format", "");
    if (format == "date" || format == "time" || format == "date-time") {
      replace("not a valid " + format, "not-a-" + format);
    }
  }

  const json& root_;
  Rng rng_;
  FuzzLimits limits_;
  bool author_values_ = false;
  std::size_t nodes_ = 0;
  std::size_t work_ = 0;      // generate() calls of this case, failed branches included
  std::size_t collects_ = 0;  // collect() calls, over the whole run
  std::string inexact_;
  std::optional<Failure> failure_;
  std::set<std::string> optional_notes_;
};

}  // namespace

FuzzCases generate_fuzz_cases(const json& schema, std::uint64_t seed, std::size_t count,
                              const FuzzLimits& limits) {
  Generator generator(schema, seed, limits);
  return generator.run(count);
}

}  // namespace toolmux
