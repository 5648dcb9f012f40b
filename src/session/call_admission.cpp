#include "src/session/call_admission.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <stop_token>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace toolmux {

using Clock = std::chrono::steady_clock;

namespace {

// Registering a Waker under the state's lock calls it at once when its call
// was stopped already: it must not take the lock then (the watch is told by
// whoever registers it).
thread_local bool registering_waker = false;

}  // namespace

struct CallAdmission::State {
  // Wakes the queue watch when a queued call is cancelled or aborted. Runs on
  // the thread that stops the call, with that thread's locks held (never this
  // state's: a Waker is only destroyed outside it).
  struct Waker {
    std::weak_ptr<State> state;
    void operator()() const {
      if (registering_waker) return;
      if (auto s = state.lock()) {
        std::lock_guard lock(s->mutex);
        s->stop_pending = true;
        s->changed.notify_all();
      }
    }
  };
  using WakeOnStop = std::unique_ptr<std::stop_callback<Waker>>;
  struct Queued {
    Call call;
    WakeOnStop wake;
  };

  State(CallLimits l, Metrics* m) : limits(l), metrics(m) {}
  const CallLimits limits;
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t running = 0;
  std::map<std::string, std::size_t, std::less<>> running_by_session;
  std::deque<Queued> queue;
  std::map<std::string, std::size_t, std::less<>> queued_by_session;
  bool closed = false;
  Metrics* metrics;  // null once closed
  std::thread watch;
  bool pump_again = false;    // a place was freed while this thread was pumping
  bool stop_pending = false;  // a queued call was stopped, or the queue changed
  std::shared_ptr<const std::function<void()>> room_listener;  // on_room's

  std::shared_ptr<const std::function<void()>> listener() {
    std::lock_guard lock(mutex);
    return room_listener;
  }
  // Under mutex.
  void publish() {
    if (metrics) metrics->set_call_load(running, queue.size());
  }
  static std::size_t count(const std::map<std::string, std::size_t, std::less<>>& counts,
                           std::string_view session) {
    auto it = counts.find(session);
    return it == counts.end() ? 0 : it->second;
  }
  static void uncount(std::map<std::string, std::size_t, std::less<>>& counts,
                      const std::string& session) {
    auto it = counts.find(session);
    if (it != counts.end() && --it->second == 0) counts.erase(it);
  }
  std::size_t session_running(std::string_view session) const {
    return count(running_by_session, session);
  }
  // Moves the queued call at `it` out of the queue into `out`, and its Waker
  // into `wakers` (to be destroyed once the lock is released); returns the next.
  std::deque<Queued>::iterator dequeue(const std::deque<Queued>::iterator& it, Call& out,
                                       std::vector<WakeOnStop>& wakers) {
    uncount(queued_by_session, it->call.session);
    out = std::move(it->call);
    wakers.push_back(std::move(it->wake));
    return queue.erase(it);
  }
  bool may_start(std::string_view session) const {
    return !closed && running < limits.max_running &&
           session_running(session) < limits.max_running_per_session;
  }
  bool may_queue(std::string_view session) const {
    return !closed && queue.size() < limits.max_queued &&
           count(queued_by_session, session) < limits.max_queued_per_session;
  }
  // What a call of `session` waits for.
  std::string busy(const std::string& session) const {
    if (running >= limits.max_running) {
      return std::to_string(running) + " calls running (--max-calls " +
             std::to_string(limits.max_running) + ")";
    }
    return "this session has " + std::to_string(session_running(session)) +
           " calls running (--max-session-calls " + std::to_string(limits.max_running_per_session) +
           ")";
  }
};

class CallPlace {
 public:
  CallPlace(std::shared_ptr<CallAdmission::State> state, std::string session)
      : state_(std::move(state)), session_(std::move(session)) {}
  CallPlace(const CallPlace&) = delete;
  CallPlace& operator=(const CallPlace&) = delete;
  ~CallPlace();

 private:
  std::shared_ptr<CallAdmission::State> state_;
  std::string session_;
};

