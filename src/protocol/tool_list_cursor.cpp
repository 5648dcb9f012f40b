#include "src/protocol/tool_list_cursor.h"

#include <charconv>

#include "src/base/base64.h"

namespace toolmux {
namespace {

constexpr std::string_view kPrefix = "toolmux-list:";
}  // namespace

std::string encode_tool_list_cursor(std::size_t offset) {
  return base64url_encode(std::string(kPrefix) + std::to_string(offset));
}

std::optional<std::size_t> decode_tool_list_cursor(std::string_view cursor) {
  if (cursor.size() > 64) return std::nullopt;
  auto text = base64url_decode(cursor);
  if (!text || text->rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string_view digits = std::string_view(*text).substr(kPrefix.size());
  std::size_t offset = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), offset);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return std::nullopt;
  }
  // Only canonical text decodes, so each page has exactly one cursor.
  if (encode_tool_list_cursor(offset) != cursor) return std::nullopt;
  return offset;
}

}  // namespace toolmux
