#include "src/jsonrpc.h"

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

}  // namespace

Message parse_message(std::string_view text, const JsonLimits& limits) {
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

json make_result(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error(const json& id, int code, std::string_view message, json data) {
  json error{{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

json make_notification(std::string_view method, json params) {
  json n{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) n["params"] = std::move(params);
  return n;
}

}  // namespace toolmux::jsonrpc
