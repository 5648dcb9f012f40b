#include "catalog/command_spec.h"

#include <stdexcept>
#include <string_view>
#include <utility>

namespace toolmux {
namespace {

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

}  // namespace toolmux
