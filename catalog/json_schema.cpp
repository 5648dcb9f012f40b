#include "catalog/json_schema.h"

#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <regex>  // only to name the type of valijson's unused regex cache
#include <set>
#include <unordered_map>
#include <utility>

#include "catalog/bounded_regex.h"
#include "catalog/json_schema_audit.h"
#include "catalog/json_schema_messages.h"
#include "catalog/json_schema_text.h"
#include "catalog/string_formats.h"
#include "catalog/valijson.h"
#include "src/base/utf8.h"

namespace toolmux {

using json_schema::brief;
using json_schema::own_message;
using json_schema::quote;
using nlohmann::json;

// valijson matches "pattern" and "patternProperties" with std::regex, whose
// matcher recurses once per character of the text (a long argument overflows
// the stack), and its "date"/"time"/"date-time" formats too. None of those
// keywords reaches valijson: the schema it compiles has them replaced by
// toolmux's own keywords (kPatternKeyword, kPatternPropertiesKeyword,
// kFormatKeyword), each naming an entry below, whose constraints match with
// BoundedRegex and check formats by hand.
struct PatternRule {
  std::shared_ptr<const BoundedRegex> regex;
  // The same schema's maxLength: a longer string fails that, and is not matched.
  std::optional<std::uint64_t> max_length;
};

struct PatternPropertiesRule {
  std::set<std::string> named;  // the same schema's "properties"
  std::vector<std::pair<std::shared_ptr<const BoundedRegex>, std::string>> patterns;  // -> pointer
  std::vector<std::unique_ptr<valijson::Schema>> pattern_schemas;  // one per pattern
  bool has_additional = false;                                     // "additionalProperties" present
  bool additional_false = false;
  std::string additional;  // its pointer, when a schema
  std::unique_ptr<valijson::Schema> additional_schema;
};

struct CompiledSchema::Impl {
  json source;    // as given
  json enforced;  // what valijson compiles (the keywords above replaced)
  valijson::Schema schema;
  std::vector<PatternRule> patterns;
  std::vector<PatternPropertiesRule> pattern_properties;
};

namespace {

// toolmux's own keywords in the schema valijson compiles (CompiledSchema::Impl).
constexpr const char* kPatternKeyword = "x-toolmux-pattern";
constexpr const char* kPatternPropertiesKeyword = "x-toolmux-pattern-properties";
constexpr const char* kFormatKeyword = "x-toolmux-format";
constexpr const char* kPatternSchemas = "x-toolmux-pattern-schemas";
constexpr const char* kAdditionalSchema = "x-toolmux-additional-schema";

// ---- the keywords toolmux checks itself (see CompiledSchema::Impl) ----

std::string shown_pattern(const std::string& pattern) { return brief(json(pattern)); }

class PatternCheck final : public valijson::constraints::PolyConstraint {
 public:
  explicit PatternCheck(const PatternRule* rule) : rule_(rule) {}

  bool validate(const valijson::adapters::Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString()) return true;
    const std::string text = target.asString();
    // maxLength first: a string too long for it is reported by it alone, and
    // never handed to the matcher.
    if (rule_->max_length && utf8_length(text) > *rule_->max_length) return true;
    switch (rule_->regex->search(text)) {
      case BoundedRegex::Match::found:
        return true;
      case BoundedRegex::Match::not_found:
        if (results) {
          results->pushError(context, "Failed to match regex specified by 'pattern' constraint.");
        }
        return false;
      case BoundedRegex::Match::too_costly:
        if (results) {
          results->pushError(context, own_message("could not be matched against the pattern " +
                                                  shown_pattern(rule_->regex->pattern()) +
                                                  " within toolmux's matching limits"));
        }
        return false;
    }
    return false;
  }

 private:
  valijson::constraints::Constraint* cloneInto(void* memory) const override {
    return new (memory) PatternCheck(*this);
  }
  size_t sizeOf() const override { return sizeof(PatternCheck); }

