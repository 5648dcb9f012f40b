// MCP's shape of a tool result: what read_tool_result accepts from a peer
// and how it names what it refuses.
#include "catalog/tool_result_shape.h"

#include <catch2/catch.hpp>

using namespace toolmux;
using nlohmann::json;

namespace {

// read_tool_result's problem with `text` (parsed), or "" when it reads it.
std::string problem_of(const std::string& text) {
  return read_tool_result(json::parse(text)).message();
}

}  // namespace

TEST_CASE("a CallToolResult with each kind of content block is read as it came") {
  const json result = json::parse(R"({
    "content": [
      {"type": "text", "text": "hi", "annotations": {"audience": ["user"]}},
      {"type": "image", "data": "iVBO", "mimeType": "image/png"},
      {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
      {"type": "resource_link", "uri": "file:///a", "name": "a", "size": 3},
      {"type": "resource", "resource": {"uri": "file:///b", "text": "b"}},
      {"type": "resource", "resource": {"uri": "file:///c", "blob": "Yw==", "mimeType": "x/y"}}
    ],
    "structuredContent": {"ok": true},
    "isError": true,
    "_meta": {"k": 1}
  })");
  const auto read = read_tool_result(result);
  INFO(read.message());
  REQUIRE(read.ok());
  CHECK(read->content == result["content"]);
  CHECK(read->structured_content == result["structuredContent"]);
  CHECK(read->is_error);
  CHECK(problem_of(R"({"content":[]})").empty());
  CHECK(problem_of(R"({"content":[],"structuredContent":null})").empty());
}

TEST_CASE("what breaks MCP's shape is named by its place") {
  CHECK(problem_of("[]") == "the result must be an object (it is an array)");
  CHECK(read_tool_result(json::array()).status().is_invalid_argument());
  CHECK(problem_of("{}") == "/content is missing");
  CHECK(problem_of(R"({"content":"hi"})") == "/content must be an array (it is a string)");
  CHECK(problem_of(R"({"content":[5]})") == "/content/0 must be an object (it is a number)");
  CHECK(problem_of(R"({"content":[{"text":"x"}]})") == "/content/0/type is missing");
  CHECK(problem_of(R"({"content":[{"type":"text","text":5}]})") ==
        "/content/0/text must be a string (it is a number)");
  CHECK(problem_of(R"({"content":[{"type":"text"}]})") == "/content/0/text is missing");
  CHECK(problem_of(R"({"content":[{"type":"text","text":"x","annotations":[]}]})") ==
        "/content/0/annotations must be an object (it is an array)");
  CHECK(problem_of(R"({"content":[{"type":"image","data":"x"}]})") ==
        "/content/0/mimeType is missing");
  CHECK(problem_of(R"({"content":[{"type":"resource_link","uri":"u"}]})") ==
        "/content/0/name is missing");
  CHECK(problem_of(R"({"content":[{"type":"resource","resource":{"uri":"u"}}]})") ==
        "/content/0/resource must have a text or a blob");
  CHECK(problem_of(R"({"content":[{"type":"resource","resource":{"text":"t"}}]})") ==
        "/content/0/resource/uri is missing");
  CHECK(problem_of(R"({"content":[{"type":"video","url":"u"}]})") ==
        "/content/0/type \"video\" is not an MCP content type (text, image, audio, "
        "resource_link, resource)");
  CHECK(problem_of(R"({"content":[],"structuredContent":"yes"})") ==
        "/structuredContent must be an object (it is a string)");
  CHECK(problem_of(R"({"content":[],"isError":"yes"})") ==
        "/isError must be a boolean (it is a string)");
  CHECK(problem_of(R"({"content":[],"_meta":1})") == "/_meta must be an object (it is a number)");
}

TEST_CASE("a text block's text is found in place, and only in a text block") {
  const json block = json::parse(R"({"type":"text","text":"hello"})");
  const std::string* text = text_of_block(block);
  REQUIRE(text != nullptr);
  CHECK(*text == "hello");
  CHECK(text == &block["text"].get_ref<const std::string&>());
  for (const char* other :
       {R"({"type":"image","data":"AA==","mimeType":"image/png"})", R"({"type":"text"})",
        R"({"type":"text","text":7})", R"({"type":7,"text":"x"})", R"({"text":"x"})",
        R"(["text","x"])", R"("text")"}) {
    INFO(other);
    CHECK(text_of_block(json::parse(other)) == nullptr);
  }
}
