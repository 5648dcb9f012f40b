// toolmux-conformance-client: toolmux's own upstream client (McpClient over
// HttpClientTransport, with OAuthClient when a scenario asks for
// authorization) run by the official MCP conformance suite in client mode
// (@modelcontextprotocol/conformance: `conformance client --command ...`).
// The suite starts it once per scenario with
//   MCP_CONFORMANCE_SCENARIO          the scenario's name
//   MCP_CONFORMANCE_PROTOCOL_VERSION  the revision it runs at (2025-11-25, 2026-07-28)
//   MCP_CONFORMANCE_CONTEXT           JSON the scenario hands over (credentials, keys)
// and the server's URL as the last argument. It connects as an upstream
// connects (server/discover at 2026-07-28, initialize before), lists the
// tools and calls the ones the scenario serves, answering the server's
// questions (elicitation with the schema's defaults, sampling, roots) as a
// client that declared those capabilities would. Exit status 0 when every
// step worked, 1 with the reason on stderr otherwise.
//
// Authorization (auth/ scenarios): the authorization code grant with the
// suite's authorization server, which redirects at once
// (OAuthClient::follow_redirects), a Client ID Metadata Document URL for
// servers that take one, the context's pre-registered client
// (auth/pre-registration), and the client_credentials grant with
// client_secret_basic or private_key_jwt (auth/client-credentials-*).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "src/base/logger.h"
#include "src/upstream/mcp_client.h"
#include "transports/http_client_transport.h"
#include "transports/oauth_client.h"

namespace {

using json = nlohmann::json;
using toolmux::CallContext;
using toolmux::ClientAnswer;
using toolmux::McpClient;
using toolmux::Status;
using Clock = std::chrono::steady_clock;

constexpr auto kTimeout = std::chrono::seconds(20);
// The CIMD URL the suite expects a client to use (its auth/basic-cimd).
constexpr const char* kClientMetadataUrl = "https://conformance-test.local/client-metadata.json";
constexpr const char* kRedirectUri = "http://localhost:3000/callback";

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The value a JSON Schema property's default gives, else a plain one of its type.
json answer_for(const json& property) {
  if (property.contains("default")) return property["default"];
  const std::string type = property.value("type", "string");
  if (property.contains("enum") && property["enum"].is_array() && !property["enum"].empty()) {
    return property["enum"][0];
  }
  if (type == "number" || type == "integer") return 1;
  if (type == "boolean") return true;
  if (type == "array") return json::array();
  return "conformance";
}

// A client that declared elicitation, sampling and roots: it answers each
// question at once.
class ConformanceCall final : public CallContext {
 public:
  ConformanceCall() : deadline_(Clock::now() + kTimeout) {}
  bool cancelled() const override { return Clock::now() >= deadline_; }
  Clock::time_point deadline() const override { return deadline_; }
  void report_progress(double, std::optional<double>, std::string_view) override {}
  void log(toolmux::LogLevel, const json&) override {}
  json client_capabilities() const override {
    return {
        {"elicitation", json::object()}, {"sampling", json::object()}, {"roots", json::object()}};
  }
  ClientAnswer ask_client(const std::string& method, const json& params, const std::stop_token&,
                          const std::string&) override {
    if (method == "elicitation/create") {
      json content = json::object();
      const json schema = params.value("requestedSchema", json::object());
      const json properties = schema.value("properties", json::object());
      for (const auto& [name, property] : properties.items()) {
        content[name] = answer_for(property);
      }
      return {json{{"action", "accept"}, {"content", content}}, ""};
    }
    if (method == "sampling/createMessage") {
      return {json{{"role", "assistant"},
                   {"content", {{"type", "text"}, {"text", "A sampled answer."}}},
                   {"model", "conformance-model"},
                   {"stopReason", "endTurn"}},
              ""};
    }
    if (method == "roots/list") return {json{{"roots", json::array()}}, ""};
    return {std::nullopt, "the conformance client does not answer " + method};
  }

