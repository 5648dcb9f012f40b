#include "src/pipeline/result_limiter.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "catalog/tool_result_shape.h"
#include "src/base/utf8.h"
#include "src/builtins/result_resources.h"
#include "src/builtins/result_tools.h"

namespace toolmux {

using nlohmann::json;

namespace {

// What replaces an offloaded text: its beginning, and how to read the rest.
constexpr std::size_t kPreviewChars = 2000;
// Room kept in a response for the one notice step 3 adds: its fixed words, a
// 43-character id three times, a few numbers and one block's description
// (whose URI and MIME type are cut to kShownBytes) take well under this, even
// with every quote escaped.
constexpr std::size_t kNoticeRoom = 2048;
// Room for the marker after a text cut to fit the response.
constexpr std::size_t kMarkerRoom = 160;
// How much of a tool's URI or MIME type a notice repeats.
constexpr std::size_t kShownBytes = 100;
// {"content":[],"isError":false} and ,"structuredContent":
constexpr std::size_t kEmptyResultBytes = 30;
constexpr std::size_t kStructuredKeyBytes = 21;

std::string json_quoted(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The string member `key` of `object`, or "" (also when it is not a string),
// pointing into `object`.
std::string_view string_member(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                               : std::string_view();
}

bool is_text_block(const json& block) { return text_of_block(block) != nullptr; }

// The bytes each byte takes inside a JSON string as nlohmann writes it
// without ensure_ascii: 2 for the short escapes, 6 for another control
// character (\u00XX), 1 for the rest.
constexpr std::array<std::uint8_t, 256> kEscapedSize = [] {
  std::array<std::uint8_t, 256> size{};
  for (std::size_t c = 0; c < size.size(); ++c) size[c] = c < 0x20 ? 6 : 1;
  for (const unsigned char c : {'"', '\\', '\b', '\f', '\n', '\r', '\t'}) size[c] = 2;
  return size;
}();

std::size_t string_json_size(std::string_view s) {
  std::size_t size = 2;
  for (const char c : s) size += kEscapedSize[static_cast<unsigned char>(c)];
  return size;
}

// The first bytes of `s`, at most kShownBytes, never inside a character,
// with "…" when cut.
std::string shown(std::string_view s) { return clip_for_message(s, kShownBytes); }

// A MIME type worth repeating: printable ASCII, short. "" otherwise.
std::string shown_mime(std::string_view mime) {
  if (mime.empty() || mime.size() > kShownBytes) return "";
  for (const char c : mime) {
    if (c < 0x20 || c > 0x7e) return "";
  }
  return std::string(mime);
}

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

// The size of the bytes standard base64 (with padding) encodes; nullopt when
// `text` is not that.
std::optional<std::size_t> base64_decoded_size(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  for (std::size_t i = 0; i < text.size() - padding; ++i) {
    if (!is_base64_char(text[i])) return std::nullopt;
  }
  return text.size() / 4 * 3 - padding;
}

// The large part of a block other than text, and what the block is.
struct Payload {
  const std::string* data = nullptr;  // inside the block
  std::string kind;                   // "an image", "an embedded resource \"…\""
  std::string mime;                   // as shown_mime gives it
  std::string field;                  // "base64 data", "base64 blob", "text"
  bool base64 = false;                // data claimed to be base64
};

std::optional<Payload> payload_of(const json& block) {
  const std::string_view type = string_member(block, "type");
  Payload p;
  if (type == "image" || type == "audio") {
    auto data = block.find("data");
    if (data == block.end() || !data->is_string()) return std::nullopt;
    p.data = &data->get_ref<const std::string&>();
    p.kind = type == "image" ? "an image" : "an audio clip";
    p.mime = shown_mime(string_member(block, "mimeType"));
    p.field = "base64 data";
    p.base64 = true;
    return p;
  }
  if (type != "resource") return std::nullopt;
  auto resource = block.find("resource");
  if (resource == block.end() || !resource->is_object()) return std::nullopt;
  auto field = resource->find("blob");
  p.base64 = field != resource->end() && field->is_string();
  if (!p.base64) field = resource->find("text");
  if (field == resource->end() || !field->is_string()) return std::nullopt;
  p.data = &field->get_ref<const std::string&>();
  const std::string_view uri = string_member(*resource, "uri");
  p.kind = "an embedded resource" + (uri.empty() ? "" : " " + json_quoted(shown(uri)));
  p.mime = shown_mime(string_member(*resource, "mimeType"));
  p.field = p.base64 ? "base64 blob" : "text";
  return p;
}

// "image/png, 300000 bytes": the MIME type and the size of what a payload holds.
std::string payload_size(const Payload& p) {
  std::string out = p.mime.empty() ? "" : p.mime + ", ";
  if (!p.base64) return out + std::to_string(p.data->size()) + " bytes";
  if (auto bytes = base64_decoded_size(*p.data)) return out + std::to_string(*bytes) + " bytes";
  return out + std::to_string(p.data->size()) + " characters that are not valid base64";
}

// What a block is, for a notice: "an image, image/png, 300000 bytes".
std::string describe(const json& block) {
  if (const std::string* text = text_of_block(block)) {
    return "text, " + std::to_string(utf8_length(*text)) + " characters";
  }
  if (auto p = payload_of(block)) return p->kind + ", " + payload_size(*p);
  const std::string_view type = string_member(block, "type");
  if (type == "resource_link") {
    const std::string_view uri = string_member(block, "uri");
    return "a resource link" + (uri.empty() ? "" : " " + json_quoted(shown(uri)));
  }
  return "a block of type " + json_quoted(shown(type)) + ", " + std::to_string(json_size(block)) +
         " bytes of JSON";
}

std::string how_to_read(const std::string& id) {
  return "call read_tool_result with {\"result_id\": " + json_quoted(id) +
         ", \"offset\": 0}, then with each page's next_offset";
}

std::string offload_notice(std::string_view text, const std::string& id, std::string_view what) {
  const std::size_t total_chars = utf8_length(text);
  const std::size_t preview_end = utf8_byte_offset(text, kPreviewChars);
  std::string out(text.substr(0, preview_end));
  out += "\n\n[toolmux: " + std::string(what) + " is " + std::to_string(text.size()) + " bytes (" +
         std::to_string(total_chars) + " characters), too large to show here";
  out += preview_end < text.size()
             ? "; its first " + std::to_string(kPreviewChars) + " characters are above"
             : "";
  out += ". It is stored as result_id " + json_quoted(id) + ": " + how_to_read(id) +
         ", to read it whole (up to " + std::to_string(kMaxPageChars) + " characters a page).]";
  return out;
}

std::string payload_notice(const Payload& p, const std::string& id) {
  return "[toolmux: " + p.kind + " (" + payload_size(p) +
         ") is too large to show here. It is stored as result_id " + json_quoted(id) + ": " +
         how_to_read(id) + ", to read its " + p.field + " (" +
         std::to_string(utf8_length(*p.data)) + " characters, up to " +
         std::to_string(kMaxPageChars) + " a page), or read the resource " +
         std::string(kResultUriPrefix) + id + ".]";
}

// Said after the truncation marker when the text was to be stored and the
// result store did not take it.
constexpr std::string_view kNotStoredNote =
    "\n[toolmux: the whole result could not be stored to read page by page: the result store is "
    "unavailable now; the server's log says why. Calling again later may store it.]";

std::string truncation_marker(std::size_t kept, std::size_t total) {
  return "\n[toolmux: truncated: showing the first " + std::to_string(kept) + " of " +
         std::to_string(total) + " characters; " + std::to_string(total - kept) +
         " characters were cut]";
}

json text_block(std::string text) { return {{"type", "text"}, {"text", std::move(text)}}; }

// "block 7 (an image, image/png, 3000 bytes)" or "blocks 7 to 200 (194
// blocks, 9000000 bytes)": blocks [first, end) of `content`, counted from 1.
std::string block_range(const json& content, std::size_t first, std::size_t end) {
  if (end - first == 1) {
    return "block " + std::to_string(first + 1) + " (" + describe(content[first]) + ")";
  }
  std::size_t bytes = 0;
  for (std::size_t i = first; i < end; ++i) bytes += json_size(content[i]);
  return "blocks " + std::to_string(first + 1) + " to " + std::to_string(end) + " (" +
         std::to_string(end - first) + " blocks, " + std::to_string(bytes) + " bytes)";
}

// The byte offset where `text` must be cut so that it takes at most `room`
// bytes as a JSON string's contents; never inside a character.
std::size_t cut_to_json_room(std::string_view text, std::size_t room) {
  std::size_t used = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t length = utf8_lead_length(text[pos]);
    const std::size_t size =
        length == 1 ? kEscapedSize[static_cast<unsigned char>(text[pos])] : length;
    if (used + size > room) break;
    used += size;
    pos += length;
  }
  return pos;
}

class Limiter {
 public:
  Limiter(ToolResult& result, const ResultLimits& limits, const StorePayload& store)
      : result_(result), limits_(limits), store_(store) {}

