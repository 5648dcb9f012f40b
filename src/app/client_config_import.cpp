#include "src/app/client_config_import.h"

#include <cctype>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <system_error>

#include "src/base/file_io.h"
#include "src/base/terminal_text.h"
#include "src/base/untrusted_json.h"

namespace toolmux {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxNameBytes = 64;  // an upstream's name in the catalog

// Fields of a server entry that the import reads; anything else is noted as
// ignored ("disabled" and "type" are read too).
const std::set<std::string, std::less<>> kEntryFields = {
    "command", "args", "env", "envFile", "url", "headers", "cwd", "type", "disabled"};

std::string upper_identifier(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) != 0 ? static_cast<char>(std::toupper(u)) : '_';
  }
  return out;
}

// The client's server name as a catalog upstream name: 1 to 64 ASCII letters,
// digits, '_', '-', '.'.
std::string upstream_name_for(std::string_view client_name) {
  std::string out;
  for (const char c : client_name) {
    const auto u = static_cast<unsigned char>(c);
    const bool allowed = std::isalnum(u) != 0 || c == '_' || c == '-' || c == '.';
    if (out.size() < kMaxNameBytes) out += allowed && u < 0x80 ? c : '-';
  }
  if (out.empty()) out = "server";
  return out;
}

bool variable_name_ok(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return false;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

// "${<kind>:X}" exactly (the client's variable syntax): X; else nullopt.
std::optional<std::string> whole_variable(const std::string& value, std::string_view kind) {
  const std::string open = "${" + std::string(kind) + ":";
  if (value.size() <= open.size() + 1 || value.compare(0, open.size(), open) != 0 ||
      value.back() != '}') {
    return std::nullopt;
  }
  return value.substr(open.size(), value.size() - open.size() - 1);
}

// "${env:NAME}" exactly, NAME a variable name: NAME; else nullopt.
std::optional<std::string> whole_env_reference(const std::string& value) {
  auto name = whole_variable(value, "env");
  if (!name || !variable_name_ok(*name)) return std::nullopt;
  return name;
}

bool header_name_ok(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '_') return false;
  }
  return true;
}

bool is_authorization(std::string_view name) {
  constexpr std::string_view kName = "authorization";
  if (name.size() != kName.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) != kName[i]) return false;
  }
  return true;
}

// One server entry read: its upstream, or why it was left out.
class EntryReader {
 public:
  // `inputs`: VS Code's inputs, id -> what the user is asked.
  EntryReader(ClientConfigImport& result, std::set<std::string>& variable_names,
              const std::map<std::string, std::string>& inputs)
      : result_(result), variable_names_(variable_names), inputs_(inputs) {}