  const PatternRule* rule_;
};

class FormatCheck final : public valijson::constraints::PolyConstraint {
 public:
  explicit FormatCheck(std::string format) : format_(std::move(format)) {}

  bool validate(const valijson::adapters::Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString()) return true;  // JSON Schema: a format applies to strings only
    const std::string text = target.asString();
    const bool ok = format_ == "date"   ? is_rfc3339_date(text)
                    : format_ == "time" ? is_rfc3339_time(text)
                                        : is_rfc3339_date_time(text);
    if (!ok && results) results->pushError(context, "String should be a valid " + format_);
    return ok;
  }

 private:
  valijson::constraints::Constraint* cloneInto(void* memory) const override {
    return new (memory) FormatCheck(*this);
  }
  size_t sizeOf() const override { return sizeof(FormatCheck); }

  std::string format_;
};

// "properties" + "patternProperties" + "additionalProperties" of one schema:
// valijson checks the named properties; this the rest, as valijson would.
class PatternPropertiesCheck final : public valijson::constraints::PolyConstraint {
 public:
  explicit PatternPropertiesCheck(const PatternPropertiesRule* rule) : rule_(rule) {}

  bool validate(const valijson::adapters::Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    using valijson::adapters::NlohmannJsonAdapter;
    if (!target.isObject()) return true;
    // valijson hands a constraint the adapter it validates with.
    const auto* object = dynamic_cast<const NlohmannJsonAdapter*>(&target);
    if (!object) {
      if (results) results->pushError(context, own_message("could not be checked"));
      return false;
    }
    bool valid = true;
    bool reported_unknown = false;
    for (const auto& member : object->asObject()) {
      const std::string& name = member.first;
      std::vector<std::string> member_context = context;
      member_context.push_back("[" + name + "]");
      bool matched = rule_->named.count(name) > 0;
      for (std::size_t i = 0; i < rule_->patterns.size(); ++i) {
        const BoundedRegex& regex = *rule_->patterns[i].first;
        const BoundedRegex::Match match = regex.search(name);
        if (match == BoundedRegex::Match::not_found) continue;
        if (match == BoundedRegex::Match::too_costly) {
          if (results) {
            results->pushError(context, own_message("property name " + quote(name) +
                                                    " could not be matched against the pattern " +
                                                    shown_pattern(regex.pattern()) +
                                                    " within toolmux's matching limits"));
          }
          valid = false;
          matched = true;  // undecided: not reported again as an extra property
          continue;
        }
        matched = true;
        if (!validate_member(*rule_->pattern_schemas[i], member.second, member_context, results)) {
          if (results) {
            results->pushError(context,
                               "Failed to validate against schema associated with "
                               "pattern '" +
                                   regex.pattern() + "'.");
          }
          valid = false;
        }
      }
      if (matched || !rule_->has_additional) continue;
      if (rule_->additional_false) {
        if (results && !reported_unknown) {
          results->pushError(context,
                             "Object contains a property that could not be validated using "
                             "'properties' or 'additionalProperties' constraints: '" +
                                 name + "'.");
        }
        reported_unknown = true;
        valid = false;
      } else if (!validate_member(*rule_->additional_schema, member.second, member_context,
                                  results)) {
        if (results) {
          results->pushError(context, "Failed to validate against additional properties schema");
        }
        valid = false;
      }
    }
    return valid;
  }

 private:
  static bool validate_member(const valijson::Schema& schema,
                              const valijson::adapters::NlohmannJsonAdapter& value,
                              const std::vector<std::string>& context,
                              valijson::ValidationResults* results) {
    // The visitor wants std::regex's cache; no schema here leaves valijson a
    // pattern to use it for.
    std::unordered_map<std::string, std::regex> unused;
    valijson::ValidationVisitor<valijson::adapters::NlohmannJsonAdapter> visitor(
        value, context, true, results, unused);
    return visitor.validateSchema(schema);
  }

