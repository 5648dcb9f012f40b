// toolmux as the client of an upstream MCP server over stdio (legacy era,
// protocol 2025-11-25): the initialize handshake, tools/list with its pages,
// and tools/call relayed on behalf of a call toolmux serves.
//
// While a relayed call runs, the upstream's notifications/progress for it
// reach the call's CallContext (a progress token is always sent upstream), and
// the call's cancellation or deadline sends notifications/cancelled upstream.
// Over stdio an upstream's log messages and its requests to the client
// (elicitation/create, sampling/createMessage) carry no request they belong
// to: they are relayed to the calling client when exactly one relayed call is
// in flight, otherwise log messages go to toolmux's log only and requests are
// answered with an error. ping is answered; other requests are -32601.
//
// One thread reads the upstream's messages; every method may be called from
// any thread. When the upstream exits, calls in flight and later calls end
// with an error result naming it. Owned through std::shared_ptr (the threads
// relaying client requests hold it); destroying it stops the child.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "src/logger.h"
#include "transports/stdio_child.h"

namespace toolmux {

class McpClient : public std::enable_shared_from_this<McpClient> {
 public:
  // `name` names the upstream in log lines and error messages.
  static std::shared_ptr<McpClient> create(std::string name, std::unique_ptr<StdioChild> child,
                                           Logger& logger);
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  // initialize, then notifications/initialized. "" when done, else why not.
  std::string initialize(std::chrono::milliseconds timeout);
  // Every page of tools/list; nullopt with `error` set when it fails.
  std::optional<std::vector<nlohmann::json>> list_tools(std::chrono::milliseconds timeout,
                                                        std::string& error);
  // tools/call, until the upstream answers or `context` is cancelled (its
  // deadline included). Upstream failures become error results.
  ToolResult call_tool(const std::string& tool, const nlohmann::json& arguments,
                       CallContext& context);

  const std::string& name() const { return name_; }
  const nlohmann::json& server_info() const { return server_info_; }
  bool gone() const;

 private:
  // One request in flight. `context` is the call it serves (null for
  // initialize and tools/list); it is cleared, under `use`, when the call
  // returns, so the reader never reaches a context that has ended.
  struct Pending {
    std::mutex use;
    CallContext* context = nullptr;
    std::optional<nlohmann::json> response;  // {"result": ...} or {"error": ...}
  };
  struct Outcome {
    std::optional<nlohmann::json> result;  // the result object when there is one
    std::string error;                     // otherwise why not
  };

  McpClient(std::string name, std::unique_ptr<StdioChild> child, Logger& logger);
  Outcome request(const std::string& method, nlohmann::json params,
                  std::chrono::steady_clock::time_point deadline, CallContext* context);
  void read_messages();
  void on_notification(const std::string& method, const nlohmann::json& params);
  void on_request(const nlohmann::json& id, const std::string& method,
                  const nlohmann::json& params);
  // The Pending of the only relayed call in flight, or null.
  std::shared_ptr<Pending> only_call();
  std::string gone_reason();

  const std::string name_;
  std::unique_ptr<StdioChild> child_;
  Logger& logger_;
  nlohmann::json server_info_ = nlohmann::json::object();
  std::thread reader_;
  mutable std::mutex mutex_;
  std::condition_variable answered_;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, std::shared_ptr<Pending>> pending_;
  bool gone_ = false;
};

}  // namespace toolmux
