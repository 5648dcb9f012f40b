// The result limits on a whole result (src/pipeline/result_limiter.h), on results built
// here, with a real result store in a temporary folder.
#include "src/pipeline/result_limiter.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "src/base/base64.h"
#include "tests/support/temp_dir.h"

using namespace toolmux;
using nlohmann::json;
using toolmux::testing::TempDir;

namespace {

// A result store in a temporary folder, and the StorePayload that fills it.
struct Store {
  TempDir dir;
  std::unique_ptr<ResultStore> store;
  std::vector<StoredFormat> formats;  // of each put, in order

  Store() {
    ResultStoreOptions options;
    options.data_dir = dir.path();
    auto opened = ResultStore::open(options);
    INFO(opened.message());
    REQUIRE(opened.ok());
    store = std::move(opened).value();
  }

  StorePayload payload() {
    return [this](std::string_view text, const StoredFormat& format) {
      formats.push_back(format);
      auto id = store->put("owner", text, format);
      return id.ok() ? std::move(id).value() : std::string();
    };
  }

  std::string read(const std::string& id) const {
    auto page = store->read("owner", id, 0, std::size_t{1} << 30);
    REQUIRE(page.ok());
    return page->text;
  }
};

json text_block(std::string text) { return {{"type", "text"}, {"text", std::move(text)}}; }

ToolResult blocks(std::size_t count, std::size_t bytes, char fill = 'x') {
  ToolResult r;
  for (std::size_t i = 0; i < count; ++i) {
    r.content.push_back(text_block(std::to_string(i) + ":" + std::string(bytes, fill)));
  }
  return r;
}

// The result_id a notice names.
std::string named_id(const std::string& notice) {
  const auto quote = notice.find("result_id \"");
  REQUIRE(quote != std::string::npos);
  return notice.substr(quote + 11, 43);
}

ResultLimits limits_with(std::uint64_t max_response_bytes, bool offload = true) {
  ResultLimits limits;
  limits.max_response_bytes = max_response_bytes;
  limits.offload = offload;
  return limits;
}

}  // namespace

TEST_CASE("json_size is the size of the JSON the server writes") {
  const std::vector<json> values = {
      json::object(),
      json::array(),
      nullptr,
      true,
      false,
      0,
      -12345,
      std::uint64_t{18446744073709551615u},
      0.1,
      -2.5e300,
      "plain",
      std::string("quote \" backslash \\ slash / tab \t newline \n cr \r bell \x07 del \x7f"),
      std::string("\x01\x1f\b\f"),
      "é☃𝄞",
      json::parse(R"({"a":[1,{"b":null,"c\n":"d"}],"e":{},"f":[[],[true,false]]})"),
  };
  for (const json& value : values) {
    INFO(value.dump());
    CHECK(json_size(value) == value.dump().size());
  }
  ToolResult result = blocks(3, 10);
  CHECK(result_json_size(result) == result.to_json().dump().size());
  result.is_error = true;
  result.structured_content = {{"n", 1}, {"s", "a\"b"}};
  CHECK(result_json_size(result) == result.to_json().dump().size());
  CHECK(result_json_size(ToolResult{}) == ToolResult{}.to_json().dump().size());
}

TEST_CASE("a result within the limits is left as it is") {
  Store s;
  ToolResult result = blocks(10, 1000);
  result.content.push_back({{"type", "image"}, {"data", base64_encode("png")}, {"mimeType", "x"}});
  result.content.push_back({{"type", "resource_link"}, {"uri", "file:///a"}, {"name", "a"}});
  result.structured_content = {{"ok", true}};
  const ToolResult original = result;
  const LimitReport report = apply_result_limits(result, ResultLimits{}, s.payload());
  CHECK_FALSE(report.offloaded);
  CHECK_FALSE(report.truncated);
  CHECK(result.to_json() == original.to_json());
}

TEST_CASE("a result over max_response_bytes keeps the blocks that fit and stores the rest") {
  Store s;
  ToolResult result = blocks(100, 1000);
  const json original = result.content;
  const LimitReport report = apply_result_limits(result, limits_with(20000), s.payload());
  CHECK(report.offloaded);
  CHECK(result_json_size(result) <= 20000);
  const std::size_t kept = result.content.size() - 1;
  CHECK(kept >= 16);  // 20000 bytes hold 17 blocks of ~1030 bytes, less the notice's room
  for (std::size_t i = 0; i < kept; ++i) CHECK(result.content[i] == original[i]);
  const std::string notice = result.content.back()["text"];
  CHECK_THAT(notice, Catch::StartsWith("[toolmux: this result is "));
  CHECK_THAT(notice, Catch::Contains("more than the 20000 bytes a response may carry here, so "
                                     "blocks " +
                                     std::to_string(kept + 1) + " to 100 (" +
                                     std::to_string(100 - kept) + " blocks, "));
  CHECK_THAT(notice, Catch::Contains("a JSON array of MCP content blocks"));
  const std::string id = named_id(notice);
  CHECK_THAT(notice, Catch::Contains("toolmux://results/" + id));
  CHECK(s.formats.back().mime_type == "application/json");
  const json rest = json::parse(s.read(id));
  CHECK(rest == json(std::vector<json>(original.begin() + static_cast<std::ptrdiff_t>(kept),
                                       original.end())));
}

