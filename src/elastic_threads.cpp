#include "src/elastic_threads.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace toolmux {

struct ElasticThreads::State {
  State(std::size_t max, std::chrono::milliseconds timeout)
      : max_threads(max), idle_timeout(timeout) {}
  const std::size_t max_threads;
  const std::chrono::milliseconds idle_timeout;
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
      ++s.idle;
      const bool woken = s.wake.wait_for(lock, s.idle_timeout,
                                         [&s] { return !s.jobs.empty() || s.shutting_down; });
      --s.idle;
      if (s.jobs.empty() && (s.shutting_down || !woken)) break;
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

}  // namespace

ElasticThreads::ElasticThreads(std::size_t max_threads, std::chrono::milliseconds idle_timeout)
    : state_(std::make_shared<State>(max_threads, idle_timeout)) {}

ElasticThreads::~ElasticThreads() = default;

void ElasticThreads::post(std::function<void()> job) {
  bool spawn = false;
  {
    std::lock_guard lock(state_->mutex);
    state_->jobs.push_back(std::move(job));
    // Every waiting job needs a thread of its own: an idle thread for each, a
    // new thread when there is none (below the cap).
    spawn = state_->idle < state_->jobs.size() && state_->threads < state_->max_threads;
    if (spawn) ++state_->threads;
  }
  // Woken or started after unlocking, so the thread does not wake only to
  // wait for the lock (two extra context switches a job on one core).
  if (spawn) {
    std::thread([state = state_] { work(state); }).detach();
  } else {
    state_->wake.notify_one();
  }
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
