// Native tools and a message sink for tests of the server layer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "catalog/tool_registry.h"
#include "src/assembly/tool_catalog.h"
#include "src/session/session.h"

namespace toolmux::testing {

using nlohmann::json;

inline ToolSpec spec(std::string name, json input_schema, int timeout_ms = 2000) {
  ToolSpec s;
  s.name = std::move(name);
  s.description = "A tool for tests.";
  s.input_schema = std::move(input_schema);
  s.side_effect = "read_only";
  s.timeout = std::chrono::milliseconds(timeout_ms);
  return s;
}

// An input schema of type "object" with `properties`; each property that says
// nothing of itself gets a description ("The text argument."), which the
// contract asks of every property of a tool toolmux owns.
inline json object_schema(json properties = json::object(), json required = json::array()) {
  for (auto& [name, property] : properties.items()) {
    if (property.is_object() && !property.contains("description")) {
      property["description"] = "The " + name + " argument.";
    }
  }
  return {{"type", "object"}, {"properties", properties}, {"required", required}};
}

// echo {text}, slow {ms} (stops early when cancelled), throws {}, wrong_output {},
// raw_bytes {} (text that is not UTF-8), listing {n} (structured, n items)
inline std::shared_ptr<ToolRegistry> make_test_registry() {
  auto registry = std::make_shared<ToolRegistry>();
  REQUIRE(registry
              ->add(spec("echo", object_schema({{"text", {{"type", "string"}}}}, {"text"})),
                    [](const json& args, CallContext&) {
                      return ToolResult::text(args["text"].get<std::string>());
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("slow", object_schema({{"ms", {{"type", "integer"}}}}, {"ms"}), 300),
                    [](const json& args, CallContext& ctx) {
                      const auto until = std::chrono::steady_clock::now() +
                                         std::chrono::milliseconds(args["ms"].get<int>());
                      int step = 0;
                      while (std::chrono::steady_clock::now() < until && !ctx.cancelled()) {
                        ctx.report_progress(++step, std::nullopt, "working");
                        std::this_thread::sleep_for(std::chrono::milliseconds(10));
                      }
                      return ToolResult::text("done");
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("throws", object_schema()),
                    [](const json&, CallContext&) -> ToolResult {
                      throw std::runtime_error("disk on fire");
                    })
              .empty());
  ToolSpec wrong = spec("wrong_output", object_schema());
  wrong.output_schema = object_schema({{"count", {{"type", "integer"}}}}, {"count"});
  REQUIRE(registry
              ->add(wrong,
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text("{\"count\":\"three\"}");
                      r.structured_content = {{"count", "three"}};
                      return r;
                    })
              .empty());
  REQUIRE(registry
              ->add(spec("raw_bytes", object_schema()),
                    [](const json&, CallContext&) {
                      ToolResult r;
                      r.content.push_back({{"type", "text"}, {"text", std::string("ok\xff\xfe")}});
                      return r;
                    })
              .empty());
  // listing {n}: structuredContent {"items": [n strings of 100 characters]}
  ToolSpec listing = spec("listing", object_schema({{"n", {{"type", "integer"}}}}, {"n"}));
  listing.output_schema =
      object_schema({{"items", {{"type", "array"}, {"items", {{"type", "string"}}}}}}, {"items"});
  REQUIRE(registry
              ->add(listing,
                    [](const json& args, CallContext&) {
                      json items = json::array();
                      for (int i = 0; i < args["n"].get<int>(); ++i) {
                        items.push_back(std::string(100, static_cast<char>('a' + i % 26)));
                      }
                      ToolResult r = ToolResult::text(json{{"items", items}}.dump());
                      r.structured_content = {{"items", items}};
                      return r;
                    })
              .empty());
  return registry;
}

// The test registry as a server catalog: no aliases, no policy, default limits.
inline std::shared_ptr<Catalog> make_test_catalog(
    std::shared_ptr<ToolRegistry> registry = make_test_registry()) {
  auto catalog = std::make_shared<Catalog>();
  for (const auto& tool : registry->tools()) catalog->published.push_back(tool->descriptor);
  catalog->registry = std::move(registry);
  return catalog;
}

// Collects what the server sends, and lets a test wait for a message.
class CapturingSink : public MessageSink {
 public:
  void send(const json& message, const json& /*related_request*/) override {
    std::lock_guard lock(mutex_);
    messages_.push_back(message);
    changed_.notify_all();
  }

  // The response to request `id`, waiting up to `timeout`; null if none came.
  json response(const json& id, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    json found;
    changed_.wait_for(lock, timeout, [&] {
      for (const auto& m : messages_) {
        if (m.contains("id") && m["id"] == id && !m.contains("method")) {
          found = m;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  // Waits up to `timeout` for a notification of `method`; true when one came.
  bool wait_for_notification(const std::string& method,
                             std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
      for (const auto& m : messages_) {
        if (m.value("method", "") == method) return true;
      }
      return false;
    });
  }

  // Everything sent so far, in order.
  std::vector<json> messages() {
    std::lock_guard lock(mutex_);
    return messages_;
  }

  std::vector<json> notifications(const std::string& method) {
    std::lock_guard lock(mutex_);
    std::vector<json> out;
    for (const auto& m : messages_) {
      if (m.value("method", "") == method) out.push_back(m);
    }
    return out;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<json> messages_;
};

}  // namespace toolmux::testing
