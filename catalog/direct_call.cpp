#include "catalog/direct_call.h"

#include <exception>
#include <utility>

#include "catalog/argument_check.h"

namespace toolmux {

namespace {

using Clock = std::chrono::steady_clock;

// The context of a call no client made.
class LocalCallContext : public CallContext {
 public:
  explicit LocalCallContext(Clock::time_point deadline) : deadline_(deadline) {}
  bool cancelled() const override { return Clock::now() >= deadline_; }
  Clock::time_point deadline() const override { return deadline_; }
  void report_progress(double /*progress*/, std::optional<double> /*total*/,
                       std::string_view /*message*/) override {}
  void log(LogLevel /*level*/, const json& /*data*/) override {}
  bool logs(LogLevel /*level*/) const override { return false; }

 private:
  Clock::time_point deadline_;
};

// The message of an isError result: its text blocks, joined.
std::string message_of(const ToolResult& result) {
  std::string message;
  for (const json& block : result.content) {
    if (!block.is_object()) continue;
    auto text = block.find("text");
    if (text == block.end() || !text->is_string()) continue;
    if (!message.empty()) message += ' ';
    message += text->get_ref<const std::string&>();
  }
  return message.empty() ? "the tool answered with an error" : message;
}

}  // namespace

ToolCallFailed::ToolCallFailed(const std::string& message, ToolResult result,
                               std::chrono::nanoseconds duration)
    : std::runtime_error(message), result_(std::move(result)), duration_(duration) {}

DirectCallResult call_registered_tool(const RegisteredTool& tool, std::string_view arguments_json,
                                      CallContext& context, FailureMode mode) {
  const Clock::time_point start = Clock::now();
  DirectCallResult out;
  ArgumentCheck check = check_arguments(tool, arguments_json);
  if (!check.ok()) {
    out.result = ToolResult::error(check.message(tool.spec.name));
  } else {
    try {
      out.result = tool.handler(check.arguments, context);
    } catch (const MissingClientCapability&) {
      throw;  // the caller's to answer, as the server answers it (-32021)
    } catch (const std::exception& e) {
      out.result = ToolResult::error("Tool \"" + tool.spec.name + "\" failed: " + e.what());
    } catch (...) {
      out.result = ToolResult::error("Tool \"" + tool.spec.name +
                                     "\" failed: it threw something that is not an exception");
    }
  }
  out.duration = Clock::now() - start;
  if (mode == FailureMode::raise && out.result.is_error) {
    // The message first: the result is moved into the exception.
    const std::string message = message_of(out.result);
    throw ToolCallFailed(message, std::move(out.result), out.duration);
  }
  return out;
}

DirectCallResult call_registered_tool(const RegisteredTool& tool, std::string_view arguments_json,
                                      FailureMode mode) {
  LocalCallContext context(Clock::now() + tool.spec.timeout);
  return call_registered_tool(tool, arguments_json, context, mode);
}

}  // namespace toolmux
