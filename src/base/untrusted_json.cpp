#include "src/base/untrusted_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "src/base/problem.h"
#include "src/base/scratch_vector.h"
#include "src/base/utf8.h"

namespace toolmux {

namespace {

using nlohmann::json;

constexpr std::string_view kReplacement = kUtf8Replacement;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string hex4(std::uint32_t unit) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kDigits[(unit >> shift) & 0xF];
  return out;
}

// The power of ten of the first significant digit of the valid JSON number
// in [first, last), e.g. 2 for 123.4 and -3 for 0.00123e0 (saturated far past
// any double's range); the number is not zero.
long long magnitude_exponent(const char* first, const char* last) {
  constexpr long long kSaturated = 1'000'000'000'000LL;  // beyond any digit count too
  const char* p = first;
  if (*p == '-') ++p;
  long long lead = 0;
  bool significant = false;
  for (; p < last && *p >= '0' && *p <= '9'; ++p) {
    if (significant) {
      ++lead;
    } else if (*p != '0') {
      significant = true;
    }
  }
  if (p < last && *p == '.') {
    long long place = 0;
    for (++p; p < last && *p >= '0' && *p <= '9'; ++p) {
      --place;
      if (!significant && *p != '0') {
        significant = true;
        lead = place;
      }
    }
  }
  long long exponent = 0;
  bool negative = false;
  if (p < last && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < last && (*p == '+' || *p == '-')) negative = *p++ == '-';
    for (; p < last && *p >= '0' && *p <= '9'; ++p) {
      exponent = std::min(exponent * 10 + (*p - '0'), kSaturated);
    }
  }
  return lead + (negative ? -exponent : exponent);
}

// The value of a JSON number already checked against the grammar (`integral`:
// it has no fraction and no exponent): an integer when one fits (int64, then
// uint64), else the nearest double. false when from_chars reads it otherwise.
bool number_value(std::string_view token, bool integral, json& out) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (integral) {
    std::int64_t signed_value = 0;
    auto [ptr, ec] = std::from_chars(first, last, signed_value);
    if (ec == std::errc() && ptr == last) {
      out = signed_value;
      return true;
    }
    if (*first != '-') {
      std::uint64_t unsigned_value = 0;
      auto [uptr, uec] = std::from_chars(first, last, unsigned_value);
      if (uec == std::errc() && uptr == last) {
        out = unsigned_value;
        return true;
      }
    }
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) {
    // Valid JSON whose magnitude no double holds: the nearest value.
    // from_chars leaves `value` unchanged; decide overflow vs underflow by
    // the magnitude (not by the exponent's sign: 0.000...1 has none).
    const bool tiny = magnitude_exponent(first, last) < 0;
    const bool negative = *first == '-';
    if (tiny) {
      value = negative ? -0.0 : 0.0;
    } else {
      value = negative ? -std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::infinity();
    }
  } else if (ec != std::errc() || ptr != last) {
    return false;
  }
  out = value;
  return true;
}

// How far the JSON number at `at` in `text` goes, by RFC 8259's grammar
// (no leading zero, no '+', no bare '.'), and whether it is integral (no
// fraction, no exponent); where the grammar breaks, `end` is there and `error`
// says what was expected.
struct NumberScan {
  std::size_t end = 0;
  bool integral = true;
  const char* error = nullptr;
};

