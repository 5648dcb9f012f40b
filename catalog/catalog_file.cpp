#include "catalog/catalog_file.h"
#include "catalog/edit_distance.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "catalog/untrusted_json.h"

namespace toolmux {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxFileBytes = 16u << 20;
constexpr std::uint64_t kMaxCaptureBytes = 1u << 30;

const std::vector<std::string_view> kTopFields = {"$schema",   "$comment", "tools",
                                                  "aliases",   "policy",   "results",
                                                  "discovery", "search",   "upstreams"};
const std::vector<std::string_view> kUpstreamFields = {"$comment",
                                                       "command",
                                                       "args",
                                                       "cwd",
                                                       "env",
                                                       "url",
                                                       "headers",
                                                       "bearerToken",
                                                       "prefix",
                                                       "include",
                                                       "exclude",
                                                       "tools",
                                                       "start",
                                                       "startTimeoutMs",
                                                       "restart",
                                                       "circuitBreaker",
                                                       "readOnlyRetries"};
const std::vector<std::string_view> kRestartFields = {"$comment", "initialDelayMs", "maxDelayMs"};
const std::vector<std::string_view> kBreakerFields = {"$comment", "failures", "cooldownMs"};
const std::vector<std::string_view> kUpstreamToolFields = {"$comment",   "name",      "description",
                                                           "sideEffect", "timeoutMs", "pinned"};
const std::vector<std::string_view> kSecretFields = {"fromEnv", "fromFile"};
// What an upstream inherits from toolmux's environment (what MCP clients
// commonly pass a stdio server); the rest only through "env".
const std::vector<std::string> kUpstreamInheritedEnv = {"PATH",  "HOME", "USER", "LOGNAME",
                                                        "SHELL", "TERM", "LANG", "TMPDIR"};
constexpr std::size_t kMaxSecretFileBytes = 64u << 10;
const std::vector<std::string_view> kDiscoveryFields = {"$comment", "mode", "pinned"};
const std::vector<std::string_view> kSearchFields = {"$comment", "weights", "synonyms",
                                                     "defaultSynonyms", "expansionWeight"};
const std::vector<std::string_view> kWeightFields = {
    "name", "title", "description", "parameterNames", "parameterDescriptions", "enums"};
const std::vector<std::string_view> kToolFields = {
    "$comment",   "name",      "title",      "description", "inputSchema", "outputSchema",
    "sideEffect", "timeoutMs", "idempotent", "tags",        "version",     "command"};
const std::vector<std::string_view> kCommandFields = {
    "$comment", "argv", "cwd", "envAllow", "env", "maxOutputBytes", "maxStderrBytes"};
const std::vector<std::string_view> kAliasesFields = {"$comment", "tools", "arguments"};
const std::vector<std::string_view> kPolicyFields = {"$comment", "arguments", "access",
                                                     "unknownTool"};
const std::vector<std::string_view> kArgumentPolicyFields = {"$comment", "defaults", "fixed"};
const std::vector<std::string_view> kAccessRuleFields = {"$comment", "allow", "deny"};
const std::vector<std::string_view> kResultsFields = {
    "$comment",         "maxTextChars",   "offload",      "offloadThresholdBytes",
    "maxResponseBytes", "retentionHours", "storeMaxBytes"};
// maxResponseBytes: at least this, room for a few blocks and the notices.
constexpr std::uint64_t kMinResponseBytes = 16384;

// retentionHours: more than 0, at most this (about 114 years, which keeps
// "now + retention" within a nanosecond clock).
constexpr long kMaxRetentionHours = 1000000;

std::string type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "something else";
  }
}