  LimitReport run() {
    if (!result_.content.is_array()) return report_;
    for (auto& block : result_.content) limit_block(block);
    limit_structured();
    limit_response();
    return report_;
  }

 private:
  // The id `payload` is stored as, or "" when it is not.
  std::string store(std::string_view payload, const StoredFormat& format) {
    if (!limits_.offload || !store_) return "";
    std::string id = store_(payload, format);
    if (!id.empty()) report_.offloaded = true;
    return id;
  }

  bool over_threshold(const std::string& text) const {
    return text.size() > limits_.offload_threshold_bytes;
  }

  // Step 1.
  void limit_block(json& block) {
    if (is_text_block(block)) {
      std::string& text = block["text"].get_ref<std::string&>();
      bool not_stored = false;
      if (over_threshold(text)) {
        if (std::string id = store(text, StoredFormat{}); !id.empty()) {
          text = offload_notice(text, id, "this result");
          return;
        }
        not_stored = limits_.offload && store_;
      }
      if (limits_.max_text_chars < 0) return;
      const auto max = static_cast<std::size_t>(limits_.max_text_chars);
      const std::size_t cut = utf8_byte_offset(text, max);
      if (cut < text.size()) {
        const std::size_t total = utf8_length(text);
        text.resize(cut);
        text += truncation_marker(max, total);
        // Why it was cut rather than stored: the store refused it (full,
        // unreachable), so the rest cannot be read page by page now.
        if (not_stored) text += kNotStoredNote;
        report_.truncated = true;
      }
      return;
    }
    auto payload = payload_of(block);
    if (!payload || !over_threshold(*payload->data)) return;
    // Binary data is served back as a blob of its type; data that is not
    // base64 after all, as the text it is.
    StoredFormat format;
    format.base64 = payload->base64 && base64_decoded_size(*payload->data).has_value();
    if (payload->base64 && !format.base64) {
      format.mime_type = "text/plain";
    } else if (!payload->mime.empty()) {
      format.mime_type = payload->mime;
    } else if (format.base64) {
      format.mime_type = "application/octet-stream";
    }
    if (std::string id = store(*payload->data, format); !id.empty()) {
      block = text_block(payload_notice(*payload, id));
    }
  }

