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
// The fixtures of the 2026-07-28 scenarios (test_input_required_result_*,
// the prompt test_input_required_result_prompt, test_missing_capability and
// the server-stateless diagnostics) ask their questions with ask_client and a
// key: a 2026-07-28 client gets them in an input_required result and retries
// with the answers (MRTR), a legacy client as requests on the call's stream.
// test_trigger_tool_change changes the tool list by adding or removing the
// command tool test_toggled_tool in the catalog file (serve --catalog FILE),
// then reloading it (SIGHUP).
//
//   toolmux-conformance-server serve --http 127.0.0.1:8931
//
// What each scenario expects of these tools: tests/conformance/SCENARIOS.md.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
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
using toolmux::ClientAnswer;
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

// A tool that answers at once and asks the client nothing: the stdio reader
// runs its calls itself, with no hand-off (ToolSpec::runs_on_reader).
NativeTool on_reader(NativeTool t) {
  t.spec.runs_on_reader = true;
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

// An elicitation/create form asking for one string field, `name`.
json form(const std::string& message, const std::string& name) {
  return {
      {"message", message},
      {"requestedSchema",
       {{"type", "object"}, {"properties", {{name, {{"type", "string"}}}}}, {"required", {name}}}}};
}

// The text of an accepted form's field, or "" (declined, or not a string).
std::string field(const json& elicit_result, const std::string& name) {
  const json content = elicit_result.value("content", json::object());
  auto it = content.find(name);
  return it != content.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The text an answer to sampling/createMessage carries, or "".
std::string sampled_text(const json& sampling_result) {
  const json content = sampling_result.value("content", json::object());
  return content.is_object() ? content.value("text", std::string()) : std::string();
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
    std::vector<Prompt> out(5);
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
    out[4].name = "test_input_required_result_prompt";
    out[4].description = "A prompt that asks the user for its context first (elicitation)";
    return out;
  }

  Outcome<PromptResult> get_prompt(const std::string& name,
                                   const std::map<std::string, std::string>& args,
                                   CallContext& context) override {
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
    } else if (name == "test_input_required_result_prompt") {
      auto answer = context.ask_client("elicitation/create",
                                       form("What context should the prompt use?", "context"), {},
                                       "user_context");
      if (answer.pending) return r;  // asked in the answer; this run's result is discarded
      if (!answer.result) return ProviderError::unavailable("Elicitation failed: " + answer.error);
      r.messages = {{"user", text("Prompt with context: " + field(*answer.result, "context"))}};
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

// The catalog file of `serve --catalog FILE` (or --catalog=FILE) in `args`; "" without one.
std::string catalog_file_of(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--catalog" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--catalog=", 0) == 0) return args[i].substr(10);
  }
  return "";
}

// Adds the command tool test_toggled_tool to the catalog file `file`, or
// removes it, and has toolmux reload the file (its thread takes SIGHUP,
// src/app/catalog_host.h): the clients are told the tool list changed.
ToolResult toggle_catalog_tool(const std::string& file) {
  static std::mutex mutex;  // one toggle at a time: each reads what the last wrote
  if (file.empty()) {
    return ToolResult::error(
        "test_trigger_tool_change changes the tool list through the catalog file: serve "
        "--catalog FILE");
  }
  std::lock_guard lock(mutex);
  json catalog;
  {
    std::ifstream in(file);
    catalog = json::parse(in, nullptr, false);
  }
  if (!catalog.is_object()) return ToolResult::error(file + " is not a JSON object");
  if (!catalog["tools"].is_array()) catalog["tools"] = json::array();
  json& listed = catalog["tools"];
  auto it = std::find_if(listed.begin(), listed.end(), [](const json& t) {
    return t.is_object() && t.value("name", "") == "test_toggled_tool";
  });
  const bool adding = it == listed.end();
  if (adding) {
    listed.push_back({{"name", "test_toggled_tool"},
                      {"description", "Added and removed by test_trigger_tool_change."},
                      {"inputSchema", kNoArguments},
                      {"sideEffect", "read_only"},
                      {"timeoutMs", 5000},
                      {"command", {{"argv", {"true"}}}}});
  } else {
    listed.erase(it);
  }
  // Replaced whole (rename), so that a reload never reads half a file.
  const std::string next = file + ".next";
  {
    std::ofstream out(next, std::ios::trunc);
    out << catalog.dump(2) << "\n";
    if (!out) return ToolResult::error("cannot write " + next);
  }
  std::error_code ec;
  std::filesystem::rename(next, file, ec);
  if (ec) return ToolResult::error("cannot replace " + file + ": " + ec.message());
  ::kill(::getpid(), SIGHUP);
  return ToolResult::text(std::string(adding ? "Added" : "Removed") +
                          " test_toggled_tool: the tool list changed");
}

