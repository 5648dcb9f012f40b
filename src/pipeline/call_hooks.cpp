#include "src/pipeline/call_hooks.h"

#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "src/pipeline/check_arguments.h"
#include "src/pipeline/result_limiter.h"

namespace toolmux::stages {

namespace {

HookedCall hooked(const ToolCall& call) {
  return {recorded_tool_name(call), call.arguments.value_or(nlohmann::json()), call.principal,
          call.call_id};
}

// Runs `hook`; what it throws becomes the crashed answer naming `hook_name`.
template <typename Hook>
std::optional<CallResult> run_hook(const ToolCall& call, std::string_view hook_name, Hook&& hook) {
  const auto failed = [&](std::string_view why) {
    const std::string tool =
        call.tool ? tool_label(call) : "Tool " + json_quoted(recorded_tool_name(call));
    return CallResult::crashed(tool + ": the " + std::string(hook_name) + " failed" +
                               std::string(why));
  };
  try {
    hook();
    return std::nullopt;
  } catch (const std::exception& e) {
    return failed(std::string(": ") + e.what());
  } catch (...) {
    return failed(" with an unknown exception");
  }
}

}  // namespace

CallStage before_hook() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("before_hook", "tool", "resolve_tool");
      if (!call.arguments) {
        return CallResult::out_of_order("before_hook", "arguments", "check_arguments");
      }
      const auto& before = call.catalog->hooks.before;
      if (!before) return next(call);
      BeforeDecision decision;
      if (auto failed = run_hook(call, "before hook", [&] { decision = before(hooked(call)); })) {
        return std::move(*failed);
      }
      if (decision.kind == BeforeDecision::Kind::refuse) {
        return CallResult::denied(tool_label(call) +
                                  " was refused by the before hook: " + decision.reason);
      }
      if (decision.kind == BeforeDecision::Kind::rewrite) {
        ArgumentCheck check;
        if (decision.arguments.is_object()) {
          check.arguments = std::move(decision.arguments);
          check_for_tool(call, check);
        } else {
          check.problems.push_back("the before hook rewrote them into " +
                                   std::string(decision.arguments.type_name()) + ", not an object");
        }
        if (!check.ok()) {
          return CallResult::invalid_arguments(check.message(call.tool->spec.name) +
                                               " (as the before hook rewrote them)");
        }
        call.arguments = std::move(check.arguments);
        if (check.filled.is_object()) {
          if (!call.filled_arguments.is_object()) call.filled_arguments = nlohmann::json::object();
          call.filled_arguments.update(check.filled);
        }
      }
      return next(call);
    };
  };
}

CallStage call_middleware() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (!call.tool) return CallResult::out_of_order("call_middleware", "tool", "resolve_tool");
      const auto& middleware = call.catalog->hooks.middleware;
      if (!middleware) return next(call);
      std::optional<CallResult> inner;
      const CallNext run_next = [&] {
        inner = next(call);
        return inner->result;
      };
      ToolResult answer;
      if (auto failed =
              run_hook(call, "middleware", [&] { answer = middleware(hooked(call), run_next); })) {
        return std::move(*failed);
      }
      // What the tool answered the middleware may change; how the call
      // otherwise ended (a crash, a question, a cancellation) stands.
      if (inner && inner->outcome != CallOutcome::ok && inner->outcome != CallOutcome::tool_error) {
        return std::move(*inner);
      }
      return CallResult::answered(std::move(answer));
    };
  };
}

CallStage after_hook() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      const auto start = std::chrono::steady_clock::now();
      CallResult out = next(call);
      if (!call.catalog || !call.catalog->hooks.after) return out;
      const auto& after = call.catalog->hooks.after;
      AfterCall ended{hooked(call),
                      std::string(call_outcome_name(out.outcome)),
                      out.result.is_error,
                      std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - start),
                      out.bytes_produced,
                      result_payload_bytes(out.result),
                      out.truncated,
                      out.offloaded};
      auto failed = run_hook(call, "after hook", [&] { after(ended); });
      // A call answered otherwise (a cancellation, a question, a JSON-RPC
      // error) keeps its answer: there is no result to turn into an error.
      if (failed && carries_result(out)) return std::move(*failed);
      return out;
    };
  };
}

}  // namespace toolmux::stages
