// tools/list pagination cursors. Opaque to clients (MCP: a client must not
// parse or build them); a cursor this server did not mint decodes to nullopt.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace toolmux {

std::string encode_tool_list_cursor(std::size_t offset);
std::optional<std::size_t> decode_tool_list_cursor(std::string_view cursor);

}  // namespace toolmux