namespace {

struct Ready {
  std::vector<std::pair<CallAdmission::Call, std::shared_ptr<const CallPlace>>> starts;
  std::vector<std::pair<CallAdmission::Call, std::string>> drops;
  std::vector<CallAdmission::State::WakeOnStop> wakers;
};

// Takes a place for `session`. Under the state's mutex.
std::shared_ptr<const CallPlace> take_place(const std::shared_ptr<CallAdmission::State>& state,
                                            const std::string& session) {
  ++state->running;
  ++state->running_by_session[session];
  return std::make_shared<const CallPlace>(state, session);
}

// The queued calls that may run now (to start), in the order they came, and
// those that stopped waiting (to drop). With `sweep` (the queue watch, woken
// by a stop or a deadline) it looks at every queued call. Without (a place
// was freed) it looks only for calls to start, and stops looking once no
// place is left: among the rest, a call that stopped is the watch's to drop.
// This is the path every call's end takes, so it must not walk a long queue
// of one busy session call by call. Under the state's mutex.
Ready take_ready(const std::shared_ptr<CallAdmission::State>& state, bool sweep) {
  Ready ready;
  auto& queue = state->queue;
  // The sessions this look found with no place left: once every session with
  // a queued call is among them, nothing further back may start.
  std::vector<std::string_view> full;
  auto is_full = [&full](const std::string& session) {
    return std::find(full.begin(), full.end(), session) != full.end();
  };
  for (auto it = queue.begin(); it != queue.end();) {
    if (!sweep && (state->closed || state->running >= state->limits.max_running ||
                   full.size() >= state->queued_by_session.size())) {
      break;
    }
    const CallAdmission::Call& queued = it->call;
    const bool startable = !is_full(queued.session) && state->may_start(queued.session);
    if ((sweep || startable) && queued.control->stop_requested()) {
      auto& [call, busy] =
          ready.drops.emplace_back(CallAdmission::Call{}, state->busy(queued.session));
      it = state->dequeue(it, call, ready.wakers);
    } else if (startable) {
      auto& [call, place] =
          ready.starts.emplace_back(CallAdmission::Call{}, take_place(state, queued.session));
      it = state->dequeue(it, call, ready.wakers);
    } else {
      if (!is_full(queued.session)) full.push_back(queued.session);
      ++it;
    }
  }
  if (!ready.starts.empty() || !ready.drops.empty()) state->publish();
  return ready;
}

void run(Ready& ready) {
  for (auto& [call, busy] : ready.drops) call.drop(busy);
  for (auto& [call, place] : ready.starts) call.start(std::move(place));
}

// Starts what may start and drops what stopped waiting (take_ready). A
// place freed by a start on this thread (its call could not get a thread)
// makes the loop go round again instead of recursing: the queue is untrusted
// input.
void pump(const std::shared_ptr<CallAdmission::State>& state, bool sweep) {
  thread_local const CallAdmission::State* pumping = nullptr;
  std::unique_lock lock(state->mutex);
  if (pumping == state.get()) {
    state->pump_again = true;
    return;
  }
  pumping = state.get();
  struct Reset {
    ~Reset() { pumping = nullptr; }
  } reset;
  do {
    state->pump_again = false;
    Ready ready = take_ready(state, sweep);
    lock.unlock();
    run(ready);
    ready = Ready{};  // what the calls captured goes outside the lock
    lock.lock();
  } while (state->pump_again);
}

// Drops the queued calls that stop waiting: woken by a Waker when one is
// cancelled or aborted, and at the earliest deadline among them.
void watch_queue(const std::shared_ptr<CallAdmission::State>& state) {
  std::unique_lock lock(state->mutex);
  while (!state->closed) {
    if (state->queue.empty()) {
      state->changed.wait(lock, [&] { return state->closed || !state->queue.empty(); });
      continue;
    }
    auto earliest = Clock::time_point::max();
    for (const auto& queued : state->queue) {
      earliest = std::min(earliest, queued.call.control->deadline());
    }
    auto woken = [&] { return state->closed || state->stop_pending; };
    if (earliest == Clock::time_point::max()) {
      state->changed.wait(lock, woken);
    } else {
      state->changed.wait_until(lock, earliest, woken);
    }
    if (state->closed) break;
    state->stop_pending = false;
    lock.unlock();
    pump(state, true);
    // What stopped waiting left the queue.
    if (auto room = state->listener()) (*room)();
    lock.lock();
  }
}

}  // namespace

