#include "src/pipeline/deadline.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <utility>

#include "src/base/elastic_threads.h"

namespace toolmux::stages {

using Clock = std::chrono::steady_clock;

CallStage deadline(const std::shared_ptr<RunningHandlers>& running) {
  return [running](CallHandler next) -> CallHandler {
    return [running, next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("deadline", "tool", "resolve_tool");
      // The run is shared with its thread: if we stop waiting, the thread still
      // owns what it touches and its late result goes nowhere.
      struct Run {
        std::mutex mutex;
        std::condition_variable done;
        std::optional<CallResult> result;
        Clock::time_point finished_at;
        ToolCall call;
      };
      auto run = std::make_shared<Run>();
      run->call = call;
      const auto timeout = call.tool->spec.timeout;
      call.control->set_deadline(call.received + timeout);

      running->enter();
      const bool posted = call_threads().post([run, next, running]() mutable {
        CallResult out = next(run->call);
        {
          std::lock_guard lock(run->mutex);
          run->finished_at = Clock::now();
          run->result = std::move(out);
          run->done.notify_all();
        }
        // Let go of what the chain holds (the catalog, the result store)
        // before saying this handler has stopped: whoever waits for that may
        // then tear them down.
        next = nullptr;
        run.reset();
        running->leave();
      });
      if (!posted) {
        running->leave();
        return CallResult::stopped(
            tool_label(call) +
            " did not run: toolmux could not start a thread for it (the system refused one); try "
            "again later");
      }

      std::unique_lock lock(run->mutex);
      // Cancellation is a flag, so wake now and then to look at it.
      constexpr auto kPoll = std::chrono::milliseconds(20);
      auto timed_out = [&] {
        return CallResult::timed_out(tool_label(call) + " timed out after " +
                                     std::to_string(timeout.count()) + " ms");
      };
      auto stopped = [&] {
        return CallResult::stopped(tool_label(call) +
                                   " was stopped before it finished: toolmux is exiting");
      };
      while (!run->result) {
        if (call.control->cancelled()) return CallResult::cancelled();
        if (call.control->aborted()) return stopped();
        if (call.control->expired()) return timed_out();
        run->done.wait_for(
            lock, std::min<Clock::duration>(kPoll, call.control->deadline() - Clock::now()));
      }
      if (call.control->cancelled()) return CallResult::cancelled();
      if (call.control->aborted()) return stopped();
      // A tool that stopped because its deadline passed (a command is killed
      // then) answers late: it timed out, whatever it says.
      if (run->finished_at >= call.control->deadline()) return timed_out();
      return std::move(*run->result);
    };
  };
}

}  // namespace toolmux::stages
