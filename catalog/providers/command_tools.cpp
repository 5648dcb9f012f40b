#include "catalog/providers/command_tools.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "src/base/process_runner.h"
#include "src/base/trace.h"
#include "src/base/utf8.h"

namespace toolmux {
namespace {

using Clock = std::chrono::steady_clock;

std::string signal_text(int sig) {
  std::string text = "command was killed by signal " + std::to_string(sig);
  if (const char* name = sigabbrev_np(sig)) text += std::string(" (SIG") + name + ")";
  return text;
}

void append_stream(std::string& message, std::string_view label, const std::string& text,
                   bool truncated) {
  if (text.empty()) return;
  message += "\n";
  message += label;
  message += ":\n";
  message += lossy_utf8(truncated ? utf8_without_cut_tail(text) : std::string_view(text));
  if (truncated) message += "\n[toolmux: " + std::string(label) + " truncated]";
}

class ProgressTicker {
 public:
  ProgressTicker(CallContext& context, Clock::time_point start)
      : context_(context), start_(start) {}

  bool operator()() {
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start_).count();
    if (seconds > reported_) {
      reported_ = seconds;
      context_.report_progress(static_cast<double>(seconds), std::nullopt,
                               "running for " + std::to_string(seconds) + "s");
    }
    return context_.cancelled();
  }

 private:
  CallContext& context_;
  Clock::time_point start_;
  long long reported_ = 0;
};

ToolResult run_command(const CommandSpec& command, const json& arguments, CallContext& context) {
  auto start = Clock::now();
  ProcessRequest request;
  request.argv = expand_argv(command.argv, arguments);
  for (const auto& arg : request.argv) {
    if (arg.find('\0') != std::string::npos) {
      return ToolResult::error(
          "an argument contains a NUL character, which cannot be passed to a program");
    }
  }
  request.cwd = command.cwd;
  for (const auto& name : command.env_allow) {
    if (command.env.count(name)) continue;  // the fixed value wins
    if (const char* value = std::getenv(name.c_str())) request.env.push_back(name + "=" + value);
  }
  for (const auto& [name, value] : command.env) request.env.push_back(name + "=" + value);
  // The call's id, so that a command can recognise its own earlier attempt.
  if (!context.call_id().empty()) request.env.push_back("TOOLMUX_CALL_ID=" + context.call_id());
  // The trace the call is part of, as OpenTelemetry's environment carriers name it.
  if (const TraceContext* trace = current_trace()) {
    request.env.push_back("TRACEPARENT=" + format_traceparent(*trace));
    if (!trace->state.empty()) request.env.push_back("TRACESTATE=" + trace->state);
  }
  request.max_stdout_bytes = command.max_output_bytes;
  request.max_stderr_bytes = command.max_stderr_bytes;
  request.deadline = context.deadline();

  ProgressTicker ticker(context, start);
  ProcessOutcome outcome = run_process(request, std::ref(ticker));

  if (!outcome.start.ok()) {
    return ToolResult::error("the command could not be started: " + outcome.start.message());
  }
  // cancelled() also turns true when the deadline passes, so a stop at or
  // after the deadline is a timeout.
  bool timed_out = outcome.timed_out || (outcome.stopped && Clock::now() >= request.deadline);
  if (timed_out) {
    auto limit = std::chrono::ceil<std::chrono::milliseconds>(request.deadline - start).count();
    std::string message = "timed out after " + std::to_string(limit) + " ms";
    append_stream(message, "stderr", outcome.stderr_text, outcome.stderr_truncated);
    return ToolResult::error(std::move(message));
  }
  if (outcome.stopped) return ToolResult::error("cancelled");
  if (outcome.term_signal != 0) {
    std::string message = signal_text(outcome.term_signal);
    append_stream(message, "stderr", outcome.stderr_text, outcome.stderr_truncated);
    append_stream(message, "stdout", outcome.stdout_text, outcome.stdout_truncated);
    return ToolResult::error(std::move(message));
  }
  if (outcome.exit_code != 0) {
    std::string message = "command exited with status " + std::to_string(outcome.exit_code);
    append_stream(message, "stderr", outcome.stderr_text, outcome.stderr_truncated);
    append_stream(message, "stdout", outcome.stdout_text, outcome.stdout_truncated);
    return ToolResult::error(std::move(message));
  }
  // Moved, not copied: the output may be large, and memory is bounded.
  const std::size_t kept = outcome.stdout_text.size();
  std::string text = std::move(outcome.stdout_text);
  if (outcome.stdout_truncated) text.resize(utf8_without_cut_tail(text).size());
  if (!is_valid_utf8(text)) return ToolResult::error("command output is not valid UTF-8");
  if (outcome.stdout_truncated) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += "[toolmux: output truncated at " + std::to_string(kept) + " bytes of " +
            std::to_string(outcome.stdout_total_bytes) + "]";
  }
  return ToolResult::text(std::move(text));
}

}  // namespace

ToolHandler make_command_handler(CommandSpec command) {
  auto shared = std::make_shared<const CommandSpec>(std::move(command));
  return [shared](const json& arguments, CallContext& context) {
    return run_command(*shared, arguments, context);
  };
}

}  // namespace toolmux