// What a handler returns once it has asked a 2026-07-28 client (the answer
// is pending): discarded, the call being answered with the questions.
ToolResult asked() { return {}; }

// The fixtures of the 2026-07-28 scenarios (MRTR, server-stateless); see the
// top of the file.
void add_modern_tools(std::vector<NativeTool>& tools,
                      const std::shared_ptr<FixturePrompts>& prompts,
                      const std::string& catalog_file) {
  // SEP-2243: a 2026-07-28 client sends "region" as the Mcp-Param-Region
  // header too, and toolmux's HTTP transport refuses a call whose header does
  // not match it (http-custom-header-server-validation).
  tools.push_back(
      tool("test_custom_header", "Echoes its region, which the client also sends as a header.",
           [](const json& args, CallContext&) {
             return ToolResult::text("region: " + args.value("region", std::string("(none)")));
           },
           {{"type", "object"},
            {"properties",
             {{"region",
               {{"type", "string"},
                {"x-mcp-header", "Region"},
                {"description", "Where to run (also the Mcp-Param-Region header)"}}}}}}));
  tools.push_back(tool("test_input_required_result_elicitation",
                       "Asks the user's name (elicitation, key user_name) and greets them.",
                       [](const json&, CallContext& context) {
                         auto answer = context.ask_client("elicitation/create",
                                                          form("What is your name?", "name"), {},
                                                          "user_name");
                         if (answer.pending) return asked();
                         if (!answer.result) {
                           return ToolResult::error("Elicitation failed: " + answer.error);
                         }
                         return ToolResult::text("Hello, " + field(*answer.result, "name") + "!");
                       }));
  tools.push_back(
      tool("test_input_required_result_sampling",
           "Asks the client's model the capital of France (sampling, key capital_question).",
           [](const json&, CallContext& context) {
             auto answer = context.ask_client(
                 "sampling/createMessage",
                 {{"messages",
                   {{{"role", "user"},
                     {"content", {{"type", "text"}, {"text", "What is the capital of France?"}}}}}},
                  {"maxTokens", 100}},
                 {}, "capital_question");
             if (answer.pending) return asked();
             if (!answer.result) return ToolResult::error("Sampling failed: " + answer.error);
             return ToolResult::text("Sampling result: " + sampled_text(*answer.result));
           }));
  tools.push_back(tool("test_input_required_result_list_roots",
                       "Asks the client for its roots (roots/list, key client_roots).",
                       [](const json&, CallContext& context) {
                         auto answer =
                             context.ask_client("roots/list", json::object(), {}, "client_roots");
                         if (answer.pending) return asked();
                         if (!answer.result) {
                           return ToolResult::error("roots/list failed: " + answer.error);
                         }
                         const json roots = answer.result->value("roots", json::array());
                         return ToolResult::text("Found " + std::to_string(roots.size()) +
                                                 " root(s): " + roots.dump());
                       }));
  tools.push_back(tool(
      "test_input_required_result_request_state",
      "Asks for a confirmation (key confirm); answers state-ok once it comes back.",
      [](const json&, CallContext& context) {
        json ask = {{"message", "Please confirm"},
                    {"requestedSchema",
                     {{"type", "object"},
                      {"properties", {{"ok", {{"type", "boolean"}}}}},
                      {"required", {"ok"}}}}};
        auto answer = context.ask_client("elicitation/create", ask, {}, "confirm");
        if (answer.pending) return asked();
        if (!answer.result) return ToolResult::error("Elicitation failed: " + answer.error);
        const json content = answer.result->value("content", json::object());
        if (answer.result->value("action", "") != "accept" || content.value("ok", false) != true) {
          return ToolResult::error("not confirmed: " + answer.result->dump());
        }
        return ToolResult::text("state-ok: the confirmation came back with the request's state");
      }));
  tools.push_back(tool(
      "test_input_required_result_multiple_inputs",
      "Asks for a name (elicitation), a greeting (sampling) and the roots (roots/list) at once.",
      [](const json&, CallContext& context) {
        // All three are asked before any answer is looked at: a 2026-07-28
        // client gets them in one input_required result.
        auto name = context.ask_client("elicitation/create", form("What is your name?", "name"), {},
                                       "user_name");
        auto greeting = context.ask_client(
            "sampling/createMessage",
            {{"messages",
              {{{"role", "user"},
                {"content", {{"type", "text"}, {"text", "Generate a greeting"}}}}}},
             {"maxTokens", 50}},
            {}, "greeting");
        auto roots = context.ask_client("roots/list", json::object(), {}, "client_roots");
        if (name.pending || greeting.pending || roots.pending) return asked();
        for (const auto* answer : {&name, &greeting, &roots}) {
          if (!answer->result) return ToolResult::error("A question failed: " + answer->error);
        }
        return ToolResult::text("Hello, " + field(*name.result, "name") +
                                "; greeting: " + sampled_text(*greeting.result) + "; " +
                                std::to_string(roots.result->value("roots", json::array()).size()) +
                                " root(s)");
      }));
  tools.push_back(tool(
      "test_input_required_result_multi_round",
      "Asks for a name (key step1), then for a favourite colour (key step2): two rounds.",
      [](const json&, CallContext& context) {
        auto step1 = context.ask_client("elicitation/create",
                                        form("Step 1: What is your name?", "name"), {}, "step1");
        if (step1.pending) return asked();
        if (!step1.result) return ToolResult::error("Step 1 failed: " + step1.error);
        auto step2 =
            context.ask_client("elicitation/create",
                               form("Step 2: What is your favorite color?", "color"), {}, "step2");
        if (step2.pending) return asked();
        if (!step2.result) return ToolResult::error("Step 2 failed: " + step2.error);
        return ToolResult::text("name=" + field(*step1.result, "name") +
                                ", color=" + field(*step2.result, "color"));
      }));
  tools.push_back(
      tool("test_input_required_result_tampered_state",
           "Asks for a confirmation (key confirm); a changed requestState is refused by toolmux.",
           [](const json&, CallContext& context) {
             json ask = {{"message", "Please confirm"},
                         {"requestedSchema",
                          {{"type", "object"},
                           {"properties", {{"ok", {{"type", "boolean"}}}}},
                           {"required", {"ok"}}}}};
             auto answer = context.ask_client("elicitation/create", ask, {}, "confirm");
             if (answer.pending) return asked();
             if (!answer.result) return ToolResult::error("Elicitation failed: " + answer.error);
             return ToolResult::text("integrity-ok: state verified");
           }));
  tools.push_back(tool(
      "test_input_required_result_capabilities",
      "Asks only what the client declared it can answer: elicitation and/or sampling.",
      [](const json&, CallContext& context) {
        const json declared = context.client_capabilities();
        std::vector<std::pair<std::string, ClientAnswer>> answers;
        if (declared.contains("elicitation")) {
          answers.emplace_back(
              "elicit_input",
              context.ask_client("elicitation/create", form("Elicitation input", "value"), {},
                                 "elicit_input"));
        }
        if (declared.contains("sampling")) {
          answers.emplace_back(
              "sample_input",
              context.ask_client("sampling/createMessage",
                                 {{"messages",
                                   {{{"role", "user"},
                                     {"content", {{"type", "text"}, {"text", "Sample request"}}}}}},
                                  {"maxTokens", 50}},
                                 {}, "sample_input"));
        }
        if (answers.empty()) return ToolResult::text("No supported capabilities declared");
        std::string received;
        for (const auto& [key, answer] : answers) {
          if (answer.pending) return asked();
          if (!answer.result) return ToolResult::error(key + " failed: " + answer.error);
          received += (received.empty() ? "" : ",") + key;
        }
        return ToolResult::text("capabilities-ok: received " + received);
      }));
  tools.push_back(
      tool("test_missing_capability", "Needs the client's sampling capability: without it, -32021.",
           [](const json&, CallContext& context) {
             toolmux::require_client_capabilities(context, {{"sampling", json::object()}});
             return ToolResult::text("Success: the client declared sampling");
           }));
  tools.push_back(tool("test_streaming_elicitation",
                       "Asks a question while it runs: a 2026-07-28 client gets it in the "
                       "answer, never as a request on the response stream.",
                       [](const json&, CallContext& context) {
                         auto answer = context.ask_client(
                             "elicitation/create", form("Anything to add?", "note"), {}, "note");
                         if (answer.pending) return asked();
                         if (!answer.result) {
                           return ToolResult::error("Elicitation failed: " + answer.error);
                         }
                         return ToolResult::text("Streaming complete");
                       }));
  tools.push_back(tool("test_logging_tool",
                       "Logs one info message: sent only to a client that asked for logs.",
                       [](const json&, CallContext& context) {
                         context.log(toolmux::LogLevel::info, "Diagnostic trace logging activated");
                         return ToolResult::text("Logging evaluated");
                       }));
  NativeTool trigger =
      tool("test_trigger_tool_change",
           "Changes the tool list: adds test_toggled_tool to the catalog file, or removes it, and "
           "reloads the catalog. Needs serve --catalog.",
           [catalog_file](const json&, CallContext&) { return toggle_catalog_tool(catalog_file); });
  trigger.spec.side_effect = "local_mutation";  // it rewrites the catalog file
  tools.push_back(std::move(trigger));
  // Not a conformance fixture: a write that goes on for 2.5 s whatever it is
  // told, past its 1 s timeout and past a cancellation, so that what it
  // came to is recorded late (tests/e2e/late_outcome.test.mjs).
  NativeTool slow_write =
      tool("slow_write", "Takes 2.5 s whatever it is told (its timeout is 1 s), then answers.",
           [](const json&, CallContext&) {
             std::this_thread::sleep_for(std::chrono::milliseconds(2500));
             return ToolResult::text("written");
           });
  slow_write.spec.side_effect = "local_mutation";
  slow_write.spec.timeout = std::chrono::seconds(1);
  slow_write.spec.returns_by_deadline = false;
  tools.push_back(std::move(slow_write));
  tools.push_back(tool("test_trigger_prompt_change", "Tells the clients the prompt list changed.",
                       [prompts](const json&, CallContext&) {
                         prompts->events().prompts_list_changed();
                         return ToolResult::text("Prompt list change triggered");
                       }));
}