// Collects the problems of one object, with pointers under `base`.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string base, Problems& problems)
      : object_(object), base_(std::move(base)), problems_(problems) {}

  std::string pointer(std::string_view field) const { return base_ + "/" + pointer_token(field); }

  // Reports every field not in `known`, suggesting a close known name.
  void reject_unknown(const std::vector<std::string_view>& known) {
    for (const auto& [key, value] : object_.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string message = "unknown field \"" + key + "\"";
      std::string_view best;
      std::size_t best_distance = 3;
      for (auto candidate : known) {
        std::size_t distance = edit_distance(key, candidate);
        if (distance < best_distance) {
          best_distance = distance;
          best = candidate;
        }
      }
      if (!best.empty()) message += " (did you mean \"" + std::string(best) + "\"?)";
      add(pointer(key), std::move(message));
    }
  }

  // The field, or null (and a problem when it is required) when it is absent.
  const json* field(std::string_view name, bool required) {
    auto it = object_.find(name);
    if (it == object_.end()) {
      if (required) {
        add(base_, "missing required field \"" + std::string(name) + "\"");
        mark(name);
      }
      return nullptr;
    }
    return &*it;
  }

  std::optional<std::string> string(std::string_view name, bool required) {
    const json* value = field(name, required);
    if (!value) return std::nullopt;
    if (!value->is_string()) return wrong_type(name, "a string", *value), std::nullopt;
    return value->get<std::string>();
  }

  std::optional<bool> boolean(std::string_view name) {
    const json* value = field(name, false);
    if (!value) return std::nullopt;
    if (!value->is_boolean()) return wrong_type(name, "a boolean", *value), std::nullopt;
    return value->get<bool>();
  }

  // An integer in [min, max].
  std::optional<std::uint64_t> integer(std::string_view name, bool required, std::uint64_t min,
                                       std::uint64_t max) {
    const json* value = field(name, required);
    if (!value) return std::nullopt;
    if (!value->is_number_integer()) {
      return wrong_type(name, "an integer", *value), std::nullopt;
    }
    bool negative = value->is_number_integer() && !value->is_number_unsigned() &&
                    value->get<std::int64_t>() < 0;
    std::uint64_t number = negative ? 0 : value->get<std::uint64_t>();
    if (negative || number < min || number > max) {
      add(pointer(name),
          std::string(name) +
              (max == std::numeric_limits<std::uint64_t>::max()
                   ? " must be at least " + std::to_string(min)
                   : " must be between " + std::to_string(min) + " and " + std::to_string(max)) +
              ", not " + value->dump());
      mark(name);
      return std::nullopt;
    }
    return number;
  }

  std::optional<std::vector<std::string>> strings(std::string_view name, bool required) {
    const json* value = field(name, required);
    if (!value) return std::nullopt;
    if (!value->is_array()) return wrong_type(name, "an array of strings", *value), std::nullopt;
    std::vector<std::string> out;
    bool ok = true;
    for (std::size_t i = 0; i < value->size(); ++i) {
      const json& item = (*value)[i];
      if (!item.is_string()) {
        add(pointer(name) + "/" + std::to_string(i), "expected a string, got " + type_name(item));
        ok = false;
        continue;
      }
      out.push_back(item.get<std::string>());
    }
    if (!ok) {
      mark(name);
      return std::nullopt;
    }
    return out;
  }

  const json* object(std::string_view name, bool required) {
    const json* value = field(name, required);
    if (!value) return nullptr;
    if (!value->is_object()) return wrong_type(name, "an object", *value), nullptr;
    return value;
  }

  void add(std::string pointer_text, std::string message) {
    problems_.push_back({std::move(pointer_text), std::move(message)});
  }

  // For an optional object field whose members are objects (keyed by names):
  // calls read(key, member, member's pointer) for each; a member that is not
  // an object is a problem ("expected an object (<what>), got ...").
  template <typename Read>
  void object_members(std::string_view name, std::string_view what, Read read) {
    const json* members = object(name, false);
    if (!members) return;
    for (const auto& [key, member] : members->items()) {
      std::string at = pointer(name) + "/" + pointer_token(key);
      if (!member.is_object()) {
        add(at, "expected an object (" + std::string(what) + "), got " + type_name(member));
        continue;
      }
      read(key, member, at);
    }
  }

  // Fields already reported on, relative to the object ("/name").
  const std::set<std::string>& reported() const { return reported_; }
  void mark(std::string_view name) { reported_.insert("/" + pointer_token(name)); }

 private:
  void wrong_type(std::string_view name, std::string_view expected, const json& value) {
    add(pointer(name), "expected " + std::string(expected) + ", got " + type_name(value));
    mark(name);
  }

  const json& object_;
  std::string base_;
  Problems& problems_;
  std::set<std::string> reported_;
};

// `found` without the problems at or under a pointer in `reported`: those
// fields were already reported as missing or of the wrong type.
Problems without_reported(Problems found, const std::set<std::string>& reported) {
  Problems kept;
  for (auto& problem : found) {
    bool covered = false;
    for (const auto& pointer : reported) {
      if (problem.pointer == pointer || problem.pointer.rfind(pointer + "/", 0) == 0) {
        covered = true;
        break;
      }
    }
    if (!covered) kept.push_back(std::move(problem));
  }
  return kept;
}

std::optional<CommandSpec> read_command(const json& value, const std::string& base,
                                        const fs::path& folder, const json& input_schema,
                                        Problems& problems) {
  std::size_t before = problems.size();
  ObjectReader reader(value, base, problems);
  reader.reject_unknown(kCommandFields);
  CommandSpec command;
  if (auto argv = reader.strings("argv", true)) command.argv = std::move(*argv);
  if (auto cwd = reader.string("cwd", false)) {
    fs::path given(*cwd);
    if (given.empty()) {
      reader.add(reader.pointer("cwd"), "the working directory is empty (leave cwd out instead)");
      reader.mark("cwd");
    } else {
      fs::path resolved = (given.is_absolute() ? given : folder / given).lexically_normal();
      std::error_code ec;
      auto status = fs::status(resolved, ec);
      if (!fs::exists(status)) {
        reader.add(reader.pointer("cwd"), "the working directory \"" + *cwd +
                                              "\" does not exist (resolved to " +
                                              resolved.string() + ")");
        reader.mark("cwd");
      } else if (!fs::is_directory(status)) {
        reader.add(reader.pointer("cwd"), "the working directory \"" + *cwd +
                                              "\" is not a directory (resolved to " +
                                              resolved.string() + ")");
        reader.mark("cwd");
      }
      command.cwd = resolved;
    }
  }
  if (auto allow = reader.strings("envAllow", false)) command.env_allow = std::move(*allow);
  if (const json* env = reader.object("env", false)) {
    for (const auto& [name, item] : env->items()) {
      if (!item.is_string()) {
        reader.add(reader.pointer("env") + "/" + pointer_token(name),
                   "expected a string, got " + type_name(item));
        continue;
      }
      command.env[name] = item.get<std::string>();
    }
  }
  if (auto cap = reader.integer("maxOutputBytes", false, 1, kMaxCaptureBytes)) {
    command.max_output_bytes = static_cast<std::size_t>(*cap);
  }
  if (auto cap = reader.integer("maxStderrBytes", false, 0, kMaxCaptureBytes)) {
    command.max_stderr_bytes = static_cast<std::size_t>(*cap);
  }
  Problems checked = without_reported(check_command_spec(command, input_schema), reader.reported());
  for (auto& problem : with_prefix(std::move(checked), base))
    problems.push_back(std::move(problem));
  if (problems.size() != before) return std::nullopt;
  return command;
}