CallPlace::~CallPlace() {
  std::shared_ptr<const std::function<void()>> room;
  bool queued = false;
  {
    std::lock_guard lock(state_->mutex);
    --state_->running;
    CallAdmission::State::uncount(state_->running_by_session, session_);
    state_->publish();
    queued = !state_->queue.empty();
    room = state_->room_listener;
  }
  if (queued) pump(state_, false);
  if (room) (*room)();
}

CallAdmission::CallAdmission(CallLimits limits, Metrics* metrics)
    : limits_(limits), state_(std::make_shared<State>(limits, metrics)) {
  std::lock_guard lock(state_->mutex);
  state_->publish();
}

CallAdmission::~CallAdmission() { close(); }

CallAdmission::Decision CallAdmission::submit(Call call) {
  std::unique_lock lock(state_->mutex);
  State& s = *state_;
  if (s.closed) return {Verdict::refused, "toolmux is stopping"};
  if (s.may_start(call.session)) {
    auto place = take_place(state_, call.session);
    s.publish();
    lock.unlock();
    call.start(std::move(place));
    return {Verdict::started, ""};
  }
  auto refuse = [&](std::string why) {
    if (s.metrics) s.metrics->count_refused_call();
    return Decision{Verdict::refused, std::move(why)};
  };
  if (s.queue.size() >= s.limits.max_queued) {
    return refuse("toolmux is busy: " + s.busy(call.session) + " and " +
                  std::to_string(s.queue.size()) + " calls queued (--max-queued-calls " +
                  std::to_string(s.limits.max_queued) + "); try again later");
  }
  if (const std::size_t mine = State::count(s.queued_by_session, call.session);
      mine >= s.limits.max_queued_per_session) {
    return refuse("toolmux is busy: " + s.busy(call.session) + " and this session has " +
                  std::to_string(mine) + " calls queued (--max-session-queued-calls " +
                  std::to_string(s.limits.max_queued_per_session) + "); try again later");
  }
  if (!s.watch.joinable()) {
    try {
      s.watch = std::thread([state = state_] { watch_queue(state); });
    } catch (...) {  // no thread to be had: a call that waits must be watched
      return refuse("toolmux is busy: " + s.busy(call.session) +
                    ", and no thread could be started to queue more; try again later");
    }
  }
  ++s.queued_by_session[call.session];
  State::WakeOnStop wake;
  {
    registering_waker = true;  // stopped already: the watch is told below
    wake = std::make_unique<std::stop_callback<State::Waker>>(call.control->stop_token(),
                                                              State::Waker{state_});
    registering_waker = false;
  }
  s.queue.push_back(State::Queued{std::move(call), std::move(wake)});
  s.publish();
  s.stop_pending = true;  // a new deadline to wait for, or a call stopped already
  s.changed.notify_all();
  return {Verdict::queued, ""};
}

void CallAdmission::close() {
  std::deque<State::Queued> dropped;
  std::thread watch;
  {
    std::lock_guard lock(state_->mutex);
    if (state_->closed) return;
    state_->closed = true;
    dropped.swap(state_->queue);
    state_->queued_by_session.clear();
    state_->publish();
    state_->metrics = nullptr;
    watch = std::move(state_->watch);
  }
  state_->changed.notify_all();
  if (watch.joinable()) {
    if (watch.get_id() == std::this_thread::get_id()) {
      watch.detach();  // closed from a start or drop the watch runs: it ends on its own
    } else {
      watch.join();
    }
  }
  for (auto& queued : dropped) queued.call.drop("toolmux is stopping");
}

bool CallAdmission::has_room(std::string_view session) const {
  std::lock_guard lock(state_->mutex);
  return state_->may_start(session) || state_->may_queue(session);
}

void CallAdmission::on_room(std::function<void()> listener) {
  auto shared =
      listener ? std::make_shared<const std::function<void()>>(std::move(listener)) : nullptr;
  std::lock_guard lock(state_->mutex);
  state_->room_listener = std::move(shared);
}

std::size_t CallAdmission::running() const {
  std::lock_guard lock(state_->mutex);
  return state_->running;
}

std::size_t CallAdmission::queued() const {
  std::lock_guard lock(state_->mutex);
  return state_->queue.size();
}

}  // namespace toolmux
