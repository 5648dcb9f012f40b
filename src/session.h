// One client's connection to the server: its lifecycle state (legacy era,
// opened by initialize), its logging level, and the calls it has in flight.
//
// A Session is shared (std::shared_ptr) by the transport that reads for it and
// by every call running for it; all members are thread-safe. Sending goes
// through the MessageSink the transport provides.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"

namespace toolmux {

// Where a session's outgoing messages go. Implemented by a transport;
// send() is called from many threads and must write each message whole.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void send(const nlohmann::json& message) = 0;
};

// Stop signal and deadline of one tools/call. cancel() is called by the
// session's reader (notifications/cancelled) or by shutdown; the call's threads
// poll stop_requested().
class CallControl {
 public:
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }
  void set_deadline(std::chrono::steady_clock::time_point deadline) {
    deadline_ns_.store(deadline.time_since_epoch().count());
  }
  std::chrono::steady_clock::time_point deadline() const {
    return std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(deadline_ns_.load()));
  }
  bool expired() const { return std::chrono::steady_clock::now() >= deadline(); }
  bool stop_requested() const { return cancelled() || expired(); }

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<std::chrono::steady_clock::rep> deadline_ns_{
      std::chrono::steady_clock::time_point::max().time_since_epoch().count()};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `id` must be unguessable: results and other per-session state are keyed by
  // it. `principal` is who the operator's access rules apply to.
  // `label` names the session in logs instead.
  Session(std::string id, std::string principal, std::string label, MessageSink& sink)
      : id_(std::move(id)),
        principal_(std::move(principal)),
        label_(std::move(label)),
        sink_(sink) {}

  const std::string& id() const { return id_; }
  const std::string& label() const { return label_; }
  const std::string& principal() const { return principal_; }
  void send(const nlohmann::json& message) { sink_.send(message); }

  // Lifecycle (legacy era): initialize sets the negotiated version.
  bool initialized() const;
  std::string protocol_version() const;
  void set_initialized(std::string protocol_version, nlohmann::json client_capabilities,
                       nlohmann::json client_info);
  nlohmann::json client_info() const;

  // The level set by logging/setLevel; notifications/message below it are not sent.
  LogLevel log_level() const { return log_level_.load(); }
  void set_log_level(LogLevel level) { log_level_.store(level); }

  // Tools this session's searches found (discovery mode). Adding new ones
  // sends notifications/tools/list_changed once for a burst of additions.
  bool discovered(std::string_view tool) const;
  void add_discovered(const std::vector<std::string>& tools);

  // Registers a call under its request id. Returns null when a call with that
  // id is already in flight (JSON-RPC ids must be unique among open requests).
  std::shared_ptr<CallControl> begin_call(const nlohmann::json& request_id);
  void end_call(const nlohmann::json& request_id);
  // notifications/cancelled: stops the call if it is in flight; unknown ids are
  // ignored (the call may have finished already, as the spec allows).
  void cancel_call(const nlohmann::json& request_id);
  void cancel_all_calls();
  // Waits until no call is in flight or `timeout` passes; true when none is.
  bool wait_for_calls(std::chrono::milliseconds timeout);

 private:
  const std::string id_;
  const std::string principal_;
  const std::string label_;
  MessageSink& sink_;
  std::atomic<LogLevel> log_level_{LogLevel::warning};

  mutable std::mutex mutex_;
  std::condition_variable calls_changed_;
  bool initialized_ = false;
  std::string protocol_version_;
  nlohmann::json client_capabilities_;
  nlohmann::json client_info_;
  std::map<std::string, std::shared_ptr<CallControl>> calls_;  // key: id.dump()
  std::set<std::string, std::less<>> discovered_;
  bool list_change_pending_ = false;
};

}  // namespace toolmux