std::optional<CommandTool> read_tool(const json& value, const std::string& base,
                                     const fs::path& folder, Problems& problems) {
  std::size_t before = problems.size();
  ObjectReader reader(value, base, problems);
  reader.reject_unknown(kToolFields);
  CommandTool tool;
  ToolSpec& spec = tool.spec;
  if (auto name = reader.string("name", true)) spec.name = std::move(*name);
  if (auto title = reader.string("title", false)) spec.title = std::move(*title);
  if (auto description = reader.string("description", true)) {
    spec.description = std::move(*description);
  }
  if (const json* schema = reader.field("inputSchema", true)) spec.input_schema = *schema;
  if (const json* schema = reader.field("outputSchema", false)) {
    if (schema->is_null()) {
      reader.add(reader.pointer("outputSchema"),
                 "expected an object, got null (leave outputSchema out instead)");
      reader.mark("outputSchema");
    } else {
      spec.output_schema = *schema;
    }
  }
  if (auto effect = reader.string("sideEffect", true)) spec.side_effect = std::move(*effect);
  if (auto timeout =
          reader.integer("timeoutMs", true, 1,
                         static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))) {
    spec.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*timeout));
  }
  if (auto idempotent = reader.boolean("idempotent")) spec.idempotent = *idempotent;
  if (auto tags = reader.strings("tags", false)) spec.tags = std::move(*tags);
  if (auto version = reader.string("version", false)) spec.version = std::move(*version);

  Problems checked = without_reported(check_tool_spec(spec), reader.reported());
  for (auto& problem : with_prefix(std::move(checked), base))
    problems.push_back(std::move(problem));

  if (const json* command = reader.object("command", true)) {
    if (auto parsed =
            read_command(*command, base + "/command", folder, spec.input_schema, problems)) {
      tool.command = std::move(*parsed);
    }
  }
  if (problems.size() != before) return std::nullopt;
  return tool;
}

// The index N of a pointer "/tools/N/...", or -1 for anything else.
long tool_index(std::string_view pointer) {
  constexpr std::string_view prefix = "/tools/";
  if (pointer.rfind(prefix, 0) != 0) return -1;
  long index = 0;
  std::size_t i = prefix.size();
  if (i >= pointer.size()) return -1;
  for (; i < pointer.size() && pointer[i] != '/'; ++i) {
    if (pointer[i] < '0' || pointer[i] > '9') return -1;
    index = index * 10 + (pointer[i] - '0');
    if (index > 1000000000) return -1;
  }
  return index;
}

std::optional<std::string> read_file(const fs::path& path, Problems& problems) {
  auto fail = [&](int error) {
    problems.push_back(
        {"", "cannot read " + path.string() + ": " + std::generic_category().message(error)});
    return std::nullopt;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return fail(error);
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    return fail(EISDIR);
  }
  std::string text;
  char buffer[65536];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      ::close(fd);
      return fail(error);
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > kMaxFileBytes) {
      ::close(fd);
      problems.push_back({"", "cannot read " + path.string() + ": the file is larger than " +
                                  std::to_string(kMaxFileBytes) + " bytes"});
      return std::nullopt;
    }
  }
  ::close(fd);
  return text;
}

// "aliases": only the shape; check_aliases checks the names at registration.
AliasTable read_aliases(const json& value, Problems& problems) {
  AliasTable aliases;
  ObjectReader reader(value, "/aliases", problems);
  reader.reject_unknown(kAliasesFields);
  reader.string("$comment", false);
  if (const json* tools = reader.object("tools", false)) {
    for (const auto& [alias, target] : tools->items()) {
      if (!target.is_string()) {
        reader.add(reader.pointer("tools") + "/" + pointer_token(alias),
                   "expected a string (a tool name), got " + type_name(target));
        continue;
      }
      aliases.tools[alias] = target.get<std::string>();
    }
  }
  reader.object_members(
      "arguments", "argument alias: argument name",
      [&](const std::string& tool, const json& table, const std::string& tool_at) {
        auto& renames = aliases.arguments[tool];
        for (const auto& [alias, canonical] : table.items()) {
          if (!canonical.is_string()) {
            reader.add(tool_at + "/" + pointer_token(alias),
                       "expected a string (an argument name), got " + type_name(canonical));
            continue;
          }
          renames[alias] = canonical.get<std::string>();
        }
      });
  return aliases;
}

