// subscriptions/listen (2026-07-28, basic/patterns/subscriptions.mdx): a
// request that stays open and carries the change notifications its client
// opted into, each tagged with the request's id as
// _meta["io.modelcontextprotocol/subscriptionId"]. It is acknowledged first
// (notifications/subscriptions/acknowledged, with the filter agreed), and
// ends when the client cancels it (stdio: notifications/cancelled; HTTP:
// closing the stream), with no response; or when toolmux stops, with an empty
// result (end_all).
//
// A listen is served by a Session of its own (Session::for_request) whose sink
// is a ListenSink: the server and ResourceSubscriptions tell it of changes as
// they tell a legacy session, and the sink passes on only what the filter
// asked for, tagged, on the listen request's stream. Listeners holds those
// sessions (the others hold them weakly) until they end. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/session/session.h"
#include "transports/server_transport.h"

namespace toolmux {

// What a listen asked for, as agreed.
struct ListenFilter {
  bool tools = false;          // toolsListChanged
  bool prompts = false;        // promptsListChanged
  bool resources = false;      // resourcesListChanged
  std::set<std::string> uris;  // resourceSubscriptions
  nlohmann::json to_json() const;
};

class ListenSink final : public MessageSink {
 public:
  ListenSink(std::shared_ptr<Session> carrier, nlohmann::json listen_id, ListenFilter filter)
      : carrier_(std::move(carrier)), id_(std::move(listen_id)), filter_(std::move(filter)) {}
  void send(const nlohmann::json& message, const nlohmann::json& related_request) override;
  void request_finished(const nlohmann::json& request_id) override {
    carrier_->request_finished(request_id);
  }

 private:
  const std::shared_ptr<Session> carrier_;
  const nlohmann::json id_;
  const ListenFilter filter_;
};

class Listeners {
 public:
  // Listens open at once, across all clients; one more is refused.
  static constexpr std::size_t kMaxListeners = 1024;
  // URIs one listen may subscribe to.
  static constexpr std::size_t kMaxUris = 256;

  // The filter `params.notifications` asks for, or "" and the reason it is
  // malformed (for -32602).
  static std::variant<ListenFilter, std::string> read_filter(const nlohmann::json& params);

  // Holds `listener` (the listen's Session, made with a ListenSink) until
  // `control` is stopped (the client cancelled it); then `ended` runs, once,
  // on the thread that stopped it. False when kMaxListeners are open.
  bool add(const nlohmann::json& id, std::shared_ptr<Session> listener,
           const std::shared_ptr<CallControl>& control, std::function<void()> ended);
  // Ends every listen with its result (toolmux stops).
  void end_all();
  std::size_t size() const;

 private:
  struct Entry;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<Entry>> entries_;
  // Entries that ended by a stop, kept until a later add() or end_all():
  // their stop callback was running when they ended.
  std::vector<std::shared_ptr<Entry>> graveyard_;
  std::uint64_t next_ = 0;
};

}  // namespace toolmux
