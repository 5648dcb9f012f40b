// The MCP server: routes each incoming message of a session to its method and
// answers through the session. Transport-agnostic: a transport hands it the
// text of one message at a time (McpServer::handle) and provides the session's
// MessageSink.
//
// handle() may be called from several threads for different sessions, and
// returns quickly: tools/call runs on a thread of its own, so a slow tool never
// holds up ping, tools/list or other calls. Never throws.
//
// tools/call and the requests of ProviderMethods go through one CallAdmission
// (options.call_limits): past its limits they wait in its queue, and past the
// queue's they are answered at once with a kServerBusy error naming the limits.
// The process's call_threads() pool is capped at two threads a running call.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/assembly/tool_catalog.h"
#include "src/base/jsonrpc.h"
#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/base/untrusted_json.h"
#include "src/pipeline/call_pipeline.h"
#include "src/protocol/provider_methods.h"
#include "src/session/call_admission.h"
#include "src/session/call_context.h"
#include "src/session/session.h"

namespace toolmux {

// Protocol versions of the legacy era this server speaks, oldest first.
inline constexpr const char* kSupportedProtocolVersions[] = {"2024-11-05", "2025-03-26",
                                                             "2025-06-18", "2025-11-25"};
inline constexpr const char* kLatestProtocolVersion = "2025-11-25";

struct ServerOptions {
  std::size_t page_size = 0;  // tools per tools/list page; 0 = all in one page
  JsonLimits json_limits;
  std::shared_ptr<LazyResultStore> results;  // where large results go; null = never offload
  // How long a resources/..., prompts/... or completion/complete request may
  // take (its providers may be upstream servers).
  std::chrono::milliseconds provider_timeout{60000};
  // How many calls run at once, and wait (src/session/call_admission.h).
  CallLimits call_limits;
};

// The options `toolmux serve` runs the server with, over either transport.
ServerOptions server_options_for(const ServeOptions& serve,
                                 std::shared_ptr<LazyResultStore> results);

class McpServer {
 public:
  McpServer(std::shared_ptr<const Catalog> catalog, ServerOptions options, Logger& logger,
            Metrics& metrics);
  // Calls still waiting for a place are dropped (answered as toolmux stopping).
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // Handles one message (its text, as the transport read it) from `session`.
  void handle(std::string_view text, const std::shared_ptr<Session>& session);
  // The same for a message the transport has already parsed (with
  // jsonrpc::parse_message and this server's json_limits()).
  void handle(const jsonrpc::Message& message, const std::shared_ptr<Session>& session);
  const JsonLimits& json_limits() const { return options_.json_limits; }

  // Answers a message the transport could not even read (e.g. over the size
  // limit) with a -32700 error that says why.
  void reject_unreadable(const std::shared_ptr<Session>& session, std::string_view reason);

  // For shutdown, after the sessions' calls were cancelled: waits until every
  // tool handler has stopped, including abandoned ones; false if `timeout` passed.
  bool wait_for_running_tools(std::chrono::milliseconds timeout) {
    return running_->wait_until_idle(timeout);
  }

  // The catalog requests are served from now. Any thread.
  std::shared_ptr<const Catalog> catalog() const {
    std::lock_guard lock(catalog_mutex_);
    return catalog_;
  }
  // Serves `catalog` from now on (a reload, an upstream's tools changing):
  // requests already running finish with the catalog they started with; each
  // initialized session still open gets notifications/tools/list_changed,
  // and .../resources/list_changed and .../prompts/list_changed.
  // Any thread.
  void replace_catalog(std::shared_ptr<const Catalog> catalog);

 private:
  using Method = std::function<void(const jsonrpc::Message&, const std::shared_ptr<Session>&)>;

  void handle_request(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  // Registers the session for catalog notifications, once.
  void watch(const std::shared_ptr<Session>& session);
  void handle_notification(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);

  void initialize(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void list_tools(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void call_tool(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  // Runs an admitted call on a call thread and answers it.
  void run_call(ToolCall call, const std::shared_ptr<Session>& session,
                const std::shared_ptr<SessionCallContext>& context);
  // Logs and counts a call that ended without running: a refusal, or a drop
  // from the queue (src/session/call_admission.h).
  void record_unrun(const Session& session, const std::string& method, const std::string& tool,
                    std::string_view outcome, const std::string& reason);
  void set_log_level(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);

  mutable std::mutex catalog_mutex_;
  std::shared_ptr<const Catalog> catalog_;  // guarded by catalog_mutex_
  // Initialized sessions, told when the catalog changes. Guarded by catalog_mutex_.
  std::vector<std::weak_ptr<Session>> sessions_;
  ServerOptions options_;
  Logger& logger_;
  Metrics& metrics_;
  std::shared_ptr<RunningHandlers> running_ = std::make_shared<RunningHandlers>();
  std::unique_ptr<CallAdmission> admission_;
  CallHandler pipeline_;
  std::map<std::string, Method, std::less<>> methods_;
  // resources/*, prompts/*, completion/complete, from the catalog's providers.
  std::unique_ptr<ProviderMethods> provider_methods_;
};

}  // namespace toolmux