  // Step 2, and the part of step 3 that concerns structuredContent: it must
  // reach the client whole or not at all, because a client validates it
  // against the outputSchema, and a successful call of a tool with an
  // outputSchema must carry it (MCP tools: structured content). One too large
  // to return is stored, and the call answers isError.
  void limit_structured() {
    if (result_.structured_content.is_null()) return;
    const std::size_t size = json_size(result_.structured_content);
    const std::size_t response_room =
        limits_.max_response_bytes -
        std::min<std::uint64_t>(limits_.max_response_bytes,
                                kEmptyResultBytes + kStructuredKeyBytes + kNoticeRoom);
    bool too_large =
        (limits_.offload && size > limits_.offload_threshold_bytes) || size > response_room;
    if (!too_large && limits_.max_text_chars >= 0 &&
        size > static_cast<std::size_t>(limits_.max_text_chars)) {
      // More bytes than the limit's characters: count the characters.
      too_large = utf8_length(result_.structured_content.dump()) >
                  static_cast<std::size_t>(limits_.max_text_chars);
    }
    if (!too_large) return;
    const std::string serialized = result_.structured_content.dump();
    std::string notice;
    // Too large to return whole, so stored even under the byte threshold.
    if (std::string id = store(serialized, StoredFormat{}); !id.empty()) {
      notice = offload_notice(serialized, id, "the structured result");
    } else {
      notice = "[toolmux: the structured result is " + std::to_string(serialized.size()) +
               " bytes, over this server's limit; it was not returned]";
      report_.truncated = true;
    }
    result_.structured_content = nullptr;
    result_.is_error = true;
    result_.content.push_back(text_block(std::move(notice)));
  }

