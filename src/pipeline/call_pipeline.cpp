#include "src/pipeline/call_pipeline.h"

#include <thread>
#include <utility>

#include "catalog/argument_check.h"
#include "catalog/tool_result_shape.h"
#include "src/base/base64.h"
#include "src/base/elastic_threads.h"
#include "src/base/jsonrpc.h"
#include "src/base/utf8.h"
#include "src/builtins/call_tool.h"
#include "src/builtins/result_tools.h"
#include "src/builtins/tool_name_suggestions.h"
#include "src/pipeline/result_limiter.h"

namespace toolmux {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string_view call_outcome_name(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::ok:
      return "ok";
    case CallOutcome::tool_error:
      return "tool_error";
    case CallOutcome::unknown_tool:
      return "unknown_tool";
    case CallOutcome::denied:
      return "denied";
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
    case CallOutcome::stopped:
      return "stopped";
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

std::optional<std::chrono::milliseconds> tool_timeout(const Catalog& catalog,
                                                      const std::string& requested_name,
                                                      const json& arguments) {
  std::string_view name = catalog.aliases.canonical_tool(requested_name);
  // call_tool runs with the timeout of the tool it calls (resolve_tool).
  if (name == kCallTool && arguments.is_object() && arguments.contains("name") &&
      arguments["name"].is_string()) {
    const std::string_view inner =
        catalog.aliases.canonical_tool(arguments["name"].get_ref<const std::string&>());
    if (inner != kCallTool) name = inner;
  }
  const RegisteredTool* tool = catalog.registry->find(name);
  if (!tool) return std::nullopt;
  return tool->spec.timeout;
}

CallHandler compose(const std::vector<CallStage>& stages, CallHandler terminal) {
  CallHandler handler = std::move(terminal);
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) handler = (*it)(std::move(handler));
  return handler;
}

namespace {

std::string json_quoted(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string tool_label(const ToolCall& call) { return "Tool " + json_quoted(call.tool->spec.name); }

CallResult failure(CallOutcome outcome, std::string message) {
  return CallResult{ToolResult::error(std::move(message)), outcome, std::nullopt, 0, false, false};
}

bool is_text_block(const json& block) {
  return block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
         block["text"].is_string();
}

bool answered(CallOutcome outcome) {
  return outcome == CallOutcome::ok || outcome == CallOutcome::tool_error ||
         outcome == CallOutcome::cancelled;
}

// call_tool {name, arguments}: the call becomes a call of `name` with
// `arguments` (and the boundary violations found under them). Why not, if it
// cannot.
std::optional<std::string> unwrap_call_tool(ToolCall& call) {
  const json& outer = call.raw_arguments.value;
  if (call.raw_arguments.syntax_error) return "arguments are " + *call.raw_arguments.syntax_error;
  for (const JsonViolation& v : call.raw_arguments.violations) {
    if (v.pointer.rfind("/arguments", 0) != 0) return "argument " + v.pointer + ": " + v.message;
  }
  if (!outer.is_object() || !outer.contains("name") || !outer["name"].is_string()) {
    return std::string("argument /name: a tool name (string) is required");
  }
  const json inner = outer.value("arguments", json(nullptr));
  if (!inner.is_null() && !inner.is_object()) {
    return std::string("argument /arguments: must be an object");
  }
  for (const auto& [key, value] : outer.items()) {
    if (key != "name" && key != "arguments") {
      return "argument /" + pointer_token(key) + ": call_tool takes only name and arguments";
    }
  }
  std::string name = outer["name"].get<std::string>();
  if (call.catalog->aliases.canonical_tool(name) == kCallTool) {
    return std::string("argument /name: call_tool cannot call itself");
  }
  ParsedJson arguments;
  arguments.value = inner;
  arguments.violations = violations_under(call.raw_arguments.violations, "/arguments");
  call.requested_name = std::move(name);
  call.raw_arguments = std::move(arguments);
  return std::nullopt;
}

}  // namespace

namespace stages {

CallStage record(Logger& logger, Metrics& metrics) {
  return [&logger, &metrics](CallHandler next) -> CallHandler {
    return [&logger, &metrics, next = std::move(next)](ToolCall& call) {
      const auto start = Clock::now();
      CallResult out = next(call);
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      const std::string tool = call.tool ? call.tool->spec.name : call.requested_name;
      CallRecord record{tool,
                        std::string(call_outcome_name(out.outcome)),
                        seconds,
                        out.bytes_produced,
                        result_payload_bytes(out.result),
                        out.truncated,
                        out.offloaded};
      metrics.record_call(record);
      // A tool that answers with an error did its job; a call that broke
      // (bad arguments, a throw, a timeout, a bad result) deserves attention.
      logger.write(answered(out.outcome) ? LogLevel::info : LogLevel::warning, "tool_call",
                   {{"tool", record.tool},
                    {"owner", call.principal},
                    {"session", call.session_label},
                    {"outcome", record.outcome},
                    {"duration_ms", seconds * 1000.0},
                    {"bytes_produced", record.bytes_produced},
                    {"bytes_returned", record.bytes_returned},
                    {"truncated", record.truncated},
                    {"offloaded", record.offloaded}});
      if (out.outcome != CallOutcome::cancelled && call.context) {
        const LogLevel level = out.outcome == CallOutcome::ok           ? LogLevel::debug
                               : out.outcome == CallOutcome::tool_error ? LogLevel::info
                                                                        : LogLevel::warning;
        call.context->log(level,
                          {{"event", "tool_call"}, {"tool", tool}, {"outcome", record.outcome}});
      }
      return out;
    };
  };
}

CallStage resolve_tool() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      const Catalog& catalog = *call.catalog;
      const bool via_call_tool = catalog.aliases.canonical_tool(call.requested_name) == kCallTool;
      if (via_call_tool) {
        if (auto problem = unwrap_call_tool(call)) {
          return failure(CallOutcome::invalid_arguments,
                         "Invalid arguments for tool \"call_tool\": " + *problem);
        }
      }
      call.tool = catalog.registry->find(catalog.aliases.canonical_tool(call.requested_name));
      if (call.tool) return next(call);

