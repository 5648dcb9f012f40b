// The JSON boundary: parsing text that came from outside (a client message,
// tool arguments, a catalog file, tool output).
//
// Unlike a plain parser it never silently changes what it read: a repeated
// object key, a string that is not valid UTF-8, an escaped lone surrogate and
// nesting deeper than the limit are each reported as a violation with the JSON
// pointer of where it happened. The value is still built as far as possible
// (first occurrence of a repeated key kept, bad bytes and lone surrogates read
// as U+FFFD, containers past the depth limit read as null), so that a caller can
// still find, say, the id of a request whose arguments broke a rule.
// Thread-safe: no shared state.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/utf8.h"  // is_valid_utf8, which callers of this boundary use with it

namespace toolmux {

struct JsonLimits {
  std::size_t max_depth = 256;  // a value nested deeper is a violation
  // Past this depth the text is not parsed further: a syntax error. Bounds
  // the parser's own recursion: 1024 levels take about 0.5 MB of stack
  // (4 MB under AddressSanitizer, whose 4096 overflowed an 8 MB stack).
  std::size_t hard_depth = 1024;
  // Values (objects, arrays, strings, numbers, literals; keys are not values)
  // a text may hold; past it the text is not read further. Bounds the memory
  // a text takes once parsed (up to ~100 bytes a value: a message of tiny
  // objects takes 30 times its size) by its values, not its size, so large
  // strings (a file written through an argument) still pass.
  std::size_t max_values = 1'000'000;
};

struct JsonViolation {
  std::string pointer;  // where, e.g. "/params/arguments/name"
  std::string message;  // e.g. "repeated object key \"name\""
};

struct ParsedJson {
  nlohmann::json value;                   // null when syntax_error is set
  std::vector<JsonViolation> violations;  // boundary rules broken, in text order
  // Why the text was not read: "not JSON: <what> at byte N", or "too large:
  // more than N JSON values (the limit) at byte B" when max_values stopped it.
  std::optional<std::string> syntax_error;

  bool ok() const { return !syntax_error && violations.empty(); }
};

ParsedJson parse_untrusted_json(std::string_view text, const JsonLimits& limits = {});

// The value of `token` when the whole of it is a JSON number (RFC 8259's
// grammar: no leading zero, no '+', no bare '.'), read as parse_untrusted_json
// reads one: an integer when it fits int64 or uint64, else the nearest double
// (infinity or zero past a double's range). false, and `out` untouched, when
// it is not one.
bool read_json_number(std::string_view token, nlohmann::json& out);

// The violations at or below `pointer`, with `pointer` cut from the front of
// theirs (so "/params/arguments/x" under "/params/arguments" becomes "/x").
std::vector<JsonViolation> violations_under(const std::vector<JsonViolation>& violations,
                                            std::string_view pointer);

// The nesting depth of a value: a scalar is 0, [] or {} is 1, [[1]] is 2.
std::size_t json_depth(const nlohmann::json& value);

// Why `value` cannot be written as JSON text a client can read — a number that
// is not finite (NaN, infinity) or a string or key that is not valid UTF-8 —
// naming the first such place by its JSON pointer; nullopt when it can.
std::optional<std::string> unserializable_json(const nlohmann::json& value);

}  // namespace toolmux