  // Step 3.
  void limit_response() {
    const std::size_t total = result_json_size(result_);
    const std::uint64_t budget = limits_.max_response_bytes;
    if (total <= budget) return;
    json& content = result_.content;
    const std::size_t envelope =
        kEmptyResultBytes + (result_.structured_content.is_null()
                                 ? 0
                                 : kStructuredKeyBytes + json_size(result_.structured_content));
    const std::size_t room = budget - std::min<std::uint64_t>(budget, envelope + kNoticeRoom);
    // The blocks that fit, in order.
    std::size_t kept = 0;
    std::size_t used = 0;
    for (; kept < content.size(); ++kept) {
      const std::size_t need = json_size(content[kept]) + (kept > 0 ? 1 : 0);
      if (used + need > room) break;
      used += need;
    }
    const std::size_t end = content.size();
    if (kept == end) return;  // cannot be: the blocks are what is over
    const std::string why = "[toolmux: this result is " + std::to_string(total) +
                            " bytes, more than the " + std::to_string(budget) +
                            " bytes a response may carry here, so ";

    std::string id;
    if (limits_.offload && store_) {
      // The blocks as a JSON array, written block by block: no copy of them.
      std::string rest = "[";
      for (std::size_t i = kept; i < end; ++i) {
        if (i > kept) rest += ',';
        rest += content[i].dump(-1, ' ', false, json::error_handler_t::replace);
      }
      rest += ']';
      id = store(rest, StoredFormat{"application/json", false});
    }
    if (!id.empty()) {
      const bool one = end - kept == 1;
      std::string notice =
          why + block_range(content, kept, end) +
          (one ? " is not shown. It is" : " are not shown. They are") + " stored as result_id " +
          json_quoted(id) + ", a JSON array of MCP content blocks: " + how_to_read(id) +
          ", to read it whole (up to " + std::to_string(kMaxPageChars) +
          " characters a page), or read the resource " + std::string(kResultUriPrefix) + id + ".]";
      content.erase(content.begin() + static_cast<std::ptrdiff_t>(kept), content.end());
      content.push_back(text_block(std::move(notice)));
      return;
    }
    // Nothing can be stored: cut the first block that does not fit if it is
    // text, and leave the others out.
    report_.truncated = true;
    std::size_t left_out_from = kept;
    std::optional<json> cut_block;
    if (is_text_block(content[kept])) {
      const std::string& text = content[kept]["text"].get_ref<const std::string&>();
      const std::size_t wrapper = json_size(content[kept]) - string_json_size(text);
      const std::size_t need = wrapper + (kept > 0 ? 1 : 0) + kMarkerRoom;
      if (used + need < room) {
        const std::size_t cut = cut_to_json_room(text, room - used - need);
        if (cut > 0) {
          const std::size_t kept_chars = utf8_length(std::string_view(text).substr(0, cut));
          const std::size_t total_chars = utf8_length(text);
          // It leaves `content` below anyway; `text` is not used after this.
          json block = std::move(content[kept]);
          std::string& kept_text = block["text"].get_ref<std::string&>();
          kept_text.resize(cut);
          kept_text += truncation_marker(kept_chars, total_chars);
          cut_block = std::move(block);
          left_out_from = kept + 1;
        }
      }
    }
    std::string notice = why;
    if (cut_block) notice += "block " + std::to_string(kept + 1) + " was cut";
    if (left_out_from < end) {
      notice += std::string(cut_block ? " and " : "") + block_range(content, left_out_from, end) +
                (end - left_out_from == 1 ? " was" : " were") + " left out";
    }
    notice += ".]";
    content.erase(content.begin() + static_cast<std::ptrdiff_t>(kept), content.end());
    if (cut_block) content.push_back(std::move(*cut_block));
    content.push_back(text_block(std::move(notice)));
  }

  ToolResult& result_;
  const ResultLimits& limits_;
  const StorePayload& store_;
  LimitReport report_;
};

}  // namespace

LimitReport apply_result_limits(ToolResult& result, const ResultLimits& limits,
                                const StorePayload& store) {
  return Limiter(result, limits, store).run();
}

std::size_t result_payload_bytes(const ToolResult& result) {
  std::size_t bytes = 0;
  if (result.content.is_array()) {
    for (const auto& block : result.content) {
      if (const std::string* text = text_of_block(block)) {
        bytes += text->size();
      } else if (auto p = payload_of(block)) {
        bytes += p->data->size();
      }
    }
  }
  if (!result.structured_content.is_null()) bytes += json_size(result.structured_content);
  return bytes;
}

std::size_t json_size(const json& value) {
  std::size_t size = 0;
  std::vector<const json*> pending{&value};
  while (!pending.empty()) {
    const json* v = pending.back();
    pending.pop_back();
    switch (v->type()) {
      case json::value_t::object:
        size += 2 + (v->empty() ? 0 : v->size() - 1);
        for (auto it = v->begin(); it != v->end(); ++it) {
          size += string_json_size(it.key()) + 1;
          pending.push_back(&it.value());
        }
        break;
      case json::value_t::array:
        size += 2 + (v->empty() ? 0 : v->size() - 1);
        for (const auto& item : *v) pending.push_back(&item);
        break;
      case json::value_t::string:
        size += string_json_size(v->get_ref<const std::string&>());
        break;
      case json::value_t::boolean:
        size += v->get<bool>() ? 4 : 5;
        break;
      case json::value_t::null:
        size += 4;
        break;
      case json::value_t::number_integer:
        size += std::to_string(v->get<std::int64_t>()).size();
        break;
      case json::value_t::number_unsigned:
        size += std::to_string(v->get<std::uint64_t>()).size();
        break;
      default:  // floats, binary: as nlohmann writes them
        size += v->dump(-1, ' ', false, json::error_handler_t::replace).size();
        break;
    }
  }
  return size;
}

std::size_t result_json_size(const ToolResult& result) {
  std::size_t size = kEmptyResultBytes - (result.is_error ? 1 : 0);
  if (result.content.is_array()) size += json_size(result.content) - 2;
  if (!result.structured_content.is_null()) {
    size += kStructuredKeyBytes + json_size(result.structured_content);
  }
  return size;
}

}  // namespace toolmux
