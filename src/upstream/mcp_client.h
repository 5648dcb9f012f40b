// toolmux as the client of an upstream MCP server over a ClientTransport
// (stdio child or Streamable HTTP), in either era (src/upstream/protocol_era.h):
// connect() probes with server/discover and falls back to the initialize
// handshake (legacy, protocol 2025-11-25); then tools/list with its pages, any
// other request, and tools/call relayed on behalf of a call toolmux serves.
//
// To a modern upstream (2026-07-28) every request carries the modern _meta
// (protocol version, the capabilities toolmux relays for the calling client,
// client info); nothing else is sent between requests (no
// notifications/initialized, no ping). A result's resultType "complete" (or
// none) is the answer; "input_required" on tools/call, prompts/get or
// resources/read has its questions put to the calling client
// (src/upstream/input_rounds.h) and the request sent again, under a new id,
// with the answers and the upstream's requestState, at most kMaxInputRounds
// times. List changes come through one subscriptions/listen request (listen()).
//
// While a relayed call runs, the upstream's notifications/progress for it
// reach the call's CallContext (a progress token is always sent upstream), and
// the call's cancellation or deadline cancels it upstream: notifications/cancelled,
// or, for a modern request over Streamable HTTP, closing its response stream.
// An upstream's log messages and its requests to the client
// (elicitation/create, sampling/createMessage) carry no request they belong
// to: they are relayed to the calling client when exactly one relayed call is
// in flight, otherwise log messages go to toolmux's log only and requests are
// answered with an error (see kMaxRelayedRequests for how many at once). A
// client that will answer only in a retry of its call (a 2026-07-28 client:
// ClientAnswer::pending) stops the call at once; the upstream's request is
// answered with an error saying so. ping is answered; other requests are
// -32601. Other notifications (list_changed, resources/updated) go to
// Events::on_notification.
//
// What an upstream sends is bounded before it costs anything: log messages
// pass a token bucket (kLogMessagesPerSecond, kLogBurst; the rest are dropped,
// counted and reported in one summary line now and then, to the log and to
// the calling client); at most kMaxRelayedRequests of its requests wait for a
// client at once, and each one is given up when the call it came with ends,
// so a call's answer never waits for a client's. An answer the JSON boundary
// refuses (not JSON, nested too deep, over the transport's size limit, a
// repeated key, invalid UTF-8: src/base/untrusted_json.h) and a tools/call
// result that is not MCP's CallToolResult (catalog/tool_result_shape.h) fail
// their request at once (Failure::invalid) naming the upstream and what was
// wrong; when such a message's id cannot be read, every request in flight
// fails so, since any of them may have been the one it answered.
//
// The transport's threads deliver messages; every method may be called from
// any thread. When the transport closes, calls in flight and later calls fail
// (Failure::gone) naming the reason, and Events::on_closed is told once.
// Owned through std::shared_ptr (the threads relaying client requests hold
// it); destroying it closes the transport.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "src/base/log_rate_limit.h"
#include "src/base/logger.h"
#include "src/base/status.h"
#include "src/upstream/protocol_era.h"
#include "transports/client_transport.h"
#include "transports/modern_http_headers.h"

namespace toolmux {

class McpClient : public std::enable_shared_from_this<McpClient> {
 public:
  struct Events {
    // A notification the client does not handle itself; on a transport thread.
    std::function<void(const std::string& method, const nlohmann::json& params)> on_notification;
    // The transport closed (once); on a transport thread.
    std::function<void(const std::string& reason)> on_closed;
  };

  // Why a request got no result.
  enum class Failure {
    none,
    gone,         // the upstream has gone (exited, connection or session lost); nothing was done
                  // or the answer was lost
    timed_out,    // no answer before the deadline (cancelled upstream)
    cancelled,    // the calling client cancelled (cancelled upstream)
    error,        // the upstream answered with a JSON-RPC error
    invalid,      // the upstream answered with something that is not what the method returns
    unavailable,  // not sent: the upstream is down or its circuit breaker is open
                  // (src/upstream/upstream.h)
    task_failed,  // the upstream's task (tasks extension) failed or was cancelled there
  };
  struct Outcome {
    std::optional<nlohmann::json> result;  // the result object when there is one
    Failure failure = Failure::none;
    std::string error;            // otherwise why not, naming the upstream
    nlohmann::json error_object;  // Failure::error: the upstream's error object
  };

  static constexpr double kLogMessagesPerSecond = 50;
  static constexpr double kLogBurst = 200;
  static constexpr std::chrono::seconds kLogSummaryEvery{10};
  // A relayed log message's data is cut to this in toolmux's own log.
  static constexpr std::size_t kMaxLoggedData = 4096;
  static constexpr int kMaxRelayedRequests = 8;
  // Rounds of input_required one request of a modern upstream may go
  // through; the next input_required fails it, naming the limit.
  static constexpr int kMaxInputRounds = 8;