// "policy": only the shape; check_tool_policy checks the tools and arguments
// it names at registration.
ToolPolicy read_policy(const json& value, Problems& problems) {
  ToolPolicy policy;
  ObjectReader reader(value, "/policy", problems);
  reader.reject_unknown(kPolicyFields);
  reader.string("$comment", false);
  if (const json* arguments = reader.object("arguments", false)) {
    for (const auto& [tool, item] : arguments->items()) {
      const std::string tool_at = reader.pointer("arguments") + "/" + pointer_token(tool);
      if (!item.is_object()) {
        reader.add(tool_at,
                   "expected an object (\"defaults\" and \"fixed\"), got " + type_name(item));
        continue;
      }
      ObjectReader tool_reader(item, tool_at, problems);
      tool_reader.reject_unknown(kArgumentPolicyFields);
      tool_reader.string("$comment", false);
      ArgumentPolicy& argument_policy = policy.arguments[tool];
      if (const json* defaults = tool_reader.object("defaults", false)) {
        argument_policy.defaults = *defaults;
      }
      if (const json* fixed = tool_reader.object("fixed", false)) argument_policy.fixed = *fixed;
      for (const auto& [name, default_value] : argument_policy.defaults.items()) {
        if (!argument_policy.fixed.contains(name)) continue;
        tool_reader.add(
            tool_reader.pointer("defaults") + "/" + pointer_token(name),
            "argument " + json(name).dump() + " has both a default and a fixed value (" +
                tool_reader.pointer("fixed") + "/" + pointer_token(name) + "): give one");
      }
    }
  }
  if (const json* access = reader.object("access", false)) {
    for (const auto& [principal, item] : access->items()) {
      const std::string rule_at = reader.pointer("access") + "/" + pointer_token(principal);
      if (!item.is_object()) {
        reader.add(rule_at, "expected an object (\"allow\" and \"deny\"), got " + type_name(item));
        continue;
      }
      ObjectReader rule_reader(item, rule_at, problems);
      rule_reader.reject_unknown(kAccessRuleFields);
      rule_reader.string("$comment", false);
      AccessRule& rule = policy.access[principal];
      if (auto allow = rule_reader.strings("allow", false)) rule.allow = std::move(*allow);
      if (auto deny = rule_reader.strings("deny", false)) rule.deny = std::move(*deny);
    }
  }
  if (auto answer = reader.string("unknownTool", false)) {
    if (*answer == "error") {
      policy.unknown_tool = UnknownToolAnswer::protocol_error;
    } else if (*answer == "result") {
      policy.unknown_tool = UnknownToolAnswer::tool_result;
    } else {
      reader.add(reader.pointer("unknownTool"),
                 "unknownTool must be \"error\" or \"result\", not " + json(*answer).dump());
    }
  }
  return policy;
}

ResultLimits read_results(const json& value, Problems& problems) {
  ResultLimits limits;
  ObjectReader reader(value, "/results", problems);
  reader.reject_unknown(kResultsFields);
  reader.string("$comment", false);
  if (const json* chars = reader.field("maxTextChars", false)) {
    if (!chars->is_number_integer()) {
      reader.add(reader.pointer("maxTextChars"), "expected an integer, got " + type_name(*chars));
    } else if (chars->is_number_unsigned() &&
               chars->get<std::uint64_t>() >
                   static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      reader.add(reader.pointer("maxTextChars"),
                 "maxTextChars must be at most " +
                     std::to_string(std::numeric_limits<std::int64_t>::max()) + ", not " +
                     chars->dump());
    } else if (std::int64_t number = chars->get<std::int64_t>(); number == 0 || number < -1) {
      reader.add(reader.pointer("maxTextChars"),
                 "maxTextChars must be -1 (no truncation) or at least 1, not " + chars->dump());
    } else {
      limits.max_text_chars = number;
    }
  }
  if (auto offload = reader.boolean("offload")) limits.offload = *offload;
  if (auto threshold = reader.integer("offloadThresholdBytes", false, 1024,
                                      std::numeric_limits<std::uint64_t>::max())) {
    limits.offload_threshold_bytes = *threshold;
  }
  if (auto response = reader.integer("maxResponseBytes", false, kMinResponseBytes,
                                     std::numeric_limits<std::uint64_t>::max())) {
    limits.max_response_bytes = *response;
  }
  if (const json* hours = reader.field("retentionHours", false)) {
    if (!hours->is_number()) {
      reader.add(reader.pointer("retentionHours"), "expected a number, got " + type_name(*hours));
    } else if (double number = hours->get<double>();
               !(number > 0) || number > static_cast<double>(kMaxRetentionHours)) {
      reader.add(reader.pointer("retentionHours"),
                 "retentionHours must be more than 0 and at most " +
                     std::to_string(kMaxRetentionHours) + ", not " + hours->dump());
    } else {
      // Rounded to whole seconds, at least one.
      auto seconds = static_cast<std::int64_t>(std::llround(number * 3600.0));
      limits.retention = std::chrono::seconds(std::max<std::int64_t>(seconds, 1));
    }
  }
  if (auto store = reader.integer("storeMaxBytes", false, std::uint64_t{1} << 20,
                                  std::numeric_limits<std::uint64_t>::max())) {
    limits.store_max_bytes = *store;
  }
  return limits;
}

