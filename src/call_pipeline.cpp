#include "src/call_pipeline.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "catalog/argument_check.h"

namespace toolmux {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string_view call_outcome_name(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::ok:
      return "ok";
    case CallOutcome::tool_error:
      return "tool_error";
    case CallOutcome::invalid_arguments:
      return "invalid_arguments";
    case CallOutcome::timed_out:
      return "timed_out";
    case CallOutcome::cancelled:
      return "cancelled";
    case CallOutcome::crashed:
      return "crashed";
    case CallOutcome::bad_result:
      return "bad_result";
  }
  return "unknown";
}

void RunningHandlers::enter() {
  std::lock_guard lock(mutex_);
  ++count_;
}

void RunningHandlers::leave() {
  std::lock_guard lock(mutex_);
  if (--count_ == 0) idle_.notify_all();
}

bool RunningHandlers::wait_until_idle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, timeout, [this] { return count_ == 0; });
}

CallHandler compose(const std::vector<CallStage>& stages, CallHandler terminal) {
  CallHandler handler = std::move(terminal);
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) handler = (*it)(std::move(handler));
  return handler;
}

namespace {

std::string tool_label(const ToolCall& call) { return "Tool \"" + call.tool->spec.name + "\""; }

CallResult failure(CallOutcome outcome, std::string message) {
  return CallResult{ToolResult::error(std::move(message)), outcome};
}

std::size_t result_bytes(const ToolResult& result) {
  std::size_t bytes = 0;
  for (const auto& block : result.content) {
    if (block.contains("text") && block["text"].is_string()) {
      bytes += block["text"].get_ref<const std::string&>().size();
    } else if (block.contains("data") && block["data"].is_string()) {
      bytes += block["data"].get_ref<const std::string&>().size();
    }
  }
  return bytes;
}

}  // namespace

namespace stages {

CallStage record(Logger& logger) {
  return [&logger](CallHandler next) -> CallHandler {
    return [&logger, next = std::move(next)](ToolCall& call) {
      const auto start = Clock::now();
      CallResult out = next(call);
      const auto micros =
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
      json fields{{"tool", call.tool->spec.name},
                  {"session", call.session_id},
                  {"outcome", call_outcome_name(out.outcome)},
                  {"duration_ms", static_cast<double>(micros) / 1000.0},
                  {"bytes_returned", result_bytes(out.result)}};
      // A tool that answers with an error did its job; a call that broke
      // (bad arguments, a throw, a timeout, a bad result) deserves attention.
      const bool answered = out.outcome == CallOutcome::ok ||
                            out.outcome == CallOutcome::tool_error ||
                            out.outcome == CallOutcome::cancelled;
      logger.write(answered ? LogLevel::info : LogLevel::warning, "tool_call", fields);
      if (out.outcome != CallOutcome::cancelled) {
        json data{{"event", "tool_call"},
                  {"tool", call.tool->spec.name},
                  {"outcome", call_outcome_name(out.outcome)}};
        const LogLevel level = out.outcome == CallOutcome::ok           ? LogLevel::debug
                               : out.outcome == CallOutcome::tool_error ? LogLevel::info
                                                                        : LogLevel::warning;
        call.context->log(level, data);
      }
      return out;
    };
  };
}

CallStage check_result() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      CallResult out = next(call);
      if (out.outcome == CallOutcome::cancelled) return out;
      const ToolResult& r = out.result;
      if (!r.content.is_array()) {
        return failure(CallOutcome::bad_result,
                       tool_label(call) + " returned content that is not a list");
      }
      for (const auto& block : r.content) {
        if (!block.is_object() || !block.contains("type")) {
          return failure(CallOutcome::bad_result,
                         tool_label(call) + " returned a content block without a type");
        }
        if (block.contains("text") && block["text"].is_string() &&
            !is_valid_utf8(block["text"].get_ref<const std::string&>())) {
          return failure(CallOutcome::bad_result,
                         tool_label(call) + " returned text that is not valid UTF-8");
        }
      }
      if (r.is_error) return out;
      const auto& output_schema = call.tool->output_schema;
      if (!r.structured_content.is_null()) {
        if (json_depth(r.structured_content) > JsonLimits{}.max_depth) {
          return failure(
              CallOutcome::bad_result,
              tool_label(call) + " returned structuredContent nested deeper than 256 levels");
        }
        if (output_schema) {
          auto violations = output_schema->validate(r.structured_content);
          if (!violations.empty()) {
            std::string message =
                tool_label(call) +
                " returned structuredContent that does not match its outputSchema:";
            for (const auto& v : violations) message += " " + v + ";";
            message.pop_back();
            return failure(CallOutcome::bad_result, message);
          }
        }
      } else if (output_schema) {
        return failure(CallOutcome::bad_result,
                       tool_label(call) +
                           " returned no structuredContent although it declares an outputSchema");
      }
      return out;
    };
  };
}

