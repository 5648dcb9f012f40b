// The limit_result stage: truncation, offloading and the response bound on
// the whole result (src/pipeline/result_limiter.h does the work).
#include <catch2/catch.hpp>

#include <string>

#include "src/base/base64.h"
#include "src/base/utf8.h"
#include "src/builtins/result_resources.h"
#include "src/builtins/result_tools.h"
#include "src/pipeline/limit_result.h"
#include "tests/support/pipeline_fixture.h"
#include "tests/support/temp_dir.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

// "é☃𝄞" repeated: 2-, 3- and 4-byte characters.
std::string multibyte(std::size_t chars) {
  static const std::string unit[] = {"\xC3\xA9", "\xE2\x98\x83", "\xF0\x9D\x84\x9E"};
  std::string out;
  for (std::size_t i = 0; i < chars; ++i) out += unit[i % 3];
  return out;
}

}  // namespace

TEST_CASE("limit_result cuts next's answer to the limits and reports what it did") {
  PipelineFixture f;
  f.catalog->limits.offload = false;
  f.catalog->limits.max_text_chars = 10;
  StubNext next;
  next.answer = [](ToolCall&) { return CallResult::answered(ToolResult::text(multibyte(11))); };
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::limit_result(nullptr)(next.handler())(call);
  CHECK(next.calls == 1);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(r.truncated);
  CHECK_FALSE(r.offloaded);
  CHECK(r.bytes_produced == multibyte(11).size());  // what the tool said, before the cut
  CHECK_THAT(text_at(r), Catch::StartsWith(multibyte(10) + "\n[toolmux: truncated"));
}

TEST_CASE("limit_result leaves read_tool_result's pages and cancelled answers whole") {
  PipelineFixture f;
  auto registry = make_test_registry();
  REQUIRE(register_result_tools(*registry, nullptr).empty());
  f.catalog = make_test_catalog(registry);
  f.catalog->limits.offload = false;
  f.catalog->limits.max_text_chars = 10;
  StubNext next;
  next.answer = [](ToolCall&) { return CallResult::answered(ToolResult::text(multibyte(11))); };
  ToolCall page = f.resolved_call("read_tool_result", "{}");
  CallResult r = stages::limit_result(nullptr)(next.handler())(page);
  CHECK_FALSE(r.truncated);
  CHECK(text_at(r) == multibyte(11));

  next.answer = [](ToolCall&) { return CallResult::cancelled(); };
  ToolCall cancelled = f.resolved_call("echo", "{}");
  CHECK_FALSE(stages::limit_result(nullptr)(next.handler())(cancelled).truncated);
}

TEST_CASE("limit_result without a resolved tool is an internal error naming resolve_tool") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.make_call("echo", "{}");
  CallResult r = stages::limit_result(nullptr)(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::internal_error);
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

// ---------------------------------------------------------------------------
// Limits that see the whole result: binary blocks, embedded resources, and the
// total a response carries.

namespace {

constexpr std::size_t kDefaultMaxResponseBytes = 1048576;

// `n` bytes that are not text: byte i is (7i + i/256) mod 256.
std::string pattern_bytes(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + (i >> 8)) & 0xff);
  return out;
}

// Block j of the blocks tool: "block j\n" and `chars` characters of é☃𝄞.
std::string block_text(std::size_t j, std::size_t chars) {
  return "block " + std::to_string(j) + "\n" + multibyte(chars);
}

// A pipeline with read_tool_result, a result store in `dir`, and the tools
//   image {bytes, type}: a text block, then an image (or audio) block of `bytes` bytes;
//   blocks {count, chars}: `count` text blocks, block_text(j, chars);
//   embedded {bytes, binary}: an embedded resource of `bytes` bytes, a blob or text.
void use_block_tools(PipelineFixture& f, const TempDir& dir) {
  ResultStoreOptions options;
  options.data_dir = dir.path();
  f.results = std::make_shared<LazyResultStore>(options);
  auto registry = make_test_registry();
  REQUIRE(register_result_tools(*registry, f.results).empty());
  const json size = {{"type", "integer"}, {"minimum", 0}};
  REQUIRE(registry
              ->add(spec("image", object_schema({{"bytes", size}, {"type", {{"type", "string"}}}},
                                                {"bytes"})),
                    [](const json& args, CallContext&) {
                      ToolResult r = ToolResult::text("Here it is:");
                      const std::string type = args.value("type", "image");
                      r.content.push_back(
                          {{"type", type},
                           {"data", base64_encode(pattern_bytes(args["bytes"].get<std::size_t>()))},
                           {"mimeType", type == "image" ? "image/png" : "audio/wav"}});
                      return r;
                    })
              .empty());
  REQUIRE(
      registry
          ->add(
              spec("blocks", object_schema({{"count", size}, {"chars", size}}, {"count", "chars"})),
              [](const json& args, CallContext&) {
                ToolResult r;
                for (std::size_t j = 0; j < args["count"].get<std::size_t>(); ++j) {
                  r.content.push_back({{"type", "text"},
                                       {"text", block_text(j, args["chars"].get<std::size_t>())}});
                }
                return r;
              })
          .empty());
  REQUIRE(
      registry
          ->add(spec("embedded", object_schema({{"bytes", size}, {"binary", {{"type", "boolean"}}}},
                                               {"bytes", "binary"})),
                [](const json& args, CallContext&) {
                  const auto bytes = args["bytes"].get<std::size_t>();
                  json resource = {{"uri", "file:///data/report.bin"}};
                  if (args["binary"].get<bool>()) {
                    resource["mimeType"] = "application/octet-stream";
                    resource["blob"] = base64_encode(pattern_bytes(bytes));
                  } else {
                    resource["mimeType"] = "text/plain";
                    resource["text"] = std::string(bytes, 'r');
                  }
                  ToolResult r;
                  r.content.push_back({{"type", "resource"}, {"resource", resource}});
                  return r;
                })
          .empty());
  f.catalog = make_test_catalog(registry);
  f.rebuild();
}

