#include "src/protocol/paced_peer.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace toolmux {

using jsonrpc::Message;

struct PacedPeer::State {
  struct Held {
    Message message;
    std::size_t bytes = 0;
  };
  std::mutex mutex;
  // Any change: a request held or handed on, room in the admission (its
  // on_room listener), the end. The reader, the feeder and finish() wait on it.
  std::condition_variable changed;
  std::deque<Held> held;
  std::size_t held_bytes = 0;
  bool handing = false;  // the feeder is handing one on, outside the lock
  bool finished = false;
  std::thread feeder;
};

namespace {

// About the bytes of the text `m` was read from: its params as JSON (the rest
// of a request is a few dozen bytes). Only held requests are measured.
std::size_t text_bytes(const Message& m) {
  return m.method.size() + m.id.dump().size() +
         m.params.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() + 40;
}

// Hands the held requests on, in order, each once the server has room for it.
void feed(McpServer& server, const std::shared_ptr<Session>& session, PacedPeer::State& s) {
  std::unique_lock lock(s.mutex);
  while (true) {
    s.changed.wait(lock, [&] {
      return s.finished ||
             (!s.held.empty() && server.has_room_for(s.held.front().message, *session));
    });
    if (s.finished) return;
    Message next = std::move(s.held.front().message);
    s.held_bytes -= s.held.front().bytes;
    s.held.pop_front();
    s.handing = true;
    s.changed.notify_all();  // the reader may hold another
    lock.unlock();
    // Quick: with room, the server starts or queues it and returns.
    server.handle(std::move(next), session, Carrier::hand_off);
    lock.lock();
    s.handing = false;
    s.changed.notify_all();
  }
}

}  // namespace

PacedPeer::PacedPeer(McpServer& server, std::shared_ptr<Session> session,
                     std::function<bool()> stop_requested)
    : server_(server),
      session_(std::move(session)),
      stop_requested_(std::move(stop_requested)),
      state_(std::make_shared<State>()) {
  server_.on_room([weak = std::weak_ptr<State>(state_)] {
    if (auto s = weak.lock()) {
      std::lock_guard lock(s->mutex);
      s->changed.notify_all();
    }
  });
}

PacedPeer::~PacedPeer() { finish(false); }

void PacedPeer::deliver(Message message, Carrier carrier) {
  State& s = *state_;
  if (!server_.takes_a_place(message)) {
    if (message.kind == Message::Kind::notification &&
        message.method == "notifications/cancelled" && message.params.is_object() &&
        message.params.contains("requestId")) {
      const auto& cancelled = message.params["requestId"];
      std::unique_lock lock(s.mutex);
      // One being handed on reaches its session first, where this finds it.
      s.changed.wait(lock, [&] { return !s.handing; });
      // A held request that is cancelled never runs, and gets no response.
      std::erase_if(s.held, [&](const State::Held& h) {
        if (h.message.id != cancelled) return false;
        s.held_bytes -= h.bytes;
        return true;
      });
      s.changed.notify_all();
    }
    // Answers to toolmux's requests, notifications, ping, ...: at once.
    server_.handle(std::move(message), session_, Carrier::hand_off);
    return;
  }
  std::unique_lock lock(s.mutex);
  if (!s.finished && s.held.empty() && !s.handing && server_.has_room_for(message, *session_)) {
    lock.unlock();
    // As it came: the reader may run a call of a runs_on_reader tool itself.
    server_.handle(std::move(message), session_, carrier);
    return;
  }
  if (!s.finished && !s.feeder.joinable()) {
    try {
      s.feeder = std::thread([this] { feed(server_, session_, *state_); });
    } catch (...) {
      // No thread to hand them on: the server answers (busy, if it is).
      lock.unlock();
      server_.handle(std::move(message), session_, Carrier::hand_off);
      return;
    }
  }
  // Full: the reader waits here, so the client's writes wait in the pipe. A
  // stop signal cannot wake it (its handler only sets a flag): it looks.
  const std::size_t bytes = text_bytes(message);
  const auto fits = [&] {
    return s.finished || (s.held.size() < kMaxHeldMessages &&
                          (s.held.empty() || s.held_bytes + bytes <= kMaxHeldBytes));
  };
  while (!s.changed.wait_for(lock, kStopLook, fits)) {
    if (stop_requested_ && stop_requested_()) return;
  }
  if (s.finished) {
    lock.unlock();
    server_.handle(std::move(message), session_, Carrier::hand_off);
    return;
  }
  s.held.push_back(State::Held{std::move(message), bytes});
  s.held_bytes += bytes;
  s.changed.notify_all();
}

bool PacedPeer::wait_until_handed_on(std::chrono::milliseconds timeout) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  return s.changed.wait_for(lock, timeout, [&] { return s.held.empty() && !s.handing; });
}

void PacedPeer::finish(bool answer) {
  State& s = *state_;
  std::deque<State::Held> left;
  std::thread feeder;
  {
    std::lock_guard lock(s.mutex);
    if (s.finished) return;
    s.finished = true;
    left.swap(s.held);
    s.held_bytes = 0;
    feeder = std::move(s.feeder);
  }
  s.changed.notify_all();
  if (feeder.joinable()) feeder.join();
  server_.on_room(nullptr);
  if (!answer) return;
  for (const State::Held& h : left) {
    session_->send_related(jsonrpc::make_error(h.message.id, jsonrpc::kServerBusy,
                                               "toolmux is stopping; the request was not run"),
                           h.message.id);
  }
}

std::size_t PacedPeer::held() const {
  std::lock_guard lock(state_->mutex);
  return state_->held.size();
}

}  // namespace toolmux
