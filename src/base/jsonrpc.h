// JSON-RPC 2.0 as MCP uses it: reading one incoming message and building the
// outgoing ones. Pure functions; no I/O, no state.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/untrusted_json.h"

namespace toolmux::jsonrpc {

using nlohmann::json;

// Error codes: JSON-RPC 2.0 section 5.1, plus MCP's use of -32602.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
// Implementation-defined server error (-32000 to -32099): toolmux cannot take
// the request now (too many calls running and queued); the client may retry.
inline constexpr int kServerBusy = -32000;

struct Message {
  enum class Kind { request, notification, response, invalid };
  Kind kind = Kind::invalid;
  json id;  // string or integer for requests and responses; null otherwise
  std::string method;
  json params;  // object, or null when absent
  // For Kind::response: {"result": ...} or {"error": ...} as the peer sent it.
  json response;
  // Boundary violations found anywhere in the message, pointers from its root.
  std::vector<JsonViolation> violations;
  // Set for Kind::invalid: why, and which error code answers it.
  int error_code = 0;
  std::string error;
};

// Reads one message from its text. Never throws: text that is not a valid
// JSON-RPC message comes back as Kind::invalid with the code and reason to
// answer it with (the id is kept whenever it could be read, so the client can
// match the error to its request).
Message parse_message(std::string_view text, const JsonLimits& limits = {});

// How parse_message reads a text: the fast way when it can, else the full one.
//
// parse_message's fast way (simdjson On-Demand, src/base/plain_message.cpp):
// the same Message as parse_message for a text that is a well-formed request,
// notification or response breaking no boundary rule (no violation), read
// without a tree for the envelope; nullopt for anything else (and for texts
// over 1 MiB), which parse_message then reads the full way and names what is
// wrong. Public so that tests and the fuzz target can hold the two ways to
// each other.
std::optional<Message> read_plain_message(std::string_view text, const JsonLimits& limits = {});
// parse_message's full way (parse_untrusted_json, then the envelope from its
// tree): any text, every violation with its place, the reason of an invalid one.
Message read_full_message(std::string_view text, const JsonLimits& limits = {});

// What can still be told of a message parse_message found invalid (not JSON,
// nested too deep, or not a valid message), from a flat scan of its top-level
// members: nested values are skipped by counting brackets, never built or
// descended into, so any depth and any size is read in one pass with no
// recursion. A message cut short tells what came before the cut.
struct MessageHeader {
  bool object = false;      // the text starts as a JSON object
  bool has_method = false;  // it has a top-level "method": a request or notification
  json id;  // its first top-level "id", when that is an integer or a string; null otherwise
};
MessageHeader scan_message_header(std::string_view text);

// The members of a JSON array's text (a JSON-RPC batch), each as the text it
// was, found by the same flat scan: nothing is parsed or rebuilt, so a member
// reaches parse_message exactly as it came, at any depth. nullopt when the
// text is not an array or ends before it does.
std::optional<std::vector<std::string_view>> batch_members(std::string_view text);

// A request id as a map key: equal ids give the same key, different ids
// (1 and "1" included) different ones. Not JSON text; never shown or stored.
// An integer's digits, or '"' and a string's bytes: no escaping to scan for,
// where dump() runs nlohmann's serializer on every request.
std::string id_key(const json& id);

json make_result(const json& id, json result);
json make_error(const json& id, int code, std::string_view message, json data = nullptr);
json make_notification(std::string_view method, json params);

}  // namespace toolmux::jsonrpc
