// The header fields of a request cpp-httplib has parsed, looked up without
// its lookups: those build a std::string of the name and walk its multimap
// comparing through the C library's tolower, a call a character, which cost
// a tools/call over HTTP about 12,000 instructions for the dozen fields the
// checks read. These scan the few fields in order, comparing lengths first
// and ASCII case only (src/base/ascii.h). Repeated fields are in the order
// they were sent, as cpp-httplib keeps them: the first is the one
// cpp-httplib's get_header_value would give.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <httplib.h>

#include "src/base/ascii.h"

namespace toolmux::http_headers {

// The first value of field `name`; null when the request has none.
inline const std::string* find(const httplib::Headers& headers, std::string_view name) {
  for (const auto& [field, value] : headers) {
    if (ascii_iequals(field, name)) return &value;
  }
  return nullptr;
}

// The first value of field `name`; "" when the request has none.
inline std::string value(const httplib::Headers& headers, std::string_view name) {
  const std::string* found = find(headers, name);
  return found ? *found : std::string();
}

inline bool has(const httplib::Headers& headers, std::string_view name) {
  return find(headers, name) != nullptr;
}

// How many times field `name` was sent.
inline std::size_t count(const httplib::Headers& headers, std::string_view name) {
  std::size_t n = 0;
  for (const auto& entry : headers) {
    if (ascii_iequals(entry.first, name)) ++n;
  }
  return n;
}

}  // namespace toolmux::http_headers