// The result_id a notice names.
std::string named_id(const std::string& notice) {
  const auto start = notice.find("result_id \"");
  REQUIRE(start != std::string::npos);
  const auto quote = start + 11;
  return notice.substr(quote, notice.find('"', quote) - quote);
}

// A stored result read back whole with read_tool_result, page by page.
std::string read_back(PipelineFixture& f, const std::string& id) {
  std::string joined;
  std::uint64_t offset = 0;
  for (int pages = 0; pages < 10000; ++pages) {
    ToolCall read =
        f.make_call("read_tool_result", json{{"result_id", id}, {"offset", offset}}.dump());
    CallResult page = f.pipeline(read);
    REQUIRE(page.outcome == CallOutcome::ok);
    joined += text_at(page);
    const json& s = page.result.structured_content;
    if (!s.contains("next_offset")) return joined;
    offset = s["next_offset"];
  }
  FAIL("more than 10000 pages");
  return joined;
}

// The size of the result as the response carries it.
std::size_t response_bytes(const CallResult& r) { return r.result.to_json().dump().size(); }

}  // namespace

TEST_CASE("an image or audio block over the offload threshold is stored and reads back exactly") {
  TempDir dir;
  PipelineFixture f;
  use_block_tools(f, dir);
  for (const std::string type : {"image", "audio"}) {
    const std::string original = pattern_bytes(300000);  // 400,000 characters of base64
    ToolCall call = f.make_call("image", json{{"bytes", 300000}, {"type", type}}.dump());
    CallResult r = f.pipeline(call);
    REQUIRE(r.outcome == CallOutcome::ok);
    CHECK(r.offloaded);
    CHECK(response_bytes(r) < 2000);
    REQUIRE(r.result.content.size() == 2);
    CHECK(text_at(r, 0) == "Here it is:");
    // The block that replaces it says what it was and how to read it back.
    const json& notice = r.result.content[1];
    REQUIRE(notice.value("type", "") == "text");
    const std::string text = notice["text"];
    CHECK_THAT(text, Catch::Contains(type == "image" ? "an image" : "an audio clip"));
    CHECK_THAT(text, Catch::Contains(type == "image" ? "image/png" : "audio/wav"));
    CHECK_THAT(text, Catch::Contains("300000 bytes"));
    CHECK_THAT(text, Catch::Contains("read_tool_result"));
    const std::string id = named_id(text);
    CHECK_THAT(text, Catch::Contains("toolmux://results/" + id));
    CHECK(read_back(f, id) == base64_encode(original));
  }
}

TEST_CASE("an embedded resource over the offload threshold is stored, blob or text") {
  TempDir dir;
  PipelineFixture f;
  use_block_tools(f, dir);
  ToolCall blob_call = f.make_call("embedded", R"({"bytes":200000,"binary":true})");
  CallResult blob = f.pipeline(blob_call);
  REQUIRE(blob.outcome == CallOutcome::ok);
  CHECK(blob.offloaded);
  CHECK(response_bytes(blob) < 2000);
  REQUIRE(blob.result.content.size() == 1);
  const std::string blob_notice = text_at(blob);
  CHECK_THAT(blob_notice, Catch::Contains("file:///data/report.bin"));
  CHECK_THAT(blob_notice, Catch::Contains("application/octet-stream, 200000 bytes"));
  CHECK(read_back(f, named_id(blob_notice)) == base64_encode(pattern_bytes(200000)));

  ToolCall text_call = f.make_call("embedded", R"({"bytes":200000,"binary":false})");
  CallResult text = f.pipeline(text_call);
  CHECK(text.offloaded);
  CHECK(response_bytes(text) < 2000);
  const std::string text_notice = text_at(text);
  CHECK_THAT(text_notice, Catch::Contains("text/plain, 200000 bytes"));
  CHECK(read_back(f, named_id(text_notice)) == std::string(200000, 'r'));
}

