#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "src/base/jsonrpc.h"

using toolmux::jsonrpc::Message;
using toolmux::jsonrpc::parse_message;
namespace rpc = toolmux::jsonrpc;

TEST_CASE("a request is read with its id, method and params") {
  Message m =
      parse_message(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}})");
  REQUIRE(m.kind == Message::Kind::request);
  CHECK(m.id == 7);
  CHECK(m.method == "tools/list");
  CHECK(m.params["cursor"] == "x");
}

TEST_CASE("a message without an id is a notification") {
  Message m = parse_message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  CHECK(m.kind == Message::Kind::notification);
}

TEST_CASE("text that is not JSON is a parse error that says where") {
  Message m = parse_message("this is not json");
  REQUIRE(m.kind == Message::Kind::invalid);
  CHECK(m.error_code == rpc::kParseError);
  CHECK(m.id.is_null());
  CHECK_THAT(m.error, Catch::Contains("byte 0"));
}

TEST_CASE("a message of more JSON values than the limit is a parse error naming the limit") {
  // Reading stops at the limit, so the memory a message takes is bounded by
  // it, not by its size: a million tiny values would take hundreds of MB.
  std::string text = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",)"
                     R"("arguments":{"xs":[)";
  for (int i = 0; i < 1'000'000; ++i) text += i == 0 ? "{}" : ",{}";
  text += "]}}}";
  Message m = parse_message(text);
  REQUIRE(m.kind == Message::Kind::invalid);
  CHECK(m.error_code == rpc::kParseError);
  CHECK_THAT(m.error, Catch::StartsWith("Parse error: too large: more than 1000000 JSON values "
                                        "(the limit) at byte "));
}

TEST_CASE("invalid requests keep their id and say what is wrong") {
  SECTION("no method") {
    Message m = parse_message(R"({"jsonrpc":"2.0","id":"a"})");
    CHECK(m.error_code == rpc::kInvalidRequest);
    CHECK(m.id == "a");
    CHECK_THAT(m.error, Catch::Contains("\"method\" is missing"));
  }
  SECTION("wrong jsonrpc version") {
    Message m = parse_message(R"({"jsonrpc":"1.0","id":1,"method":"ping"})");
    CHECK(m.error_code == rpc::kInvalidRequest);
    CHECK(m.id == 1);
  }
  SECTION("null id") {
    Message m = parse_message(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
    CHECK(m.error_code == rpc::kInvalidRequest);
    CHECK_THAT(m.error, Catch::Contains("string or an integer"));
  }
  SECTION("params that are not an object") {
    Message m = parse_message(R"({"jsonrpc":"2.0","id":2,"method":"ping","params":[1]})");
    CHECK(m.error_code == rpc::kInvalidParams);
  }
  SECTION("a batch") {
    Message m = parse_message(R"([{"jsonrpc":"2.0","id":2,"method":"ping"}])");
    CHECK(m.error_code == rpc::kInvalidRequest);
    CHECK_THAT(m.error, Catch::Contains("batches"));
  }
}

TEST_CASE("boundary violations are reported with their place, and the request is still read") {
  Message m = parse_message(
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{"a":1,"a":2}}})");
  REQUIRE(m.kind == Message::Kind::request);
  CHECK(m.id == 5);
  REQUIRE(m.violations.size() == 1);
  CHECK(m.violations[0].pointer == "/params/arguments/a");
}

TEST_CASE("responses from the client are recognised") {
  Message m = parse_message(R"({"jsonrpc":"2.0","id":3,"result":{}})");
  CHECK(m.kind == Message::Kind::response);
}

TEST_CASE("errors are built as JSON-RPC 2.0 error objects") {
  auto e = rpc::make_error(4, rpc::kMethodNotFound, "Method not found: x");
  CHECK(e ==
        nlohmann::json::parse(
            R"({"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found: x"}})"));
}