 private:
  Clock::time_point deadline_;
};

// The authorization the scenario needs, or null for none.
toolmux::Result<std::shared_ptr<toolmux::OAuthClient>> authorizer_for(const std::string& scenario,
                                                                      const std::string& url,
                                                                      const json& context) {
  if (scenario.rfind("auth/", 0) != 0) return std::shared_ptr<toolmux::OAuthClient>();
  toolmux::OAuthClient::Options options;
  options.server_url = url;
  options.client_name = "toolmux-conformance-client";
  options.timeout = std::chrono::seconds(5);
  if (scenario == "auth/client-credentials-jwt" || scenario == "auth/client-credentials-basic") {
    options.grant = toolmux::OAuthClient::Grant::client_credentials;
    options.client_id = context.value("client_id", "");
    options.client_secret = context.value("client_secret", "");
    options.private_key_pem = context.value("private_key_pem", "");
    options.signing_algorithm = context.value("signing_algorithm", "ES256");
  } else {
    options.redirect_uri = kRedirectUri;
    options.authorize = toolmux::OAuthClient::follow_redirects(std::chrono::seconds(5));
    options.client_id = context.value("client_id", "");
    options.client_secret = context.value("client_secret", "");
    options.issuer = context.value("issuer", "");
    if (options.client_id.empty()) options.client_metadata_url = kClientMetadataUrl;
  }
  return toolmux::OAuthClient::create(std::move(options));
}

// Fails with `what` when the outcome has no result.
Status check(const McpClient::Outcome& outcome, const std::string& what) {
  if (outcome.result) return Status::ok_status();
  return Status::unavailable(what + ": " + outcome.error);
}

Status run(const std::string& scenario, const std::string& url) {
  const std::string context_text = env("MCP_CONFORMANCE_CONTEXT");
  const json context =
      json::parse(context_text.empty() ? std::string("{}") : context_text, nullptr, false);
  if (!context.is_object()) {
    return Status::invalid_argument("MCP_CONFORMANCE_CONTEXT is not a JSON object");
  }
  auto authorizer = authorizer_for(scenario, url, context);
  if (!authorizer.ok()) return authorizer.status();
  toolmux::HttpClientOptions options;
  options.url = url;
  options.authorizer = authorizer.value();
  options.on_warning = [](const std::string& warning) {
    std::cerr << "warning: " << warning << "\n";
  };
  auto transport = toolmux::HttpClientTransport::create(std::move(options));
  if (!transport.ok()) return transport.status();
  static toolmux::Logger logger(stderr, env("TOOLMUX_CONFORMANCE_DEBUG").empty()
                                            ? toolmux::LogLevel::warning
                                            : toolmux::LogLevel::debug);
  auto client = McpClient::create("conformance", std::move(transport).value(), logger);

  const bool modern = env("MCP_CONFORMANCE_PROTOCOL_VERSION") == "2026-07-28";
  if (Status s = client->connect(kTimeout, kTimeout, modern); !s.ok()) return s;
  auto tools = client->list_tools(kTimeout);
  if (!tools.ok()) return tools.status();

  ConformanceCall call;
  if (scenario == "tools_call") {
    return check(client->call_tool("add_numbers", {{"a", 2}, {"b", 3}}, call), "add_numbers");
  }
  if (scenario.rfind("auth/", 0) == 0) {
    for (const json& tool : tools.value()) {
      if (tool.value("name", "") == "test-tool") {
        return check(client->call_tool("test-tool", json::object(), call), "test-tool");
      }
    }
    return Status::ok_status();
  }
  // json-schema-2020-12-preservation: the focal tool's inputSchema, as listed,
  // goes back through the echo tool, so that the scenario sees what the
  // client kept of it.
  if (scenario == "json-schema-2020-12-preservation") {
    for (const json& tool : tools.value()) {
      if (tool.value("name", "") != "json_schema_2020_12_tool") continue;
      return check(client->call_tool("json_schema_echo",
                                     {{"schema", tool.value("inputSchema", json::object())}}, call),
                   "json_schema_echo");
    }
    return Status::not_found("tools/list has no json_schema_2020_12_tool");
  }
  // The calls the scenario names, with their arguments (http-custom-headers).
  if (const json calls = context.value("toolCalls", json()); calls.is_array()) {
    for (const json& c : calls) {
      const std::string name = c.value("name", "");
      const json arguments = c.value("arguments", json::object());
      if (Status s = check(client->call_tool(name, arguments, call), name); !s.ok()) return s;
    }
    return Status::ok_status();
  }
  // Every other scenario: call each tool it offers, with its schema's defaults.
  for (const json& tool : tools.value()) {
    json arguments = json::object();
    const json schema = tool.value("inputSchema", json::object());
    for (const std::string& required : schema.value("required", std::vector<std::string>{})) {
      arguments[required] =
          answer_for(schema.value("properties", json::object()).value(required, json::object()));
    }
    const std::string name = tool.value("name", "");
    if (Status s = check(client->call_tool(name, arguments, call), name); !s.ok()) return s;
  }
  return Status::ok_status();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr
        << "usage: toolmux-conformance-client URL (the scenario in MCP_CONFORMANCE_SCENARIO)\n";
    return 2;
  }
  const std::string scenario = env("MCP_CONFORMANCE_SCENARIO");
  const Status done = run(scenario, argv[argc - 1]);
  if (!done.ok()) {
    std::cerr << "conformance client (" << scenario << "): " << done.message() << "\n";
    return 1;
  }
  return 0;
}