  valijson::constraints::Constraint* cloneInto(void* memory) const override {
    return new (memory) PatternPropertiesCheck(*this);
  }
  size_t sizeOf() const override { return sizeof(PatternPropertiesCheck); }

  const PatternPropertiesRule* rule_;
};

// Builds the constraints of toolmux's keywords, whose values index `impl`'s rules.
class RuleBuilder final : public valijson::ConstraintBuilder {
 public:
  enum class Kind { pattern, pattern_properties, format };
  RuleBuilder(const CompiledSchema::Impl& impl, Kind kind) : impl_(impl), kind_(kind) {}

  valijson::constraints::Constraint* make(const valijson::adapters::Adapter& value) const override {
    if (kind_ == Kind::format) return new FormatCheck(value.asString());
    const auto index = static_cast<std::size_t>(value.asInteger());
    if (kind_ == Kind::pattern) return new PatternCheck(&impl_.patterns.at(index));
    return new PatternPropertiesCheck(&impl_.pattern_properties.at(index));
  }

 private:
  const CompiledSchema::Impl& impl_;
  Kind kind_;
};

void populate(const CompiledSchema::Impl& impl, const json& document, valijson::Schema& schema) {
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  // The parser owns (and deletes) its builders.
  parser.addConstraintBuilder(kPatternKeyword, new RuleBuilder(impl, RuleBuilder::Kind::pattern));
  parser.addConstraintBuilder(kPatternPropertiesKeyword,
                              new RuleBuilder(impl, RuleBuilder::Kind::pattern_properties));
  parser.addConstraintBuilder(kFormatKeyword, new RuleBuilder(impl, RuleBuilder::Kind::format));
  valijson::adapters::NlohmannJsonAdapter adapter(document);
  parser.populateSchema(adapter, schema);  // no fetchDoc: nothing is ever fetched
}

// A "$ref" to `pointer`, escaped the way valijson decodes references.
std::string reference_to(const std::string& pointer) {
  std::string ref = "#";
  for (char c : pointer) {
    if (c == '%') {
      ref += "%25";
    } else {
      ref += c;
    }
  }
  return ref;
}

