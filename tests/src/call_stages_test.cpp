// The pipeline stages issue 3 added: aliases, unknown-tool recovery, access
// rules, argument policy, the result boundary, truncation and offloading.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "catalog/utf8.h"
#include "src/base64.h"
#include "src/call_tool.h"
#include "src/result_tools.h"
#include "tests/support/pipeline_fixture.h"
#include "tests/support/temp_dir.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

std::string text_at(const CallResult& r, std::size_t i = 0) {
  return r.result.content.at(i).at("text");
}

// "é☃𝄞" repeated: 2-, 3- and 4-byte characters.
std::string multibyte(std::size_t chars) {
  static const std::string unit[] = {"\xC3\xA9", "\xE2\x98\x83", "\xF0\x9D\x84\x9E"};
  std::string out;
  for (std::size_t i = 0; i < chars; ++i) out += unit[i % 3];
  return out;
}

std::string echo_args(const std::string& text) { return json{{"text", text}}.dump(); }

}  // namespace

TEST_CASE("a tool alias is served as its tool, and an argument alias is renamed") {
  PipelineFixture f;
  f.catalog->aliases.tools["say"] = "echo";
  f.catalog->aliases.arguments["echo"]["message"] = "text";
  ToolCall call = f.make_call("say", R"({"message":"hi"})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == "hi");
  CHECK(call.tool->spec.name == "echo");

  ToolCall both = f.make_call("echo", R"({"message":"a","text":"b"})");
  CallResult twice = f.pipeline(both);
  CHECK(twice.outcome == CallOutcome::invalid_arguments);
  CHECK_THAT(text_at(twice), Catch::Contains("\"message\""));
}

TEST_CASE("an unknown tool is a -32602 error with suggestions, or an isError result") {
  PipelineFixture f;
  ToolCall call = f.make_call("ecko", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::unknown_tool);
  REQUIRE(r.protocol_error.has_value());
  CHECK(r.protocol_error->code == -32602);
  CHECK_THAT(r.protocol_error->message, Catch::Contains("Did you mean \"echo\""));
  CHECK(r.protocol_error->data["suggestions"][0] == "echo");

  f.catalog->policy.unknown_tool = UnknownToolAnswer::tool_result;
  ToolCall again = f.make_call("ecko", "{}");
  CallResult as_result = f.pipeline(again);
  CHECK_FALSE(as_result.protocol_error.has_value());
  CHECK(as_result.result.is_error);
  CHECK_THAT(text_at(as_result), Catch::Contains("Did you mean \"echo\""));
}

TEST_CASE("a call the access rules deny is an isError result naming the rule") {
  PipelineFixture f;
  f.catalog->policy.access["*"] = AccessRule{{"*"}, {"thr*"}};
  ToolCall call = f.make_call("throws", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK_THAT(text_at(r), Catch::Contains("not allowed for \"local\""));
  CHECK_THAT(text_at(r), Catch::Contains("/policy/access/*/deny/0"));
  ToolCall allowed = f.make_call("echo", echo_args("x"));
  CHECK(f.pipeline(allowed).outcome == CallOutcome::ok);
}

TEST_CASE("defaults fill absent arguments, and a fixed argument cannot be set by the caller") {
  PipelineFixture f;
  f.catalog->policy.arguments["echo"].defaults = {{"text", "default text"}};
  ToolCall call = f.make_call("echo", "{}");
  CHECK(text_at(f.pipeline(call)) == "default text");

  f.catalog->policy.arguments["echo"] = ArgumentPolicy{json::object(), {{"text", "fixed"}}};
  ToolCall fixed = f.make_call("echo", "{}");
  CHECK(text_at(f.pipeline(fixed)) == "fixed");
  ToolCall overridden = f.make_call("echo", echo_args("mine"));
  CallResult r = f.pipeline(overridden);
  CHECK(r.outcome == CallOutcome::invalid_arguments);
  CHECK_THAT(text_at(r), Catch::Contains("fixed by the operator"));
}

TEST_CASE("text that is not UTF-8 becomes an error that carries the bytes as base64") {
  PipelineFixture f;
  ToolCall call = f.make_call("raw_bytes", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::bad_result);
  CHECK_THAT(text_at(r), Catch::Contains("not valid UTF-8"));
  CHECK(text_at(r, 1) == base64_encode("ok\xff\xfe"));
}

TEST_CASE("truncation keeps a text at the limit and cuts one over it, never inside a character") {
  PipelineFixture f;
  f.catalog->limits.offload = false;
  f.catalog->limits.max_text_chars = 10;

  ToolCall at = f.make_call("echo", echo_args(multibyte(10)));
  CallResult exact = f.pipeline(at);
  CHECK(text_at(exact) == multibyte(10));
  CHECK_FALSE(exact.truncated);

  ToolCall over = f.make_call("echo", echo_args(multibyte(11)));
  CallResult cut = f.pipeline(over);
  CHECK(cut.truncated);
  CHECK(text_at(cut) == multibyte(10) +
                            "\n[toolmux: truncated: showing the first 10 of 11 characters; 1 "
                            "characters were cut]");
  CHECK(f.metrics.truncations() == 1);
}

TEST_CASE("a limit of -1 turns truncation off") {
  PipelineFixture f;
  f.catalog->limits.offload = false;
  f.catalog->limits.max_text_chars = -1;
  ToolCall call = f.make_call("echo", echo_args(std::string(300000, 'x')));
  CHECK(text_at(f.pipeline(call)).size() == 300000);
}

TEST_CASE(
    "a large text is offloaded and read back whole by read_tool_result, by its session only") {
  TempDir dir;
  PipelineFixture f;
  ResultStoreOptions options;
  options.data_dir = dir.path();
  f.results = std::make_shared<LazyResultStore>(options);
  auto registry = make_test_registry();
  REQUIRE(register_result_tools(*registry, f.results).empty());
  f.catalog = make_test_catalog(registry);
  f.catalog->limits.offload_threshold_bytes = 50000;
  f.rebuild();

  const std::string original = multibyte(60000);  // ~180 KB
  ToolCall call = f.make_call("echo", echo_args(original));
  CallResult r = f.pipeline(call);
  REQUIRE(r.offloaded);
  CHECK(r.bytes_produced == original.size());
  const std::string notice = text_at(r);
  CHECK(notice.rfind(multibyte(2000), 0) == 0);  // the preview
  const auto quote = notice.find("result_id \"") + 11;
  const std::string id = notice.substr(quote, notice.find('"', quote) - quote);
  CHECK(id.size() == 43);

  std::string joined;
  std::uint64_t offset = 0;
  for (int pages = 0; pages < 10; ++pages) {
    ToolCall read =
        f.make_call("read_tool_result",
                    json{{"result_id", id}, {"offset", offset}, {"max_chars", 7777}}.dump());
    CallResult page = f.pipeline(read);
    REQUIRE(page.outcome == CallOutcome::ok);
    CHECK_FALSE(page.offloaded);  // pages are exempt from the limits
    joined += text_at(page);
    const json& s = page.result.structured_content;
    if (!s.contains("next_offset")) break;
    offset = s["next_offset"];
  }
  CHECK(joined == original);

  // Another session asking for the same id gets the answer an unknown id gets.
  auto other = std::make_shared<Session>("other-session", "local", "other", f.sink);
  ToolCall foreign = f.make_call("read_tool_result", json{{"result_id", id}}.dump());
  foreign.session_id = other->id();
  foreign.context = std::make_shared<SessionCallContext>(other, foreign.control, 1, nullptr, "t");
  ToolCall forged = f.make_call("read_tool_result", json{{"result_id", id + "x"}}.dump());
  const std::string foreign_text = text_at(f.pipeline(foreign));
  const std::string forged_text = text_at(f.pipeline(forged));
  CHECK_THAT(foreign_text, Catch::StartsWith("No stored result with id"));
  CHECK_THAT(forged_text, Catch::StartsWith("No stored result with id"));
}

TEST_CASE("structuredContent passes whole under the limits, and too large it is stored") {
  TempDir dir;
  PipelineFixture f;
  ResultStoreOptions options;
  options.data_dir = dir.path();
  f.results = std::make_shared<LazyResultStore>(options);
  f.catalog->limits.offload_threshold_bytes = 5000;
  f.rebuild();

  ToolCall small = f.make_call("listing", R"({"n":10})");
  CallResult ok = f.pipeline(small);
  CHECK(ok.outcome == CallOutcome::ok);
  CHECK(ok.result.structured_content["items"].size() == 10);

  ToolCall big = f.make_call("listing", R"({"n":100})");
  CallResult stored = f.pipeline(big);
  CHECK(stored.offloaded);
  CHECK(stored.result.is_error);  // a client could not validate a partial structured result
  CHECK(stored.result.structured_content.is_null());
  CHECK_THAT(text_at(stored, 1), Catch::Contains("the structured result is"));
  CHECK_THAT(text_at(stored, 1), Catch::Contains("read_tool_result"));
}

TEST_CASE("structuredContent over the character limit is stored even under the byte threshold") {
  TempDir dir;
  PipelineFixture f;
  ResultStoreOptions options;
  options.data_dir = dir.path();
  f.results = std::make_shared<LazyResultStore>(options);
  f.catalog->limits.max_text_chars = 3000;  // offload threshold stays at 50,000 bytes
  f.rebuild();

  ToolCall call = f.make_call("listing", R"({"n":40})");  // ~4,000 characters of JSON
  CallResult r = f.pipeline(call);
  CHECK(r.offloaded);
  CHECK(r.truncated);  // the text block beside it was cut
  CHECK(r.result.is_error);
  CHECK_THAT(text_at(r, 1), Catch::Contains("result_id"));
}

TEST_CASE("a result that cannot be written as JSON is an error naming where") {
  PipelineFixture f;
  auto registry = make_test_registry();
  REQUIRE(registry
              ->add(spec("not_finite", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text("fine");
                      r.structured_content = {{"ratio", std::nan("")}};
                      return r;
                    })
              .empty());
  f.catalog = make_test_catalog(registry);
  ToolCall call = f.make_call("not_finite", "{}");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::bad_result);
  CHECK_THAT(text_at(r), Catch::Contains("a number that is not finite at /ratio"));
}

TEST_CASE("a result MCP does not allow is an error naming where, as for an upstream's") {
  PipelineFixture f;
  auto registry = make_test_registry();
  REQUIRE(registry
              ->add(spec("text_not_string", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r;
                      r.content = json::array({{{"type", "text"}, {"text", 5}}});
                      return r;
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("image_without_data", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text("fine");
                      r.content.push_back({{"type", "image"}, {"mimeType", "image/png"}});
                      return r;
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("structured_list", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text("fine");
                      r.structured_content = json::array({1, 2});
                      return r;
                    })
              .empty());
  f.catalog = make_test_catalog(registry);
  auto answer = [&](const std::string& tool) {
    ToolCall call = f.make_call(tool, "{}");
    CallResult r = f.pipeline(call);
    CHECK(r.outcome == CallOutcome::bad_result);
    CHECK(r.result.is_error);
    return text_at(r);
  };
  CHECK(answer("text_not_string") ==
        "Tool \"text_not_string\" returned content MCP does not allow: /content/0/text must be a "
        "string (it is a number)");
  CHECK(answer("image_without_data") ==
        "Tool \"image_without_data\" returned content MCP does not allow: /content/1/data is "
        "missing");
  CHECK(answer("structured_list") ==
        "Tool \"structured_list\" returned structuredContent MCP does not allow: "
        "/structuredContent must be an object (it is an array)");
}

namespace {

std::shared_ptr<Catalog> catalog_with_call_tool() {
  auto registry = make_test_registry();
  REQUIRE(register_call_tool(*registry).empty());
  return make_test_catalog(registry);
}

}  // namespace

TEST_CASE("call_tool reaches a tool by name through every stage") {
  PipelineFixture f;
  f.catalog = catalog_with_call_tool();
  f.catalog->aliases.tools["say"] = "echo";

  ToolCall call = f.make_call("call_tool", R"({"name":"say","arguments":{"text":"hi"}})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == "hi");
  CHECK(call.tool->spec.name == "echo");  // recorded and limited as echo

  ToolCall bad = f.make_call("call_tool", R"({"name":"echo","arguments":{"text":1}})");
  CHECK_THAT(text_at(f.pipeline(bad)), Catch::StartsWith("Invalid arguments for tool \"echo\""));

  ToolCall repeated =
      f.make_call("call_tool", R"({"name":"echo","arguments":{"text":"a","text":"b"}})");
  CHECK_THAT(text_at(f.pipeline(repeated)), Catch::Contains("argument /text: repeated object key"));

  f.catalog->policy.access["*"] = AccessRule{{}, {"echo"}};
  ToolCall denied = f.make_call("call_tool", R"({"name":"echo","arguments":{"text":"x"}})");
  CHECK(f.pipeline(denied).outcome == CallOutcome::denied);
}

TEST_CASE("call_tool answers an unknown name or a bad call with an isError result") {
  PipelineFixture f;
  f.catalog = catalog_with_call_tool();
  ToolCall unknown = f.make_call("call_tool", R"({"name":"ecko"})");
  CallResult r = f.pipeline(unknown);
  CHECK(r.outcome == CallOutcome::unknown_tool);
  CHECK_FALSE(r.protocol_error.has_value());
  CHECK_THAT(text_at(r), Catch::Contains("Did you mean \"echo\""));

  ToolCall itself = f.make_call("call_tool", R"({"name":"call_tool"})");
  CHECK_THAT(text_at(f.pipeline(itself)), Catch::Contains("cannot call itself"));
  ToolCall nameless = f.make_call("call_tool", R"({"arguments":{}})");
  CHECK(f.pipeline(nameless).outcome == CallOutcome::invalid_arguments);
}
