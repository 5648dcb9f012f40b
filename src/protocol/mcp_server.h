// The MCP server: routes each incoming message of a session to its method and
// answers through the session. Transport-agnostic: a server transport
// (transports/server_transport.h) reads and parses each message and hands it to
// the one entry point, handle(), through the session's SessionPeer (over stdio,
// PacedPeer: src/protocol/paced_peer.h); answers go
// out through the session's MessageSink.
//
// handle() may be called from several threads for different sessions, and
// returns quickly when told to hand off (Carrier::hand_off): tools/call runs
// on a thread of its own, so a slow tool never holds up ping, tools/list or
// other calls. With Carrier::carry a tools/call admitted at once runs on the
// calling thread instead, and handle() returns once it is answered (its tool
// handler still runs on a thread of its own, to be abandoned at its deadline):
// unless it may need the client while it runs (it asked for progress, or the
// client declared elicitation or sampling), since what it sends then reaches
// the client only once the calling thread is free. Never throws.
//
// A tools/call is read here (call_tool) and owned from then on by the
// CallRunner (src/pipeline/call_runner.h): begin, admit, run, pipeline, reply.
//
// tools/call and the requests of ProviderMethods go through one CallAdmission
// (options.call_limits): past its limits they wait in its queue, and past the
// queue's they are answered at once with a kServerBusy error naming the limits
// (over stdio its PacedPeer holds them instead until there is room:
// src/protocol/paced_peer.h). A call that waited is judged by the catalog
// serving when it starts, not the one it came under: a write freeze that came
// meanwhile refuses it. The process's call_threads() pool is capped at two
// threads a running call.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/assembly/tool_catalog.h"
#include "src/base/jsonrpc.h"
#include "src/base/logger.h"
#include "src/base/metrics.h"
#include "src/base/sealed_box.h"
#include "src/base/untrusted_json.h"
#include "src/pipeline/call_pipeline.h"
#include "src/pipeline/call_runner.h"
#include "src/protocol/listeners.h"
#include "src/protocol/provider_methods.h"
#include "src/session/call_admission.h"
#include "src/session/call_context.h"
#include "src/session/session.h"

namespace toolmux {

struct ServerOptions {
  std::size_t page_size = 0;  // tools per tools/list page; 0 = all in one page
  JsonLimits json_limits;
  std::shared_ptr<LazyResultStore> results;  // where large results go; null = never offload
  // How long a resources/..., prompts/... or completion/complete request may
  // take (its providers may be upstream servers).
  std::chrono::milliseconds provider_timeout{60000};
  // How many calls run at once, and wait (src/session/call_admission.h).
  CallLimits call_limits;
  // Who approves a guarded call (src/pipeline/confirm.h): over stdio the
  // local user toolmux runs as; serve --http sets authenticated (with tokens
  // or OAuth) or nobody (without).
  Approvers approvers = Approvers::local_user;
  // Seals the requestState of 2026-07-28 requests that ask their client
  // (src/session/input_exchange.h); null = a new random key, which states
  // made before a restart do not open with.
  std::shared_ptr<const SealingKey> state_key;
  // The journal of mutations and the audit trail (src/pipeline/call_journal.h);
  // null = neither.
  std::shared_ptr<const CallJournal> journal;
  // Tasks (src/pipeline/tasks.h): their ttl and store (null open_store: in
  // memory, for this process only).
  TaskOptions tasks;
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

  // The one entry point: handles one message from `session`, as its transport
  // parsed it (jsonrpc::parse_message with json_limits()). A Kind::invalid
  // message is answered with its error.
  void handle(jsonrpc::Message message, const std::shared_ptr<Session>& session,
              Carrier carrier = Carrier::hand_off);
  const JsonLimits& json_limits() const { return options_.json_limits; }

  // For a transport that holds its one client's requests instead of having
  // them refused as busy (src/protocol/paced_peer.h). Whether `m` is a
  // request that takes a place to run (tools/call, resources/...,
  // prompts/..., completion/complete); whether such a request from `session`
  // would now start or wait in the queue rather than be refused; and
  // `listener`, called (on any thread, no lock held) after a place may have
  // freed, replacing the last one (CallAdmission::on_room). Any thread.
  bool takes_a_place(const jsonrpc::Message& m) const;
  bool has_room_for(const jsonrpc::Message& m, const Session& session) const;
  void on_room(std::function<void()> listener) { admission_->on_room(std::move(listener)); }

