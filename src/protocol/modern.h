// The 2026-07-28 protocol (the "modern" era) as the server serves it beside
// the legacy one: how a request says it is modern (its _meta), what that
// _meta must hold, which methods the era has, and how its answers differ
// (ModernSink). See docs/specification/2026-07-28/basic/versioning.mdx and
// basic/index.mdx (_meta) in the spec, and README "The two protocol eras".
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "src/base/jsonrpc.h"
#include "src/base/jsonrpc_error.h"
#include "src/session/session.h"
#include "transports/server_transport.h"

namespace toolmux::modern {

inline constexpr const char* kProtocolVersion = "2026-07-28";
inline constexpr const char* kProtocolVersionKey = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kClientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kClientInfoKey = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kLogLevelKey = "io.modelcontextprotocol/logLevel";
inline constexpr const char* kServerInfoKey = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kSubscriptionIdKey = "io.modelcontextprotocol/subscriptionId";

// Codes the 2026-07-28 spec defines (basic/index.mdx, Error Codes).
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;

// How long a client may keep a list (tools, resources, templates, prompts)
// and server/discover before it asks again. A reload or an upstream's change
// reaches a client at once only through subscriptions/listen; without one, a
// client sees it within this time.
inline constexpr std::chrono::milliseconds kListTtl{60000};

// Every version the server speaks, newest first: what server/discover and
// -32022 list.
nlohmann::json supported_versions();

// True when `m`'s params carry _meta with the protocol version key: the
// request is served by the 2026-07-28 rules, whatever else it lacks.
bool is_modern(const jsonrpc::Message& m);

// What a modern request's _meta says, or the error that refuses it: -32022
// (with data.supported and data.requested) for a version the server does
// not speak, -32602 for a missing or malformed field (naming it).
std::variant<RequestMeta, JsonRpcError> read_meta(const jsonrpc::Message& m);

// Whether `method` exists in the 2026-07-28 protocol as toolmux serves it
// (initialize, ping, logging/setLevel, resources/subscribe and
// resources/unsubscribe do not).
bool has_method(std::string_view method);

// The identity a modern result carries in its _meta.
nlohmann::json server_info();

// Where a modern request's messages go: on to the sink of the session that
// carries it, each result first given resultType ("complete" unless it says
// otherwise) and the server's identity in _meta, the caching hints when the
// request's method is cacheable, and -32002 (resource not found, which the
// era no longer uses) turned into -32602. `cache_scope` is "public" or
// "private" (the list depends on who asks).
class ModernSink final : public MessageSink {
 public:
  ModernSink(std::shared_ptr<Session> carrier, std::string method, std::string cache_scope)
      : carrier_(std::move(carrier)),
        method_(std::move(method)),
        cache_scope_(std::move(cache_scope)) {}
  void send(const nlohmann::json& message, const nlohmann::json& related_request) override;
  void send_owned(nlohmann::json&& message, const nlohmann::json& related_request) override;
  void request_finished(const nlohmann::json& request_id) override {
    carrier_->request_finished(request_id);
  }
  void close_request_stream(const nlohmann::json& request_id) override {
    carrier_->close_request_stream(request_id);
  }

 private:
  // Whether `message` is changed on its way (a result, or the old -32002).
  static bool needs_shaping(const nlohmann::json& message);
  // Changes `message` as the class comment says.
  void shape(nlohmann::json& message) const;

  const std::shared_ptr<Session> carrier_;
  const std::string method_;
  const std::string cache_scope_;
};

}  // namespace toolmux::modern