  void read(const std::string& client_name, const std::string& upstream_name, const json& entry,
            const std::string& pointer) {
    name_ = client_name;
    upstream_name_ = upstream_name;
    pointer_ = pointer;
    if (!entry.is_object()) {
      problem(pointer, "a server is an object, not " + std::string(entry.type_name()));
      return;
    }
    const auto disabled = entry.find("disabled");
    if (disabled != entry.end() && !disabled->is_boolean()) {
      problem(pointer + "/disabled", "\"disabled\" must be true or false");
      return;
    }
    const bool is_disabled = disabled != entry.end() && disabled->get<bool>();
    std::string type;
    if (const auto t = entry.find("type"); t != entry.end()) {
      if (!t->is_string()) {
        problem(pointer + "/type", "\"type\" must be a string");
        return;
      }
      type = t->get<std::string>();
    }
    const bool has_command = entry.contains("command");
    const bool has_url = entry.contains("url");
    if (has_command == has_url) {
      problem(pointer, has_command ? "a server has \"command\" or \"url\", not both"
                                   : "a server needs \"command\" (stdio) or \"url\" (HTTP)");
      return;
    }
    json upstream = json::object();
    std::optional<std::string> unsupported;
    if (has_command) {
      if (!type.empty() && type != "stdio") {
        problem(pointer + "/type", "\"type\" \"" + type + "\" does not go with \"command\"");
        return;
      }
      if (!read_stdio(entry, upstream, unsupported)) return;
    } else {
      if (type == "sse") {
        unsupported =
            "its \"type\" is \"sse\" (HTTP with server-sent events, the 2024-11-05 transport); "
            "toolmux reaches HTTP servers over Streamable HTTP only";
      } else if (!type.empty() && type != "http" && type != "streamable-http") {
        problem(pointer + "/type", "\"type\" \"" + type + "\" does not go with \"url\"");
        return;
      }
      if (!read_http(entry, upstream, unsupported)) return;
    }
    for (const auto& [field, value] : entry.items()) {
      if (kEntryFields.count(field) == 0) {
        ignored_.push_back("\"" + name_ + "\": ignored its field \"" + field + "\"");
      }
    }
    if (is_disabled) {
      result_.disabled.push_back({name_, "disabled in the client's configuration"});
      return;
    }
    if (unsupported) {
      result_.unsupported.push_back({name_, *unsupported});
      return;
    }
    // Only now: a server left out sets no variables.
    for (auto& [field, references] : pending_) {
      if (references.empty()) continue;
      json& section = upstream[field];
      for (auto& [key, variable] : references) {
        section[key] = json{{"fromEnv", variable.name}};
        if (!variable.already_referenced) variable_names_.insert(variable.name);
        result_.variables.push_back(std::move(variable));
      }
    }
    if (bearer_) {
      upstream["bearerToken"] = json{{"fromEnv", bearer_->name}};
      result_.variables.push_back(std::move(*bearer_));
    }
    result_.upstreams[upstream_name_] = std::move(upstream);
    result_.imported.push_back(name_);
    result_.notes.insert(result_.notes.end(), ignored_.begin(), ignored_.end());
  }

  bool failed() const { return failed_; }

 private:
  void problem(const std::string& pointer, std::string message) {
    result_.problems.push_back({pointer, std::move(message)});
    failed_ = true;
  }

  // A string that the client would interpolate and toolmux cannot: why not.
  std::optional<std::string> interpolation(const std::string& value,
                                           const std::string& pointer) const {
    if (value.find("${") == std::string::npos) return std::nullopt;
    return pointer.substr(pointer_.size()) + " holds \"" + value +
           "\", a variable only the client resolves";
  }