  // `name` names the upstream in log lines and error messages. The transport
  // is started here.
  static std::shared_ptr<McpClient> create(std::string name,
                                           std::unique_ptr<ClientTransport> transport,
                                           Logger& logger, Events events = {});
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  // Finds the upstream's era and readies it for requests (the spec's
  // basic/versioning.mdx, "Backward Compatibility"): server/discover with the
  // modern _meta, waiting at most `probe_timeout`; a DiscoverResult naming
  // 2026-07-28 makes it modern (capabilities and server info from it); a modern
  // error toolmux cannot get past makes it unavailable, saying why (naming
  // both lists of versions); any other answer, or none, falls back to
  // initialize(), as does `probe` false (it spoke a legacy version before).
  // An initialize refused with -32022 naming 2026-07-28 probes once more
  // (a server slower to start than the probe's wait).
  Status connect(std::chrono::milliseconds timeout, std::chrono::milliseconds probe_timeout,
                 bool probe = true);
  // initialize, then notifications/initialized, then (when the server
  // declares logging) logging/setLevel "debug", whose failure is only logged.
  // ok when done, else unavailable with why not, naming the upstream.
  Status initialize(std::chrono::milliseconds timeout);
  // Every page of tools/list, or unavailable with why not, naming the upstream.
  // A modern upstream's tool whose x-mcp-header annotations are invalid
  // (SEP-2243: transports/modern_http_headers.h) is left out, and the log
  // says why; the valid ones are remembered, and tools/call sends its
  // arguments' Mcp-Param-* headers.
  Result<std::vector<nlohmann::json>> list_tools(std::chrono::milliseconds timeout);
  // Sends `method` and waits for the answer, the deadline, or `context`'s
  // cancellation (when given: it also gets the request's progress, and a
  // modern upstream's questions). A request whose calling client will answer
  // the upstream's question only in a retry of its call ends at once as
  // Failure::cancelled: the call is stopped, and what it returns is discarded.
  Outcome request(const std::string& method, nlohmann::json params,
                  std::chrono::steady_clock::time_point deadline, CallContext* context);
  // subscriptions/listen for `filter` (SubscriptionFilter: toolsListChanged,
  // resourceSubscriptions, ...) to a modern upstream: the notifications it
  // brings go to Events::on_notification. One at a time: listen() ends the
  // one before (upstream too), as end_listen() does. `on_end` is told, on a
  // transport thread, when the subscription ends without toolmux ending it:
  // the upstream answered the request (it ended it, or `refused` it with
  // -32601 or -32602) or sent notifications/cancelled for it, or its stream
  // broke; `why` names the upstream. Not when the transport closes (on_closed is).
  using ListenEnded = std::function<void(const std::string& why, bool refused)>;
  void listen(nlohmann::json filter, ListenEnded on_end);
  void end_listen();
  // tools/call, until the upstream answers or `context` is cancelled (its
  // deadline included). `result` holds the tool's result (isError or not);
  // a failure leaves it empty. An upstream that answers with a task (the
  // tasks extension) is followed to the task's end: the call becomes a task
  // of the calling client's (CallContext::start_task) when it can, the
  // upstream's questions go to the client and its answers back
  // (tasks/update), a cancelled call cancels the upstream's task.
  Outcome call_tool(const std::string& tool, const nlohmann::json& arguments, CallContext& context);
  // The result of a tools/call as toolmux returns it.
  // Throws MissingClientCapability when the upstream answered -32021, and
  // std::runtime_error when its task failed (the calling client's task fails).
  static ToolResult tool_result(const Outcome& outcome);

  const std::string& name() const { return name_; }
  // Known once connect() or initialize() has succeeded.
  ProtocolEra era() const;
  // kModernProtocolVersion, or the version initialize agreed on; "" before.
  std::string protocol_version() const;
  // Why connect() took the upstream for a legacy one (the probe's answer); "" otherwise.
  std::string legacy_reason() const;
  const nlohmann::json& server_info() const { return server_info_; }
  // What the server's answer to initialize (or server/discover) says about
  // using it, at most kMostInstructions bytes (cut at a character).
  const std::string& instructions() const { return instructions_; }
  static constexpr std::size_t kMostInstructions = 4096;
  const nlohmann::json& server_capabilities() const { return server_capabilities_; }
  bool gone() const;
  // How the transport closed ("exited with status 1"); waits a moment for it
  // when a send failed before the transport said. "" while it is open.
  std::string closed_reason();

