#include "src/app/doctor.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "catalog/catalog_file.h"
#include "catalog/catalog_file_reader.h"
#include "src/app/shared_store.h"
#include "src/app/upstream_login.h"
#include "src/assembly/tool_catalog.h"
#include "src/base/file_io.h"
#include "src/base/process_runner.h"
#include "src/base/random_id.h"
#include "src/base/redact.h"
#include "src/base/terminal_text.h"
#include "src/base/untrusted_json.h"
#include "src/store/lazy_result_store.h"
#include "src/store/pg_store.h"
#include "src/store/upstream_logins.h"
#include "transports/oauth_client.h"

namespace toolmux {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

DoctorCheck ok(std::string text) { return {true, std::move(text), {}}; }
DoctorCheck problem(std::string text) { return {false, std::move(text), {}}; }

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// "1 upstream MCP server", "2 upstream MCP servers".
std::string count_of(std::size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

bool is_executable_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

DoctorCheck catalog_check(const ServeOptions& options, const std::vector<NativeTool>& native) {
  if (options.catalog_file.empty()) {
    return ok("no catalog file given (--catalog FILE): the built-in tools only");
  }
  const std::string file = options.catalog_file.string();
  Problems problems;
  const auto catalog = build_catalog(options, nullptr, problems, native);
  if (!catalog) {
    DoctorCheck check =
        problem("catalog " + file + " has " + count_of(problems.size(), "problem") +
                "; fix each at its place (toolmux check " + file + " lists them too):");
    for (const Problem& p : problems) {
      check.details.push_back((p.pointer.empty() ? "" : p.pointer + ": ") + p.message);
    }
    return check;
  }
  return ok("catalog " + file +
            " is valid: " + count_of(catalog->command_tool_count, "command tool") + ", " +
            count_of(catalog->declared_upstreams, "upstream MCP server"));
}

// The catalog file as JSON, for the checks that look into it; null when it
// cannot be read (the catalog check has said why).
json read_catalog_json(const fs::path& file) {
  Result<std::string> text = read_regular_file(file, catalog_file::kMaxFileBytes);
  if (!text.ok()) return nullptr;
  ParsedJson parsed = parse_untrusted_json(*text);
  if (!parsed.ok() || !parsed.value.is_object()) return nullptr;
  return std::move(parsed.value);
}

fs::path resolve_against(const fs::path& base, const std::string& path) {
  const fs::path p(path);
  return (p.is_absolute() || base.empty() ? p : base / p).lexically_normal();
}

DoctorCheck command_check(const std::string& name, const json& upstream, const fs::path& folder) {
  const std::string at = "/upstreams/" + pointer_token(name) + "/command";
  const std::string command = upstream["command"].get<std::string>();
  std::string path;
  if (const auto env = upstream.find("env"); env != upstream.end() && env->is_object() &&
                                             env->contains("PATH") && (*env)["PATH"].is_string()) {
    path = (*env)["PATH"].get<std::string>();
  } else if (const char* own = std::getenv("PATH")) {
    path = own;
  }
  fs::path cwd;
  if (const auto dir = upstream.find("cwd"); dir != upstream.end() && dir->is_string()) {
    cwd = resolve_against(folder, dir->get<std::string>());
  }
  const std::string upstream_name = "upstream " + quoted(name);
  if (command.find('/') != std::string::npos) {
    const fs::path program = resolve_against(cwd, command);
    if (is_executable_file(program)) {
      return ok(upstream_name + ": command " + program.string() + " is executable");
    }
    std::error_code ec;
    const bool exists = fs::exists(program, ec);
    return problem(upstream_name + ": command " + program.string() +
                   (exists ? " is not an executable file; make it one (chmod +x) or fix " + at
                           : " does not exist; install it or fix " + at));
  }
  if (const auto found = find_program(command, path, cwd)) {
    return ok(upstream_name + ": command " + quoted(command) + " is " + *found);
  }
  return problem(upstream_name + ": command " + quoted(command) +
                 " is not found in PATH; install it, or give its absolute path at " + at);
}

// Every {"fromEnv": ...} and {"fromFile": ...} in the file, by pointer, in order.
void collect_references(const json& document,
                        std::vector<std::pair<std::string, const json*>>& out) {
  std::vector<std::pair<std::string, const json*>> stack{{"", &document}};
  while (!stack.empty()) {
    auto [pointer, value] = std::move(stack.back());
    stack.pop_back();
    if (value->is_object()) {
      if (value->size() == 1 && (value->contains("fromEnv") || value->contains("fromFile"))) {
        out.emplace_back(pointer, value);
        continue;
      }
      std::vector<std::pair<std::string, const json*>> children;
      for (const auto& [key, child] : value->items()) {
        children.emplace_back(pointer + "/" + pointer_token(key), &child);
      }
      stack.insert(stack.end(), children.rbegin(), children.rend());
    } else if (value->is_array()) {
      for (std::size_t i = value->size(); i-- > 0;) {
        stack.emplace_back(pointer + "/" + std::to_string(i), &(*value)[i]);
      }
    }
  }
}

void reference_checks(const json& catalog, const fs::path& folder, std::vector<DoctorCheck>& out) {
  std::vector<std::pair<std::string, const json*>> references;
  collect_references(catalog, references);
  std::map<std::string, bool> seen;  // a variable or file checked once
  for (const auto& [pointer, reference] : references) {
    if (const auto variable = reference->find("fromEnv"); variable != reference->end()) {
      if (!variable->is_string()) continue;  // the catalog check reports it
      const std::string name = variable->get<std::string>();
      if (!seen.emplace("env " + name, true).second) continue;
      if (std::getenv(name.c_str()) != nullptr) {
        out.push_back(ok("variable " + name + " is set (" + pointer + ")"));
      } else {
        out.push_back(problem("variable " + name + " is not set (" + pointer +
                              "); set it in the environment toolmux runs in (a client's "
                              "configuration: the toolmux entry's \"env\")"));
      }
      continue;
    }
    const json& file = (*reference)["fromFile"];
    if (!file.is_string()) continue;
    const fs::path path = resolve_against(folder, file.get<std::string>());
    if (!seen.emplace("file " + path.string(), true).second) continue;
    // Read as serve reads it (only a regular file, within its bound), never shown.
    const Result<std::string> text = read_regular_file(path, catalog_file::kMaxSecretFileBytes);
    if (text.ok()) {
      out.push_back(ok("file " + path.string() + " is readable (" + pointer + ")"));
    } else if (text.status().is_not_found()) {
      out.push_back(problem("file " + path.string() + " does not exist (" + pointer +
                            "); create it, or fix the path"));
    } else {
      out.push_back(problem(text.message() + " (" + pointer +
                            "); make it a regular file that toolmux's user can read"));
    }
  }
}

DoctorCheck data_dir_check(const ServeOptions& options) {
  const fs::path dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  const std::string where = "data directory " + dir.string();
  const std::string elsewhere = " or give --data-dir another folder";
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      return problem(where + " is not a directory; remove it" + elsewhere);
    }
    // A file of a fresh name that no one else can have made (file_io.h).
    const fs::path probe = dir / (".toolmux-doctor-" + random_id(9));
    AtomicWriteOptions how;
    how.replace = false;
    if (!write_file_atomically(probe, "x", how).ok()) {
      return problem(where + " cannot be written; let toolmux's user write to it" + elsewhere);
    }
    fs::remove(probe, ec);
    return ok(where + " is writable (several servers may share it)");
  }
  fs::path parent = dir.parent_path();
  while (!parent.empty() && !fs::exists(parent, ec)) {
    if (parent == parent.parent_path()) break;
    parent = parent.parent_path();
  }
  if (!parent.empty() && fs::is_directory(parent, ec) &&
      ::access(parent.c_str(), W_OK | X_OK) == 0) {
    return ok(where + " does not exist yet; serve creates it (in " + parent.string() + ")");
  }
  return problem(where + " does not exist and cannot be created in " + parent.string() +
                 "; create it" + elsewhere);
}