DiscoverySettings read_discovery(const json& value, Problems& problems) {
  DiscoverySettings discovery;
  ObjectReader reader(value, "/discovery", problems);
  reader.reject_unknown(kDiscoveryFields);
  reader.string("$comment", false);
  if (auto mode = reader.string("mode", false)) {
    if (*mode == "auto") {
      discovery.mode = DiscoverySettings::Mode::automatic;
    } else if (*mode == "on") {
      discovery.mode = DiscoverySettings::Mode::on;
    } else if (*mode == "off") {
      discovery.mode = DiscoverySettings::Mode::off;
    } else {
      reader.add(reader.pointer("mode"),
                 "mode must be \"auto\", \"on\" or \"off\", not " + json(*mode).dump());
    }
  }
  if (auto pinned = reader.strings("pinned", false)) discovery.pinned = std::move(*pinned);
  return discovery;
}

// "search": tool_search's field weights and query expansion. The file's
// synonyms add to the built-in list (an entry for a word the list has
// replaces it); "defaultSynonyms": false leaves the built-in list out.
SearchOptions read_search(const json& value, Problems& problems) {
  SearchOptions options;
  ObjectReader reader(value, "/search", problems);
  reader.reject_unknown(kSearchFields);
  reader.string("$comment", false);
  auto non_negative = [&](ObjectReader& r, std::string_view field, double& out) {
    const json* v = r.field(field, false);
    if (!v) return;
    if (!v->is_number() || v->get<double>() < 0 || v->get<double>() > 100) {
      r.add(r.pointer(field), "expected a number from 0 to 100, got " + v->dump());
      return;
    }
    out = v->get<double>();
  };
  if (const json* weights = reader.object("weights", false)) {
    ObjectReader w(*weights, reader.pointer("weights"), problems);
    w.reject_unknown(kWeightFields);
    non_negative(w, "name", options.name_weight);
    non_negative(w, "title", options.title_weight);
    non_negative(w, "description", options.description_weight);
    non_negative(w, "parameterNames", options.parameter_name_weight);
    non_negative(w, "parameterDescriptions", options.parameter_description_weight);
    non_negative(w, "enums", options.enum_weight);
  }
  if (const json* synonyms = reader.object("synonyms", false)) {
    for (const auto& [word, expansions] : synonyms->items()) {
      const std::string at = reader.pointer("synonyms") + "/" + pointer_token(word);
      std::vector<std::string> words;
      if (!expansions.is_array()) {
        reader.add(at, "expected an array of words, got " + type_name(expansions));
        continue;
      }
      for (const auto& e : expansions) {
        if (e.is_string() && !e.get_ref<const std::string&>().empty()) {
          words.push_back(e.get<std::string>());
        } else {
          reader.add(at, "expected an array of non-empty strings");
          break;
        }
      }
      std::string key = word;
      for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      options.synonyms[key] = std::move(words);
    }
  }
  if (auto use_defaults = reader.boolean("defaultSynonyms"))
    options.use_default_synonyms = *use_defaults;
  non_negative(reader, "expansionWeight", options.expansion_weight);
  return options;
}

bool strings_equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_variable_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_tool_name_text(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// One "env" value: a string, {"fromEnv": "VAR"} or {"fromFile": "path"}. The
// value itself never goes into a problem's message.
std::optional<std::string> read_env_value(const json& value, const std::string& at,
                                          const fs::path& folder, Problems& problems) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_object()) {
    problems.push_back({at, "expected a string or an object (\"fromEnv\" or \"fromFile\"), got " +
                                type_name(value)});
    return std::nullopt;
  }
  ObjectReader reader(value, at, problems);
  reader.reject_unknown(kSecretFields);
  if (value.size() != 1 || (!value.contains("fromEnv") && !value.contains("fromFile"))) {
    reader.add(at, "give exactly one of \"fromEnv\" and \"fromFile\"");
    return std::nullopt;
  }
  if (auto variable = reader.string("fromEnv", false)) {
    const char* found = std::getenv(variable->c_str());
    if (!found) {
      reader.add(reader.pointer("fromEnv"),
                 "toolmux's environment has no variable " + json(*variable).dump());
      return std::nullopt;
    }
    return std::string(found);
  }
  if (auto file = reader.string("fromFile", false)) {
    fs::path path(*file);
    if (path.is_relative()) path = folder / path;
    Problems read_problems;
    auto text = read_file(path, read_problems);
    if (!text) {
      reader.add(reader.pointer("fromFile"), read_problems.front().message);
      return std::nullopt;
    }
    if (text->size() > kMaxSecretFileBytes) {
      reader.add(reader.pointer("fromFile"), "the file " + path.string() + " is larger than " +
                                                 std::to_string(kMaxSecretFileBytes) + " bytes");
      return std::nullopt;
    }
    // A secret file usually ends with a newline that is not part of the value.
    if (!text->empty() && text->back() == '\n') text->pop_back();
    if (!text->empty() && text->back() == '\r') text->pop_back();
    return text;
  }
  return std::nullopt;
}

