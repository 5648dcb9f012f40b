// Admission of the requests that run on call threads (tools/call, and the
// resources/..., prompts/... and completion/complete requests): at most
// max_running of them run at once in the server and max_running_per_session
// in one session; the rest wait in one queue of at most max_queued, of which
// one session holds at most max_queued_per_session, and start in the order
// they came as places free up; past that a call is refused at once, with a
// message that names the limits.
//
// A call holds its place (a CallPlace) from when it starts until the last
// thread that runs for it lets go: a tool handler still running after its
// call was answered as timed out or cancelled keeps the place, so a tool that
// ignores its deadline uses up places, not threads.
//
// A queued call leaves the queue without running when its CallControl says
// stop (cancelled, aborted, or its deadline, set before submit(), passed):
// its `drop` is called. One thread (the queue watch, started when a call
// first waits) does that, woken through the control's stop_token when a
// queued call is cancelled or aborted, and at the earliest deadline among the
// queued calls; it does not poll. `start` and `drop` run with no lock held,
// on the thread that submitted the call, that freed a place, that closed the
// admission, or on the queue watch. Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "src/base/metrics.h"
#include "src/session/session.h"

namespace toolmux {

struct CallLimits {
  std::size_t max_running = 64;              // --max-calls
  std::size_t max_running_per_session = 16;  // --max-session-calls
  std::size_t max_queued = 256;              // --max-queued-calls
  std::size_t max_queued_per_session = 64;   // --max-session-queued-calls
};

// One place among the running calls, freed when the last copy of its
// shared_ptr goes (the next queued call may then start, on that thread).
class CallPlace;

class CallAdmission {
 public:
  struct Call {
    std::string session;  // whose call: the per-session limit counts by it
    std::shared_ptr<CallControl> control;
    // Runs the call (posts it to a thread); it keeps `place` for as long as
    // any of its threads runs.
    std::function<void(std::shared_ptr<const CallPlace> place)> start;
    // The call will not run: look at its control for why (cancelled, aborted,
    // expired); none of those means the admission was closed. `busy` says
    // what it waited for, e.g. "64 calls running (--max-calls 64)".
    std::function<void(const std::string& busy)> drop;
  };

  enum class Verdict { started, queued, refused };
  struct Decision {
    Verdict verdict = Verdict::started;
    std::string refusal;  // when refused: why, naming the limits
  };

  // `metrics` (may be null) gets the running and queued gauges and the
  // refused counter; it must outlive close().
  explicit CallAdmission(CallLimits limits, Metrics* metrics = nullptr);
  ~CallAdmission();  // close()
  CallAdmission(const CallAdmission&) = delete;
  CallAdmission& operator=(const CallAdmission&) = delete;

  // Starts `call` now when both running limits allow, else queues it. When
  // the queue is full it is refused, and neither start nor drop is called.
  Decision submit(Call call);

  // Starts nothing more: the queued calls are dropped, later frees only count.
  void close();

  // Whether a call of `session` submitted now would start or be queued
  // rather than refused ("" = a caller with no calls of its own, as a request
  // of the 2026-07-28 protocol is).
  bool has_room(std::string_view session) const;
  // `listener` is called after a place to run or in the queue may have freed
  // (a call let go of its place, a queued call left the queue without
  // running), on that thread, with no lock of the admission held; it must not
  // submit. One listener: a new one replaces the last, null removes it.
  void on_room(std::function<void()> listener);

  const CallLimits& limits() const { return limits_; }
  std::size_t running() const;
  std::size_t queued() const;

  struct State;

 private:
  const CallLimits limits_;
  std::shared_ptr<State> state_;
};

}  // namespace toolmux
