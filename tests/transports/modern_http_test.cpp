#include "transports/modern_http.h"

#include <catch2/catch.hpp>
#include <string>

using namespace toolmux;
using nlohmann::json;

namespace {

std::optional<std::string> decode(const std::string& sent, std::string& why) {
  why.clear();
  return modern_http::decode_header_value(sent, why);
}

jsonrpc::Message message(const json& request) { return jsonrpc::parse_message(request.dump()); }

json call(const json& meta) {
  return {{"jsonrpc", "2.0"},
          {"id", 1},
          {"method", "tools/call"},
          {"params", {{"name", "echo"}, {"arguments", json::object()}, {"_meta", meta}}}};
}

const json kMeta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                    {"io.modelcontextprotocol/clientCapabilities", json::object()}};

}  // namespace

TEST_CASE("decode_header_value decodes the Base64 sentinel and takes anything else literally") {
  std::string why;
  CHECK(decode("us-west1", why) == "us-west1");
  CHECK(decode("=?base64?SGVsbG8sIOS4lueVjA==?=", why) == "Hello, \xE4\xB8\x96\xE7\x95\x8C");
  CHECK(decode("=?base64?IHBhZGRlZCA=?=", why) == " padded ");
  CHECK(decode("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", why) == "=?base64?literal?=");
  CHECK(decode("=?base64?"
               "?=",
               why) == "");  // split: "??=" would be a trigraph
  // Without the prefix or the suffix, the value is what it says.
  CHECK(decode("SGVsbG8=", why) == "SGVsbG8=");
  CHECK(decode("=?base64?SGVsbG8=", why) == "=?base64?SGVsbG8=");
  CHECK(decode("SGVsbG8=?=", why) == "SGVsbG8=?=");
  // The markers are case-sensitive.
  CHECK(decode("=?BASE64?SGVsbG8=?=", why) == "=?BASE64?SGVsbG8=?=");
}

TEST_CASE("decode_header_value refuses malformed Base64, saying how") {
  std::string why;
  CHECK_FALSE(decode("=?base64?SGVsbG8?=", why));
  CHECK(why == "its Base64 is 7 characters long, not padded to a multiple of 4");
  CHECK_FALSE(decode("=?base64?SGV!bG8=?=", why));
  CHECK_THAT(why, Catch::Contains("\"!\" at 3, which is not in the Base64 alphabet"));
  CHECK_FALSE(decode("=?base64?SGVs!!!bG8=?=", why));  // the conformance suite's case
  // Padding only at the very end.
  CHECK_FALSE(decode("=?base64?SG==bG8=?=", why));
  CHECK_FALSE(decode("=?base64?S===?=", why));
  CHECK_FALSE(decode("=?base64?====?=", why));
}

TEST_CASE("check_request passes a request whose headers agree with its body") {
  const modern_http::SentHeaders headers{{"2026-07-28"}, {"tools/call"}, {"echo"}};
  CHECK_FALSE(modern_http::check_request(headers, message(call(kMeta))));
  // A method without Mcp-Name needs none.
  json list = call(kMeta);
  list["method"] = "tools/list";
  CHECK_FALSE(modern_http::check_request({{"2026-07-28"}, {"tools/list"}, {}}, message(list)));
}

TEST_CASE("check_request names the header and both values of a mismatch") {
  const auto refused = modern_http::check_request(
      {{"2026-07-28"}, {"tools/call"}, {"=?base64?b3RoZXI=?="}}, message(call(kMeta)));
  REQUIRE(refused);
  CHECK(refused->code == -32020);
  CHECK(refused->message ==
        "Header mismatch: Mcp-Name header value \"=?base64?b3RoZXI=?=\" (decoded: \"other\") "
        "does not match body value params.name \"echo\"");
  CHECK(refused->data == json{{"header", "Mcp-Name"},
                              {"headerValue", "=?base64?b3RoZXI=?="},
                              {"bodyValue", "echo"}});
}

TEST_CASE("check_request: -32602 for what _meta lacks, before the header it would match") {
  json meta = kMeta;
  meta.erase("io.modelcontextprotocol/protocolVersion");
  auto refused =
      modern_http::check_request({{"2026-07-28"}, {"tools/call"}, {"echo"}}, message(call(meta)));
  REQUIRE(refused);
  CHECK(refused->code == -32602);
  CHECK_THAT(refused->message, Catch::Contains("io.modelcontextprotocol/protocolVersion"));
  meta = kMeta;
  meta["io.modelcontextprotocol/clientCapabilities"] = "all";
  refused =
      modern_http::check_request({{"2026-07-28"}, {"tools/call"}, {"echo"}}, message(call(meta)));
  REQUIRE(refused);
  CHECK(refused->code == -32602);
  CHECK_THAT(refused->message, Catch::Contains("io.modelcontextprotocol/clientCapabilities"));
}

TEST_CASE("status_for: 404 for method not found, 400 for the 2026-07-28 errors, else 200") {
  CHECK(modern_http::status_for(0) == 200);
  CHECK(modern_http::status_for(-32601) == 404);
  CHECK(modern_http::status_for(-32020) == 400);
  CHECK(modern_http::status_for(-32021) == 400);
  CHECK(modern_http::status_for(-32022) == 400);
  CHECK(modern_http::status_for(-32602) == 200);
  CHECK(modern_http::status_for(-32603) == 200);
}