NumberScan scan_number(std::string_view text, std::size_t at) {
  NumberScan scan{at};
  std::size_t& i = scan.end;
  const auto digit = [&] { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  // A run of digits, at least one; else `expected` is the error.
  const auto digits = [&](const char* expected) {
    if (!digit()) {
      scan.error = expected;
      return false;
    }
    while (digit()) ++i;
    return true;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
    if (digit()) {
      scan.error = "leading zero";
      return scan;
    }
  } else if (!digits("expected a digit")) {
    return scan;
  }
  if (i < text.size() && text[i] == '.') {
    scan.integral = false;
    ++i;
    if (!digits("expected a digit after '.'")) return scan;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    scan.integral = false;
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    digits("expected a digit in the exponent");
  }
  return scan;
}

struct SyntaxError {
  std::string what;
  std::size_t at;
  bool limit = false;  // a limit stopped the reading, the syntax may be fine
};

class Parser {
 public:
  Parser(std::string_view text, const JsonLimits& limits) : text_(text), limits_(limits) {}

  ParsedJson run() {
    ParsedJson result;
    try {
      skip_ws();
      std::string pointer;
      parse_value(result.value, pointer, 0, true);
      skip_ws();
      if (pos_ < text_.size()) fail("unexpected " + describe(pos_) + " after the value");
      result.violations = std::move(violations_);
    } catch (const SyntaxError& error) {
      result.value = nullptr;
      result.violations.clear();
      result.syntax_error = (error.limit ? "too large: " : "not JSON: ") + error.what +
                            " at byte " + std::to_string(error.at);
    }
    return result;
  }

 private:
  [[noreturn]] void fail(std::string what) { fail_at(std::move(what), pos_); }
  [[noreturn]] static void fail_at(std::string what, std::size_t at) {
    throw SyntaxError{std::move(what), at};
  }

  std::string describe(std::size_t at) const {
    if (at >= text_.size()) return "end of input";
    const auto c = static_cast<unsigned char>(text_[at]);
    if (c >= 0x80) {
      return decode_utf8(text_, at).valid ? "non-ASCII character outside a string"
                                          : "invalid UTF-8 outside a string";
    }
    if (c < 0x20 || c == 0x7F) {
      return "control character " + hex4(c).replace(0, 2, "U+");
    }
    return std::string("character '") + static_cast<char>(c) + "'";
  }

  void skip_ws() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  void violation(const std::string& pointer, std::string message) {
    violations_.push_back(JsonViolation{pointer, std::move(message)});
  }

  // `depth` is the number of containers around this value. `live` is false
  // inside a value that is being discarded (too deep, or a repeated key's
  // value): it is checked for syntax only.
  void parse_value(json& out, std::string& pointer, std::size_t depth, bool live) {
    if (pos_ >= text_.size()) fail("unexpected end of input");
    // Counted before the value is built: memory is bounded by the limit.
    if (++values_ > limits_.max_values) {
      throw SyntaxError{
          "more than " + std::to_string(limits_.max_values) + " JSON values (the limit)", pos_,
          true};
    }
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      const std::size_t my_depth = depth + 1;
      if (my_depth > limits_.hard_depth) {
        fail("nested deeper than " + std::to_string(limits_.hard_depth) + " levels");
      }
      bool build = live;
      if (live && my_depth > limits_.max_depth) {
        violation(pointer, "nested deeper than " + std::to_string(limits_.max_depth) + " levels");
        build = false;
      }
      if (c == '{') {
        parse_object(out, pointer, my_depth, build);
      } else {
        parse_array(out, pointer, my_depth, build);
      }
      if (!build) out = nullptr;
      return;
    }
    if (c == '"') {
      std::string value;
      parse_string(value, pointer, live);
      if (live) out = std::move(value);
      return;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      parse_number(out);
      return;
    }
    if (literal("true")) {
      out = true;
    } else if (literal("false")) {
      out = false;
    } else if (literal("null")) {
      out = nullptr;
    } else if (c >= 'a' && c <= 'z') {
      fail("invalid literal");
    } else {
      fail("unexpected " + describe(pos_));
    }
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  void parse_object(json& out, std::string& pointer, std::size_t depth, bool live) {
    ++pos_;  // '{'
    if (live) out = json::object();
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return;
    }
    const std::size_t base = pointer.size();
    while (true) {
      if (pos_ >= text_.size()) fail("unexpected end of input in an object");
      if (text_[pos_] != '"') fail("expected a string key, found " + describe(pos_));
      std::string key;
      parse_string(key, pointer, live, /*is_key=*/true);
      skip_ws();
      if (pos_ >= text_.size() || text_[pos_] != ':') {
        fail("expected ':' after an object key, found " + describe(pos_));
      }
      ++pos_;
      skip_ws();
      pointer += '/';
      append_pointer_token(pointer, key);
      if (live && out.contains(key)) {
        violation(pointer, "repeated object key \"" + key + "\"");
        json ignored;
        parse_value(ignored, pointer, depth, false);
      } else if (live) {
        json value;
        parse_value(value, pointer, depth, true);
        out.emplace(std::move(key), std::move(value));
      } else {
        json ignored;
        parse_value(ignored, pointer, depth, false);
      }
      pointer.resize(base);
      skip_ws();
      if (pos_ >= text_.size()) fail("unexpected end of input in an object");
      if (text_[pos_] == ',') {
        ++pos_;
        skip_ws();
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        return;
      }
      fail("expected ',' or '}' in an object, found " + describe(pos_));
    }
  }

  void parse_array(json& out, std::string& pointer, std::size_t depth, bool live) {
    ++pos_;  // '['
    if (live) out = json::array();
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return;
    }
    const std::size_t base = pointer.size();
    std::size_t index = 0;
    while (true) {
      pointer += '/';
      pointer += std::to_string(index++);
      json value;
      parse_value(value, pointer, depth, live);
      if (live) out.push_back(std::move(value));
      pointer.resize(base);
      skip_ws();
      if (pos_ >= text_.size()) fail("unexpected end of input in an array");
      if (text_[pos_] == ',') {
        ++pos_;
        skip_ws();
        continue;
      }
      if (text_[pos_] == ']') {
        ++pos_;
        return;
      }
      fail("expected ',' or ']' in an array, found " + describe(pos_));
    }
  }

  // Reads the \uXXXX at pos_ (pos_ at the backslash) and returns the unit.
  std::uint32_t read_u_escape() {
    const std::size_t start = pos_;
    if (pos_ + 6 > text_.size()) fail_at("incomplete \\u escape", start);
    std::uint32_t unit = 0;
    for (std::size_t i = pos_ + 2; i < pos_ + 6; ++i) {
      const int digit = hex_value(text_[i]);
      if (digit < 0) fail_at("invalid \\u escape (expected 4 hex digits)", start);
      unit = unit * 16 + static_cast<std::uint32_t>(digit);
    }
    pos_ += 6;
    return unit;
  }

  void parse_string(std::string& out, const std::string& pointer, bool live, bool is_key = false) {
    const std::size_t start = pos_;
    ++pos_;  // opening quote
    bool bad_utf8 = false;
    std::optional<std::uint32_t> lone_surrogate;
    while (true) {
      if (pos_ >= text_.size()) fail_at("unterminated string", start);
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        break;
      }
      if (c < 0x20) {
        fail("unescaped control character " + hex4(c).replace(0, 2, "U+") + " in a string");
      }
      if (c == '\\') {
        if (pos_ + 1 >= text_.size()) fail_at("unterminated string", start);
        const char e = text_[pos_ + 1];
        switch (e) {
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case '/':
            out += '/';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          case 'u': {
            const std::uint32_t unit = read_u_escape();
            if (unit >= 0xD800 && unit <= 0xDBFF) {
              // A high surrogate must be followed by an escaped low surrogate.
              if (pos_ + 1 < text_.size() && text_[pos_] == '\\' && text_[pos_ + 1] == 'u') {
                const std::size_t save = pos_;
                const std::uint32_t low = read_u_escape();
                if (low >= 0xDC00 && low <= 0xDFFF) {
                  append_utf8(out, 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
                  continue;
                }
                pos_ = save;  // read the next escape on its own
              }
              if (!lone_surrogate) lone_surrogate = unit;
              out += kReplacement;
            } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
              if (!lone_surrogate) lone_surrogate = unit;
              out += kReplacement;
            } else {
              append_utf8(out, unit);
            }
            continue;
          }
          default:
            fail("invalid escape sequence");
        }
        pos_ += 2;
        continue;
      }
      if (c < 0x80) {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      // An ill-formed sequence is replaced as a whole (its maximal subpart).
      const Utf8Char character = decode_utf8(text_, pos_);
      if (character.valid) {
        out.append(text_.substr(pos_, character.length));
      } else {
        bad_utf8 = true;
        out += kReplacement;
      }
      pos_ += character.length;
    }
    if (!live || (!bad_utf8 && !lone_surrogate)) return;
    const std::string where = is_key ? pointer + "/" + pointer_token(out) : pointer;
    if (bad_utf8) violation(where, "invalid UTF-8 in string");
    if (lone_surrogate) violation(where, "escaped lone surrogate " + hex4(*lone_surrogate));
  }

  void parse_number(json& out) {
    const std::size_t start = pos_;
    const NumberScan scan = scan_number(text_, pos_);
    pos_ = scan.end;
    if (scan.error) fail(std::string("invalid number (") + scan.error + ")");
    if (!number_value(text_.substr(start, pos_ - start), scan.integral, out)) {
      fail_at("invalid number", start);
    }
  }

  std::string_view text_;
  const JsonLimits& limits_;
  std::size_t pos_ = 0;
  std::size_t values_ = 0;
  std::vector<JsonViolation> violations_;
};

}  // namespace