TEST_CASE("the response bound holds for any mix of blocks, with or without a store") {
  // Text of control characters takes six times its bytes in JSON.
  const std::string escapes(3000, '\x01');
  std::vector<std::pair<std::string, ToolResult>> results;
  results.emplace_back("many small blocks", blocks(3000, 10));
  results.emplace_back("a few large blocks", blocks(5, 40000));
  results.emplace_back("escaped text", blocks(20, 3000, '\x01'));
  ToolResult mixed = blocks(3, 5000, '"');
  mixed.content.push_back(
      {{"type", "image"}, {"data", base64_encode(std::string(30000, 'i'))}, {"mimeType", "a/b"}});
  mixed.content.push_back(
      {{"type", "resource"}, {"resource", {{"uri", "u:" + escapes}, {"text", escapes}}}});
  mixed.content.push_back({{"type", "unknown"}, {"stuff", std::vector<int>(5000, 7)}});
  mixed.structured_content = {{"list", std::vector<std::string>(100, "abc")}};
  results.emplace_back("mixed kinds", mixed);
  ToolResult one = blocks(1, 500000);
  results.emplace_back("one block far over", one);

  for (const std::uint64_t budget : {std::uint64_t{16384}, std::uint64_t{50000}}) {
    for (const bool offload : {true, false}) {
      for (const auto& [name, original] : results) {
        INFO(name << ", max_response_bytes " << budget << (offload ? "" : ", offload off"));
        Store s;
        ToolResult result = original;
        ResultLimits limits = limits_with(budget, offload);
        limits.offload_threshold_bytes = 1u << 30;  // only the response bound acts
        limits.max_text_chars = -1;
        const LimitReport report = apply_result_limits(result, limits, s.payload());
        CHECK(result.to_json().dump().size() <= budget);
        CHECK((report.offloaded || report.truncated));
        if (!offload) CHECK(s.formats.empty());
      }
    }
  }
}

TEST_CASE("without a store, a text that does not fit is cut to fit and the rest left out") {
  ToolResult result = blocks(30, 1000);
  const json original = result.content;
  const LimitReport report = apply_result_limits(result, limits_with(20000, false), nullptr);
  CHECK(report.truncated);
  CHECK_FALSE(report.offloaded);
  CHECK(result_json_size(result) <= 20000);
  const std::size_t whole = result.content.size() - 2;
  for (std::size_t i = 0; i < whole; ++i) CHECK(result.content[i] == original[i]);
  const std::string cut = result.content[whole]["text"];
  const std::string source = original[whole]["text"];
  const std::size_t marker = cut.find("\n[toolmux: truncated: showing the first ");
  REQUIRE(marker != std::string::npos);
  CHECK(source.rfind(cut.substr(0, marker), 0) == 0);
  CHECK_THAT(cut,
             Catch::EndsWith(" of " + std::to_string(source.size()) + " characters; " +
                             std::to_string(source.size() - marker) + " characters were cut]"));
  ToolResult whole_result;
  whole_result.content = original;
  CHECK(result.content.back()["text"] ==
        "[toolmux: this result is " + std::to_string(result_json_size(whole_result)) +
            " bytes, more than the 20000 bytes a response may carry here, so block " +
            std::to_string(whole + 1) + " was cut and blocks " + std::to_string(whole + 2) +
            " to 30 (" + std::to_string(30 - whole - 1) + " blocks, " +
            std::to_string((30 - whole - 1) * 1028) + " bytes) were left out.]");
}

TEST_CASE("structuredContent stays whole when it fits, the blocks give way first") {
  Store s;
  ToolResult result = blocks(100, 1000);
  result.structured_content = {{"items", std::vector<std::string>(50, std::string(100, 's'))}};
  const json structured = result.structured_content;
  apply_result_limits(result, limits_with(20000), s.payload());
  CHECK(result.structured_content == structured);
  CHECK_FALSE(result.is_error);
  CHECK(result_json_size(result) <= 20000);
  CHECK_THAT(result.content.back()["text"].get<std::string>(), Catch::Contains("are not shown"));
}

TEST_CASE("structuredContent too large for the response is stored, and the result is an error") {
  Store s;
  ToolResult result = ToolResult::text("summary");
  result.structured_content = {{"items", std::vector<std::string>(300, std::string(100, 's'))}};
  const std::string serialized = result.structured_content.dump();
  ResultLimits limits = limits_with(20000);
  limits.offload_threshold_bytes = 1u << 30;
  limits.max_text_chars = -1;
  const LimitReport report = apply_result_limits(result, limits, s.payload());
  CHECK(report.offloaded);
  CHECK(result.is_error);
  CHECK(result.structured_content.is_null());
  REQUIRE(result.content.size() == 2);
  const std::string notice = result.content[1]["text"];
  CHECK_THAT(notice, Catch::Contains("the structured result is " +
                                     std::to_string(serialized.size()) + " bytes"));
  CHECK(s.read(named_id(notice)) == serialized);
  CHECK(result_json_size(result) <= 20000);
}

