#include "catalog/tool_registry.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "catalog/json_schema_audit.h"
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

// Whether `schema` (a property's) describes itself, or a "$ref" it holds
// leads to a schema that does.
bool described(const json& root, const json& schema) {
  auto has_description = [](const json& node) {
    if (!node.is_object()) return false;
    auto description = node.find("description");
    return description != node.end() && description->is_string() &&
           !blank(description->get_ref<const std::string&>());
  };
  if (has_description(schema)) return true;
  if (!schema.is_object()) return false;
  auto ref = schema.find("$ref");
  if (ref == schema.end() || !ref->is_string()) return false;
  const Result<std::vector<std::string>> tokens = json_schema::ref_tokens(*ref);
  if (!tokens.ok()) return false;
  std::string pointer;
  const json* target = json_schema::resolve_tokens(root, *tokens, pointer);
  return target != nullptr && has_description(*target);
}

struct Checked {
  Problems problems;
  std::optional<SideEffect> effect;
  ToolSchema input;
  ToolSchema output;
};

Checked check(const ToolSpec& spec, ToolOwner owner) {
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
  if (spec.runs_on_reader && spec.task_support != TaskSupport::forbidden) {
    problems.push_back(Problem{"/execution/taskSupport",
                               label + "runs on the reader but supports tasks; a task goes on "
                                       "after its answer, which the reader must not wait for"});
  }

  out.input = check_schema(spec.input_schema, "inputSchema", label, spec.schemas_vetted, problems);
  // Only a schema that passed (its depth is bounded then); a built-in's, which
  // a test vets, is not walked at each start.
  if (owner == ToolOwner::toolmux && out.input && !spec.schemas_vetted) {
    for (const Problem& undescribed : undescribed_properties(spec.input_schema)) {
      problems.push_back(Problem{"/inputSchema" + undescribed.pointer,
                                 label + "inputSchema: " + undescribed.message});
    }
  }
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

Problems undescribed_properties(const json& input_schema) {
  Problems found;
  // Where arguments are declared: a schema's properties, the schemas of their
  // values and items, its $defs (which "$ref"s reach) and the branches of
  // allOf/anyOf/oneOf. A branch may restate a property its enclosing schema
  // describes (to constrain it), without describing it again. Conditions
  // (if/then/else, not, dependentSchemas, contains, propertyNames) declare
  // nothing and are not walked.
  static constexpr std::string_view kSchemas[] = {"items", "additionalProperties",
                                                  "unevaluatedProperties", "additionalItems",
                                                  "unevaluatedItems"};
  static constexpr std::string_view kBranches[] = {"allOf", "anyOf", "oneOf"};
  static constexpr std::string_view kMaps[] = {"properties", "patternProperties", "$defs",
                                               "definitions"};
  struct Place {
    const json* node;
    std::string at;
    const json* enclosing;  // the properties a branch may restate, or null
  };
  std::vector<Place> stack = {{&input_schema, "", nullptr}};
  while (!stack.empty()) {
    Place place = std::move(stack.back());
    stack.pop_back();
    const json& node = *place.node;
    if (!node.is_object()) continue;
    const json* properties = nullptr;
    if (auto it = node.find("properties"); it != node.end() && it->is_object()) {
      properties = &*it;
      for (const auto& [name, property] : it->items()) {
        if (described(input_schema, property)) continue;
        if (place.enclosing != nullptr) {
          auto restated = place.enclosing->find(name);
          if (restated != place.enclosing->end() && described(input_schema, *restated)) continue;
        }
        found.push_back(Problem{place.at + "/properties/" + pointer_token(name),
                                "property " + json_quote(name) +
                                    " has no description (the model knows an argument by its "
                                    "name and description alone)"});
      }
    }
    for (std::string_view keyword : kSchemas) {
      auto it = node.find(keyword);
      if (it != node.end() && it->is_object()) {
        stack.push_back({&*it, place.at + "/" + std::string(keyword), nullptr});
      }
    }
    if (auto it = node.find("prefixItems"); it != node.end() && it->is_array()) {
      for (std::size_t i = 0; i < it->size(); ++i) {
        stack.push_back({&(*it)[i], place.at + "/prefixItems/" + std::to_string(i), nullptr});
      }
    }
    if (auto it = node.find("items"); it != node.end() && it->is_array()) {
      for (std::size_t i = 0; i < it->size(); ++i) {
        stack.push_back({&(*it)[i], place.at + "/items/" + std::to_string(i), nullptr});
      }
    }
    for (std::string_view keyword : kBranches) {
      auto it = node.find(keyword);
      if (it == node.end() || !it->is_array()) continue;
      for (std::size_t i = 0; i < it->size(); ++i) {
        stack.push_back({&(*it)[i], place.at + "/" + std::string(keyword) + "/" + std::to_string(i),
                         properties != nullptr ? properties : place.enclosing});
      }
    }
    for (std::string_view keyword : kMaps) {
      auto it = node.find(keyword);
      if (it == node.end() || !it->is_object()) continue;
      for (const auto& [name, schema] : it->items()) {
        stack.push_back(
            {&schema, place.at + "/" + std::string(keyword) + "/" + pointer_token(name), nullptr});
      }
    }
  }
  // Sorted by pointer: the same order each time, whatever the walk's.
  std::sort(found.begin(), found.end(),
            [](const Problem& a, const Problem& b) { return a.pointer < b.pointer; });
  return found;
}

Problems check_tool_spec(const ToolSpec& spec, ToolOwner owner) {
  return check(spec, owner).problems;
}

json annotations_for(const ToolSpec& spec, SideEffect effect) {
  json annotations = json::object();
  if (!spec.title.empty()) annotations["title"] = spec.title;
  annotations["readOnlyHint"] = effect == SideEffect::read_only;
  annotations["destructiveHint"] = effect == SideEffect::destructive;
  annotations["idempotentHint"] = spec.idempotent;
  annotations["openWorldHint"] = spec.open_world.value_or(effect == SideEffect::remote_mutation);
  return annotations;
}

Problems ToolRegistry::add(ToolSpec spec, ToolHandler handler, ToolOwner owner) {
  Checked checked = check(spec, owner);
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
  if (spec.task_support != TaskSupport::forbidden) {
    descriptor["execution"] = {
        {"taskSupport", spec.task_support == TaskSupport::required ? "required" : "optional"}};
  }
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

std::vector<const RegisteredTool*> ToolRegistry::with_tag(std::string_view tag) const {
  std::vector<const RegisteredTool*> found;
  for (const auto& tool : tools_) {
    const std::vector<std::string>& tags = tool->spec.tags;
    if (std::find(tags.begin(), tags.end(), tag) != tags.end()) found.push_back(tool.get());
  }
  return found;
}

}  // namespace toolmux