// The fixtures of the tasks extension's scenarios (io.modelcontextprotocol/tasks,
// docs/tasks.md): tools whose calls become tasks when the client negotiated
// the extension.
NativeTool task_tool(NativeTool t, toolmux::TaskSupport support) {
  t.spec.task_support = support;
  t.spec.timeout = std::chrono::seconds(120);
  return t;
}

void add_task_tools(std::vector<NativeTool>& tools) {
  using toolmux::TaskSupport;
  tools.push_back(
      tool("greet", "Greets `name` at once (it never becomes a task).",
           [](const json& args, CallContext&) {
             return ToolResult::text("Hello, " + args.value("name", std::string("world")) + "!");
           },
           {{"type", "object"},
            {"properties", {{"name", {{"type", "string"}, {"description", "Whom to greet"}}}}}}));
  tools.push_back(task_tool(
      tool("slow_compute",
           "Waits `seconds` seconds (0 to 100), then answers with `label`; a task when it can be.",
           [](const json& args, CallContext& context) {
             pause(context, 1000 * args.value("seconds", 0));
             return ToolResult::text("Computed " + args.value("label", std::string("")) +
                                     " after " + std::to_string(args.value("seconds", 0)) + " s");
           },
           {{"type", "object"},
            {"properties",
             {{"seconds",
               {{"type", "integer"},
                {"minimum", 0},
                {"maximum", 100},
                {"description", "How long to work"}}},
              {"label", {{"type", "string"}, {"description", "Named in the answer"}}}}}}),
      TaskSupport::optional));
  tools.push_back(task_tool(tool("failing_job",
                                 "Fails after about a second with a tool error; runs only as a "
                                 "task.",
                                 [](const json&, CallContext& context) {
                                   pause(context, 1000);
                                   return ToolResult::error(
                                       "failing_job failed, as it always does");
                                 }),
                            TaskSupport::required));
  tools.push_back(task_tool(
      tool("protocol_error_job", "Crashes after a moment: its task fails with a protocol error.",
           [](const json&, CallContext& context) -> ToolResult {
             pause(context, 200);
             throw std::runtime_error("protocol_error_job crashed");
           }),
      TaskSupport::optional));
  tools.push_back(task_tool(
      tool("confirm_delete",
           "Asks the user to confirm deleting `filename` (elicitation), then says what it did.",
           [](const json& args, CallContext& context) {
             const std::string file = args.value("filename", std::string("the file"));
             auto answer =
                 context.ask_client("elicitation/create",
                                    {{"message", "Delete " + file + "?"},
                                     {"requestedSchema",
                                      {{"type", "object"},
                                       {"properties", {{"confirm", {{"type", "boolean"}}}}},
                                       {"required", {"confirm"}}}}},
                                    {}, "confirm");
             if (answer.pending) return asked();
             if (!answer.result) return ToolResult::error("No confirmation: " + answer.error);
             const bool yes =
                 answer.result->value("action", "") == "accept" &&
                 answer.result->value("content", json::object()).value("confirm", false);
             return ToolResult::text(yes ? "Deleted " + file : "Kept " + file);
           },
           {{"type", "object"},
            {"properties", {{"filename", {{"type", "string"}, {"description", "The file"}}}}}}),
      TaskSupport::optional));
  tools.push_back(task_tool(
      tool("multi_input", "Asks two questions at once (elicitation), then names both answers.",
           [](const json&, CallContext& context) {
             toolmux::ClientAnswer first;
             std::thread other([&] {
               first = context.ask_client("elicitation/create", form("First name?", "name"), {},
                                          "first");
             });
             auto second = context.ask_client("elicitation/create", form("Second name?", "name"),
                                              {}, "second");
             other.join();
             if (first.pending || second.pending) return asked();
             if (!first.result || !second.result) {
               return ToolResult::error("An answer is missing: " + first.error + second.error);
             }
             return ToolResult::text("Got " + field(*first.result, "name") + " and " +
                                     field(*second.result, "name"));
           }),
      TaskSupport::optional));
  NativeTool gathered = task_tool(
      tool("test_tool_with_task",
           "Asks the user's name (user_name) in the request, then greets them from a task.",
           [](const json&, CallContext& context) {
             auto answer = context.ask_client("elicitation/create",
                                              form("What is your name?", "name"), {}, "user_name");
             if (answer.pending) return asked();
             if (!answer.result) return ToolResult::error("Elicitation failed: " + answer.error);
             context.start_task();
             pause(context, 500);
             return ToolResult::text("Hello from a task, " + field(*answer.result, "name") + "!");
           }),
      TaskSupport::required);
  gathered.spec.task_started_by_handler = true;
  tools.push_back(std::move(gathered));
}