UpstreamToolOverride read_upstream_tool(const json& value, const std::string& at,
                                        Problems& problems) {
  UpstreamToolOverride change;
  ObjectReader reader(value, at, problems);
  reader.reject_unknown(kUpstreamToolFields);
  reader.string("$comment", false);
  change.name = reader.string("name", false);
  change.description = reader.string("description", false);
  if (auto effect = reader.string("sideEffect", false)) {
    if (!side_effect_from_name(*effect)) {
      reader.add(reader.pointer("sideEffect"),
                 "sideEffect must be \"read_only\", \"local_mutation\", \"remote_mutation\" or "
                 "\"destructive\", not " +
                     json(*effect).dump());
    } else {
      change.side_effect = *effect;
    }
  }
  if (auto timeout =
          reader.integer("timeoutMs", false, 1,
                         static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))) {
    change.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*timeout));
  }
  if (auto pinned = reader.boolean("pinned")) change.pinned = *pinned;
  return change;
}

std::optional<UpstreamSpec> read_upstream(const std::string& name, const json& value,
                                          const std::string& at, const fs::path& folder,
                                          Problems& problems) {
  const std::size_t before = problems.size();
  UpstreamSpec upstream;
  upstream.name = name;
  upstream.prefix = name + "_";
  if (name.empty() || name.size() > 64 || !is_tool_name_text(name)) {
    problems.push_back({at, "upstream name " + json(name).dump() +
                                ": use 1 to 64 ASCII letters, digits, '_', '-' or '.'"});
  }
  ObjectReader reader(value, at, problems);
  reader.reject_unknown(kUpstreamFields);
  reader.string("$comment", false);
  const bool has_url = value.contains("url");
  if (has_url && value.contains("command")) {
    reader.add(at,
               "give either \"command\" (a stdio server) or \"url\" (a Streamable HTTP "
               "server), not both");
  }
  if (has_url) {
    for (const char* field : {"args", "cwd", "env"}) {
      if (value.contains(field)) {
        reader.add(reader.pointer(field), std::string("\"") + field +
                                              "\" is for stdio servers (\"command\"), not \"url\"");
      }
    }
    if (auto url = reader.string("url", true)) {
      if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0) {
        reader.add(reader.pointer("url"),
                   "the url must start with http:// or https://, got " + json(*url).dump());
      }
      upstream.url = std::move(*url);
    }
  } else {
    for (const char* field : {"headers", "bearerToken"}) {
      if (value.contains(field)) {
        reader.add(reader.pointer(field),
                   std::string("\"") + field + "\" is for HTTP servers (\"url\"), not \"command\"");
      }
    }
    if (auto command = reader.string("command", true)) {
      if (command->empty()) {
        reader.add(reader.pointer("command"), "the command is empty");
      }
      upstream.argv.push_back(std::move(*command));
    }
  }
  if (const json* headers = reader.object("headers", false)) {
    for (const auto& [header, item] : headers->items()) {
      const std::string item_at = reader.pointer("headers") + "/" + pointer_token(header);
      if (header.empty() || !std::all_of(header.begin(), header.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
          })) {
        reader.add(item_at, "header name " + json(header).dump() + " is not a valid HTTP header");
        continue;
      }
      if (item.is_string() && (strings_equal_ignoring_case(header, "authorization") ||
                               strings_equal_ignoring_case(header, "cookie"))) {
        reader.add(item_at,
                   "a secret is never written in the catalog: give {\"fromEnv\": ...} "
                   "or {\"fromFile\": ...}, or \"bearerToken\"");
        continue;
      }
      if (auto resolved = read_env_value(item, item_at, folder, problems)) {
        upstream.headers.emplace_back(header, std::move(*resolved));
      }
    }
  }
  if (value.contains("bearerToken")) {
    const json& token = value["bearerToken"];
    if (token.is_string()) {
      reader.add(reader.pointer("bearerToken"),
                 "a secret is never written in the catalog: give {\"fromEnv\": \"VAR\"} or "
                 "{\"fromFile\": \"path\"}");
    } else if (auto resolved =
                   read_env_value(token, reader.pointer("bearerToken"), folder, problems)) {
      upstream.headers.emplace_back("Authorization", "Bearer " + *resolved);
    }
  }
  if (auto start = reader.string("start", false)) {
    if (*start == "lazy") {
      upstream.lifecycle.lazy = true;
    } else if (*start != "eager") {
      reader.add(reader.pointer("start"),
                 "start must be \"eager\" or \"lazy\", not " + json(*start).dump());
    }
  }
  constexpr std::uint64_t kMaxMs = 24ull * 3600 * 1000;
  if (auto ms = reader.integer("startTimeoutMs", false, 1, kMaxMs)) {
    upstream.lifecycle.start_timeout = std::chrono::milliseconds(*ms);
  }
  if (auto retries = reader.integer("readOnlyRetries", false, 0, 5)) {
    upstream.lifecycle.read_only_retries = static_cast<int>(*retries);
  }
  if (const json* restart = reader.object("restart", false)) {
    ObjectReader sub(*restart, reader.pointer("restart"), problems);
    sub.reject_unknown(kRestartFields);
    sub.string("$comment", false);
    if (auto ms = sub.integer("initialDelayMs", false, 1, kMaxMs)) {
      upstream.lifecycle.restart_initial = std::chrono::milliseconds(*ms);
    }
    if (auto ms = sub.integer("maxDelayMs", false, 1, kMaxMs)) {
      upstream.lifecycle.restart_max = std::chrono::milliseconds(*ms);
    }
    if (upstream.lifecycle.restart_max < upstream.lifecycle.restart_initial) {
      sub.add(sub.pointer("maxDelayMs"), "maxDelayMs is smaller than initialDelayMs");
    }
  }
  if (const json* breaker = reader.object("circuitBreaker", false)) {
    ObjectReader sub(*breaker, reader.pointer("circuitBreaker"), problems);
    sub.reject_unknown(kBreakerFields);
    sub.string("$comment", false);
    if (auto failures = sub.integer("failures", false, 1, 1000)) {
      upstream.lifecycle.breaker_failures = static_cast<int>(*failures);
    }
    if (auto ms = sub.integer("cooldownMs", false, 1, kMaxMs)) {
      upstream.lifecycle.breaker_cooldown = std::chrono::milliseconds(*ms);
    }
  }
  if (auto args = reader.strings("args", false)) {
    upstream.argv.insert(upstream.argv.end(), args->begin(), args->end());
  }
  if (auto cwd = reader.string("cwd", false)) {
    fs::path given(*cwd);
    fs::path resolved = (given.is_absolute() ? given : folder / given).lexically_normal();
    std::error_code ec;
    if (given.empty() || !fs::is_directory(resolved, ec)) {
      reader.add(reader.pointer("cwd"), "the working directory " + json(*cwd).dump() +
                                            " is not a directory (resolved to " +
                                            resolved.string() + ")");
    }
    upstream.cwd = resolved;
  }
  std::map<std::string, std::string> env;
  for (const auto& variable : kUpstreamInheritedEnv) {
    if (const char* found = std::getenv(variable.c_str())) env[variable] = found;
  }
  if (const json* given = reader.object("env", false)) {
    for (const auto& [variable, item] : given->items()) {
      const std::string item_at = reader.pointer("env") + "/" + pointer_token(variable);
      if (!is_variable_name(variable)) {
        reader.add(item_at, "variable name " + json(variable).dump() +
                                " does not match [A-Za-z_][A-Za-z0-9_]*");
        continue;
      }
      if (auto resolved = read_env_value(item, item_at, folder, problems)) {
        env[variable] = std::move(*resolved);
      }
    }
  }
  for (const auto& [variable, text] : env) upstream.env.push_back(variable + "=" + text);
  if (auto prefix = reader.string("prefix", false)) {
    if (prefix->size() > 64 || !is_tool_name_text(*prefix)) {
      reader.add(reader.pointer("prefix"),
                 "the prefix may hold at most 64 ASCII letters, digits, '_', '-' or '.'");
    }
    upstream.prefix = std::move(*prefix);
  }
  upstream.include = reader.strings("include", false);
  if (auto exclude = reader.strings("exclude", false)) upstream.exclude = std::move(*exclude);
  reader.object_members("tools", "what to change in the tool",
                        [&](const std::string& tool, const json& item, const std::string& tool_at) {
                          upstream.tools[tool] = read_upstream_tool(item, tool_at, problems);
                        });
  if (problems.size() != before) return std::nullopt;
  return upstream;
}

