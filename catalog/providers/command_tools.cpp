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
#include "src/base/untrusted_json.h"

namespace toolmux {
namespace {

using Clock = std::chrono::steady_clock;

// One argv element of the template, split into literal text and placeholders.
struct Segment {
  bool placeholder = false;
  std::string text;  // the literal text, or the placeholder's name
};

struct ParsedElement {
  std::vector<Segment> segments;
  std::string error;  // empty when the element is well-formed
};

ParsedElement parse_element(std::string_view element) {
  ParsedElement parsed;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) parsed.segments.push_back({false, std::move(literal)});
    literal.clear();
  };
  std::size_t i = 0;
  while (i < element.size()) {
    char c = element[i];
    if (c == '{') {
      if (i + 1 < element.size() && element[i + 1] == '{') {
        literal += '{';
        i += 2;
        continue;
      }
      auto close = element.find('}', i + 1);
      auto next_open = element.find('{', i + 1);
      if (close == std::string_view::npos ||
          (next_open != std::string_view::npos && next_open < close)) {
        parsed.error = "unbalanced '{' at character " + std::to_string(i) +
                       " (write \"{{\" for a literal brace)";
        return parsed;
      }
      std::string name(element.substr(i + 1, close - i - 1));
      if (name.empty()) {
        parsed.error = "empty placeholder \"{}\" at character " + std::to_string(i) +
                       " (write \"{{}}\" for literal braces)";
        return parsed;
      }
      flush();
      parsed.segments.push_back({true, std::move(name)});
      i = close + 1;
      continue;
    }
    if (c == '}') {
      if (i + 1 < element.size() && element[i + 1] == '}') {
        literal += '}';
        i += 2;
        continue;
      }
      parsed.error = "unbalanced '}' at character " + std::to_string(i) +
                     " (write \"}}\" for a literal brace)";
      return parsed;
    }
    literal += c;
    ++i;
  }
  flush();
  return parsed;
}

bool has_placeholder(const ParsedElement& parsed) {
  for (const auto& segment : parsed.segments) {
    if (segment.placeholder) return true;
  }
  return false;
}

// How one argument value reads inside an argv element.
std::string value_text(const json& value) {
  switch (value.type()) {
    case json::value_t::string:
      return value.get<std::string>();
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::number_float: {
      double d = value.get<double>();
      // 3.0 (an integer by JSON Schema's reckoning) reads as "3".
      if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9007199254740992.0) {
        return std::to_string(static_cast<long long>(d));
      }
      return value.dump();
    }
    default:
      // Integers, null, objects and arrays: compact JSON.
      return value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

bool valid_env_name(std::string_view name) {
  if (name.empty()) return false;
  auto is_alpha = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!is_alpha(name[0])) return false;
  for (char c : name) {
    if (!is_alpha(c) && !is_digit(c)) return false;
  }
  return true;
}

// Text safe to put in a JSON string: invalid UTF-8 sequences become U+FFFD.
std::string lossy_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    // Find the longest valid sequence starting at i (1 to 4 bytes).
    auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = lead < 0x80           ? 1
                         : (lead >> 5) == 0x6  ? 2
                         : (lead >> 4) == 0xE  ? 3
                         : (lead >> 3) == 0x1E ? 4
                                               : 0;
    if (length != 0 && i + length <= text.size() && is_valid_utf8(text.substr(i, length))) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

// Cuts a multi-byte character that the output cap split in two off the end.
std::string_view without_split_character(std::string_view text) {
  std::size_t back = 0;
  while (back < 4 && back < text.size()) {
    auto byte = static_cast<unsigned char>(text[text.size() - 1 - back]);
    if ((byte & 0xC0) != 0x80) {
      // A lead byte (or ASCII): is its sequence complete?
      std::size_t length = byte < 0x80           ? 1
                           : (byte >> 5) == 0x6  ? 2
                           : (byte >> 4) == 0xE  ? 3
                           : (byte >> 3) == 0x1E ? 4
                                                 : 1;
      if (length > back + 1) return text.substr(0, text.size() - 1 - back);
      return text;
    }
    ++back;
  }
  return text;
}

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
  message += lossy_utf8(truncated ? without_split_character(text) : std::string_view(text));
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
  request.max_stdout_bytes = command.max_output_bytes;
  request.max_stderr_bytes = command.max_stderr_bytes;
  request.deadline = context.deadline();

  ProgressTicker ticker(context, start);
  ProcessOutcome outcome = run_process(request, std::ref(ticker));

  if (!outcome.started) {
    return ToolResult::error("the command could not be started: " + outcome.start_error);
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
  if (outcome.stdout_truncated) text.resize(without_split_character(text).size());
  if (!is_valid_utf8(text)) return ToolResult::error("command output is not valid UTF-8");
  if (outcome.stdout_truncated) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += "[toolmux: output truncated at " + std::to_string(kept) + " bytes of " +
            std::to_string(outcome.stdout_total_bytes) + "]";
  }
  return ToolResult::text(std::move(text));
}

}  // namespace