DoctorCheck store_check(const ServeOptions& options) {
  Result<std::string> url = store_connection_string(options);
  if (!url.ok()) return problem("store: " + url.message());
  PgStoreOptions store;
  store.conninfo = std::move(*url);
  Result<PgStore::Probe> probe = PgStore::probe(store);
  if (!probe.ok()) {
    return problem("store: " + probe.message() +
                   (probe.status().is_unavailable()
                        ? "; start the server, or fix the connection string"
                        : ""));
  }
  const std::string where = "store: PostgreSQL at " + probe->target;
  if (probe->schema_version == 0) {
    return ok(where + " is reachable; serve makes its tables on first start");
  }
  return ok(where + " is reachable (schema version " + std::to_string(probe->schema_version) + ")");
}

DoctorCheck http_check(const ServeOptions& options) {
  const std::string address =
      (options.http_host.find(':') != std::string::npos ? "[" + options.http_host + "]"
                                                        : options.http_host) +
      ":" + std::to_string(options.http_port);
  if (options.http_port == 0) return ok("HTTP " + address + ": port 0, serve picks a free port");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options.http_port);
  if (::getaddrinfo(options.http_host.c_str(), port.c_str(), &hints, &found) != 0 || !found) {
    return problem("HTTP " + address + ": the host " + quoted(options.http_host) +
                   " cannot be resolved; give an address such as 127.0.0.1");
  }
  int error = 0;
  const int fd = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd < 0) {
    error = errno;
  } else {
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // as serve binds
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0) error = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (error == 0) return ok("HTTP " + address + " is free");
  if (error == EADDRINUSE) {
    return problem("HTTP " + address +
                   " is in use by another process; stop it or choose another port");
  }
  if (error == EACCES) {
    return problem("HTTP " + address +
                   ": not allowed to listen there (ports below 1024 need privileges); choose "
                   "another port");
  }
  if (error == EADDRNOTAVAIL) {
    return problem("HTTP " + address +
                   ": no interface of this machine has that address; give "
                   "one it has, such as 127.0.0.1");
  }
  return problem("HTTP " + address + ": cannot listen there (" + std::strerror(error) +
                 "); choose another address");
}

