#include "catalog/tool_registry.h"

#include <mutex>
#include <utility>

#include "src/base/untrusted_json.h"
#include "src/base/utf8.h"

namespace toolmux {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxNameBytes = 128;

std::string json_quote(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string hex(unsigned value, int digits) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kDigits[(value >> shift) & 0xF];
  return out;
}

bool name_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

// How to show the character at name[pos] in a message.
std::string describe_char(std::string_view name, std::size_t pos) {
  const auto c = static_cast<unsigned char>(name[pos]);
  if (c >= 0x21 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
  if (c < 0x80) return "U+" + hex(c, 4) + (c == ' ' ? " (space)" : " (a control character)");
  // A multi-byte character: show it when it is well-formed UTF-8.
  const Utf8Char character = decode_utf8(name, pos);
  if (character.valid) return "'" + std::string(name.substr(pos, character.length)) + "'";
  return "byte 0x" + hex(c, 2) + " (not valid UTF-8)";
}

bool blank(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return false;
  }
  return true;
}

// Checks one of the spec's schemas and compiles it when it passes (or leaves
// that to its first use, when the spec's schemas are vetted).
ToolSchema check_schema(const json& schema, const char* field, const std::string& label,
                        bool vetted, Problems& problems) {
  const std::string at = std::string("/") + field;
  if (schema.is_null()) {
    problems.push_back(Problem{at, label + field + " is missing"});
    return {};
  }
  if (!schema.is_object()) {
    problems.push_back(Problem{
        at, label + field + " must be a JSON object, got " + std::string(schema.type_name())});
    return {};
  }
  bool ok = true;
  auto type = schema.find("type");
  if (type == schema.end()) {
    problems.push_back(Problem{at, label + field + " must have \"type\": \"object\""});
    ok = false;
  } else if (*type != "object") {
    problems.push_back(
        Problem{at + "/type", label + field + " must have \"type\": \"object\", got " +
                                  type->dump(-1, ' ', false, json::error_handler_t::replace)});
    ok = false;
  }
  if (vetted) return ok ? ToolSchema::on_first_use(schema) : ToolSchema{};
  Problems found;
  auto compiled = CompiledSchema::compile(schema, found);
  for (Problem& problem : found) {
    problems.push_back(Problem{at + problem.pointer, label + field + ": " + problem.message});
  }
  return ok && compiled ? ToolSchema(std::move(compiled)) : ToolSchema{};
}

struct Checked {
  Problems problems;
  std::optional<SideEffect> effect;
  ToolSchema input;
  ToolSchema output;
};

Checked check(const ToolSpec& spec) {
  Checked out;
  Problems& problems = out.problems;
  const std::string label = "tool " + json_quote(spec.name) + ": ";

  if (spec.name.empty()) {
    problems.push_back(Problem{"/name", label + "name is empty"});
  } else if (spec.name.size() > kMaxNameBytes) {
    problems.push_back(Problem{"/name", label + "name is " + std::to_string(spec.name.size()) +
                                            " bytes long; the limit is " +
                                            std::to_string(kMaxNameBytes)});
  }
  for (std::size_t i = 0; i < spec.name.size(); ++i) {
    if (name_char_ok(spec.name[i])) continue;
    problems.push_back(Problem{"/name", label + "name contains " + describe_char(spec.name, i) +
                                            " at byte " + std::to_string(i) +
                                            "; only ASCII letters, digits, '_', '-' and '.' are "
                                            "allowed"});
    break;
  }

  if (spec.description.empty()) {
    problems.push_back(Problem{"/description", label + "description is empty"});
  } else if (blank(spec.description)) {
    problems.push_back(Problem{"/description", label + "description is only whitespace"});
  }

  out.effect = side_effect_from_name(spec.side_effect);
  if (!out.effect) {
    problems.push_back(Problem{
        "/sideEffect", label +
                           (spec.side_effect.empty()
                                ? std::string("side effect is missing")
                                : "side effect " + json_quote(spec.side_effect) + " is unknown") +
                           "; use one of read_only, local_mutation, remote_mutation, destructive"});
  }

  if (spec.timeout.count() <= 0) {
    problems.push_back(Problem{"/timeoutMs", label + "timeout is missing or zero"});
  }
  if (spec.runs_on_reader && !spec.returns_by_deadline) {
    problems.push_back(Problem{"/runsOnReader", label +
                                                    "runs on the reader but does not return by its "
                                                    "deadline; set returns_by_deadline too"});
  }
  if (spec.runs_on_reader && out.effect && *out.effect != SideEffect::read_only) {
    problems.push_back(
        Problem{"/runsOnReader", label + "runs on the reader but is " + spec.side_effect +
                                     "; only a read_only tool may (a mutation is journaled and "
                                     "may ask for confirmation)"});
  }

  out.input = check_schema(spec.input_schema, "inputSchema", label, spec.schemas_vetted, problems);
  if (!spec.output_schema.is_null()) {
    out.output =
        check_schema(spec.output_schema, "outputSchema", label, spec.schemas_vetted, problems);
  }
  return out;
}

}  // namespace

