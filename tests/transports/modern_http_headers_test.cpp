// The headers of a 2026-07-28 request over Streamable HTTP, from its body
// (basic/transports/streamable-http.mdx, "Request Metadata" and "Value
// Encoding": the examples are the spec's own).
#include "transports/modern_http_headers.h"

#include <catch2/catch.hpp>

using namespace toolmux;
using nlohmann::json;

namespace {

json request(const std::string& method, json params) {
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"io.modelcontextprotocol/clientCapabilities", json::object()}};
  return {{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", std::move(params)}};
}

}  // namespace

TEST_CASE("a value is sent as it is when it is plain, else in the base64 sentinel") {
  CHECK(header_value("us-west1") == "us-west1");
  CHECK(header_value("get weather") == "get weather");  // an inner space is fine
  CHECK(header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?=");
  CHECK(header_value(" padded ") == "=?base64?IHBhZGRlZCA=?=");
  CHECK(header_value("line1\nline2") == "=?base64?bGluZTEKbGluZTI=?=");
  CHECK(header_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
  CHECK(header_value("tab\t") == "=?base64?dGFiCQ==?=");
  CHECK(header_value("\x7f") == "=?base64?fw==?=");
}

TEST_CASE("the headers come from the body: version, method, and the name or URI it names") {
  auto call = modern_headers(request("tools/call", {{"name", "get_weather"}}));
  REQUIRE(call);
  CHECK(call->protocol_version == "2026-07-28");
  CHECK(call->method == "tools/call");
  CHECK(call->name == "get_weather");

  auto prompt = modern_headers(request("prompts/get", {{"name", "résumé"}}));
  REQUIRE(prompt);
  CHECK(prompt->name == "=?base64?csOpc3Vtw6k=?=");

  auto read = modern_headers(request("resources/read", {{"uri", "file:///projects/a b.json"}}));
  REQUIRE(read);
  CHECK(read->name == "file:///projects/a b.json");

  auto list = modern_headers(request("tools/list", json::object()));
  REQUIRE(list);
  CHECK(list->method == "tools/list");
  CHECK_FALSE(list->name);
}

TEST_CASE("a legacy request, a notification or a response has no modern headers") {
  CHECK_FALSE(modern_headers(json::parse(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}})")));
  CHECK_FALSE(modern_headers(json::parse(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})")));
  CHECK_FALSE(modern_headers(json::parse(R"({"jsonrpc":"2.0","id":1,"result":{}})")));
}

TEST_CASE("a tool's x-mcp-header parameters become Mcp-Param headers of its call") {
  const json schema = json::parse(R"({"type": "object", "properties": {
      "region": {"type": "string", "x-mcp-header": "Region"},
      "priority": {"type": "integer", "x-mcp-header": "Priority"},
      "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
      "query": {"type": "string"}}})");
  auto declared = declared_param_headers(schema);
  REQUIRE(declared.ok());
  REQUIRE(declared.value().size() == 3);
  const auto headers = param_headers(
      declared.value(),
      {{"region", "Hello, 世界"}, {"priority", 42}, {"verbose", nullptr}, {"query", "x"}});
  CHECK(headers ==
        std::vector<std::pair<std::string, std::string>>{
            {"Mcp-Param-Priority", "42"}, {"Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="}});
  CHECK(param_headers(declared.value(), {{"verbose", false}}) ==
        std::vector<std::pair<std::string, std::string>>{{"Mcp-Param-Verbose", "false"}});
  CHECK(declared_param_headers(json::object()).value().empty());
}

TEST_CASE("a tool with an invalid x-mcp-header is refused, saying why") {
  const auto refused = [](const char* property) {
    auto r =
        declared_param_headers(json{{"type", "object"}, {"properties", json::parse(property)}});
    REQUIRE_FALSE(r.ok());
    return r.message();
  };
  CHECK(refused(R"({"v": {"type": "string", "x-mcp-header": ""}})") ==
        "the x-mcp-header of property \"v\" is not a non-empty string");
  CHECK_THAT(refused(R"({"v": {"type": "number", "x-mcp-header": "Score"}})"),
             Catch::Contains("only string, integer and boolean may carry one"));
  CHECK_THAT(refused(R"({"v": {"type": "object", "x-mcp-header": "Data"}})"),
             Catch::Contains("of type \"object\""));
  CHECK_THAT(refused(R"({"v": {"type": "string", "x-mcp-header": "My Region"}})"),
             Catch::Contains("a character an HTTP header name cannot have"));
  CHECK_THAT(refused(R"({"v": {"type": "string", "x-mcp-header": "Région"}})"),
             Catch::Contains("a character an HTTP header name cannot have"));
  CHECK_THAT(refused(R"({"a": {"type": "string", "x-mcp-header": "MyField"},
                         "b": {"type": "string", "x-mcp-header": "myfield"}})"),
             Catch::Contains("repeats the header name"));
}