// "upstreams": {"<name>": {...}}, by name.
std::vector<UpstreamSpec> read_upstreams(const json& value, const fs::path& folder,
                                         Problems& problems) {
  std::vector<UpstreamSpec> upstreams;
  for (const auto& [name, item] : value.items()) {
    const std::string at = "/upstreams/" + pointer_token(name);
    if (!item.is_object()) {
      problems.push_back({at, "expected an object (an upstream server), got " + type_name(item)});
      continue;
    }
    if (auto upstream = read_upstream(name, item, at, folder, problems)) {
      upstreams.push_back(std::move(*upstream));
    }
  }
  return upstreams;
}

// Where a problem goes in the report: the whole document first, then the
// tools (by index), then aliases, policy and results.
std::pair<int, long> problem_order(std::string_view pointer) {
  auto under = [&](std::string_view section) {
    return pointer == section ||
           (pointer.rfind(section, 0) == 0 && pointer.size() > section.size() &&
            pointer[section.size()] == '/');
  };
  if (under("/tools")) return {1, tool_index(pointer)};
  if (under("/aliases")) return {2, 0};
  if (under("/policy")) return {3, 0};
  if (under("/results")) return {4, 0};
  if (under("/discovery")) return {5, 0};
  if (under("/search")) return {6, 0};
  if (under("/upstreams")) return {7, 0};
  return {0, 0};
}

}  // namespace