  // For shutdown, after the sessions' calls were cancelled: waits until every
  // tool handler has stopped, including abandoned ones; false if `timeout` passed.
  bool wait_for_running_tools(std::chrono::milliseconds timeout) {
    return running_->wait_until_idle(timeout);
  }

  // Ends every subscriptions/listen with its result: before a shutdown waits
  // for the calls in flight, of which they are. Any thread.
  void end_listens() { listeners_.end_all(); }

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
  using Method = std::function<void(jsonrpc::Message&, const std::shared_ptr<Session>&, Carrier)>;

  void handle_request(jsonrpc::Message& m, const std::shared_ptr<Session>& session,
                      Carrier carrier);
  // A request of the 2026-07-28 protocol (src/protocol/modern.h), carried by
  // `carrier_session`: served with a Session of its own (Session::for_request).
  void handle_modern(jsonrpc::Message& m, const std::shared_ptr<Session>& carrier_session,
                     Carrier carrier);
  void discover(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  // subscriptions/listen (src/protocol/listeners.h), carried by `carrier_session`.
  void listen(const jsonrpc::Message& m, const std::shared_ptr<Session>& carrier_session,
              RequestMeta meta);
  // Holds the listen, acknowledges `filter` and registers it for the changes it asked for.
  void open_listen(const nlohmann::json& id, const std::shared_ptr<Session>& carrier_session,
                   RequestMeta meta, const std::shared_ptr<CallControl>& control,
                   const ListenFilter& filter);
  // Registers the session for catalog notifications, once.
  void watch(const std::shared_ptr<Session>& session);
  void handle_notification(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);

  void initialize(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void list_tools(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  // Reads the request into a CallRequest (moving the arguments out of `m`)
  // and hands it to the runner, which owns the call from then on.
  void call_tool(jsonrpc::Message& m, const std::shared_ptr<Session>& session, Carrier carrier);
  void set_log_level(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  // tasks/get, tasks/update, tasks/cancel (src/pipeline/tasks.h).
  void task_method(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);

  // Tells a legacy session, once it is initialized, of the calls of its
  // principal that an earlier process left interrupted (each call once).
  void tell_interrupted(const std::shared_ptr<Session>& session);
  std::mutex interrupted_mutex_;
  std::set<std::string> interrupted_told_;  // call ids (guarded by interrupted_mutex_)
  mutable std::mutex catalog_mutex_;
  std::shared_ptr<const Catalog> catalog_;  // guarded by catalog_mutex_
  // Initialized sessions, told when the catalog changes. Guarded by catalog_mutex_.
  std::vector<std::weak_ptr<Session>> sessions_;
  ServerOptions options_;
  Logger& logger_;
  std::shared_ptr<RunningHandlers> running_ = std::make_shared<RunningHandlers>();
  std::unique_ptr<CallAdmission> admission_;
  const std::shared_ptr<const SealingKey> state_key_;
  std::unique_ptr<Tasks> tasks_;
  // Every tools/call, from begin to reply (src/pipeline/call_runner.h).
  std::unique_ptr<CallRunner> runner_;
  std::map<std::string, Method, std::less<>> methods_;
  std::set<std::string, std::less<>> placed_methods_;  // the methods that take a place
  // resources/*, prompts/*, completion/complete, from the catalog's providers.
  std::unique_ptr<ProviderMethods> provider_methods_;
  Listeners listeners_;
};

// A session's way into the server, as its transport holds it.
class SessionPeer final : public ServerPeer {
 public:
  SessionPeer(McpServer& server, std::shared_ptr<Session> session)
      : server_(server), session_(std::move(session)) {}
  const std::string& id() const override { return session_->id(); }
  bool initialized() const override { return session_->initialized(); }
  void deliver(jsonrpc::Message message, Carrier carrier) override {
    server_.handle(std::move(message), session_, carrier);
  }
  const std::shared_ptr<Session>& session() const { return session_; }

 private:
  McpServer& server_;
  const std::shared_ptr<Session> session_;
};

}  // namespace toolmux