Problems check_command_spec(const CommandSpec& command, const json& input_schema) {
  Problems problems;
  const json* properties = nullptr;
  if (input_schema.is_object()) {
    auto it = input_schema.find("properties");
    if (it != input_schema.end() && it->is_object()) properties = &*it;
  }
  if (command.argv.empty()) {
    problems.push_back({"/argv", "argv is empty: it needs at least the program to run"});
  }
  for (std::size_t i = 0; i < command.argv.size(); ++i) {
    std::string pointer = "/argv/" + std::to_string(i);
    ParsedElement parsed = parse_element(command.argv[i]);
    if (!parsed.error.empty()) {
      problems.push_back({pointer, parsed.error});
      continue;
    }
    if (i == 0) {
      if (command.argv[0].empty()) {
        problems.push_back({pointer, "the program (argv[0]) is empty"});
      } else if (has_placeholder(parsed)) {
        problems.push_back({pointer, "the program (argv[0]) must not contain a placeholder"});
      }
      continue;
    }
    for (const auto& segment : parsed.segments) {
      if (!segment.placeholder) continue;
      if (!properties || !properties->contains(segment.text)) {
        problems.push_back(
            {pointer, "placeholder {" + segment.text + "} names no property of the input schema"});
      }
    }
  }
  if (!command.cwd.empty() && !command.cwd.is_absolute()) {
    problems.push_back(
        {"/cwd", "the working directory \"" + command.cwd.string() + "\" is not an absolute path"});
  }
  for (std::size_t i = 0; i < command.env_allow.size(); ++i) {
    if (!valid_env_name(command.env_allow[i])) {
      problems.push_back(
          {"/envAllow/" + std::to_string(i),
           "\"" + command.env_allow[i] + "\" is not a valid environment variable name"});
    }
  }
  for (const auto& [name, value] : command.env) {
    std::string pointer = "/env/" + pointer_token(name);
    if (!valid_env_name(name)) {
      problems.push_back({pointer, "\"" + name + "\" is not a valid environment variable name"});
    }
    if (value.find('\0') != std::string::npos) {
      problems.push_back({pointer, "the value of " + name + " contains a NUL character"});
    }
  }
  if (command.max_output_bytes == 0) {
    problems.push_back({"/maxOutputBytes", "maxOutputBytes must be at least 1"});
  }
  return problems;
}

std::vector<std::string> expand_argv(const std::vector<std::string>& argv_template,
                                     const json& arguments) {
  if (argv_template.empty()) throw std::invalid_argument("argv is empty");
  std::vector<std::string> argv;
  argv.reserve(argv_template.size());
  for (std::size_t i = 0; i < argv_template.size(); ++i) {
    ParsedElement parsed = parse_element(argv_template[i]);
    if (!parsed.error.empty()) {
      throw std::invalid_argument("argv[" + std::to_string(i) + "]: " + parsed.error);
    }
    if (i == 0 && has_placeholder(parsed)) {
      throw std::invalid_argument("argv[0] must not contain a placeholder");
    }
    // Every placeholder must have its argument, or the element is left out.
    bool complete = true;
    for (const auto& segment : parsed.segments) {
      if (segment.placeholder && (!arguments.is_object() || !arguments.contains(segment.text))) {
        complete = false;
      }
    }
    if (!complete) continue;
    if (parsed.segments.size() == 1 && parsed.segments[0].placeholder) {
      const json& value = arguments.at(parsed.segments[0].text);
      if (value.is_array()) {
        for (const auto& item : value) argv.push_back(value_text(item));
        continue;
      }
    }
    std::string element;
    for (const auto& segment : parsed.segments) {
      element += segment.placeholder ? value_text(arguments.at(segment.text)) : segment.text;
    }
    argv.push_back(std::move(element));
  }
  return argv;
}

ToolHandler make_command_handler(CommandSpec command) {
  auto shared = std::make_shared<const CommandSpec>(std::move(command));
  return [shared](const json& arguments, CallContext& context) {
    return run_command(*shared, arguments, context);
  };
}

}  // namespace toolmux
