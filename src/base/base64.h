// Base64 (RFC 4648): the standard alphabet with padding, for bytes carried in
// JSON; the URL-safe alphabet without padding, for ids and cursors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toolmux {

std::string base64_encode(std::string_view bytes);
std::string base64url_encode(std::string_view bytes);
// nullopt on any character outside the URL-safe alphabet.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace toolmux
