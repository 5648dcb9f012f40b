// The result limits of the catalog's "results" section (catalog/result_limits.h)
// applied to one tool result as a whole: every content block and
// structuredContent, not only text. The limit_result stage of the call
// pipeline runs it on every result but read_tool_result's pages.
//
//   1. Each block alone. A text over offload_threshold_bytes is stored and
//      replaced by its first 2000 characters and a notice with its result id;
//      a text over max_text_chars is cut, with a marker. Binary data (an
//      image's or audio clip's data, an embedded resource's blob) or an
//      embedded resource's text over the threshold is stored, and the block
//      replaced by a text block that says what it was (kind, MIME type, size)
//      and how to read it back.
//   2. structuredContent, whole or not at all: over the threshold, over
//      max_text_chars characters, or too large for the response, it is
//      stored (or, when it cannot be, dropped) and the result becomes isError
//      with a notice.
//   3. The whole result. Over max_response_bytes (as JSON: every block and
//      structuredContent), the blocks are kept in order while they fit, and
//      the rest are stored together, as a JSON array of MCP content blocks,
//      behind one notice. When they cannot be stored, the first of them is cut
//      to fit if it is text, the others are left out, and the notice says so.
//      With max_response_bytes at least 16384 (the catalog file's minimum),
//      the result is then within it.
//
// The functions share no state; a result is changed in place by one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "catalog/result_limits.h"
#include "catalog/tool.h"
#include "src/store/result_store.h"

namespace toolmux {

// Stores `payload` for the caller and returns its result id, or "" when it
// could not be stored.
using StorePayload =
    std::function<std::string(std::string_view payload, const StoredFormat& format)>;

struct LimitReport {
  bool truncated = false;  // something was cut or left out
  bool offloaded = false;  // something was stored
};

// Applies `limits` to `result`, a result the check_result stage accepted
// (content an array of objects with a string "type", valid UTF-8, finite
// numbers). `store` is called only when limits.offload is on; empty, nothing
// is stored.
LimitReport apply_result_limits(ToolResult& result, const ResultLimits& limits,
                                const StorePayload& store);

// The bytes of what a result says, for logs and metrics: every text, image and
// audio data, embedded resource text and blob, and structuredContent as JSON.
std::size_t result_payload_bytes(const ToolResult& result);

// The size of `value` written as compact JSON, as the server sends it
// (UTF-8, not \u-escaped). Not recursive.
std::size_t json_size(const nlohmann::json& value);

// The size of `result` as the "result" of a tools/call response:
// ToolResult::to_json(), written as compact JSON.
std::size_t result_json_size(const ToolResult& result);

}  // namespace toolmux