TEST_CASE("a stored block's notice says what it was, its type and size, in a few hundred bytes") {
  Store s;
  const std::string bytes(60000, '\xfe');
  ToolResult result;
  result.content.push_back({{"type", "resource"},
                            {"resource",
                             {{"uri", "file:///" + std::string(10000, 'u')},
                              {"mimeType", std::string(10000, 'm')},
                              {"blob", base64_encode(bytes)}}}});
  result.content.push_back(
      {{"type", "audio"}, {"data", base64_encode(bytes)}, {"mimeType", "audio/ogg"}});
  result.content.push_back(
      {{"type", "image"}, {"data", std::string(60000, '%')}, {"mimeType", "image/png"}});
  const LimitReport report = apply_result_limits(result, ResultLimits{}, s.payload());
  CHECK(report.offloaded);
  REQUIRE(result.content.size() == 3);
  const std::string resource = result.content[0]["text"];
  CHECK(resource.size() < 700);
  CHECK_THAT(resource, Catch::StartsWith("[toolmux: an embedded resource \"file:///" +
                                         std::string(92, 'u') + "…\" (60000 bytes) is too large"));
  CHECK_THAT(resource, Catch::Contains("to read its base64 blob (80000 characters, up to 20000 a "
                                       "page), or read the resource toolmux://results/"));
  CHECK(s.formats[0].mime_type == "application/octet-stream");  // the one given was too long
  CHECK(s.formats[0].base64);
  CHECK(s.read(named_id(resource)) == base64_encode(bytes));

  const std::string audio = result.content[1]["text"];
  CHECK_THAT(audio, Catch::StartsWith("[toolmux: an audio clip (audio/ogg, 60000 bytes) is too "
                                      "large to show here. It is stored as result_id \""));
  CHECK(s.formats[1].mime_type == "audio/ogg");

  // Data that is not base64 is stored as it is, as text, and said to be so.
  const std::string image = result.content[2]["text"];
  CHECK_THAT(image, Catch::Contains("(image/png, 60000 characters that are not valid base64)"));
  CHECK_FALSE(s.formats[2].base64);
  CHECK(s.read(named_id(image)) == std::string(60000, '%'));
}

TEST_CASE("a block the store fails to take stays, and the response bound still holds") {
  const StorePayload failing = [](std::string_view, const StoredFormat&) { return std::string(); };
  ToolResult result = ToolResult::text("before");
  result.content.push_back({{"type", "image"},
                            {"data", base64_encode(std::string(1500000, 'i'))},
                            {"mimeType", "image/png"}});
  const LimitReport report = apply_result_limits(result, ResultLimits{}, failing);
  CHECK_FALSE(report.offloaded);
  CHECK(report.truncated);
  REQUIRE(result.content.size() == 2);
  CHECK(result.content[0]["text"] == "before");
  CHECK_THAT(result.content[1]["text"].get<std::string>(),
             Catch::EndsWith("so block 2 (an image, image/png, 1500000 bytes) was left out.]"));
}

TEST_CASE("a text the store fails to take is cut, and the marker says it could not be stored") {
  const StorePayload failing = [](std::string_view, const StoredFormat&) { return std::string(); };
  ResultLimits limits;
  limits.offload_threshold_bytes = 1000;
  limits.max_text_chars = 2000;
  ToolResult result = ToolResult::text(std::string(5000, 'y'));
  const LimitReport report = apply_result_limits(result, limits, failing);
  CHECK(report.truncated);
  CHECK_FALSE(report.offloaded);
  REQUIRE(result.content.size() == 1);
  CHECK(result.content[0]["text"] ==
        std::string(2000, 'y') +
            "\n[toolmux: truncated: showing the first 2000 of 5000 characters; 3000 characters "
            "were cut]\n[toolmux: the whole result could not be stored to read page by page: the "
            "result store is unavailable now; the server's log says why. Calling again later may "
            "store it.]");

  // Without a store to try (offloading off), the marker alone.
  ToolResult plain = ToolResult::text(std::string(5000, 'y'));
  apply_result_limits(plain, limits, nullptr);
  CHECK_THAT(plain.content[0]["text"].get<std::string>(), Catch::EndsWith("were cut]"));
}

TEST_CASE("result_payload_bytes counts text, binary data, resources and structuredContent") {
  ToolResult result = ToolResult::text("12345");
  result.content.push_back({{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}});
  result.content.push_back({{"type", "resource"}, {"resource", {{"uri", "u"}, {"text", "abc"}}}});
  result.content.push_back({{"type", "resource_link"}, {"uri", "u"}, {"name", "n"}});
  result.structured_content = {{"a", 1}};
  CHECK(result_payload_bytes(result) == 5 + 4 + 3 + 7);
}