      auto suggestions = suggest_tool_names(*catalog.registry, call.requested_name, 3);
      // The name is the caller's: quote its start only.
      std::string message = "Unknown tool: " + json_quoted(clip_for_message(call.requested_name)) +
                            clipped_size_note(call.requested_name) + ".";
      if (!suggestions.empty()) {
        message += " Did you mean";
        for (std::size_t i = 0; i < suggestions.size(); ++i) {
          message += (i == 0 ? " " : ", ") + json_quoted(suggestions[i]);
        }
        message += "?";
      }
      message += " tools/list shows every tool this server offers.";
      CallResult out = failure(CallOutcome::unknown_tool, message);
      // Through call_tool the request itself was fine: the tool it named is
      // what was unknown, which is call_tool's answer to give.
      if (catalog.policy.unknown_tool == UnknownToolAnswer::protocol_error && !via_call_tool) {
        out.protocol_error =
            ProtocolError{jsonrpc::kInvalidParams,
                          message,
                          {{"unknownTool", call.requested_name}, {"suggestions", suggestions}}};
      }
      return out;
    };
  };
}

CallStage authorize() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      if (auto why = call.catalog->policy.denial(call.principal, call.tool->spec.name)) {
        return failure(CallOutcome::denied, tool_label(call) + " is not allowed for " +
                                                json_quoted(call.principal) + ": " + *why);
      }
      return next(call);
    };
  };
}

CallStage limit_result(std::shared_ptr<LazyResultStore> results) {
  return [results](CallHandler next) -> CallHandler {
    return [results, next = std::move(next)](ToolCall& call) {
      CallResult out = next(call);
      out.bytes_produced = result_payload_bytes(out.result);
      if (out.outcome == CallOutcome::cancelled || call.tool->spec.name == kReadToolResult) {
        return out;
      }
      StorePayload store;
      if (results) {
        store = [&](std::string_view payload, const StoredFormat& format) {
          std::string error;
          ResultStore* opened = results->get(error);
          std::string id = opened ? opened->put(call.session_id, payload, format, error) : "";
          if (id.empty() && call.context) {
            call.context->log(LogLevel::warning,
                              {{"event", "offload_failed"}, {"tool", call.tool->spec.name}});
          }
          return id;
        };
      }
      const LimitReport report = apply_result_limits(out.result, call.catalog->limits, store);
      out.truncated = out.truncated || report.truncated;
      out.offloaded = out.offloaded || report.offloaded;
      return out;
    };
  };
}

