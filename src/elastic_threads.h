// Threads that come and go with the work: a job runs at once on an idle
// thread, or on a new one (up to max_threads; past it, jobs wait their turn),
// and a thread idle for idle_timeout ends. For work that must never wait
// behind other work — tool calls, their deadline runs, HTTP connections —
// without paying for a new thread each time under load.
//
// The threads share their state with the pool object, so a job still running
// after shutdown() gave up on it touches nothing freed. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>

namespace toolmux {

class ElasticThreads {
 public:
  explicit ElasticThreads(std::size_t max_threads = std::numeric_limits<std::size_t>::max(),
                          std::chrono::milliseconds idle_timeout = std::chrono::seconds(30));
  ElasticThreads(const ElasticThreads&) = delete;
  ElasticThreads& operator=(const ElasticThreads&) = delete;
  ~ElasticThreads();

  void post(std::function<void()> job);
  // Lets idle threads end and waits up to `wait` for every thread to end
  // (queued jobs still run first). True when none is left.
  bool shutdown(std::chrono::milliseconds wait);
  // Threads alive now (running a job or idle).
  std::size_t threads() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// The process's pool for tool calls and their deadline runs (never shut down).
ElasticThreads& call_threads();

}  // namespace toolmux
