// One client's connection to the server: its lifecycle state (legacy era,
// opened by initialize), its logging level, and the calls it has in flight.
// Or one request of the 2026-07-28 protocol (Session::for_request), which has
// no session: what it needs to know (version, client capabilities, log level)
// comes with it, and its calls are registered with the session of the
// transport that carries it, so that cancellation and shutdown reach them.
//
// A Session is shared (std::shared_ptr) by the transport that reads for it and
// by every call running for it; all members are thread-safe. Sending goes
// through the MessageSink the transport provides.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "transports/server_transport.h"

namespace toolmux {

// Stop signal and deadline of one call. cancel() is called by the session's
// reader (notifications/cancelled) or by shutdown: the call gets no response.
// abort() is called when toolmux exits before the call finished: the call is
// answered with an error saying so. Both set their flag first and then request
// a stop on stop_token(), so a thread that waits for the call wakes at once
// through a std::stop_callback on it rather than polling the flags; such a
// callback runs on the thread that calls cancel() or abort() (a Session calls
// them holding none of its locks), so it must take no lock that thread may
// hold. The deadline
// passing requests no stop: a waiter waits until deadline(). A tool handler
// polls stop_requested() (through its CallContext). Thread-safe.
class CallControl {
 public:
  // The call asked a 2026-07-28 client a question (ClientAnswer::pending): it
  // stops, and is answered with the questions instead of a result.
  void request_input() {
    input_requested_.store(true);
    stop_.request_stop();
  }
  bool input_requested() const { return input_requested_.load(); }
  void cancel() {
    cancelled_.store(true);
    stop_.request_stop();
  }
  bool cancelled() const { return cancelled_.load(); }
  void abort() {
    aborted_.store(true);
    stop_.request_stop();
  }
  bool aborted() const { return aborted_.load(); }
  // Stop is requested on it when the call is cancelled or aborted.
  std::stop_token stop_token() const { return stop_.get_token(); }
  // The call runs on the thread that delivered it, which writes its answer
  // only once it ends (an HTTP connection): nothing sent for it reaches the
  // client before then, so it must not wait for the client.
  void set_carried() { carried_.store(true); }
  bool carried() const { return carried_.load(); }
  void set_deadline(std::chrono::steady_clock::time_point deadline) {
    deadline_ns_.store(deadline.time_since_epoch().count());
  }
  std::chrono::steady_clock::time_point deadline() const {
    return std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(deadline_ns_.load()));
  }
  bool expired() const { return std::chrono::steady_clock::now() >= deadline(); }
  bool stop_requested() const { return cancelled() || aborted() || input_requested() || expired(); }

 private:
  std::atomic<bool> input_requested_{false};
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> aborted_{false};
  std::atomic<bool> carried_{false};
  std::stop_source stop_;
  std::atomic<std::chrono::steady_clock::rep> deadline_ns_{
      std::chrono::steady_clock::time_point::max().time_since_epoch().count()};
};

// What a request of the 2026-07-28 protocol says of itself in its _meta.
struct RequestMeta {
  std::string protocol_version;
  nlohmann::json client_capabilities = nlohmann::json::object();
  nlohmann::json client_info = nlohmann::json::object();
  // The least level of notifications/message the client wants for this
  // request; none: it wants none (the spec forbids them then).
  std::optional<LogLevel> log_level;
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
  // The same, for a transport that keeps a sink per session: the session owns it.
  Session(std::string id, std::string principal, std::string label,
          std::shared_ptr<MessageSink> sink)
      : id_(std::move(id)),
        principal_(std::move(principal)),
        label_(std::move(label)),
        owned_sink_(std::move(sink)),
        sink_(*owned_sink_) {}

  // A request of the 2026-07-28 protocol carried by `carrier` (the stdio
  // process's session, or one made for the HTTP request): messages go to
  // `sink` (which shapes them for that protocol and passes them on to the
  // carrier), calls are registered with the carrier. `owner` keys what the
  // request's calls store (offloaded results): the principal's, not a
  // session's. It is initialized, never asked anything (client_may_be_asked),
  // and keeps no discovered tools.
  static std::shared_ptr<Session> for_request(std::shared_ptr<Session> carrier, RequestMeta meta,
                                              std::string owner, std::shared_ptr<MessageSink> sink);
  // A request of the 2026-07-28 protocol (for_request); null for a session.
  const RequestMeta* request_meta() const { return meta_.get(); }
  // What the per-session call limits count this session's calls under
  // (src/session/call_admission.h): its id; a request of the 2026-07-28
  // protocol has no session, so only the server-wide limits apply to it, and
  // each gets a key of its own.
  const std::string& admission_key() const { return admission_key_.empty() ? id_ : admission_key_; }

