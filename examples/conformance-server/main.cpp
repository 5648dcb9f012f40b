// toolmux-conformance-server: toolmux with the native fixture tools, resources,
// prompts and completions that the official MCP conformance suite
// (@modelcontextprotocol/conformance, server mode) uses. It shows the library
// API: each tool is a ToolSpec and a C++ handler, whose CallContext sends
// progress and log messages and asks the client (elicitation, sampling) on the
// call's own stream; resources and prompts come from a ResourceProvider and a
// PromptProvider, and the tool update_watched_resource shows a provider
// reporting a change to the sessions subscribed to a resource. Three more tools,
// large_image, many_text_blocks and large_embedded_resource, return results as
// large as asked, for toolmux's own end-to-end tests of its result limits
// (tests/e2e/result_blocks.test.mjs).
//
//   toolmux-conformance-server serve --http 127.0.0.1:8931
//
// What each scenario expects of these tools: tests/conformance/SCENARIOS.md.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catalog/uri_template.h"
#include "src/app/toolmux.h"
#include "src/base/base64.h"

namespace {

using toolmux::CallContext;
using toolmux::Completion;
using toolmux::CompletionRequest;
using toolmux::json;
using toolmux::NativeTool;
using toolmux::Outcome;
using toolmux::Prompt;
using toolmux::PromptResult;
using toolmux::ProviderError;
using toolmux::Resource;
using toolmux::ResourceContents;
using toolmux::ResourceTemplate;
using toolmux::ToolResult;

// A 1x1 PNG and a 46-byte silent WAV, base64.
constexpr const char* kPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJg"
    "gg==";
constexpr const char* kWav = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==";

const json kNoArguments = {{"type", "object"}, {"properties", json::object()}};

NativeTool tool(std::string name, std::string description, toolmux::ToolHandler handler,
                json schema = kNoArguments) {
  NativeTool t;
  t.spec.name = std::move(name);
  t.spec.description = std::move(description);
  t.spec.input_schema = std::move(schema);
  t.spec.side_effect = "read_only";
  t.spec.timeout = std::chrono::seconds(60);
  // Each returns at once, or waits only while its call is not cancelled (the
  // deadline cancels it) or for the client's answer, which ends there too.
  t.spec.returns_by_deadline = true;
  t.handler = std::move(handler);
  return t;
}

void pause(CallContext& context, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!context.cancelled() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

ToolResult blocks(json content) {
  ToolResult r;
  r.content = std::move(content);
  return r;
}

// Sends an elicitation/create form and reports what the client answered.
ToolResult elicit(CallContext& context, const std::string& message, json schema,
                  const std::string& prefix) {
  if (!context.client_capabilities().contains("elicitation")) {
    return ToolResult::error("The client did not declare the elicitation capability.");
  }
  auto answer = context.ask_client(
      "elicitation/create",
      {{"mode", "form"}, {"message", message}, {"requestedSchema", std::move(schema)}});
  if (!answer.result) return ToolResult::error("Elicitation failed: " + answer.error);
  const json& r = *answer.result;
  return ToolResult::text(prefix + "action=" + r.value("action", std::string("?")) +
                          ", content=" + r.value("content", json::object()).dump());
}

// The fixture resources: two static ones, one that update_watched_resource
// changes, and the template test://template/{id}/data.
class FixtureResources final : public toolmux::ResourceProvider {
 public:
  static constexpr const char* kWatched = "test://watched-resource";
  static constexpr const char* kTemplate = "test://template/{id}/data";

  Outcome<std::vector<Resource>> list_resources(CallContext&) override {
    std::vector<Resource> out(3);
    out[0].uri = "test://static-text";
    out[0].name = "Static Text Resource";
    out[0].description = "A static text resource for testing";
    out[0].mime_type = "text/plain";
    out[1].uri = "test://static-binary";
    out[1].name = "Static Binary Resource";
    out[1].description = "A static binary resource (image) for testing";
    out[1].mime_type = "image/png";
    out[2].uri = kWatched;
    out[2].name = "Watched Resource";
    out[2].description = "A resource for testing subscriptions";
    out[2].mime_type = "text/plain";
    return out;
  }

  Outcome<std::vector<ResourceTemplate>> list_resource_templates(CallContext&) override {
    ResourceTemplate t;
    t.uri_template = kTemplate;
    t.name = "Resource Template";
    t.description = "A resource template with parameter substitution";
    t.mime_type = "application/json";
    return std::vector<ResourceTemplate>{t};
  }

  Outcome<std::vector<ResourceContents>> read_resource(const std::string& uri,
                                                       CallContext&) override {
    if (uri == "test://static-text") {
      return std::vector{ResourceContents::text_of(
          uri, "text/plain", "This is the content of the static text resource.")};
    }
    if (uri == "test://static-binary") {
      return std::vector{ResourceContents::blob_of(uri, "image/png", kPng)};
    }
    if (uri == kWatched) {
      std::lock_guard lock(mutex_);
      return std::vector{ResourceContents::text_of(uri, "text/plain", watched_text_)};
    }
    if (auto values = toolmux::match_uri_template(kTemplate, uri)) {
      const std::string& id = values->at("id");
      const nlohmann::ordered_json data{
          {"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
      return std::vector{ResourceContents::text_of(uri, "application/json", data.dump())};
    }
    return ProviderError::resource_not_found(uri);
  }

  Outcome<Completion> complete(const std::string&, const CompletionRequest& request,
                               CallContext&) override {
    return toolmux::complete_from({"123", "124", "200"}, request.value);
  }

  // Changes the watched resource and tells its subscribers.
  void update_watched(std::string text) {
    {
      std::lock_guard lock(mutex_);
      watched_text_ = std::move(text);
    }
    events().resource_updated(kWatched);
  }

 private:
  std::mutex mutex_;
  std::string watched_text_ = "Watched resource content";
};

class FixturePrompts final : public toolmux::PromptProvider {
 public:
  Outcome<std::vector<Prompt>> list_prompts(CallContext&) override {
    std::vector<Prompt> out(4);
    out[0].name = "test_simple_prompt";
    out[0].description = "A simple prompt without arguments";
    out[1].name = "test_prompt_with_arguments";
    out[1].description = "A prompt with required arguments";
    out[1].arguments = {{"arg1", "", "First test argument", true},
                        {"arg2", "", "Second test argument", true}};
    out[2].name = "test_prompt_with_embedded_resource";
    out[2].description = "A prompt that includes an embedded resource";
    out[2].arguments = {{"resourceUri", "", "URI of the resource to embed", true}};
    out[3].name = "test_prompt_with_image";
    out[3].description = "A prompt that includes image content";
    return out;
  }

  Outcome<PromptResult> get_prompt(const std::string& name,
                                   const std::map<std::string, std::string>& args,
                                   CallContext&) override {
    auto text = [](std::string t) { return json{{"type", "text"}, {"text", std::move(t)}}; };
    PromptResult r;
    if (name == "test_simple_prompt") {
      r.messages = {{"user", text("This is a simple prompt for testing.")}};
    } else if (name == "test_prompt_with_arguments") {
      r.messages = {{"user", text("Prompt with arguments: arg1='" + args.at("arg1") + "', arg2='" +
                                  args.at("arg2") + "'")}};
    } else if (name == "test_prompt_with_embedded_resource") {
      r.messages = {{"user",
                     {{"type", "resource"},
                      {"resource",
                       {{"uri", args.at("resourceUri")},
                        {"mimeType", "text/plain"},
                        {"text", "Embedded resource content for testing."}}}}},
                    {"user", text("Please process the embedded resource above.")}};
    } else if (name == "test_prompt_with_image") {
      r.messages = {{"user", {{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}}},
                    {"user", text("Please analyze the image above.")}};
    } else {
      return ProviderError::invalid_params("unknown prompt \"" + name + "\"");
    }
    return r;
  }

  Outcome<Completion> complete(const std::string&, const CompletionRequest& request,
                               CallContext&) override {
    return toolmux::complete_from({"testValue1", "testValue2", "sampleValue"}, request.value);
  }
};

// `n` bytes that are not text: byte i is (7i + i/256) mod 256.
std::string pattern_bytes(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + (i >> 8)) & 0xff);
  return out;
}

// `count` characters cycling through a, é, ☃, 𝄞 (1 to 4 bytes in UTF-8), from index `start`.
std::string cycle_chars(std::size_t count, std::size_t start) {
  static const char* const kChars[] = {"a", "\u00e9", "\u2603", "\U0001D11E"};
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += kChars[(i + start) % 4];
  return out;
}

json size_schema(const char* description, std::int64_t max) {
  return {{"type", "integer"}, {"minimum", 0}, {"maximum", max}, {"description", description}};
}

// The tools that return large results (see the top of the file).
void add_large_result_tools(std::vector<NativeTool>& tools) {
  tools.push_back(tool(
      "large_image",
      "Returns one PNG image block of `bytes` bytes (byte i is (7i + i/256) mod 256).",
      [](const json& args, CallContext&) {
        return blocks(
            {{{"type", "image"},
              {"data", toolmux::base64_encode(pattern_bytes(args.at("bytes").get<std::size_t>()))},
              {"mimeType", "image/png"}}});
      },
      {{"type", "object"},
       {"properties", {{"bytes", size_schema("The image's size in bytes.", 64 << 20)}}},
       {"required", {"bytes"}}}));
  tools.push_back(
      tool("many_text_blocks",
           "Returns `count` text blocks; block j is \"block j\", a newline and `chars` characters "
           "cycling through a, \u00e9, \u2603, \U0001D11E from index j mod 4.",
           [](const json& args, CallContext&) {
             json content = json::array();
             const auto count = args.at("count").get<std::size_t>();
             const auto chars = args.at("chars").get<std::size_t>();
             for (std::size_t j = 0; j < count; ++j) {
               content.push_back(
                   {{"type", "text"},
                    {"text", "block " + std::to_string(j) + "\n" + cycle_chars(chars, j % 4)}});
             }
             return blocks(std::move(content));
           },
           {{"type", "object"},
            {"properties",
             {{"count", size_schema("How many blocks.", 10000)},
              {"chars", size_schema("Characters in each block, after its first line.", 1 << 20)}}},
            {"required", {"count", "chars"}}}));
  tools.push_back(
      tool("large_embedded_resource",
           "Returns one embedded resource, test://large-resource: with `binary`, a blob of `size` "
           "bytes (as large_image's); else a text of `size` characters (as many_text_blocks' block "
           "0 after its first line).",
           [](const json& args, CallContext&) {
             json resource = {{"uri", "test://large-resource"}};
             if (args.at("binary").get<bool>()) {
               resource["mimeType"] = "application/octet-stream";
               resource["blob"] =
                   toolmux::base64_encode(pattern_bytes(args.at("size").get<std::size_t>()));
             } else {
               resource["mimeType"] = "text/plain";
               resource["text"] = cycle_chars(args.at("size").get<std::size_t>(), 0);
             }
             return blocks({{{"type", "resource"}, {"resource", std::move(resource)}}});
           },
           {{"type", "object"},
            {"properties",
             {{"size", size_schema("Bytes of the blob, or characters of the text.", 64 << 20)},
              {"binary", {{"type", "boolean"}, {"description", "A blob rather than a text."}}}}},
            {"required", {"size", "binary"}}}));
}

std::vector<NativeTool> fixture_tools(const std::shared_ptr<FixtureResources>& resources) {
  std::vector<NativeTool> tools;
  tools.push_back(tool("test_simple_text", "Returns a fixed text.", [](const json&, CallContext&) {
    return ToolResult::text("This is a simple text response for testing.");
  }));
  tools.push_back(
      tool("test_image_content", "Returns a small PNG image.", [](const json&, CallContext&) {
        return blocks({{{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}}});
      }));
  tools.push_back(
      tool("test_audio_content", "Returns a short WAV sound.", [](const json&, CallContext&) {
        return blocks({{{"type", "audio"}, {"data", kWav}, {"mimeType", "audio/wav"}}});
      }));
  tools.push_back(tool("test_embedded_resource", "Returns an embedded text resource.",
                       [](const json&, CallContext&) {
                         return blocks({{{"type", "resource"},
                                         {"resource",
                                          {{"uri", "test://embedded-resource"},
                                           {"mimeType", "text/plain"},
                                           {"text", "This is an embedded resource content."}}}}});
                       }));
  tools.push_back(
      tool("test_multiple_content_types", "Returns text, an image and a resource in one result.",
           [](const json&, CallContext&) {
             return blocks({{{"type", "text"}, {"text", "Multiple content types test:"}},
                            {{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}},
                            {{"type", "resource"},
                             {"resource",
                              {{"uri", "test://mixed-content-resource"},
                               {"mimeType", "application/json"},
                               {"text", "{\"test\":\"data\",\"value\":123}"}}}}});
           }));
  tools.push_back(tool("test_tool_with_logging", "Sends three log messages while it runs.",
                       [](const json&, CallContext& context) {
                         context.log(toolmux::LogLevel::info, "Tool execution started");
                         pause(context, 50);
                         context.log(toolmux::LogLevel::info, "Tool processing data");
                         pause(context, 50);
                         context.log(toolmux::LogLevel::info, "Tool execution completed");
                         return ToolResult::text("Tool with logging executed successfully");
                       }));
  tools.push_back(tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.",
                       [](const json&, CallContext& context) {
                         for (double p : {0.0, 50.0, 100.0}) {
                           context.report_progress(p, 100.0, "");
                           if (p < 100) pause(context, 50);
                         }
                         return ToolResult::text("Progress test completed");
                       }));
  tools.push_back(
      tool("test_error_handling", "Always fails, as a tool error.", [](const json&, CallContext&) {
        return ToolResult::error("This tool intentionally returns an error for testing");
      }));
  tools.push_back(tool(
      "test_sampling", "Asks the client's model to answer a prompt (sampling).",
      [](const json& args, CallContext& context) {
        if (!context.client_capabilities().contains("sampling")) {
          return ToolResult::error("The client did not declare the sampling capability.");
        }
        auto answer = context.ask_client(
            "sampling/createMessage",
            {{"messages",
              {{{"role", "user"},
                {"content", {{"type", "text"}, {"text", args.value("prompt", "")}}}}}},
             {"maxTokens", 100}});
        if (!answer.result) return ToolResult::error("Sampling failed: " + answer.error);
        const json& content = answer.result->value("content", json::object());
        return ToolResult::text("LLM response: " + content.value("text", std::string()));
      },
      {{"type", "object"},
       {"properties", {{"prompt", {{"type", "string"}, {"description", "The prompt to send"}}}}},
       {"required", {"prompt"}}}));
  tools.push_back(tool(
      "test_elicitation", "Asks the user for a username and an email (elicitation).",
      [](const json& args, CallContext& context) {
        json schema = {{"type", "object"},
                       {"properties",
                        {{"username", {{"type", "string"}, {"description", "User's response"}}},
                         {"email", {{"type", "string"}, {"description", "User's email address"}}}}},
                       {"required", {"username", "email"}}};
        return elicit(context, args.value("message", ""), std::move(schema), "User response: ");
      },
      {{"type", "object"},
       {"properties",
        {{"message", {{"type", "string"}, {"description", "The message to show the user"}}}}},
       {"required", {"message"}}}));
  tools.push_back(
      tool("test_elicitation_sep1034_defaults", "Asks for a form whose fields have defaults.",
           [](const json&, CallContext& context) {
             json schema = json::parse(R"json({"type":"object","properties":{
          "name":{"type":"string","description":"User name","default":"John Doe"},
          "age":{"type":"integer","description":"User age","default":30},
          "score":{"type":"number","description":"User score","default":95.5},
          "status":{"type":"string","description":"User status",
                    "enum":["active","inactive","pending"],"default":"active"},
          "verified":{"type":"boolean","description":"Verification status","default":true}},
          "required":[]})json");
             return elicit(context, "Please review and update the form fields with defaults",
                           std::move(schema), "Elicitation completed: ");
           }));
  tools.push_back(tool("test_elicitation_sep1330_enums",
                       "Asks for a form with every kind of enum field.",
                       [](const json&, CallContext& context) {
                         json schema = json::parse(R"json({"type":"object","properties":{
          "untitledSingle":{"type":"string","description":"Select one option",
                            "enum":["option1","option2","option3"]},
          "titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[
            {"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},
            {"const":"value3","title":"Third Option"}]},
          "legacyEnum":{"type":"string","description":"Select one option (legacy)",
                        "enum":["opt1","opt2","opt3"],
                        "enumNames":["Option One","Option Two","Option Three"]},
          "untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,
                           "maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
          "titledMulti":{"type":"array","description":"Select multiple options with titles",
                         "minItems":1,"maxItems":3,"items":{"anyOf":[
                           {"const":"value1","title":"First Choice"},
                           {"const":"value2","title":"Second Choice"},
                           {"const":"value3","title":"Third Choice"}]}}},
          "required":[]})json");
                         return elicit(context, "Please select options from the enum fields",
                                       std::move(schema), "Elicitation completed: ");
                       }));
  tools.push_back(tool(
      "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
      [](const json& args, CallContext&) {
        return ToolResult::text("JSON Schema 2020-12 tool called with: " + args.dump());
      },
      json::parse(R"json({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
        "$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},
                                                         "city":{"type":"string"}}}},
        "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},
        "additionalProperties":false})json")));
  tools.push_back(
      tool("test_reconnection",
           "Closes its response stream before answering; the client reconnects for the result.",
           [](const json&, CallContext& context) {
             pause(context, 20);
             context.release_stream();
             pause(context, 100);
             return ToolResult::text(
                 "Reconnection test completed successfully. If you received this, the client "
                 "properly reconnected after stream closure.");
           }));
  tools.push_back(
      tool("update_watched_resource",
           "Replaces the text of test://watched-resource; its subscribers are notified.",
           [resources](const json& args, CallContext&) {
             resources->update_watched(args.value("text", ""));
             return ToolResult::text("test://watched-resource updated");
           },
           {{"type", "object"},
            {"properties", {{"text", {{"type", "string"}, {"description", "The new text"}}}}},
            {"required", {"text"}}}));
  add_large_result_tools(tools);
  return tools;
}

}  // namespace

int main(int argc, char** argv) {
  auto resources = std::make_shared<FixtureResources>();
  toolmux::NativeProviders providers;
  providers.resources.push_back(resources);
  providers.prompts.push_back(std::make_shared<FixturePrompts>());
  const int code = toolmux::run_toolmux(std::vector<std::string>(argv + 1, argv + argc),
                                        fixture_tools(resources), providers);
  std::fflush(nullptr);
  _exit(code);
}