TEST_CASE(
    "200 text blocks each under the threshold: the response stays bounded, the rest is stored") {
  TempDir dir;
  PipelineFixture f;
  use_block_tools(f, dir);
  // Each block is 16,000 characters, about 48,000 bytes: under the 50,000-byte threshold.
  ToolCall call = f.make_call("blocks", R"({"count":200,"chars":16000})");
  CallResult r = f.pipeline(call);
  REQUIRE(r.outcome == CallOutcome::ok);
  CHECK(r.offloaded);
  CHECK(response_bytes(r) <= kDefaultMaxResponseBytes);
  const json& content = r.result.content;
  REQUIRE(content.size() >= 2);
  const std::size_t kept = content.size() - 1;
  CHECK(kept > 10);  // as many whole blocks as fit
  for (std::size_t j = 0; j < kept; ++j) CHECK(text_at(r, j) == block_text(j, 16000));
  const std::string notice = text_at(r, kept);
  CHECK_THAT(notice, Catch::Contains("blocks " + std::to_string(kept + 1) + " to 200"));
  CHECK_THAT(notice, Catch::Contains(std::to_string(kDefaultMaxResponseBytes) + " bytes"));
  // The rest: a JSON array of the blocks that did not fit, exactly as the tool returned them.
  const json rest = json::parse(read_back(f, named_id(notice)));
  REQUIRE(rest.size() == 200 - kept);
  for (std::size_t j = kept; j < 200; ++j) {
    CHECK(rest[j - kept] == json{{"type", "text"}, {"text", block_text(j, 16000)}});
  }
}

TEST_CASE(
    "with offloading off, what does not fit the response is cut or left out, and it says so") {
  TempDir dir;
  PipelineFixture f;
  use_block_tools(f, dir);
  f.catalog->limits.offload = false;

  ToolCall image_call = f.make_call("image", R"({"bytes":2000000})");
  CallResult image = f.pipeline(image_call);
  REQUIRE(image.outcome == CallOutcome::ok);
  CHECK(image.truncated);
  CHECK_FALSE(image.offloaded);
  CHECK(response_bytes(image) <= kDefaultMaxResponseBytes);
  REQUIRE(image.result.content.size() == 2);
  CHECK(text_at(image, 0) == "Here it is:");
  const std::string left_out = text_at(image, 1);
  CHECK_THAT(left_out, Catch::Contains("block 2 (an image, image/png, 2000000 bytes)"));
  CHECK_THAT(left_out, Catch::Contains("left out"));
  CHECK_THAT(left_out, Catch::Contains(std::to_string(kDefaultMaxResponseBytes) + " bytes"));

  ToolCall blocks_call = f.make_call("blocks", R"({"count":200,"chars":16000})");
  CallResult blocks = f.pipeline(blocks_call);
  CHECK(blocks.truncated);
  CHECK(response_bytes(blocks) <= kDefaultMaxResponseBytes);
  const json& content = blocks.result.content;
  REQUIRE(content.size() >= 3);
  const std::size_t whole = content.size() - 2;  // then one cut block, then the notice
  for (std::size_t j = 0; j < whole; ++j) CHECK(text_at(blocks, j) == block_text(j, 16000));
  const std::string cut = text_at(blocks, whole);
  CHECK(cut.rfind("block " + std::to_string(whole) + "\n", 0) == 0);
  CHECK_THAT(cut, Catch::Contains("[toolmux: truncated: showing the first "));
  CHECK_THAT(text_at(blocks, whole + 1),
             Catch::Contains("blocks " + std::to_string(whole + 2) + " to 200"));
}

TEST_CASE("a result of several kinds of blocks within the limits passes unchanged") {
  TempDir dir;
  PipelineFixture f;
  use_block_tools(f, dir);
  for (const char* args : {R"({"bytes":30000})", R"({"bytes":30000,"type":"audio"})"}) {
    ToolCall call = f.make_call("image", args);
    CallResult r = f.pipeline(call);
    CHECK_FALSE(r.offloaded);
    CHECK_FALSE(r.truncated);
    CHECK(r.result.content[1]["data"] == base64_encode(pattern_bytes(30000)));
  }
  ToolCall blocks_call = f.make_call("blocks", R"({"count":20,"chars":10000})");  // ~600 KB
  CallResult blocks = f.pipeline(blocks_call);
  CHECK_FALSE(blocks.offloaded);
  REQUIRE(blocks.result.content.size() == 20);
  CHECK(text_at(blocks, 19) == block_text(19, 10000));
  ToolCall embedded_call = f.make_call("embedded", R"({"bytes":30000,"binary":true})");
  CallResult embedded = f.pipeline(embedded_call);
  CHECK_FALSE(embedded.offloaded);
  CHECK(embedded.result.content[0]["resource"]["blob"] == base64_encode(pattern_bytes(30000)));
}
