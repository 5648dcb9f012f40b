#include "src/base/elastic_threads.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace toolmux {

struct ElasticThreads::State {
  State(std::size_t max, std::chrono::milliseconds timeout, ThreadStarter starter)
      : max_threads(std::max<std::size_t>(max, 1)),
        idle_timeout(timeout),
        start_thread(std::move(starter)) {}
  std::size_t max_threads;  // guarded by mutex
  const std::chrono::milliseconds idle_timeout;
  const ThreadStarter start_thread;
  mutable std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  std::deque<std::function<void()>> jobs;
  std::size_t threads = 0;
  std::size_t idle = 0;
  bool shutting_down = false;
};

namespace {

void work(const std::shared_ptr<ElasticThreads::State>& state) {
  ElasticThreads::State& s = *state;
  std::unique_lock lock(s.mutex);
  for (;;) {
    if (s.jobs.empty()) {
      // Past a lowered cap, the threads above it end instead of idling.
      auto leave = [&s] { return s.shutting_down || s.threads > s.max_threads; };
      ++s.idle;
      const bool woken = s.wake.wait_for(lock, s.idle_timeout,
                                         [&s, &leave] { return !s.jobs.empty() || leave(); });
      --s.idle;
      if (s.jobs.empty() && (!woken || leave())) break;
      if (s.jobs.empty()) continue;
    }
    auto job = std::move(s.jobs.front());
    s.jobs.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // what the job captured goes before the thread counts as idle
    lock.lock();
  }
  --s.threads;
  s.done.notify_all();
}

void start_std_thread(std::function<void()> body) { std::thread(std::move(body)).detach(); }

}  // namespace

ElasticThreads::ElasticThreads(std::size_t max_threads, std::chrono::milliseconds idle_timeout,
                               ThreadStarter start_thread)
    : state_(std::make_shared<State>(
          max_threads, idle_timeout,
          start_thread ? std::move(start_thread) : ThreadStarter(start_std_thread))) {}

ElasticThreads::~ElasticThreads() = default;

bool ElasticThreads::post(std::function<void()> job) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.jobs.push_back(std::move(job));
  // Every waiting job needs a thread of its own: an idle thread for each, a
  // new thread when there is none (below the cap).
  if (s.idle >= s.jobs.size() || s.threads >= s.max_threads) {
    // Woken after unlocking, so the thread does not wake only to wait for the
    // lock (two extra context switches a job on one core).
    lock.unlock();
    s.wake.notify_one();
    return true;
  }
  // Started under the lock: if the system refuses, no other post has counted
  // on this thread, and the job is still the last one queued.
  ++s.threads;
  try {
    s.start_thread([state = state_] { work(state); });
    return true;
  } catch (...) {  // std::system_error (EAGAIN), or bad_alloc: either way no thread
    --s.threads;
  }
  if (s.threads > 0) return true;  // a thread alive takes the job in its turn
  std::function<void()> dropped = std::move(s.jobs.back());
  s.jobs.pop_back();
  lock.unlock();
  // What the job holds goes outside the lock: letting it go may post again
  // (a call's place, freed, starts the next queued call).
  dropped = nullptr;
  return false;
}

void ElasticThreads::set_max_threads(std::size_t max_threads) {
  {
    std::lock_guard lock(state_->mutex);
    state_->max_threads = std::max<std::size_t>(max_threads, 1);
  }
  state_->wake.notify_all();
}

bool ElasticThreads::shutdown(std::chrono::milliseconds wait) {
  std::unique_lock lock(state_->mutex);
  state_->shutting_down = true;
  state_->wake.notify_all();
  return state_->done.wait_for(lock, wait, [this] { return state_->threads == 0; });
}

std::size_t ElasticThreads::threads() const {
  std::lock_guard lock(state_->mutex);
  return state_->threads;
}

ElasticThreads& call_threads() {
  // Never destroyed: calls abandoned after their deadline may still run at exit.
  static auto* pool = new ElasticThreads();
  return *pool;
}

}  // namespace toolmux
