#include "src/pipeline/deadline.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <utility>

#include "src/base/elastic_threads.h"
#include "src/base/trace.h"

namespace toolmux::stages {

using Clock = std::chrono::steady_clock;

CallStage deadline(const std::shared_ptr<RunningHandlers>& running) {
  return [running](CallHandler next) -> CallHandler {
    return [running, next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("deadline", "tool", "resolve_tool");
      const auto timeout = call.tool->spec.timeout;
      call.control->set_deadline(call.received + timeout);
      const Clock::time_point until = call.control->deadline();
      auto timed_out = [&] {
        return CallResult::timed_out(tool_label(call) + " timed out after " +
                                     std::to_string(timeout.count()) + " ms");
      };
      auto stopped = [&] {
        return CallResult::stopped(tool_label(call) +
                                   " was stopped before it finished: toolmux is exiting");
      };
      // How the call ends when toolmux answers it otherwise than its handler
      // did, or did not (nullopt: the handler's answer stands).
      auto overridden = [&](bool answered,
                            Clock::time_point finished_at) -> std::optional<CallResult> {
        if (call.control->cancelled()) return CallResult::cancelled();
        if (call.control->aborted()) return stopped();
        if (call.control->input_requested()) return CallResult::input_required();
        // A tool that stopped because its deadline passed (a command is killed
        // then) answers late: it timed out, whatever it says.
        if (!answered || finished_at >= until) return timed_out();
        return std::nullopt;
      };
      // How a call ended once its handler answered at `finished_at`, or did not.
      auto settle = [&](std::optional<CallResult> result, Clock::time_point finished_at) {
        std::optional<CallResult> instead = overridden(result.has_value(), finished_at);
        if (!instead) return std::move(*result);
        // The tool answered, but its caller is told otherwise: what it came
        // to is recorded all the same.
        if (result && instead->outcome != CallOutcome::input_required && call.on_late_end) {
          call.ends_late = true;
          call.on_late_end(call, *result);
        }
        return std::move(*instead);
      };

      if (call.tool->spec.returns_by_deadline) {
        // Nothing to abandon: the handler runs here, on the carrying thread.
        struct Entered {
          RunningHandlers& running;
          ~Entered() { running.leave(); }
        };
        running->enter();
        std::optional<CallResult> result;
        {
          Entered entered{*running};
          result = next(call);
        }
        return settle(std::move(result), Clock::now());
      }

      // The run is shared with its thread: if we stop waiting, the thread still
      // owns what it touches and its late result goes nowhere.
      struct Run {
        std::mutex mutex;
        std::condition_variable done;
        std::optional<CallResult> result;
        Clock::time_point finished_at;
        // Set when the stage stopped waiting: the run's answer goes to
        // nobody, and it records what it came to itself (on_late_end).
        bool abandoned = false;
        ToolCall call;
      };
      auto run = std::make_shared<Run>();
      run->call = call;

      running->enter();
      // The trace goes on on the handler's thread.
      std::optional<TraceContext> trace;
      if (const TraceContext* current = current_trace()) trace = *current;
      const bool posted = call_threads().post([run, next, running, trace]() mutable {
        SpanScope traced(trace ? &*trace : nullptr);
        CallResult out = next(run->call);
        std::optional<CallResult> late;  // the answer nobody waits for any more
        {
          std::lock_guard lock(run->mutex);
          if (run->abandoned) {
            late = std::move(out);
          } else {
            run->finished_at = Clock::now();
            run->result = std::move(out);
            run->done.notify_all();
          }
        }
        if (late && run->call.on_late_end) {
          // A handler that asked its client a question ran no further.
          if (run->call.control->input_requested()) late = CallResult::input_required();
          run->call.on_late_end(run->call, *late);
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

      std::optional<CallResult> result;
      Clock::time_point finished_at;
      {
        // Woken by the run finishing (`done`), by cancel() or abort() (this
        // callback, on the thread that calls them), or by the deadline. The
        // callback takes the run's lock so that its wake-up cannot fall between
        // a look at the flags and the wait; `lock` is released before `wake`
        // goes, whose end waits for a callback in progress.
        std::stop_callback wake(call.control->stop_token(), [run] {
          std::lock_guard guard(run->mutex);
          run->done.notify_all();
        });
        std::unique_lock lock(run->mutex);
        run->done.wait_until(lock, until, [&] {
          return run->result.has_value() || call.control->cancelled() || call.control->aborted();
        });
        if (run->result) {
          result = std::move(run->result);
          finished_at = run->finished_at;
        } else {
          run->abandoned = true;
          call.ends_late = static_cast<bool>(call.on_late_end);
        }
      }
      return settle(std::move(result), finished_at);
    };
  };
}

}  // namespace toolmux::stages
