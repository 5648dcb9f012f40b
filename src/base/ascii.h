// ASCII-only text helpers for protocol tokens (HTTP header names, schemes,
// OAuth parameters), which compare without case by ASCII rules, never by
// locale. Pure functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace toolmux {

// `text` with A-Z turned to a-z; every other byte as it was.
std::string ascii_lower(std::string_view text);

// Whether `a` and `b` are the same but for the case of ASCII letters.
bool ascii_iequals(std::string_view a, std::string_view b);

// Whether `c` may be in an HTTP token (RFC 9110 §5.6.2 tchar): a header
// name, an authentication scheme, a parameter name.
bool is_http_token_char(char c);

}  // namespace toolmux