struct ToolSchema::State {
  std::once_flag compiled_once;
  std::shared_ptr<const CompiledSchema> compiled;
  nlohmann::json source;  // until compiled
  std::string failure;    // why it did not compile
};

ToolSchema::ToolSchema(std::shared_ptr<const CompiledSchema> compiled)
    : state_(std::make_shared<State>()) {
  state_->compiled = std::move(compiled);
  std::call_once(state_->compiled_once, [] {});
}

ToolSchema ToolSchema::on_first_use(nlohmann::json source) {
  ToolSchema schema;
  schema.state_ = std::make_shared<State>();
  schema.state_->source = std::move(source);
  return schema;
}

std::vector<std::string> ToolSchema::validate(const nlohmann::json& value) const {
  if (!state_) return {};
  State& state = *state_;
  std::call_once(state.compiled_once, [&state] {
    Problems problems;
    state.compiled = CompiledSchema::compile(state.source, problems);
    state.source = nullptr;
    if (state.compiled) return;
    state.failure = "/: cannot be checked: the tool's schema does not compile";
    for (const Problem& problem : problems) {
      state.failure += (&problem == &problems.front() ? " (" : "; ") +
                       (problem.pointer.empty() ? std::string("/") : problem.pointer) + ": " +
                       problem.message;
    }
    if (!problems.empty()) state.failure += ")";
  });
  if (!state.compiled) return {state.failure};
  return state.compiled->validate(value);
}

Problems check_tool_spec(const ToolSpec& spec) { return check(spec).problems; }

json annotations_for(const ToolSpec& spec, SideEffect effect) {
  json annotations = json::object();
  if (!spec.title.empty()) annotations["title"] = spec.title;
  annotations["readOnlyHint"] = effect == SideEffect::read_only;
  annotations["destructiveHint"] = effect == SideEffect::destructive;
  annotations["idempotentHint"] = spec.idempotent;
  annotations["openWorldHint"] = spec.open_world.value_or(effect == SideEffect::remote_mutation);
  return annotations;
}

Problems ToolRegistry::add(ToolSpec spec, ToolHandler handler) {
  Checked checked = check(spec);
  const std::string label = "tool " + json_quote(spec.name) + ": ";
  if (!spec.name.empty() && find(spec.name) != nullptr) {
    checked.problems.insert(
        checked.problems.begin(),
        Problem{"/name", label + "a tool with this name is already registered"});
  }
  if (!handler) checked.problems.push_back(Problem{"", label + "has no handler"});
  if (!checked.problems.empty()) return checked.problems;

  auto tool = std::make_unique<RegisteredTool>();
  json descriptor = json::object();
  descriptor["name"] = spec.name;
  if (!spec.title.empty()) descriptor["title"] = spec.title;
  descriptor["description"] = spec.description;
  descriptor["inputSchema"] = spec.input_schema;
  if (!spec.output_schema.is_null()) descriptor["outputSchema"] = spec.output_schema;
  descriptor["annotations"] = annotations_for(spec, *checked.effect);
  if (!spec.tags.empty() || !spec.version.empty()) {
    json meta = json::object();
    if (!spec.tags.empty()) meta["io.toolmux/tags"] = spec.tags;
    if (!spec.version.empty()) meta["io.toolmux/version"] = spec.version;
    descriptor["_meta"] = std::move(meta);
  }
  tool->side_effect = *checked.effect;
  tool->input_schema = std::move(checked.input);
  tool->output_schema = std::move(checked.output);
  tool->handler = std::move(handler);
  tool->descriptor = std::move(descriptor);
  tool->spec = std::move(spec);
  by_name_.emplace(tool->spec.name, tool.get());
  tools_.push_back(std::move(tool));
  return {};
}

const RegisteredTool* ToolRegistry::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace toolmux
