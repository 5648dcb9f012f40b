#include "src/base/jsonrpc.h"

#include <charconv>
#include <utility>

namespace toolmux::jsonrpc {
namespace {

Message invalid(json id, int code, std::string reason) {
  Message m;
  m.kind = Message::Kind::invalid;
  m.id = std::move(id);
  m.error_code = code;
  m.error = std::move(reason);
  return m;
}

// JSON-RPC ids are strings or numbers; MCP further forbids null and we refuse
// fractions, which no client sends and which cannot be matched reliably.
bool valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

bool has_violation_at(const std::vector<JsonViolation>& violations, std::string_view pointer) {
  return !violations_under(violations, pointer).empty();
}

constexpr std::size_t kEnd = std::string_view::npos;

std::size_t skip_ws(std::string_view text, std::size_t at) {
  while (at < text.size() &&
         (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r')) {
    ++at;
  }
  return at;
}

// Just past the string that starts at `at` (a '"'); kEnd when it is not closed.
std::size_t skip_string(std::string_view text, std::size_t at) {
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return kEnd;
}

// Just past the value that starts at `at`, found by counting brackets (a
// scalar ends at the ',', '}' or ']' after it); kEnd when the text ends first.
std::size_t skip_value(std::string_view text, std::size_t at) {
  std::size_t depth = 0;
  std::size_t i = at;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      i = skip_string(text, i);
      if (i == kEnd || depth == 0) return i;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;
      if (--depth == 0) return i + 1;
    } else if (c == ',' && depth == 0) {
      return i;
    }
    ++i;
  }
  return kEnd;
}

}  // namespace

Message parse_message(std::string_view text, const JsonLimits& limits) {
  if (std::optional<Message> plain = read_plain_message(text, limits)) return std::move(*plain);
  return read_full_message(text, limits);
}

Message read_full_message(std::string_view text, const JsonLimits& limits) {
  ParsedJson parsed = parse_untrusted_json(text, limits);
  if (parsed.syntax_error) {
    return invalid(nullptr, kParseError, "Parse error: " + *parsed.syntax_error);
  }
  json& doc = parsed.value;
  if (doc.is_array()) {
    return invalid(nullptr, kInvalidRequest, "Invalid request: JSON-RPC batches are not supported");
  }
  if (!doc.is_object()) {
    return invalid(
        nullptr, kInvalidRequest,
        "Invalid request: a message must be a JSON object, got " + std::string(doc.type_name()));
  }

  json id = nullptr;
  auto id_it = doc.find("id");
  const bool has_id = id_it != doc.end();
  if (has_id && valid_id(*id_it) && !has_violation_at(parsed.violations, "/id")) id = *id_it;

  if (!doc.contains("jsonrpc") || doc["jsonrpc"] != "2.0") {
    return invalid(id, kInvalidRequest, "Invalid request: \"jsonrpc\" must be \"2.0\"");
  }
  // A repeated envelope key (which value was meant?) or one that is not valid UTF-8.
  for (const char* pointer : {"/id", "/jsonrpc", "/method"}) {
    const auto repeated = violations_under(parsed.violations, pointer);
    if (!repeated.empty()) {
      return invalid(id, kInvalidRequest,
                     "Invalid request: " + std::string(pointer) + ": " + repeated.front().message);
    }
  }
  if (has_id && id.is_null()) {
    return invalid(nullptr, kInvalidRequest,
                   "Invalid request: \"id\" must be a string or an integer");
  }

  Message m;
  m.id = id;
  auto method_it = doc.find("method");
  if (method_it == doc.end()) {
    if (has_id && (doc.contains("result") || doc.contains("error"))) {
      m.kind = Message::Kind::response;
      if (auto r = doc.find("result"); r != doc.end()) {
        m.response["result"] = std::move(*r);
      } else {
        m.response["error"] = std::move(doc["error"]);
      }
      m.violations = std::move(parsed.violations);
      return m;
    }
    return invalid(id, kInvalidRequest, "Invalid request: \"method\" is missing");
  }
  if (!method_it->is_string()) {
    return invalid(id, kInvalidRequest, "Invalid request: \"method\" must be a string");
  }
  m.method = method_it->get<std::string>();
  if (auto params_it = doc.find("params"); params_it != doc.end()) {
    if (!params_it->is_object()) {
      // MCP params are always objects (by-name); JSON-RPC also allows arrays.
      return invalid(id, has_id ? kInvalidParams : kInvalidRequest,
                     "Invalid params: \"params\" must be an object");
    }
    m.params = std::move(*params_it);
  }
  m.kind = has_id ? Message::Kind::request : Message::Kind::notification;
  m.violations = std::move(parsed.violations);
  return m;
}