CatalogLoad load_catalog_file(const std::filesystem::path& path) {
  CatalogLoad load;
  Problems& problems = load.problems;
  auto text = read_file(path, problems);
  if (!text) return load;

  ParsedJson parsed = parse_untrusted_json(*text);
  if (parsed.syntax_error) {
    problems.push_back({"", *parsed.syntax_error});
    return load;
  }
  for (const auto& violation : parsed.violations) {
    problems.push_back({violation.pointer, violation.message});
  }
  const json& root = parsed.value;
  if (!root.is_object()) {
    problems.push_back({"", "expected an object with a \"tools\" array, got " + type_name(root)});
    return load;
  }

  std::error_code ec;
  fs::path folder = fs::absolute(path, ec).parent_path();

  ObjectReader top(root, "", problems);
  top.reject_unknown(kTopFields);
  top.string("$schema", false);
  top.string("$comment", false);
  if (const json* tools = top.field("tools", true)) {
    if (!tools->is_array()) {
      problems.push_back({"/tools", "expected an array, got " + type_name(*tools)});
    } else {
      std::map<std::string, std::size_t> first_use;
      for (std::size_t i = 0; i < tools->size(); ++i) {
        std::string base = "/tools/" + std::to_string(i);
        const json& item = (*tools)[i];
        if (!item.is_object()) {
          problems.push_back({base, "expected an object (a tool), got " + type_name(item)});
          continue;
        }
        auto tool = read_tool(item, base, folder, problems);
        auto name_it = item.find("name");
        if (name_it != item.end() && name_it->is_string()) {
          std::string name = name_it->get<std::string>();
          auto [it, fresh] = first_use.emplace(name, i);
          if (!fresh) {
            problems.push_back({base + "/name", "tool \"" + name +
                                                    "\": the name is already used by /tools/" +
                                                    std::to_string(it->second)});
            continue;
          }
        }
        if (tool) load.catalog.command_tools.push_back(std::move(*tool));
      }
    }
  }

  if (const json* aliases = top.object("aliases", false)) {
    load.catalog.aliases = read_aliases(*aliases, problems);
  }
  if (const json* policy = top.object("policy", false)) {
    load.catalog.policy = read_policy(*policy, problems);
  }
  if (const json* results = top.object("results", false)) {
    load.catalog.results = read_results(*results, problems);
  }
  if (const json* discovery = top.object("discovery", false)) {
    load.catalog.discovery = read_discovery(*discovery, problems);
  }
  if (const json* search = top.object("search", false)) {
    load.catalog.search = read_search(*search, problems);
  }
  if (const json* upstreams = top.object("upstreams", false)) {
    load.catalog.upstreams = read_upstreams(*upstreams, folder, problems);
  }

  // Whole-document problems first, then tool by tool, then the other sections;
  // the order they were found in within each.
  std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
    return problem_order(a.pointer) < problem_order(b.pointer);
  });
  if (!problems.empty()) load.catalog = CatalogFile{};
  return load;
}

Problems register_catalog(ToolRegistry& registry, const CatalogFile& catalog) {
  // Everything is checked before anything is added, so that a refused catalog
  // leaves the registry as it was.
  Problems problems;
  std::map<std::string, std::size_t> first_use;
  for (std::size_t i = 0; i < catalog.command_tools.size(); ++i) {
    const CommandTool& tool = catalog.command_tools[i];
    std::string base = "/tools/" + std::to_string(i);
    if (registry.find(tool.spec.name)) {
      problems.push_back({base + "/name", "tool \"" + tool.spec.name +
                                              "\": the name is already taken by a tool "
                                              "registered before the catalog"});
    } else if (auto [it, fresh] = first_use.emplace(tool.spec.name, i); !fresh) {
      problems.push_back({base + "/name", "tool \"" + tool.spec.name +
                                              "\": the name is already used by /tools/" +
                                              std::to_string(it->second)});
    }
    for (auto& problem : with_prefix(check_tool_spec(tool.spec), base)) {
      problems.push_back(std::move(problem));
    }
    for (auto& problem :
         with_prefix(check_command_spec(tool.command, tool.spec.input_schema), base + "/command")) {
      problems.push_back(std::move(problem));
    }
  }
  if (!problems.empty()) return problems;

  // Aliases and the policy may name built-in tools as well as the file's own,
  // so they are checked against both: a scratch registry holding what is
  // registered already plus the catalog's tools.
  bool names_tools = !catalog.aliases.tools.empty() || !catalog.aliases.arguments.empty() ||
                     !catalog.policy.arguments.empty();
  if (names_tools) {
    ToolRegistry everything;
    for (const auto& tool : registry.tools()) everything.add(tool->spec, tool->handler);
    for (const CommandTool& tool : catalog.command_tools) {
      everything.add(tool.spec, make_command_handler(tool.command));
    }
    // Names that may be an upstream's tools are checked once serve has listed
    // the upstreams (src/tool_catalog.cpp), not here.
    AliasTable aliases = catalog.aliases;
    ToolPolicy policy = catalog.policy;
    auto deferred = [&](const std::string& tool) {
      return !everything.find(tool) && may_be_upstream_tool(catalog.upstreams, tool);
    };
    std::erase_if(aliases.tools, [&](const auto& entry) { return deferred(entry.second); });
    std::erase_if(aliases.arguments, [&](const auto& entry) { return deferred(entry.first); });
    std::erase_if(policy.arguments, [&](const auto& entry) { return deferred(entry.first); });
    problems = check_aliases(aliases, everything);
    for (auto& problem : check_tool_policy(policy, everything)) {
      problems.push_back(std::move(problem));
    }
    if (!problems.empty()) return problems;
  }

  for (std::size_t i = 0; i < catalog.command_tools.size(); ++i) {
    const CommandTool& tool = catalog.command_tools[i];
    for (auto& problem : with_prefix(registry.add(tool.spec, make_command_handler(tool.command)),
                                     "/tools/" + std::to_string(i))) {
      problems.push_back(std::move(problem));
    }
  }
  return problems;
}

}  // namespace toolmux
