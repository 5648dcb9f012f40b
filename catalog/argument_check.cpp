#include "catalog/argument_check.h"

namespace toolmux {

namespace {

bool blank(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

}  // namespace

std::string ArgumentCheck::message(std::string_view tool_name) const {
  std::string out = "Invalid arguments for tool ";
  out += nlohmann::json(std::string(tool_name))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += ": ";
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (i) out += "; ";
    out += problems[i];
  }
  return out;
}

ArgumentCheck check_arguments(const RegisteredTool& tool, std::string_view arguments_json) {
  if (blank(arguments_json)) return check_arguments(tool, ParsedJson{});
  return check_arguments(tool, parse_untrusted_json(arguments_json));
}

ArgumentCheck check_argument_boundary(const ParsedJson& parsed) {
  ArgumentCheck check;
  if (parsed.syntax_error) {
    check.arguments = nlohmann::json::object();
    check.problems.push_back("arguments are " + *parsed.syntax_error);
    return check;
  }
  check.arguments = parsed.value.is_null() ? nlohmann::json::object() : parsed.value;
  // A value that broke a boundary rule is not what the client sent: the
  // schema is not run on it.
  for (const JsonViolation& violation : parsed.violations) {
    check.problems.push_back("argument " + (violation.pointer.empty() ? "/" : violation.pointer) +
                             ": " + violation.message);
  }
  if (!check.problems.empty()) return check;
  if (!check.arguments.is_object()) {
    check.problems.push_back(std::string("arguments must be a JSON object, got ") +
                             check.arguments.type_name());
  }
  return check;
}

void check_input_schema(const RegisteredTool& tool, ArgumentCheck& check) {
  if (!check.ok() || !tool.input_schema) return;
  for (std::string& problem : tool.input_schema.validate(check.arguments)) {
    check.problems.push_back("argument " + std::move(problem));
  }
}

ArgumentCheck check_arguments(const RegisteredTool& tool, const ParsedJson& parsed) {
  ArgumentCheck check = check_argument_boundary(parsed);
  check_input_schema(tool, check);
  return check;
}

}  // namespace toolmux