// Rewrites impl.enforced so that valijson never sees "pattern",
// "patternProperties" or "format", and fills impl's rules. Only keys of
// objects change, so every pointer (and every $ref) stays valid.
void replace_regex_keywords(CompiledSchema::Impl& impl,
                            const json_schema::OwnKeywordPositions& checker) {
  json& enforced = impl.enforced;
  for (const std::string& position : checker.formats) {
    json& node = enforced.at(json::json_pointer(position));
    const json& format = node["format"];
    // Other formats are annotations (valijson would still call asString on
    // every value, which throws for an object).
    if (format == "date" || format == "time" || format == "date-time") {
      node[kFormatKeyword] = format;
    }
    node.erase("format");
  }
  for (const std::string& position : checker.patterns) {
    json& node = enforced.at(json::json_pointer(position));
    PatternRule rule;
    // The audit refused patterns that do not compile; null only when memory ran out.
    Result<std::shared_ptr<const BoundedRegex>> regex =
        BoundedRegex::compile(node["pattern"].get<std::string>());
    if (regex.ok()) rule.regex = std::move(regex).value();
    auto max_length = node.find("maxLength");
    if (max_length != node.end() && max_length->is_number_unsigned()) {
      rule.max_length = max_length->get<std::uint64_t>();
    }
    node[kPatternKeyword] = impl.patterns.size();
    node.erase("pattern");
    impl.patterns.push_back(std::move(rule));
  }
  // Innermost first: renaming an outer schema's keys would break the pointers
  // of the schemas inside it.
  const auto& positions = checker.pattern_properties;
  impl.pattern_properties.resize(positions.size());
  for (std::size_t index = positions.size(); index-- > 0;) {
    const std::string& position = positions[index];
    json& node = enforced.at(json::json_pointer(position));
    PatternPropertiesRule rule;
    auto named = node.find("properties");
    if (named != node.end() && named->is_object()) {
      for (auto it = named->begin(); it != named->end(); ++it) rule.named.insert(it.key());
    }
    for (auto it = node["patternProperties"].begin(); it != node["patternProperties"].end(); ++it) {
      Result<std::shared_ptr<const BoundedRegex>> regex = BoundedRegex::compile(it.key());
      rule.patterns.emplace_back(regex.ok() ? std::move(regex).value() : nullptr,
                                 position + "/" + kPatternSchemas + "/" + pointer_token(it.key()));
    }
    auto additional = node.find("additionalProperties");
    if (additional != node.end() && *additional != true) {
      rule.has_additional = true;
      rule.additional_false = *additional == false;
      rule.additional = position + "/" + kAdditionalSchema;
    }
    // Kept under names valijson ignores, where the $refs below can reach them.
    node[kPatternPropertiesKeyword] = index;
    node[kPatternSchemas] = std::move(node["patternProperties"]);
    node.erase("patternProperties");
    if (additional != node.end()) {
      node[kAdditionalSchema] = std::move(node["additionalProperties"]);
      node.erase("additionalProperties");
    }
    impl.pattern_properties[index] = std::move(rule);
  }
  // The subschemas of patternProperties and additionalProperties, each
  // compiled as the whole document with a root "$ref" to it (valijson ignores
  // the siblings of $ref), so their own $refs resolve as in the original.
  const auto compile_at = [&impl](const std::string& pointer) {
    json document = impl.enforced;
    document["$ref"] = reference_to(pointer);
    auto schema = std::make_unique<valijson::Schema>();
    populate(impl, document, *schema);
    return schema;
  };
  for (PatternPropertiesRule& rule : impl.pattern_properties) {
    for (const auto& [regex, pointer] : rule.patterns) {
      (void)regex;
      rule.pattern_schemas.push_back(compile_at(pointer));
    }
    if (rule.has_additional && !rule.additional_false) {
      rule.additional_schema = compile_at(rule.additional);
    }
  }
}

}  // namespace

CompiledSchema::CompiledSchema(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledSchema::~CompiledSchema() = default;

const json& CompiledSchema::source() const { return impl_->source; }

std::shared_ptr<const CompiledSchema> CompiledSchema::compile(const json& schema,
                                                              Problems& problems) {
  const std::optional<json_schema::OwnKeywordPositions> positions =
      json_schema::audit_schema(schema, problems);
  if (!positions) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->source = schema;
  impl->enforced = schema;
  try {
    replace_regex_keywords(*impl, *positions);
    populate(*impl, impl->enforced, impl->schema);
  } catch (const std::exception& error) {
    problems.push_back(Problem{"", std::string("schema does not compile: ") + error.what()});
    return nullptr;
  } catch (...) {
    problems.push_back(Problem{"", "schema does not compile"});
    return nullptr;
  }
  return std::shared_ptr<const CompiledSchema>(new CompiledSchema(std::move(impl)));
}

std::vector<std::string> CompiledSchema::validate(const json& value) const {
  std::vector<json_schema::ValidatorError> errors;
  try {
    valijson::Validator validator;
    valijson::adapters::NlohmannJsonAdapter target(value);
    // Most values conform: checked first without collecting errors, which
    // allocates nothing, and again, collecting them, only when one does not.
    if (validator.validate(impl_->schema, target, nullptr)) return {};
    valijson::ValidationResults results;
    validator.validate(impl_->schema, target, &results);
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
      errors.push_back(json_schema::ValidatorError{error.context, error.description});
    }
  } catch (const std::exception& error) {
    return {std::string("/: could not be validated: ") + error.what()};
  }
  return json_schema::schema_error_messages(impl_->source, value, errors);
}

}  // namespace toolmux