// For each HTTP upstream whose "oauth" grant is authorization_code: whether
// `toolmux login` kept a login for it, for its URL, in the store serve would
// use. Read only; a catalog with problems is left to the catalog check.
void login_checks(const ServeOptions& options, std::vector<DoctorCheck>& checks) {
  if (options.catalog_file.empty()) return;
  const CatalogLoad load = load_catalog_file(options.catalog_file);
  if (!load.problems.empty()) return;
  std::unique_ptr<UpstreamLogins> logins;
  for (const UpstreamSpec& spec : load.catalog.upstreams) {
    if (!spec.oauth || spec.oauth->grant != UpstreamOAuth::Grant::authorization_code) continue;
    DoctorCheck check;
    if (!logins) {
      auto opened = open_upstream_logins(options);
      if (!opened.ok()) {
        check.text = "upstream \"" + spec.name + "\": its login cannot be read (" +
                     opened.message() + "); see the store check";
        checks.push_back(std::move(check));
        return;
      }
      logins = std::move(opened).value();
    }
    auto kept = logins->read(spec.name);
    if (!kept.ok()) {
      check.text = "upstream \"" + spec.name + "\": its login cannot be read: " + kept.message();
      checks.push_back(std::move(check));
      continue;
    }
    // Whether toolmux's OAuth client would take it (the same version, for
    // this URL and issuer).
    check.ok = kept->has_value() && OAuthClient::usable_login(spec.url, spec.oauth->issuer, **kept);
    check.text =
        check.ok ? "upstream \"" + spec.name + "\" has a login (kept in " + logins->where() + ")"
                 : "upstream \"" + spec.name + "\" needs a person to log in" +
                       (kept->has_value() ? " (the login kept is for another URL)" : "") +
                       ": run `toolmux login " + spec.name + " --catalog " +
                       options.catalog_file.string() + "` with the same store options";
    checks.push_back(std::move(check));
  }
}

}  // namespace

std::vector<DoctorCheck> doctor_checks(const ServeOptions& options,
                                       const std::vector<NativeTool>& native_tools) {
  std::vector<DoctorCheck> checks;
  checks.push_back(catalog_check(options, native_tools));
  if (!options.catalog_file.empty()) {
    const json catalog = read_catalog_json(options.catalog_file);
    const fs::path folder = options.catalog_file.parent_path();
    if (catalog.is_object()) {
      if (const auto upstreams = catalog.find("upstreams");
          upstreams != catalog.end() && upstreams->is_object()) {
        for (const auto& [name, upstream] : upstreams->items()) {
          if (upstream.is_object() && upstream.contains("command") &&
              upstream["command"].is_string() && !upstream["command"].get<std::string>().empty()) {
            checks.push_back(command_check(name, upstream, folder));
          }
        }
      }
      reference_checks(catalog, folder, checks);
    }
  }
  checks.push_back(data_dir_check(options));
  if (options.store == StoreKind::postgresql) checks.push_back(store_check(options));
  login_checks(options, checks);
  if (options.http) checks.push_back(http_check(options));
  // Redacted as the log is: a catalog's problem, a command's name or the
  // store's error can quote a secret (the catalog check registered the ones
  // the catalog reads by reference).
  for (DoctorCheck& check : checks) {
    check.text = redact(check.text);
    for (std::string& detail : check.details) detail = redact(detail);
  }
  return checks;
}

int run_doctor(const ServeOptions& options, const std::vector<NativeTool>& native_tools,
               std::ostream& out) {
  std::size_t problems = 0;
  for (const DoctorCheck& check : doctor_checks(options, native_tools)) {
    // A check's text quotes the catalog (names, commands, paths, problems):
    // nothing in it reaches the terminal as a control character that would
    // act or start a line of its own (src/base/terminal_text.h).
    out << (check.ok ? "ok: " : "problem: ") << terminal_text(check.text) << "\n";
    for (const std::string& detail : check.details) {
      out << "    " << terminal_text(detail) << "\n";
    }
    if (!check.ok) ++problems;
  }
  if (problems == 0) {
    out << "All checks passed.\n";
    return 0;
  }
  out << count_of(problems, "problem") << " to fix.\n";
  return 1;
}

}  // namespace toolmux
