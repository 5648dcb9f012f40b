// The JSON Schema string formats toolmux asserts: "date", "time" and
// "date-time" of RFC 3339 (section 5.6), checked by a linear scan of the
// text (no regular expression, so no length of text costs more than reading
// it). A date must exist (February 29 only in leap years); a time may carry a
// leap second (:60) and must carry an offset (Z or +hh:mm / -hh:mm).
#pragma once

#include <string_view>

namespace toolmux {

bool is_rfc3339_date(std::string_view text);
bool is_rfc3339_time(std::string_view text);
bool is_rfc3339_date_time(std::string_view text);

}  // namespace toolmux