ParsedJson parse_untrusted_json(std::string_view text, const JsonLimits& limits) {
  return Parser(text, limits).run();
}

bool read_json_number(std::string_view token, nlohmann::json& out) {
  const NumberScan scan = scan_number(token, 0);
  return !scan.error && scan.end == token.size() && number_value(token, scan.integral, out);
}

std::vector<JsonViolation> violations_under(const std::vector<JsonViolation>& violations,
                                            std::string_view pointer) {
  std::vector<JsonViolation> out;
  for (const JsonViolation& v : violations) {
    const std::string_view p = v.pointer;
    if (p.substr(0, pointer.size()) != pointer) continue;
    if (p.size() > pointer.size() && p[pointer.size()] != '/') continue;
    out.push_back(JsonViolation{std::string(p.substr(pointer.size())), v.message});
  }
  return out;
}

std::size_t json_depth(const nlohmann::json& value) {
  std::size_t deepest = 0;
  using Node = std::pair<const nlohmann::json*, std::size_t>;
  thread_local std::vector<Node> storage;
  ScratchVector<Node> scratch(storage);
  std::vector<Node>& stack = *scratch;
  stack.emplace_back(&value, 0);
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) {
      deepest = std::max(deepest, depth);
      continue;
    }
    deepest = std::max(deepest, depth + 1);
    for (const auto& child : *node) stack.emplace_back(&child, depth + 1);
  }
  return deepest;
}