  const std::string& id() const { return id_; }
  const std::string& label() const { return label_; }
  const std::string& principal() const { return principal_; }
  // The sink this session owns (null when the transport keeps it).
  const std::shared_ptr<MessageSink>& owned_sink() const { return owned_sink_; }

  // A message of the session as a whole (e.g. list_changed).
  void send(const nlohmann::json& message) { sink_.send(message, nullptr); }
  // A response to `request_id`, or a message sent while serving it.
  void send_related(const nlohmann::json& message, const nlohmann::json& request_id) {
    sink_.send(message, request_id);
  }
  void send_related(nlohmann::json&& message, const nlohmann::json& request_id) {
    sink_.send_owned(std::move(message), request_id);
  }

  void request_finished(const nlohmann::json& request_id) { sink_.request_finished(request_id); }
  void close_request_stream(const nlohmann::json& request_id) {
    sink_.close_request_stream(request_id);
  }

  // Sends a request to the client (on the stream of `related_request`) and
  // waits for its answer, until `timeout` passes, `control` (may be null)
  // says the call that asked was stopped (woken by its stop_token, or at its
  // deadline), or `stop` is requested; it does not poll.
  ClientAnswer request_client(const std::string& method, nlohmann::json params,
                              const nlohmann::json& related_request, const CallControl* control,
                              std::chrono::milliseconds timeout, const std::stop_token& stop = {});
  // A response from the client: completes the request_client waiting for it.
  // False when no request with that id is waiting.
  bool deliver_response(const nlohmann::json& id, const nlohmann::json& message);

  // Lifecycle (legacy era): initialize sets the negotiated version.
  bool initialized() const;
  // True the first time only: the server registers the session for its
  // catalog notifications once (at initialize, or at the first request of a
  // session restored after a restart).
  bool watch_once() { return !watched_.load() && !watched_.exchange(true); }
  std::string protocol_version() const;
  void set_initialized(std::string protocol_version, nlohmann::json client_capabilities,
                       nlohmann::json client_info);
  nlohmann::json client_info() const;
  nlohmann::json client_capabilities() const;
  // The client declared it can be asked (elicitation or sampling): a call of
  // this session may send it requests and wait for the answers.
  bool client_may_be_asked() const;

  // What a session keeps across a restart of the server (its lifecycle state,
  // log level and discovered tools), as JSON; restore() takes it back.
  nlohmann::json state() const;
  void restore(const nlohmann::json& state);
  // Called (outside the session's lock) after that state changed.
  void set_state_listener(std::function<void(const Session&)> listener);

  // The level set by logging/setLevel; notifications/message below it are not sent.
  LogLevel log_level() const { return log_level_.load(); }
  // Whether a notifications/message at `level` goes to the client.
  bool wants_log(LogLevel level) const {
    if (meta_) return meta_->log_level && level >= *meta_->log_level;
    return level >= log_level();
  }
  void set_log_level(LogLevel level) {
    log_level_.store(level);
    state_changed();
  }

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
  // Stops every call in flight, to be answered with an error (toolmux exits).
  void abort_all_calls();
  // Waits until no call is in flight or `timeout` passes; true when none is.
  bool wait_for_calls(std::chrono::milliseconds timeout);

 private:
  void state_changed();
  std::vector<std::shared_ptr<CallControl>> calls_in_flight() const;

  const std::string id_;
  const std::string principal_;
  const std::string label_;
  // Set for a request of the 2026-07-28 protocol (for_request).
  std::shared_ptr<const RequestMeta> meta_;
  std::shared_ptr<Session> carrier_;
  std::string admission_key_;  // "" = id_
  const std::shared_ptr<MessageSink> owned_sink_;
  MessageSink& sink_;
  std::atomic<LogLevel> log_level_{LogLevel::warning};

  mutable std::mutex mutex_;
  std::condition_variable calls_changed_;
  bool initialized_ = false;
  std::atomic<bool> watched_{false};
  std::string protocol_version_;
  nlohmann::json client_capabilities_;
  nlohmann::json client_info_;
  std::map<std::string, std::shared_ptr<CallControl>> calls_;  // key: jsonrpc::id_key
  std::set<std::string, std::less<>> discovered_;
  bool list_change_pending_ = false;
  std::function<void(const Session&)> state_listener_;
  // Requests sent to the client, waiting for its answer; key: id.dump().
  struct PendingAnswer {
    bool done = false;
    ClientAnswer answer;
  };
  std::map<std::string, std::shared_ptr<PendingAnswer>> pending_answers_;
  // Also notified when a waiting request_client's call or request is stopped.
  std::condition_variable answers_changed_;
  std::uint64_t next_request_id_ = 1;
};

}  // namespace toolmux