  bool read_string(const json& entry, const char* field, std::string& out) {
    const json& value = entry.at(field);
    if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
      problem(pointer_ + "/" + field, std::string("\"") + field + "\" must be a non-empty string");
      return false;
    }
    out = value.get<std::string>();
    return true;
  }

  bool read_stdio(const json& entry, json& upstream, std::optional<std::string>& unsupported) {
    std::string command;
    if (!read_string(entry, "command", command)) return false;
    if (!unsupported) unsupported = interpolation(command, pointer_ + "/command");
    upstream["command"] = command;
    if (const auto args = entry.find("args"); args != entry.end()) {
      if (!args->is_array()) {
        problem(pointer_ + "/args", "\"args\" must be an array of strings");
        return false;
      }
      for (std::size_t i = 0; i < args->size(); ++i) {
        const std::string at = pointer_ + "/args/" + std::to_string(i);
        if (!(*args)[i].is_string()) {
          problem(at, "an argument must be a string");
          return false;
        }
        if (!unsupported) unsupported = interpolation((*args)[i].get<std::string>(), at);
      }
      if (!args->empty()) upstream["args"] = *args;
    }
    if (const auto cwd = entry.find("cwd"); cwd != entry.end()) {
      std::string dir;
      if (!read_string(entry, "cwd", dir)) return false;
      if (!unsupported) unsupported = interpolation(dir, pointer_ + "/cwd");
      if (!unsupported && dir.front() != '/') {
        unsupported = "its \"cwd\" \"" + dir +
                      "\" is relative, and toolmux would take it relative to the catalog's "
                      "folder, not the client's";
      }
      upstream["cwd"] = dir;
    }
    if (entry.contains("envFile") && !unsupported) {
      unsupported =
          "it has \"envFile\", which toolmux does not read; move those variables into \"env\" "
          "and import again";
    }
    return read_values(entry, "env", unsupported);
  }

  bool read_http(const json& entry, json& upstream, std::optional<std::string>& unsupported) {
    std::string url;
    if (!read_string(entry, "url", url)) return false;
    if (!unsupported) unsupported = interpolation(url, pointer_ + "/url");
    if (!unsupported && url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      unsupported = "its \"url\" does not start with http:// or https://";
    }
    upstream["url"] = url;
    for (const char* stdio_only : {"args", "env", "envFile", "cwd"}) {
      if (entry.contains(stdio_only)) {
        problem(pointer_ + "/" + stdio_only,
                std::string("\"") + stdio_only + "\" is for servers with \"command\", not \"url\"");
        return false;
      }
    }
    return read_values(entry, "headers", unsupported);
  }

  // "env" or "headers": each value becomes a variable's reference.
  bool read_values(const json& entry, const char* field, std::optional<std::string>& unsupported) {
    const auto values = entry.find(field);
    if (values == entry.end()) return true;
    const std::string at = pointer_ + "/" + field;
    if (!values->is_object()) {
      problem(at, std::string("\"") + field + "\" must be an object");
      return false;
    }
    const bool headers = std::string_view(field) == "headers";
    auto& references = pending_[field];
    for (const auto& [key, value] : values->items()) {
      const std::string key_at = at + "/" + pointer_token(key);
      if (value.is_null()) {
        // VS Code: null unsets an inherited variable; toolmux passes only a few.
        ignored_.push_back("\"" + name_ + "\": ignored " + key_at.substr(pointer_.size()) +
                           " (null: toolmux does not pass that variable anyway)");
        continue;
      }
      if (!value.is_string() && !value.is_number() && !value.is_boolean()) {
        problem(key_at, "a value must be a string");
        return false;
      }
      if (headers ? !header_name_ok(key) : !variable_name_ok(key)) {
        if (!unsupported) {
          unsupported = std::string(headers ? "the header name" : "the variable name") + " \"" +
                        key + "\" is not one toolmux can " + (headers ? "send" : "set");
        }
        continue;
      }
      ImportedVariable variable;
      variable.source = key_at;
      if (headers && value.is_string() && is_authorization(key)) {
        // "Bearer ${env:NAME}": the token alone is in NAME, as bearerToken reads it.
        const std::string text = value.get<std::string>();
        constexpr std::string_view kBearer = "Bearer ";
        if (text.compare(0, kBearer.size(), kBearer) == 0) {
          if (auto token = whole_env_reference(text.substr(kBearer.size()))) {
            variable.name = std::move(*token);
            variable.already_referenced = true;
            bearer_ = std::move(variable);
            continue;
          }
        }
      }
      const auto existing =
          value.is_string() ? whole_env_reference(value.get<std::string>()) : std::nullopt;
      if (existing) {
        variable.name = *existing;
        variable.already_referenced = true;
      } else {
        variable.name = unique_variable("TOOLMUX_" + upper_identifier(upstream_name_) + "_" +
                                        upper_identifier(key));
        if (value.is_string()) variable.input = input_asked(value.get<std::string>());
      }
      references.emplace_back(key, std::move(variable));
    }
    return true;
  }

  // For "${input:ID}": what VS Code asks the user (the input's description,
  // else its id); "" for any other value.
  std::string input_asked(const std::string& value) const {
    const auto id = whole_variable(value, "input");
    if (!id) return "";
    const auto found = inputs_.find(*id);
    return found == inputs_.end() || found->second.empty() ? *id : found->second;
  }

  std::string unique_variable(const std::string& wanted) {
    std::string name = wanted;
    for (int n = 2; variable_names_.count(name) != 0 || taken_here(name); ++n) {
      name = wanted + "_" + std::to_string(n);
    }
    return name;
  }

  bool taken_here(const std::string& name) const {
    for (const auto& [field, references] : pending_) {
      for (const auto& [key, variable] : references) {
        if (variable.name == name) return true;
      }
    }
    return false;
  }

  ClientConfigImport& result_;
  std::set<std::string>& variable_names_;
  const std::map<std::string, std::string>& inputs_;
  std::string name_;
  std::string upstream_name_;
  std::string pointer_;
  bool failed_ = false;
  std::map<std::string, std::vector<std::pair<std::string, ImportedVariable>>> pending_;
  std::vector<std::string> ignored_;
  std::optional<ImportedVariable> bearer_;  // from "Authorization": "Bearer ${env:NAME}"
};