CallStage check_arguments() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      ArgumentCheck check = toolmux::check_arguments(*call.tool, call.raw_arguments);
      if (!check.ok()) {
        return failure(CallOutcome::invalid_arguments, check.message(call.tool->spec.name));
      }
      call.arguments = std::move(check.arguments);
      return next(call);
    };
  };
}

CallStage deadline(const std::shared_ptr<RunningHandlers>& running) {
  return [running](CallHandler next) -> CallHandler {
    return [running, next = std::move(next)](ToolCall& call) {
      // The run is shared with its thread: if we stop waiting, the thread still
      // owns what it touches and its late result goes nowhere.
      struct Run {
        std::mutex mutex;
        std::condition_variable done;
        std::optional<CallResult> result;
        ToolCall call;
      };
      auto run = std::make_shared<Run>();
      run->call = call;
      const auto timeout = call.tool->spec.timeout;
      call.control->set_deadline(Clock::now() + timeout);

      running->enter();
      std::thread([run, next, running] {
        CallResult out = next(run->call);
        {
          std::lock_guard lock(run->mutex);
          run->result = std::move(out);
          run->done.notify_all();
        }
        running->leave();
      }).detach();

      std::unique_lock lock(run->mutex);
      // Cancellation is a flag, so wake now and then to look at it.
      constexpr auto kPoll = std::chrono::milliseconds(20);
      while (!run->result) {
        if (call.control->cancelled()) {
          return CallResult{ToolResult::error("cancelled"), CallOutcome::cancelled};
        }
        if (call.control->expired()) {
          return failure(CallOutcome::timed_out, tool_label(call) + " timed out after " +
                                                     std::to_string(timeout.count()) + " ms");
        }
        run->done.wait_for(
            lock, std::min<Clock::duration>(kPoll, call.control->deadline() - Clock::now()));
      }
      if (call.control->cancelled()) {
        return CallResult{ToolResult::error("cancelled"), CallOutcome::cancelled};
      }
      return std::move(*run->result);
    };
  };
}

CallStage catch_tool_exceptions() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      try {
        return next(call);
      } catch (const std::exception& e) {
        return failure(CallOutcome::crashed, tool_label(call) + " failed: " + e.what());
      } catch (...) {
        return failure(CallOutcome::crashed,
                       tool_label(call) + " failed with an unknown exception");
      }
    };
  };
}

}  // namespace stages

CallHandler invoke_tool() {
  return [](ToolCall& call) {
    ToolResult result = call.tool->handler(call.arguments, *call.context);
    const CallOutcome outcome = result.is_error ? CallOutcome::tool_error : CallOutcome::ok;
    return CallResult{std::move(result), outcome};
  };
}

CallHandler build_call_pipeline(Logger& logger, const std::shared_ptr<RunningHandlers>& running) {
  return compose(
      {
          stages::record(logger),
          stages::check_result(),
          stages::check_arguments(),
          stages::deadline(running),
          stages::catch_tool_exceptions(),
      },
      invoke_tool());
}

}  // namespace toolmux