TEST_CASE("results, errors with data and notifications are written as JSON-RPC 2.0 says") {
  nlohmann::json result{{"content", nlohmann::json::array({{{"type", "text"}, {"text", "hi"}}})},
                        {"isError", false}};
  CHECK(
      rpc::make_result("r-1", result).dump() ==
      R"({"id":"r-1","jsonrpc":"2.0","result":{"content":[{"text":"hi","type":"text"}],"isError":false}})");
  CHECK(rpc::make_result(nullptr, nlohmann::json::object()).dump() ==
        R"({"id":null,"jsonrpc":"2.0","result":{}})");
  CHECK(rpc::make_error(5, rpc::kInvalidParams, "bad", {{"uri", "x"}}).dump() ==
        R"({"error":{"code":-32602,"data":{"uri":"x"},"message":"bad"},"id":5,"jsonrpc":"2.0"})");
  CHECK(rpc::make_notification("notifications/progress", {{"progress", 1}}).dump() ==
        R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})");
  CHECK(rpc::make_notification("notifications/initialized", nullptr).dump() ==
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
}

TEST_CASE("a repeated id, jsonrpc or method key is an invalid request that names the repeat") {
  // It was reported as "\"id\" must be a string or an integer".
  Message m = parse_message(R"({"jsonrpc":"2.0","id":1,"id":2,"method":"ping"})");
  REQUIRE(m.kind == Message::Kind::invalid);
  CHECK(m.error_code == rpc::kInvalidRequest);
  CHECK(m.id.is_null());
  CHECK(m.error == "Invalid request: /id: repeated object key \"id\"");

  m = parse_message(R"({"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"})");
  REQUIRE(m.kind == Message::Kind::invalid);
  CHECK(m.id == 1);
  CHECK(m.error == "Invalid request: /method: repeated object key \"method\"");
}

TEST_CASE("the header of a message too broken to parse is still read, at any depth") {
  using rpc::scan_message_header;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  SECTION("an id before or after a value nested too deep") {
    auto before = scan_message_header(R"({"jsonrpc":"2.0","id":12,"result":)" + deep + "}");
    CHECK(before.object);
    CHECK_FALSE(before.has_method);
    CHECK(before.id == 12);
    auto after = scan_message_header(R"({"result":{"a":)" + deep + R"(,"b":"}]"},"id":"x-1"})");
    CHECK(after.id == "x-1");
  }
  SECTION("cut short after the id") {
    CHECK(scan_message_header(R"({"jsonrpc":"2.0","id":3,"result":{"content":[)").id == 3);
  }
  SECTION("bad JSON inside a value does not hide the id") {
    CHECK(scan_message_header(R"({"result":{"a":tru,"b":"\"}"},"id":4})").id == 4);
  }
  SECTION("a request or notification says so") {
    auto request = scan_message_header(R"({"jsonrpc":"2.0","id":5,"method":"x","params":)" + deep);
    CHECK(request.has_method);
    CHECK(request.id == 5);
  }
  SECTION("nothing to read") {
    CHECK_FALSE(scan_message_header("this is not JSON").object);
    CHECK(scan_message_header("this is not JSON").id.is_null());
    CHECK(scan_message_header(R"([{"id":1}])").id.is_null());
    CHECK(scan_message_header(R"({"id":1.5,"result":{}})").id.is_null());
    CHECK(scan_message_header(R"({"id":null,"error":{}})").id.is_null());
    CHECK(scan_message_header(R"({"result":{"id":7}})").id.is_null());  // not top-level
    CHECK(scan_message_header("").id.is_null());
  }
}

TEST_CASE("a batch is split into its members' texts, as they came, at any depth") {
  using rpc::batch_members;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string batch = " [ {\"id\":1,\"result\":" + deep + "} ,\n\"x]\", 5 ]\n";
  auto members = batch_members(batch);  // views into `batch`
  REQUIRE(members);
  REQUIRE(members->size() == 3);
  CHECK((*members)[0] == "{\"id\":1,\"result\":" + deep + "}");
  CHECK((*members)[1] == "\"x]\"");
  CHECK((*members)[2] == "5");
  CHECK(batch_members("[]") == std::vector<std::string_view>{});
  CHECK_FALSE(batch_members(R"({"id":1})"));
  CHECK_FALSE(batch_members(R"([{"id":1})"));
  CHECK_FALSE(batch_members(R"([{"id":1}] trailing)"));
}

