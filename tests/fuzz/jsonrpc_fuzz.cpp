// JSON-RPC message parsing (src/base/jsonrpc.h parse_message) on any bytes.
//
// Invariants: it never throws; an invalid message has one of the JSON-RPC
// error codes and an error text, and the error answer built from them can be
// written as JSON (the text names what was wrong, even in bad UTF-8); an id is
// null, a string or an integer; a request has an id, a notification none;
// params are an object or absent; a response carries exactly one of result
// and error; and a clean request or notification, written back from its
// parts, parses to the same message. And the two ways parse_message reads a
// text agree: whatever the fast way (read_plain_message) reads, the full way
// (read_full_message) reads as the same message, with no violation.
#include <optional>
#include <string>

#include "src/base/jsonrpc.h"
#include "tests/fuzz/fuzz_check.h"

using nlohmann::json;
namespace jsonrpc = toolmux::jsonrpc;
using Kind = jsonrpc::Message::Kind;

namespace {

jsonrpc::Message parse(std::string_view text) {
  try {
    return jsonrpc::parse_message(text);
  } catch (...) {
    FUZZ_CHECK(false, "parse_message never throws");
  }
  return {};
}

// A reading of a message as text, for comparing two: dump() tells 1 from 1.0.
std::string reading(const jsonrpc::Message& m) {
  return std::to_string(static_cast<int>(m.kind)) + m.id.dump() + "|" + m.method + "|" +
         m.params.dump() + "|" + m.response.dump();
}

void check_the_ways_agree(std::string_view text) {
  const std::optional<jsonrpc::Message> plain = jsonrpc::read_plain_message(text);
  if (!plain) return;
  const jsonrpc::Message full = jsonrpc::read_full_message(text);
  FUZZ_CHECK(full.kind != Kind::invalid && full.violations.empty(),
             "what the fast way reads, the full way reads without a violation");
  FUZZ_CHECK(reading(*plain) == reading(full), "the fast and the full way read the same message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_the_ways_agree(toolmux::fuzz::as_text(data, size));
  const jsonrpc::Message m = parse(toolmux::fuzz::as_text(data, size));
  FUZZ_CHECK(m.id.is_null() || m.id.is_string() || m.id.is_number_integer(),
             "an id is null, a string or an integer");
  switch (m.kind) {
    case Kind::invalid: {
      FUZZ_CHECK(m.error_code == jsonrpc::kParseError || m.error_code == jsonrpc::kInvalidRequest ||
                     m.error_code == jsonrpc::kInvalidParams,
                 "an invalid message has a JSON-RPC error code");
      FUZZ_CHECK(!m.error.empty(), "an invalid message has an error text");
      std::string answer;
      try {
        answer = jsonrpc::make_error(m.id, m.error_code, m.error).dump();
      } catch (const json::exception&) {
        FUZZ_CHECK(false, "the error answer to an invalid message can be written as JSON");
      }
      FUZZ_CHECK(!answer.empty(), "the error answer is not empty");
      return 0;
    }
    case Kind::response:
      FUZZ_CHECK(!m.id.is_null(), "a response has an id");
      FUZZ_CHECK(m.response.is_object() && m.response.size() == 1 &&
                     (m.response.contains("result") || m.response.contains("error")),
                 "a response carries exactly one of result and error");
      return 0;
    case Kind::request:
    case Kind::notification:
      break;
  }
  FUZZ_CHECK((m.kind == Kind::request) == !m.id.is_null(),
             "a request has an id, a notification none");
  FUZZ_CHECK(m.params.is_null() || m.params.is_object(), "params are an object or absent");
  FUZZ_CHECK(m.error_code == 0 && m.error.empty(), "a valid message carries no error");
  if (!m.violations.empty()) return 0;

  json rebuilt = m.kind == Kind::request
                     ? json{{"jsonrpc", "2.0"}, {"id", m.id}, {"method", m.method}}
                     : jsonrpc::make_notification(m.method, nullptr);
  if (!m.params.is_null()) rebuilt["params"] = m.params;
  // Not finite (1e400): JSON has no way to write it back.
  if (toolmux::unserializable_json(rebuilt)) return 0;
  std::string text;
  try {
    text = rebuilt.dump();
  } catch (const json::exception&) {
    FUZZ_CHECK(false, "a clean message can be written back");
  }
  const jsonrpc::Message again = parse(text);
  FUZZ_CHECK(again.kind == m.kind, "written back, the same kind");
  FUZZ_CHECK(again.id == m.id && again.method == m.method && again.params == m.params,
             "written back, the same id, method and params");
  return 0;
}