std::vector<NativeTool> fixture_tools(const std::shared_ptr<FixtureResources>& resources,
                                      const std::shared_ptr<FixturePrompts>& prompts,
                                      const std::string& catalog_file) {
  std::vector<NativeTool> tools;
  tools.push_back(
      on_reader(tool("test_simple_text", "Returns a fixed text.", [](const json&, CallContext&) {
        return ToolResult::text("This is a simple text response for testing.");
      })));
  tools.push_back(on_reader(
      tool("test_image_content", "Returns a small PNG image.", [](const json&, CallContext&) {
        return blocks({{{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}}});
      })));
  tools.push_back(on_reader(
      tool("test_audio_content", "Returns a short WAV sound.", [](const json&, CallContext&) {
        return blocks({{{"type", "audio"}, {"data", kWav}, {"mimeType", "audio/wav"}}});
      })));
  tools.push_back(on_reader(tool("test_embedded_resource", "Returns an embedded text resource.",
                                 [](const json&, CallContext&) {
                                   return blocks(
                                       {{{"type", "resource"},
                                         {"resource",
                                          {{"uri", "test://embedded-resource"},
                                           {"mimeType", "text/plain"},
                                           {"text", "This is an embedded resource content."}}}}});
                                 })));
  tools.push_back(on_reader(
      tool("test_multiple_content_types", "Returns text, an image and a resource in one result.",
           [](const json&, CallContext&) {
             return blocks({{{"type", "text"}, {"text", "Multiple content types test:"}},
                            {{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}},
                            {{"type", "resource"},
                             {"resource",
                              {{"uri", "test://mixed-content-resource"},
                               {"mimeType", "application/json"},
                               {"text", "{\"test\":\"data\",\"value\":123}"}}}}});
           })));
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
  tools.push_back(on_reader(
      tool("test_error_handling", "Always fails, as a tool error.", [](const json&, CallContext&) {
        return ToolResult::error("This tool intentionally returns an error for testing");
      })));
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
      // The conformance suite's JSON_SCHEMA_2020_12_FIXTURE (the SEP-1613
      // keywords and SEP-2106's $anchor, allOf/anyOf, if/then/else), with a
      // description for each property, which toolmux asks of every tool it
      // serves as its own.
      json::parse(R"json({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
        "$defs":{"address":{"$anchor":"addressDef","type":"object","description":"A postal address.",
                            "properties":{"street":{"type":"string","description":"The street."},
                                          "city":{"type":"string","description":"The city."}}}},
        "properties":{"name":{"type":"string","description":"The contact's name."},
                      "address":{"$ref":"#/$defs/address"},
                      "contactMethod":{"type":"string","enum":["phone","email"],
                                       "description":"How to reach the contact."},
                      "phone":{"type":"string","description":"A phone number."},
                      "email":{"type":"string","description":"An e-mail address."}},
        "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
        "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},
        "then":{"required":["phone"]},"else":{"required":["email"]},
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
  add_modern_tools(tools, prompts, catalog_file);
  add_task_tools(tools);
  return tools;
}

}  // namespace

int main(int argc, char** argv) {
  auto resources = std::make_shared<FixtureResources>();
  auto prompts = std::make_shared<FixturePrompts>();
  toolmux::NativeProviders providers;
  providers.resources.push_back(resources);
  providers.prompts.push_back(prompts);
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int code = toolmux::run_toolmux(
      args, fixture_tools(resources, prompts, catalog_file_of(args)), providers);
  std::fflush(nullptr);
  _exit(code);
}
