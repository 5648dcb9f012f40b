// MCP's shape of a tool result (schema 2025-11-25: CallToolResult and the
// ContentBlocks it holds), checked where a result crosses a boundary: a
// tool's result in the call pipeline (src/pipeline/check_result.h) and
// an upstream server's answer to tools/call (src/upstream/mcp_client.h), so that both
// follow one set of rules. Only the shape: whether text is valid UTF-8 and
// structuredContent matches an outputSchema are check_result's to judge.
// Pure functions; flat checks of a block's own fields, no recursion.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "src/base/status.h"

namespace toolmux {

// Why `content` is not a list of MCP content blocks (text, image, audio,
// resource_link, resource, each with its required fields, and the fields it
// has of the right types), starting with the JSON pointer of the place from
// the result: `/content/0/text must be a string (it is a number)`. nullopt
// when it is one.
std::optional<std::string> content_problem(const nlohmann::json& content);

// The text of a text block ({"type": "text", "text": "..."}), pointing into
// `block`; nullptr when `block` is not one.
const std::string* text_of_block(const nlohmann::json& block);

// Why `structured` cannot be a result's structuredContent (MCP: an object),
// or nullopt. Null (no structuredContent) is fine.
std::optional<std::string> structured_content_problem(const nlohmann::json& structured);

// Reads a CallToolResult as a peer sent it. Fails (invalid_argument) when it
// breaks MCP's shape: not an object, content missing or not an array, a
// content block as content_block_problem says, structuredContent that is not
// an object, isError that is not a boolean, _meta that is not an object. The
// message starts with the JSON pointer below the result:
// `/isError must be a boolean (it is a string)`.
Result<ToolResult> read_tool_result(const nlohmann::json& result);

}  // namespace toolmux