namespace {

// The parts of a message a reader fills, as text, for comparing two readings.
std::string reading(const Message& m) {
  std::string text = std::to_string(static_cast<int>(m.kind)) + " id=" + m.id.dump() +
                     " method=" + m.method + " params=" + m.params.dump() +
                     " response=" + m.response.dump() + " error=" + m.error + " violations=";
  for (const auto& v : m.violations) text += v.pointer + ":" + v.message + ";";
  return text;
}

}  // namespace

TEST_CASE("a well-formed message is read the fast way, to the same message as the full way") {
  const char* texts[] = {
      R"({"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"t","arguments":{}}})",
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
      R"(  {"method":"x","jsonrpc":"2.0","id":"a\"b\u00e9\ud83d\ude00"}  )",
      R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"m","params":{"n":-0,"f":0.1,)"
      R"("e":-2.5E-3,"big":123456789012345678901234,"inf":1e400,"tiny":-1e-400,"u":"é"}})",
      R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"m","params":{"a":[[],{},[1,[2]]],)"
      R"("t":true,"f":false,"n":null,"s":"\\\/\b\f\n\r\t"}})",
      R"({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}})",
      R"({"jsonrpc":"2.0","id":"r","error":{"code":-32601,"message":"no"}})",
      R"({"jsonrpc":"2.0","id":4,"method":"m","other":{"kept":"no"}})",
  };
  for (const char* text : texts) {
    INFO(text);
    const std::optional<Message> plain = rpc::read_plain_message(text);
    REQUIRE(plain.has_value());
    const Message full = rpc::read_full_message(text);
    CHECK(full.violations.empty());
    CHECK(reading(*plain) == reading(full));
    CHECK(reading(parse_message(text)) == reading(full));
  }
}

TEST_CASE("a message that breaks a rule is left to the full way, which names what is wrong") {
  toolmux::JsonLimits limits;
  limits.max_depth = 4;
  limits.max_values = 12;
  const std::string big(1024 * 1024 + 1, ' ');
  const std::string texts[] = {
      R"({"jsonrpc":"2.0","id":1,"method":"m","id":2})",                       // a repeated key
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}})",       // deeper down
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[[["deep"]]]}})",  // past max_depth
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2,3,4,5,6,7,8,9]}})",  // values
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"n":012}})",       // a leading zero
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"n":1.}})",        // a bare point
      R"({"jsonrpc":"2.0","id":1,"method":"m"} {"jsonrpc":"2.0"})",        // text after it
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"\ud800"}})",  // a lone surrogate
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"s\":\"\xff\"}}",  // UTF-8
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"s\":\"a\tb\"}}",  // control
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"t":tru}})",  // not a literal
      R"({"jsonrpc":"1.0","id":1,"method":"m"})",
      R"({"jsonrpc":"2.0","id":null,"method":"m"})",
      R"({"jsonrpc":"2.0","id":1.5,"method":"m"})",
      R"({"jsonrpc":"2.0","id":1,"method":7})",
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1]})",
      R"({"jsonrpc":"2.0","id":1})",
      R"({"jsonrpc":"2.0","result":1})",
      R"([{"jsonrpc":"2.0","id":1,"method":"m"}])",
      R"("text")",
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{},"a":1,"b":2,"c":3,"d":4,"e":5})",
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1})",
      R"({"jsonrpc":"2.0","id":1,"method":"m")" + big + "}",
  };
  for (const std::string& text : texts) {
    INFO(text.substr(0, 120));
    CHECK_FALSE(rpc::read_plain_message(text, limits).has_value());
    CHECK(reading(parse_message(text, limits)) == reading(rpc::read_full_message(text, limits)));
  }
}

TEST_CASE("an id's key tells apart every two ids that differ, 1 and \"1\" too") {
  CHECK(rpc::id_key(7) == rpc::id_key(nlohmann::json::parse("7")));
  CHECK(rpc::id_key("a") == rpc::id_key(nlohmann::json("a")));
  CHECK(rpc::id_key(1) != rpc::id_key("1"));
  CHECK(rpc::id_key(-1) != rpc::id_key(1));
  CHECK(rpc::id_key(std::numeric_limits<std::uint64_t>::max()) == "18446744073709551615");
  CHECK(rpc::id_key(std::numeric_limits<std::int64_t>::min()) == "-9223372036854775808");
  CHECK(rpc::id_key("") != rpc::id_key(0));
  CHECK(rpc::id_key("\"") != rpc::id_key("\"\""));
}
