// Threads that come and go with the work: a job runs at once on an idle
// thread, or on a new one (up to max_threads, a hard cap; past it, jobs wait
// their turn), and a thread idle for idle_timeout ends. For work that must
// never wait behind other work — tool calls, their deadline runs, HTTP
// connections — without paying for a new thread each time under load.
//
// post() never throws and never aborts: when the system refuses a new thread,
// the job waits for a thread of the pool that is alive; when none is, post()
// returns false and the job is dropped unrun, for its owner to answer.
//
// The threads share their state with the pool object, so a job still running
// after shutdown() gave up on it touches nothing freed. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace toolmux {

class ElasticThreads {
 public:
  // Starts a detached thread that runs `body`; throws (std::system_error, as
  // std::thread does) when the system refuses. Tests replace it to make that happen.
  using ThreadStarter = std::function<void(std::function<void()> body)>;
  static constexpr std::size_t kDefaultMaxThreads = 1024;

  explicit ElasticThreads(std::size_t max_threads = kDefaultMaxThreads,
                          std::chrono::milliseconds idle_timeout = std::chrono::seconds(30),
                          ThreadStarter start_thread = {});
  ElasticThreads(const ElasticThreads&) = delete;
  ElasticThreads& operator=(const ElasticThreads&) = delete;
  ~ElasticThreads();

  // Runs `job` on a thread of the pool. True when it will run; false when no
  // thread could be started and none is alive to run it (the job is dropped).
  [[nodiscard]] bool post(std::function<void()> job);
  // Changes the cap (at least 1); threads above a lowered cap end when idle.
  void set_max_threads(std::size_t max_threads);
  // Lets idle threads end and waits up to `wait` for every thread to end
  // (queued jobs still run first). True when none is left.
  bool shutdown(std::chrono::milliseconds wait);
  // Threads alive now (running a job or idle).
  std::size_t threads() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// The process's pool for tool calls, their deadline runs and the other
// requests that run on a call thread (never shut down). McpServer sets its cap
// to what the calls it admits can use (src/session/call_admission.h).
ElasticThreads& call_threads();

}  // namespace toolmux