MessageHeader scan_message_header(std::string_view text) {
  // Ids worth reading are short; a longer one is not one of ours.
  constexpr std::size_t kMaxIdText = 256;
  MessageHeader header;
  std::size_t i = skip_ws(text, 0);
  if (i >= text.size() || text[i] != '{') return header;
  header.object = true;
  bool id_seen = false;
  i = skip_ws(text, i + 1);
  while (i < text.size() && text[i] == '"') {
    const std::size_t key_end = skip_string(text, i);
    if (key_end == kEnd) break;
    const std::string_view key = text.substr(i + 1, key_end - i - 2);
    i = skip_ws(text, key_end);
    if (i >= text.size() || text[i] != ':') break;
    i = skip_ws(text, i + 1);
    const std::size_t value_end = skip_value(text, i);
    if (key == "method") {
      header.has_method = true;
    } else if (key == "id" && !id_seen && value_end != kEnd) {
      id_seen = true;
      const std::string_view value = text.substr(i, value_end - i);
      if (value.size() <= kMaxIdText) {
        json id = json::parse(value, nullptr, false);
        if (valid_id(id)) header.id = std::move(id);
      }
    }
    if (value_end == kEnd) break;
    i = skip_ws(text, value_end);
    if (i >= text.size() || text[i] != ',') break;
    i = skip_ws(text, i + 1);
  }
  return header;
}

std::optional<std::vector<std::string_view>> batch_members(std::string_view text) {
  std::size_t i = skip_ws(text, 0);
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  std::vector<std::string_view> members;
  i = skip_ws(text, i + 1);
  if (i < text.size() && text[i] == ']')
    return skip_ws(text, i + 1) == text.size() ? std::optional(members) : std::nullopt;
  while (i < text.size()) {
    const std::size_t end = skip_value(text, i);
    if (end == kEnd) return std::nullopt;
    std::string_view member = text.substr(i, end - i);
    while (!member.empty() && (member.back() == ' ' || member.back() == '\t' ||
                               member.back() == '\n' || member.back() == '\r')) {
      member.remove_suffix(1);
    }
    members.push_back(member);
    i = skip_ws(text, end);
    if (i >= text.size()) return std::nullopt;
    if (text[i] == ']') {
      return skip_ws(text, i + 1) == text.size() ? std::optional(members) : std::nullopt;
    }
    if (text[i] != ',') return std::nullopt;
    i = skip_ws(text, i + 1);
  }
  return std::nullopt;
}

std::string id_key(const json& id) {
  if (id.is_string()) {
    const std::string& text = id.get_ref<const std::string&>();
    std::string key;
    key.reserve(text.size() + 1);
    key += '"';
    key += text;
    return key;
  }
  if (id.is_number_integer()) {
    char digits[24];
    const auto [end, ec] = id.is_number_unsigned()
                               ? std::to_chars(digits, digits + sizeof digits,
                                               id.get_ref<const json::number_unsigned_t&>())
                               : std::to_chars(digits, digits + sizeof digits,
                                               id.get_ref<const json::number_integer_t&>());
    return std::string(digits, ec == std::errc() ? end : digits);
  }
  return id.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Built member by member, not from an initializer list: nlohmann builds each
// {"key", value} pair of a list as an array of two first, and copies what it
// cannot move (a message's result, once per answer).
namespace {
json envelope(const json& id) {
  json m(json::value_t::object);
  m["jsonrpc"] = "2.0";
  m["id"] = id;
  return m;
}
}  // namespace

json make_result(const json& id, json result) {
  json m = envelope(id);
  m["result"] = std::move(result);
  return m;
}

json make_error(const json& id, int code, std::string_view message, json data) {
  json error(json::value_t::object);
  error["code"] = code;
  error["message"] = message;
  if (!data.is_null()) error["data"] = std::move(data);
  json m = envelope(id);
  m["error"] = std::move(error);
  return m;
}

json make_notification(std::string_view method, json params) {
  json n(json::value_t::object);
  n["jsonrpc"] = "2.0";
  n["method"] = method;
  if (!params.is_null()) n["params"] = std::move(params);
  return n;
}

}  // namespace toolmux::jsonrpc