ClientFormat detect_format(const json& config) {
  if (!config.contains("mcpServers") && config.contains("servers")) return ClientFormat::vscode;
  const auto servers = config.find("mcpServers");
  if (servers != config.end() && servers->is_object()) {
    for (const auto& [name, entry] : servers->items()) {
      if (!entry.is_object()) continue;
      for (const char* field : {"url", "headers", "type", "envFile"}) {
        if (entry.contains(field)) return ClientFormat::cursor;
      }
    }
  }
  return ClientFormat::claude;
}

const char* servers_key(ClientFormat format) {
  return format == ClientFormat::vscode ? "servers" : "mcpServers";
}

}  // namespace

std::optional<ClientFormat> client_format_from_name(std::string_view name) {
  if (name == "claude") return ClientFormat::claude;
  if (name == "cursor") return ClientFormat::cursor;
  if (name == "vscode") return ClientFormat::vscode;
  return std::nullopt;
}

std::string client_format_title(ClientFormat format) {
  switch (format) {
    case ClientFormat::claude:
      return "Claude Desktop's configuration (claude_desktop_config.json)";
    case ClientFormat::cursor:
      return "Cursor's configuration (mcp.json)";
    case ClientFormat::vscode:
      return "VS Code's configuration (mcp.json)";
  }
  return "";
}

std::string jsonc_to_json(std::string_view text) {
  std::string out(text);
  enum class State { code, string, escape, line_comment, block_comment };
  State state = State::code;
  // The last comma seen in code, while only spaces and comments follow it.
  constexpr std::size_t kNone = std::string::npos;
  std::size_t comma = kNone;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    switch (state) {
      case State::string:
        if (c == '\\') state = State::escape;
        if (c == '"') state = State::code;
        break;
      case State::escape:
        state = State::string;
        break;
      case State::line_comment:
        if (c == '\n') {
          state = State::code;
        } else {
          out[i] = ' ';
        }
        break;
      case State::block_comment:
        if (c == '*' && i + 1 < out.size() && out[i + 1] == '/') {
          out[i] = ' ';
          out[++i] = ' ';
          state = State::code;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case State::code:
        if (c == '/' && i + 1 < out.size() && (out[i + 1] == '/' || out[i + 1] == '*')) {
          state = out[i + 1] == '/' ? State::line_comment : State::block_comment;
          out[i] = ' ';
          out[++i] = ' ';
        } else if (c == ',') {
          comma = i;
        } else if ((c == '}' || c == ']') && comma != kNone) {
          out[comma] = ' ';
          comma = kNone;
        } else if (c == '"') {
          state = State::string;
          comma = kNone;
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
          comma = kNone;
        }
        break;
    }
  }
  return out;
}