 private:
  // One request in flight. `context` is the call it serves (null for
  // initialize and tools/list); it is cleared, under `use`, when the call
  // returns, so the reader never reaches a context that has ended. A relayed
  // client request uses the context outside `use` (its wait may be long) and
  // counts itself in `relays` meanwhile: the call, when it ends, stops them
  // through `relay_stop` and waits for `relays` to fall to 0.
  struct Pending {
    explicit Pending(std::string method_name) : method(std::move(method_name)) {}
    const std::string method;
    std::mutex use;
    std::condition_variable relays_done;
    CallContext* context = nullptr;
    int relays = 0;
    std::stop_source relay_stop;
    // A relayed question's client answers only in a retry of its call (the
    // call is stopped for it, not cancelled by its client).
    std::atomic<bool> input_pending{false};
    // Under mutex_: the answer, or why it could not be read.
    std::optional<nlohmann::json> response;  // {"result": ...} or {"error": ...}
    std::string refused;
  };

  McpClient(std::string name, std::unique_ptr<ClientTransport> transport, Logger& logger,
            Events events);
  // One request, one answer: sends `method` as it is (request() adds the era's
  // _meta and makes the rounds of input_required).
  // call_tool's following of the task the upstream answered with (`created`).
  Outcome follow_task(const nlohmann::json& created, CallContext& context);
  Outcome send_request(const std::string& method, nlohmann::json params,
                       std::chrono::steady_clock::time_point deadline, CallContext* context);
  Outcome modern_request(const std::string& method, nlohmann::json params,
                         std::chrono::steady_clock::time_point deadline, CallContext* context);
  // server/discover and its verdict; a modern verdict makes the client modern.
  ProbeVerdict discover(std::chrono::milliseconds timeout);
  // initialize and the rest of the legacy handshake; `error` gets
  // initialize's JSON-RPC error object when it was refused.
  Status handshake(std::chrono::milliseconds timeout, nlohmann::json& error);
  // The subscription's end (`why`), when `id` is the one listening.
  void listen_ended(std::int64_t id, const std::string& why, bool refused);
  void on_message(std::string_view text);
  // A message the JSON boundary refused (`reason`): it fails the request it
  // answers, or every request in flight when which one cannot be read.
  void on_unreadable(std::string_view text, const std::string& reason);
  // Fails request `id` (every request in flight when null) with `reason`;
  // how many it failed. Under mutex_.
  int refuse_locked(const nlohmann::json& id, const std::string& reason);
  void on_closed(const std::string& reason);
  void on_notification(const std::string& method, const nlohmann::json& params);
  void on_request(const nlohmann::json& id, const std::string& method,
                  const nlohmann::json& params);
  void on_log_message(const nlohmann::json& params);
  void keep_instructions(const nlohmann::json& result);
  // Whether a modern upstream's `tool` may be called (its x-mcp-header
  // parameters are valid); remembers them when so, logs why not otherwise.
  bool accept_param_headers(const nlohmann::json& tool);
  // Reports `dropped` log messages in toolmux's log, and to `context` (the
  // calling client's) when not null.
  void report_dropped_logs(std::uint64_t dropped, CallContext* context);
  // Ends the relayed client requests of `pending` and clears its context.
  static void end_relays(Pending& pending);
  // The Pending of the only relayed call in flight, or null.
  std::shared_ptr<Pending> only_call();
  std::shared_ptr<Pending> only_call_locked();
  // "upstream \"x\" exited with status 1": waits a moment for the reason when
  // the transport has not told it yet.
  std::string gone_reason();
  void send(const nlohmann::json& message);

  const std::string name_;
  std::unique_ptr<ClientTransport> transport_;
  Logger& logger_;
  Events events_;
  nlohmann::json server_info_ = nlohmann::json::object();
  std::string instructions_;
  nlohmann::json server_capabilities_ = nlohmann::json::object();
  mutable std::mutex mutex_;
  std::condition_variable answered_;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, std::shared_ptr<Pending>> pending_;
  int relayed_requests_ = 0;  // client requests being relayed
  LogRateLimit log_limit_{kLogMessagesPerSecond, kLogBurst, kLogSummaryEvery};
  bool gone_ = false;
  std::string gone_reason_;          // set with gone_ by the transport
  std::atomic<bool> modern_{false};  // set once, by connect(), before any other request
  // Under mutex_.
  std::string protocol_version_;
  std::string legacy_reason_;
  std::int64_t listen_id_ = 0;  // the subscriptions/listen in flight; 0 = none
  // Each listed tool's x-mcp-header parameters (those that have some).
  std::map<std::string, std::vector<ParamHeader>> param_headers_;
  ListenEnded listen_ended_;
};

}  // namespace toolmux
