#include "catalog/argument_check.h"

#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "src/base/edit_distance.h"
#include "src/base/problem.h"

namespace toolmux {

namespace {

constexpr std::size_t kCachedSchemas = 64;
// Names longer than this get no "did you mean" (each comparison costs their
// length times the candidate's).
constexpr std::size_t kMaxSuggestedNameBytes = 128;

// The arguments `schema` validates (via `validate`, which returns its
// problems) and then completes with its top-level defaults.
// `recheck`: the filled arguments are validated again (not for a built-in's
// vetted schema, whose defaults a test checks: tests/src/assembly).
template <typename Validate>
void check_and_fill(const nlohmann::json& schema, const Validate& validate, ArgumentCheck& check,
                    bool recheck = true) {
  for (std::string& problem : validate(check.arguments)) {
    check.problems.push_back("argument " + std::move(problem));
  }
  if (!check.ok() || !schema.is_object()) return;
  auto properties = schema.find("properties");
  if (properties == schema.end() || !properties->is_object()) return;
  for (const auto& [name, property] : properties->items()) {
    if (!property.is_object() || check.arguments.contains(name)) continue;
    auto fallback = property.find("default");
    if (fallback == property.end()) continue;
    check.arguments[name] = *fallback;
    check.filled[name] = *fallback;
  }
  if (check.filled.is_null() || !recheck) return;
  // A default the schema refuses is the tool's mistake: said as such, not
  // passed on to the tool.
  for (std::string& problem : validate(check.arguments)) {
    check.problems.push_back("the tool's own default breaks its input schema: argument " +
                             std::move(problem));
  }
}

// The most recently used compiled schemas, by their text.
class SchemaCache {
 public:
  std::shared_ptr<const CompiledSchema> get(const nlohmann::json& schema, Problems& problems) {
    std::string key = schema.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    {
      std::lock_guard lock(mutex_);
      if (auto it = index_.find(key); it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    // Compiled outside the lock: another thread may compile the same schema
    // at the same time; the first one cached is kept and returned to both.
    std::shared_ptr<const CompiledSchema> compiled = CompiledSchema::compile(schema, problems);
    if (!compiled) return nullptr;
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    order_.emplace_front(key, compiled);
    index_.emplace(std::move(key), order_.begin());
    if (order_.size() > kCachedSchemas) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return compiled;
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const CompiledSchema>>;
  std::mutex mutex_;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

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
  check_and_fill(
      tool.spec.input_schema,
      [&tool](const nlohmann::json& value) { return tool.input_schema.validate(value); }, check,
      !tool.spec.schemas_vetted);
}

bool accepts_undeclared_arguments(const nlohmann::json& input_schema) {
  return input_schema.is_object() && !input_schema.contains("additionalProperties") &&
         !input_schema.contains("unevaluatedProperties") &&
         !input_schema.contains("patternProperties");
}

void reject_undeclared_arguments(const RegisteredTool& tool, ArgumentCheck& check) {
  const nlohmann::json& schema = tool.spec.input_schema;
  if (!check.ok() || !check.arguments.is_object() || !accepts_undeclared_arguments(schema)) return;
  static const nlohmann::json kNone = nlohmann::json::object();
  auto found = schema.find("properties");
  const nlohmann::json& declared = found != schema.end() && found->is_object() ? *found : kNone;
  std::vector<std::string_view> names;
  for (const auto& [known, unused] : declared.items()) names.emplace_back(known);
  for (const auto& [name, value] : check.arguments.items()) {
    if (declared.contains(name)) continue;
    std::string problem = "argument /" + pointer_token(name) +
                          ": the tool does not declare it, and the operator's policy rejects "
                          "undeclared arguments";
    if (name.size() <= kMaxSuggestedNameBytes) {
      const std::vector<std::size_t> best = closest_names(names, name, 3);
      for (std::size_t i = 0; i < best.size(); ++i) {
        problem += (i == 0 ? " (did you mean " : " or ") +
                   nlohmann::json(std::string(names[best[i]])).dump();
      }
      if (!best.empty()) problem += "?)";
    }
    check.problems.push_back(std::move(problem));
  }
}

ArgumentCheck check_arguments(const ToolSpec& spec, std::string_view arguments_json) {
  ArgumentCheck check = check_argument_boundary(
      blank(arguments_json) ? ParsedJson{} : parse_untrusted_json(arguments_json));
  if (!check.ok()) return check;
  if (!spec.input_schema.is_object()) {
    check.problems.push_back(
        "the tool declares no input schema (a JSON object) to check them with");
    return check;
  }
  static SchemaCache cache;
  Problems problems;
  std::shared_ptr<const CompiledSchema> compiled = cache.get(spec.input_schema, problems);
  if (!compiled) {
    std::string why = "the tool's input schema does not compile";
    for (const Problem& problem : problems) {
      why += (&problem == &problems.front() ? ": " : "; ") +
             (problem.pointer.empty() ? std::string("/") : problem.pointer) + ": " +
             problem.message;
    }
    check.problems.push_back(std::move(why));
    return check;
  }
  check_and_fill(
      spec.input_schema,
      [&compiled](const nlohmann::json& value) { return compiled->validate(value); }, check);
  return check;
}

ArgumentCheck check_arguments(const RegisteredTool& tool, const ParsedJson& parsed) {
  ArgumentCheck check = check_argument_boundary(parsed);
  check_input_schema(tool, check);
  return check;
}

}  // namespace toolmux