CallStage check_result() {
  return [](CallHandler next) -> CallHandler {
    return [next = std::move(next)](ToolCall& call) {
      CallResult out = next(call);
      if (out.outcome == CallOutcome::cancelled) return out;
      ToolResult& r = out.result;
      if (!r.content.is_array()) {
        return failure(CallOutcome::bad_result,
                       tool_label(call) + " returned content that is not a list");
      }
      if (auto why = content_problem(r.content)) {
        return failure(CallOutcome::bad_result,
                       tool_label(call) + " returned content MCP does not allow: " + *why);
      }
      for (const auto& block : r.content) {
        if (json_depth(block) > JsonLimits{}.max_depth) {
          return failure(CallOutcome::bad_result,
                         tool_label(call) + " returned content nested deeper than 256 levels");
        }
      }
      // Text that is not UTF-8 cannot travel in JSON: an error that still
      // carries the bytes, as base64, so nothing the tool said is lost.
      for (const auto& block : r.content) {
        if (!is_text_block(block)) continue;
        const std::string& text = block["text"].get_ref<const std::string&>();
        if (!is_valid_utf8(text)) {
          ToolResult error =
              ToolResult::error(tool_label(call) + " returned text that is not valid UTF-8; its " +
                                std::to_string(text.size()) + " bytes follow, base64-encoded");
          error.content.push_back({{"type", "text"}, {"text", base64_encode(text)}});
          return CallResult{
              std::move(error), CallOutcome::bad_result, std::nullopt, 0, false, false};
        }
      }
      // Anything else that could not be written as JSON (NaN, bad UTF-8 in
      // another block or in structuredContent) is an error naming where.
      for (const json* part : {&r.content, &r.structured_content}) {
        if (auto why = unserializable_json(*part)) {
          return failure(
              CallOutcome::bad_result,
              tool_label(call) + " returned a result that cannot be sent as JSON: " + *why +
                  (part == &r.content ? " of its content" : " of its structuredContent"));
        }
      }
      const auto& output_schema = call.tool->output_schema;
      if (auto why = structured_content_problem(r.structured_content)) {
        return failure(CallOutcome::bad_result, tool_label(call) +
                                                    " returned structuredContent MCP does not "
                                                    "allow: /" +
                                                    *why);
      }
      if (!r.structured_content.is_null()) {
        if (json_depth(r.structured_content) > JsonLimits{}.max_depth) {
          return failure(
              CallOutcome::bad_result,
              tool_label(call) + " returned structuredContent nested deeper than 256 levels");
        }
        if (output_schema && !r.is_error) {
          auto violations = output_schema->validate(r.structured_content);
          if (!violations.empty()) {
            std::string message = tool_label(call) +
                                  " returned structuredContent that does not match its "
                                  "outputSchema:";
            for (const auto& v : violations) message += " " + v + ";";
            message.pop_back();
            return failure(CallOutcome::bad_result, message);
          }
        }
      } else if (output_schema && !r.is_error) {
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
      const std::string& name = call.tool->spec.name;
      ArgumentCheck check = check_argument_boundary(call.raw_arguments);
      if (check.ok()) {
        auto renamed = call.catalog->aliases.rename_arguments(name, check.arguments);
        check.problems.insert(check.problems.end(), renamed.begin(), renamed.end());
      }
      if (check.ok()) {
        auto fixed = call.catalog->policy.apply_arguments(name, check.arguments);
        check.problems.insert(check.problems.end(), fixed.begin(), fixed.end());
      }
      check_input_schema(*call.tool, check);
      if (!check.ok()) return failure(CallOutcome::invalid_arguments, check.message(name));
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
        std::condition_variable_any done;
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
        return failure(CallOutcome::stopped,
                       tool_label(call) +
                           " did not run: toolmux could not start a thread for it (the system "
                           "refused one); try again later");
      }

      std::unique_lock lock(run->mutex);
      auto timed_out = [&] {
        return failure(CallOutcome::timed_out, tool_label(call) + " timed out after " +
                                                   std::to_string(timeout.count()) + " ms");
      };
      auto stopped = [&] {
        return failure(CallOutcome::stopped, tool_label(call) +
                                                 " was stopped before it finished: toolmux is "
                                                 "exiting");
      };
      while (!run->result) {
        if (call.control->cancelled()) {
          return failure(CallOutcome::cancelled, "cancelled");
        }
        if (call.control->aborted()) return stopped();
        if (call.control->expired()) return timed_out();
        // Woken by the result, by cancel() or abort() (the control's stop
        // token), or at the deadline: never to look again in a while.
        run->done.wait_until(lock, call.control->stop_token(), call.control->deadline(),
                             [&] { return run->result.has_value(); });
      }
      if (call.control->cancelled()) return failure(CallOutcome::cancelled, "cancelled");
      if (call.control->aborted()) return stopped();
      // A tool that stopped because its deadline passed (a command is killed
      // then) answers late: it timed out, whatever it says.
      if (run->finished_at >= call.control->deadline()) return timed_out();
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
    return CallResult{std::move(result), outcome, std::nullopt, 0, false, false};
  };
}

CallHandler build_call_pipeline(Logger& logger, Metrics& metrics,
                                const std::shared_ptr<RunningHandlers>& running,
                                std::shared_ptr<LazyResultStore> results) {
  return compose(
      {
          stages::record(logger, metrics),
          stages::resolve_tool(),
          stages::authorize(),
          stages::limit_result(std::move(results)),
          stages::check_result(),
          stages::check_arguments(),
          stages::deadline(running),
          stages::catch_tool_exceptions(),
      },
      invoke_tool());
}

}  // namespace toolmux