ClientConfigImport import_client_config(std::string_view text, std::optional<ClientFormat> format) {
  ClientConfigImport result;
  if (text.size() > kMaxClientConfigBytes) {
    result.problems.push_back({"", "the configuration is larger than " +
                                       std::to_string(kMaxClientConfigBytes / 1024) +
                                       " KiB; no client writes one that large"});
    return result;
  }
  // VS Code's file allows comments and trailing commas; a file that does not
  // say which it is may be either, so comments are allowed until the format is known.
  const bool plain = format && *format != ClientFormat::vscode;
  const std::string json_text = plain ? std::string(text) : jsonc_to_json(text);
  JsonLimits limits;
  limits.max_depth = kMaxClientConfigDepth;
  // Deeper than max_depth is reported at its pointer; past hard_depth the
  // text is not read further.
  limits.hard_depth = 2 * kMaxClientConfigDepth;
  limits.max_values = 100'000;
  ParsedJson parsed = parse_untrusted_json(json_text, limits);
  if (parsed.syntax_error) {
    result.problems.push_back({"", *parsed.syntax_error});
    return result;
  }
  for (const JsonViolation& violation : parsed.violations) {
    result.problems.push_back({violation.pointer, violation.message});
  }
  if (!result.problems.empty()) return result;
  const json& config = parsed.value;
  if (!config.is_object()) {
    result.problems.push_back({"", "a client configuration is a JSON object"});
    return result;
  }
  result.format = format ? *format : detect_format(config);
  const char* key = servers_key(result.format);
  const auto servers = config.find(key);
  if (servers == config.end() || !servers->is_object()) {
    result.problems.push_back(
        {servers == config.end() ? "" : std::string("/") + key,
         std::string(servers == config.end() ? "no " : "") + "\"" + key + "\"" +
             (servers == config.end()
                  ? " object: " + client_format_title(result.format) + " lists its servers there"
                  : " must be an object of servers by name")});
    return result;
  }
  // A name the catalog can hold is kept; another is changed to one no
  // server has.
  std::set<std::string> upstream_names;
  for (const auto& [client_name, entry] : servers->items()) {
    if (upstream_name_for(client_name) == client_name) upstream_names.insert(client_name);
  }
  std::set<std::string> variable_names;
  std::map<std::string, std::string> inputs;  // VS Code's "inputs": id -> description
  if (const auto list = config.find("inputs"); list != config.end() && list->is_array()) {
    for (const json& input : *list) {
      if (!input.is_object() || !input.contains("id") || !input["id"].is_string()) continue;
      const auto description = input.find("description");
      inputs[input["id"].get<std::string>()] =
          description != input.end() && description->is_string() ? description->get<std::string>()
                                                                 : "";
    }
  }
  for (const auto& [client_name, entry] : servers->items()) {
    std::string name = upstream_name_for(client_name);
    if (name != client_name) {
      const std::string wanted = name;
      for (int n = 2; upstream_names.count(name) != 0; ++n) {
        name = wanted.substr(0, kMaxNameBytes - 1 - std::to_string(n).size()) + "-" +
               std::to_string(n);
      }
      upstream_names.insert(name);
    }
    EntryReader reader(result, variable_names, inputs);
    reader.read(client_name, name, entry,
                std::string("/") + key + "/" + pointer_token(client_name));
    if (!reader.failed() && name != client_name && result.upstreams.contains(name)) {
      result.notes.push_back("\"" + client_name + "\" is the upstream \"" + name +
                             "\" (an upstream name is ASCII letters, digits, '_', '-', '.')");
    }
  }
  if (!result.problems.empty()) {
    const Problems problems = std::move(result.problems);
    result = ClientConfigImport{};
    result.problems = problems;
  }
  return result;
}

nlohmann::ordered_json imported_catalog(const ClientConfigImport& imported,
                                        const std::string& schema_ref) {
  // The fields in the order a reader looks for them.
  static const std::vector<std::string> kOrder = {"command", "args",    "cwd",        "env",
                                                  "url",     "headers", "bearerToken"};
  nlohmann::ordered_json upstreams = nlohmann::ordered_json::object();
  for (const auto& [name, upstream] : imported.upstreams.items()) {
    nlohmann::ordered_json ordered = nlohmann::ordered_json::object();
    for (const std::string& field : kOrder) {
      if (upstream.contains(field)) ordered[field] = upstream[field];
    }
    upstreams[name] = std::move(ordered);
  }
  nlohmann::ordered_json catalog = nlohmann::ordered_json::object();
  if (!schema_ref.empty()) catalog["$schema"] = schema_ref;
  catalog["$comment"] = "Written by toolmux import from " + client_format_title(imported.format) +
                        ". Secrets are read from the environment (fromEnv).";
  catalog["tools"] = nlohmann::ordered_json::array();
  catalog["upstreams"] = std::move(upstreams);
  return catalog;
}

nlohmann::ordered_json toolmux_client_config(ClientFormat format, const std::string& toolmux_path,
                                             const std::vector<std::string>& args) {
  nlohmann::ordered_json entry = nlohmann::ordered_json::object();
  if (format == ClientFormat::vscode) entry["type"] = "stdio";
  entry["command"] = toolmux_path;
  entry["args"] = args;
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  config[servers_key(format)]["toolmux"] = std::move(entry);
  return config;
}