std::optional<std::string> unserializable_json(const nlohmann::json& value) {
  // Depth first, with the path to the node at hand kept as the steps taken
  // (keys and indexes into the value itself): the pointer is spelled out only
  // for what is reported, not for every value of a result that is fine.
  struct Step {
    const nlohmann::json* node;
    std::size_t depth;  // 0 for `value` itself
    bool in_array;
    std::string_view key;
    std::size_t index;
  };
  thread_local std::vector<Step> stack_storage;
  thread_local std::vector<Step> path_storage;
  ScratchVector<Step> stack_scratch(stack_storage);
  ScratchVector<Step> path_scratch(path_storage);
  std::vector<Step>& stack = *stack_scratch;
  std::vector<Step>& path = *path_scratch;  // the steps from `value` down to the node at hand
  stack.push_back({&value, 0, false, {}, 0});
  auto where = [&path] {
    std::string pointer;
    for (const Step& step : path) {
      pointer += '/';
      if (step.in_array) {
        pointer += std::to_string(step.index);
      } else {
        append_pointer_token(pointer, step.key);
      }
    }
    return pointer.empty() ? std::string("/") : pointer;
  };
  while (!stack.empty()) {
    const Step step = stack.back();
    stack.pop_back();
    if (step.depth > 0) {
      path.resize(step.depth - 1);
      path.push_back(step);
    }
    const nlohmann::json& node = *step.node;
    if (node.is_number_float() && !std::isfinite(node.get<double>())) {
      return "a number that is not finite at " + where();
    }
    if (node.is_string() && !is_valid_utf8(node.get_ref<const std::string&>())) {
      return "a string that is not valid UTF-8 at " + where();
    }
    if (node.is_object()) {
      for (const auto& [key, child] : node.items()) {
        if (!is_valid_utf8(key)) return "a key that is not valid UTF-8 in " + where();
        stack.push_back({&child, step.depth + 1, false, key, 0});
      }
    } else if (node.is_array()) {
      for (std::size_t i = 0; i < node.size(); ++i) {
        stack.push_back({&node[i], step.depth + 1, true, {}, i});
      }
    }
  }
  return std::nullopt;
}

}  // namespace toolmux
