// JSON text written as it is produced, with no tree between: for records of
// the hot path (the log's LogFields, the audit trail) whose shape is fixed;
// and append_json, a tree written as text the way the transports send it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace toolmux {

// Appends `text` as a JSON string, its bad UTF-8 replaced by U+FFFD; control
// characters escaped, nothing else (non-ASCII stays as it is).
void append_json_string(std::string& out, std::string_view text);
// Appends `value` in the shortest form that reads back the same; a number that
// is not finite as null.
void append_json_number(std::string& out, double value);
void append_json_number(std::string& out, std::int64_t value);
void append_json_number(std::string& out, std::uint64_t value);
// Appends a duration of `ms` milliseconds rounded to the microsecond, e.g.
// 12.5 or 0.031 (integer arithmetic: a tenth of the cost of the shortest
// form of a double, on every call's record); past 2^53 microseconds, or not
// finite, as append_json_number writes it.
void append_json_milliseconds(std::string& out, double ms);
// `ms` rounded to the microsecond: a duration append_json_milliseconds writes
// as the shortest form of the same double would.
double to_the_microsecond(double ms);

// Appends `value` as compact JSON text: byte for byte what value.dump()
// writes (the same escapes), and where a string is not UTF-8, each ill-formed
// sequence replaced by one U+FFFD (where dump() throws). Strings go through append_json_string,
// which appends runs of plain bytes at once where nlohmann decodes every byte. Numbers that are not
// integers are written by nlohmann (1.0 stays 1.0). No recursion: a stack of the containers open.
void append_json(std::string& out, const nlohmann::json& value);
// append_json into a new string.
std::string json_text(const nlohmann::json& value);

}  // namespace toolmux