int run_import(const ImportOptions& options, std::ostream& out, std::ostream& err) {
  // What reaches the terminal from the configuration (names, commands,
  // descriptions, pointers into it) can hold escape sequences and newlines:
  // each is shown as its escape (src/base/terminal_text.h), so none can clear
  // the screen or forge a line. The catalog written keeps the real text.
  const std::string input = terminal_text(options.input.string());
  Result<std::string> text = read_regular_file(options.input, kMaxClientConfigBytes);
  if (!text.ok()) {
    err << "toolmux: "
        << terminal_text(text.status().is_resource_exhausted()
                             ? options.input.string() + " is larger than " +
                                   std::to_string(kMaxClientConfigBytes / 1024) +
                                   " KiB; no client writes one that large"
                             : text.message())
        << "\n";
    return 1;
  }
  const ClientConfigImport imported = import_client_config(*text, options.format);
  if (!imported.problems.empty()) {
    err << "toolmux: " << input << ": " << imported.problems.size()
        << (imported.problems.size() == 1 ? " problem" : " problems") << ", nothing imported\n";
    for (const Problem& problem : imported.problems) {
      err << "  "
          << terminal_text((problem.pointer.empty() ? "" : problem.pointer + ": ") +
                           problem.message)
          << "\n";
    }
    return 1;
  }
  const std::filesystem::path catalog_path =
      std::filesystem::absolute(options.out).lexically_normal();
  const std::string catalog_shown = terminal_text(catalog_path.string());
  const nlohmann::ordered_json catalog = imported_catalog(imported, options.schema_ref);
  const std::string catalog_text = catalog.dump(2) + "\n";
  if (!options.dry_run) {
    std::error_code ec;
    if (std::filesystem::exists(catalog_path, ec) && !options.force) {
      err << "toolmux: " << terminal_text(options.out.string())
          << " exists; give --force to replace it, or --out another file\n";
      return 1;
    }
    // Without --force, a file made there meanwhile is kept too.
    AtomicWriteOptions how;
    how.replace = options.force;
    if (Status written = write_file_atomically(catalog_path, catalog_text, how); !written.ok()) {
      err << "toolmux: " << terminal_text(written.message()) << "\n";
      return 1;
    }
  }

  out << "Read " << input << " as " << client_format_title(imported.format) << ": "
      << imported.imported.size() << " of "
      << imported.imported.size() + imported.disabled.size() + imported.unsupported.size()
      << " servers imported.\n";
  for (const std::string& name : imported.imported) {
    out << "  imported: " << terminal_text(name) << "\n";
  }
  for (const LeftOutServer& server : imported.disabled) {
    out << "  skipped: " << terminal_text(server.name) << " (" << terminal_text(server.reason)
        << ")\n";
  }
  for (const LeftOutServer& server : imported.unsupported) {
    out << "  not imported: " << terminal_text(server.name) << ": " << terminal_text(server.reason)
        << "\n";
  }
  for (const std::string& note : imported.notes) out << "  note: " << terminal_text(note) << "\n";
  if (!imported.unsupported.empty()) {
    out << "Keep the servers not imported in your client's configuration beside toolmux.\n";
  }
  if (!imported.variables.empty()) {
    out << "\nSet these variables where toolmux runs (the values are those at the places "
           "named, in "
        << input << "):\n";
    for (const ImportedVariable& variable : imported.variables) {
      out << "  " << terminal_text(variable.name) << "  " << terminal_text(variable.source)
          << (variable.already_referenced ? " (the client read it from this variable too)" : "")
          << (variable.input.empty()
                  ? ""
                  : " (the client asked for it: \"" + terminal_text(variable.input) + "\")")
          << "\n";
    }
  }
  if (options.dry_run) {
    out << "\nThe catalog (--dry-run: not written to " << catalog_shown << "):\n"
        << terminal_json(catalog_text);
  } else {
    out << "\nWrote " << catalog_shown << " (" << imported.upstreams.size()
        << (imported.upstreams.size() == 1 ? " upstream" : " upstreams")
        << "); check it with: toolmux check " << catalog_shown << "\n";
  }
  out << "\nIn your client's configuration, this one entry replaces the servers imported:\n"
      << terminal_json(toolmux_client_config(imported.format, options.toolmux_path,
                                             {"serve", "--catalog", catalog_path.string()})
                           .dump(2))
      << "\n";
  return 0;
}

}  // namespace toolmux
