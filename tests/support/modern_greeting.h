// A 2026-07-28 request's _meta and a catalog whose tool asks the client a
// question (MRTR: input_required, then the retry with the answer), for tests
// of the modern protocol.
#pragma once

#include <memory>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/test_tools.h"

namespace toolmux::testing {

// The _meta of a 2026-07-28 request from a client that can be asked (elicitation).
inline const nlohmann::json kModernMeta = {
    {"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
    {"io.modelcontextprotocol/clientCapabilities", {{"elicitation", nlohmann::json::object()}}},
    {"io.modelcontextprotocol/clientInfo", {{"name", "modern"}, {"version", "2"}}}};

// The test tools, and greet {}: asks the client's name (question "user_name") and greets it.
inline std::shared_ptr<Catalog> greeting_catalog() {
  using nlohmann::json;
  auto registry = make_test_registry();
  ToolSpec greet = spec("greet", object_schema());
  greet.returns_by_deadline = true;
  REQUIRE(
      registry
          ->add(greet,
                [](const json&, CallContext& ctx) {
                  ClientAnswer a = ctx.ask_client(
                      "elicitation/create",
                      {{"mode", "form"},
                       {"message", "What is your name?"},
                       {"requestedSchema",
                        {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}}}},
                      {}, "user_name");
                  if (!a.result) return ToolResult::error("no name: " + a.error);
                  return ToolResult::text("Hello, " + (*a.result)["content"].value("name", "?") +
                                          "!");
                })
          .empty());
  return make_test_catalog(registry);
}

}  // namespace toolmux::testing
