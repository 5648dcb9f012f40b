#include "src/app/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "catalog/tool.h"
#include "src/app/time_text.h"
#include "src/base/utf8.h"

namespace toolmux {
namespace {

constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kHelpWidth = 100;  // columns of --help
constexpr std::size_t kNameColumn = 34;  // fits "  --max-connections-per-client N"
constexpr const char* kSinceNeed =
    "--since needs an RFC 3339 time (2026-12-01T10:00:00Z) or a duration back from now (90s, "
    "15m, 2h, 7d)";
constexpr const char* kOlderThanNeed = "--older-than needs a duration (90s, 15m, 2h, 7d)";

// A bad value, with the message toolmux prints after "toolmux: ".
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool parse_size(const std::string& text, std::size_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// What a whole-number option needs, as the usage error says it.
std::string whole_number_need(const std::string& name, std::size_t least, std::size_t most) {
  if (most != kUnbounded) {
    return name + " needs a whole number from " + std::to_string(least) + " to " +
           std::to_string(most);
  }
  if (least == 0) return name + " needs a whole number";
  if (least == 1) return name + " needs a whole number above 0";
  return name + " needs a whole number of at least " + std::to_string(least);
}

// Breaks `text` into lines of at most `width` characters at spaces; CLI11
// indents each line after the first to the description column.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t line = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::size_t word = end - start;
    if (line > 0 && line + 1 + word > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out.append(text, start, word);
    line += word;
    start = end + 1;
  }
  return out;
}

// Indents every line after the first by `by` spaces, leaving blank lines empty.
std::string indent(const std::string& text, std::size_t by) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size() && text[i + 1] != '\n') out.append(by, ' ');
  }
  return out;
}

// --help's layout: each command's synopsis, what it does, and its options as
// "--name VALUE  meaning (default; range)", wrapped to kHelpWidth. The words
// all come from the definitions in CommandLineDefinition.
class HelpFormatter final : public CLI::Formatter {
 public:
  HelpFormatter() {
    column_width(kNameColumn);
    label("Positionals", "Arguments");
  }

  std::string make_help(const CLI::App* app, std::string /*name*/,
                        CLI::AppFormatMode /*mode*/) const override {
    std::string out = app->get_description() + "\n";
    for (const CLI::App* command : app->get_subcommands({})) {
      if (!command->get_group().empty()) out += "\n" + make_command(command);
    }
    out += "\n";
    for (const CLI::Option* opt : app->get_options()) {
      std::stringstream line;
      CLI::detail::format_help(line, "toolmux --" + opt->get_lnames().front(),
                               opt->get_description(), kNameColumn + 4);
      out += line.str().substr(2);
    }
    return out;
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_positional() || opt->get_expected_max() == 0) return "";
    return " " + opt->get_type_name();
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrap(opt->get_description(), kHelpWidth - kNameColumn - 2);
  }

 private:
  std::string make_command(const CLI::App* command) const {
    std::string synopsis = "toolmux " + command->get_name() + " [options]";
    for (const CLI::Option* opt : command->get_options()) {
      if (!opt->get_positional()) continue;
      synopsis += " " + opt->get_name(true) + (opt->get_expected_max() > 1 ? "..." : "");
    }
    const std::string body = wrap(command->get_description(), kHelpWidth - 2) + "\n" +
                             make_positionals(command) +
                             make_groups(command, CLI::AppFormatMode::Sub);
    std::string out = synopsis + "\n  " + indent(body, 2);
    // CLI11 separates its groups with two blank lines; one is enough.
    for (auto at = out.find("\n\n\n"); at != std::string::npos; at = out.find("\n\n\n")) {
      out.erase(at, 1);
    }
    return out;
  }
};

// toolmux's command line: each command's options, bound to one CommandLine.
// Every option is defined here once, with its meaning, range and default,
// which the parser enforces and --help shows.
class CommandLineDefinition {
 public:
  // `only`: the arguments' first word. When it names a command, that
  // command's options are all that is defined (start-up does not build the
  // other eight); otherwise, or when empty, every command's, as --help and an
  // unknown command need.
  explicit CommandLineDefinition(CommandLine& cl, std::string_view only = {}) : cl_(cl) {
    app_.description("toolmux — a managed MCP tool catalog server");
    app_.name("toolmux");
    app_.formatter(std::make_shared<HelpFormatter>());
    app_.set_help_flag("-h,--help", "Print this help (also after a command).");
    flag_option(app_, "--version", version_asked_, "Print the version.");
    // One command at a time; words CLI11 does not know are kept (not thrown)
    // so that the usage error can say which command they were given to.
    app_.require_subcommand(0, 1);
    app_.allow_extras();
    define_commands(only);
    if (app_.get_subcommands({}).empty()) define_commands({});  // `only` names no command
    // `toolmux version` and `toolmux help`, as before --version and --help; unlisted.
    version_command_ = app_.add_subcommand("version", "")->group("");
    help_command_ = app_.add_subcommand("help", "")->group("");
  }

  CLI::App& app() { return app_; }

  // Parses `args` into the CommandLine; throws UsageError or CLI11's errors.
  void parse(std::vector<std::string> args) {
    if (!args.empty() && args.front() == "results") take_dashed_result_id(args);
    // CLI11 takes the arguments last first.
    std::vector<std::string> reversed;
    reversed.reserve(args.size() + 1);
    for (auto arg = args.rbegin(); arg != args.rend(); ++arg) {
      // `--name=` gives an option that takes a value the empty value (which
      // --catalog accepts); CLI11 would take the next argument as its value.
      if (arg->size() > 3 && arg->rfind("--", 0) == 0 && arg->find('=') == arg->size() - 1 &&
          takes_value(arg->substr(0, arg->size() - 1))) {
        reversed.emplace_back();
        reversed.push_back(arg->substr(0, arg->size() - 1));
      } else {
        reversed.push_back(*arg);
      }
    }
    app_.parse(reversed);
    if (const auto rest = app_.remaining(); !rest.empty()) {
      throw UsageError("unknown command \"" + rest.front() + "\"");
    }
    if (version_asked_ || version_command_->parsed()) {
      cl_.action = CommandLine::Action::version;
    } else if (help_command_->parsed()) {
      cl_.action = CommandLine::Action::help;
    } else if (parsed(serve_)) {
      finish_serve();
    } else if (parsed(check_)) {
      finish_check();
    } else if (parsed(search_)) {
      finish_search();
    } else if (parsed(journal_)) {
      finish_plain(*journal_, CommandLine::Action::journal);
      finish_store();
    } else if (parsed(audit_)) {
      finish_plain(*audit_, CommandLine::Action::audit);
      finish_audit_verify();
      finish_store();
    } else if (parsed(freeze_)) {
      finish_freeze();
    } else if (parsed(results_)) {
      finish_results();
    } else if (parsed(store_)) {
      finish_store_command();
    } else if (parsed(import_)) {
      finish_import();
    } else if (parsed(doctor_)) {
      finish_plain(*doctor_, CommandLine::Action::doctor);
      finish_store();
    } else if (parsed(login_)) {
      finish_login(*login_, CommandLine::Action::login);
    } else if (parsed(logout_)) {
      finish_login(*logout_, CommandLine::Action::logout);
    } else {
      throw UsageError(
          "missing command (serve, check, search, journal, audit, freeze, results, store, import, "
          "doctor, login, logout, --version, --help)");
    }
  }

  // The commands `only` names, or every one when it is empty.
  void define_commands(std::string_view only) {
    const auto wanted = [only](std::string_view name) { return only.empty() || only == name; };
    if (wanted("serve")) define_serve();
    if (wanted("check")) define_check();
    if (wanted("search")) define_search();
    if (wanted("journal")) define_journal();
    if (wanted("audit")) define_audit();
    if (wanted("freeze")) define_freeze();
    if (wanted("results")) define_results();
    if (wanted("store")) define_store();
    if (wanted("import")) define_import();
    if (wanted("doctor")) define_doctor();
    if (wanted("login") || wanted("logout")) define_login();
  }

  // A result id is 43 characters of base64url and may start with '-', which
  // CLI11 would take for an option: `results show -Ab...` takes the first
  // argument of that shape that is no option's value out of `args`, as the ID.
  void take_dashed_result_id(std::vector<std::string>& args) {
    constexpr std::size_t kResultIdLength = 43;
    for (std::size_t i = 1; i < args.size(); ++i) {
      const std::string& arg = args[i];
      if (arg.size() != kResultIdLength || arg.front() != '-' ||
          arg.find_first_not_of(
              "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
              std::string::npos ||
          takes_value(args[i - 1])) {
        continue;
      }
      dashed_id_ = arg;
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }

  // Whether the command is defined and was given.
  static bool parsed(const CLI::App* command) { return command != nullptr && command->parsed(); }

  // Whether some command has an option of that name that takes a value.
  bool takes_value(const std::string& name) const {
    return std::any_of(needs_.begin(), needs_.end(),
                       [&name](const auto& entry) { return entry.first.second == name; });
  }

  // For CLI11's "--name: 1 required N missing" (the arguments ran out before
  // the option's value): what that option needs, as its own usage error says.
  std::string need_of(const std::string& cli11_message) const {
    // Two commands may have options of one name and different needs
    // (search --limit, audit --limit): the command being parsed says which.
    for (const auto& [key, need] : needs_) {
      const auto& [app, name] = key;
      if ((app == &app_ || app->parsed()) && cli11_message.rfind(name + ":", 0) == 0) return need;
    }
    return cli11_message;
  }

 private:
  // An option that takes one value each time it is given (the next argument,
  // even one starting with '-'); `take` checks and stores each in turn.
  CLI::Option* value_option(CLI::App& app, const std::string& name, const std::string& value_name,
                            const std::string& description, const std::string& need,
                            std::function<void(const std::string&)> take) {
    needs_[{&app, name}] = need;
    CLI::Option* opt = app.add_option(
        name,
        [take = std::move(take)](const CLI::results_t& values) {
          for (const std::string& value : values) take(value);
          return true;
        },
        description);
    opt->type_name(value_name)->type_size(1)->expected(1);
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    return opt;
  }

  // A flag: given, it sets `target`; it takes no value ("--allow-writes=yes").
  static CLI::Option* flag_option(CLI::App& app, const std::string& name, bool& target,
                                  const std::string& description) {
    const std::string need = name + " takes no value";
    CLI::Option* opt = app.add_option(
        name,
        [&target, need](const CLI::results_t& values) {
          // CLI11 passes "true" for the bare flag and the text of "--name=text".
          for (const std::string& value : values) {
            if (value != "true") throw UsageError(need);
          }
          target = true;
          return true;
        },
        description);
    opt->expected(0)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    return opt;
  }

  // A non-empty text value; `take` stores it.
  CLI::Option* text_option(CLI::App& app, const std::string& name, const std::string& value_name,
                           const std::string& description,
                           std::function<void(const std::string&)> take) {
    const std::string need = name + " needs a value";
    return value_option(app, name, value_name, description, need,
                        [need, take = std::move(take)](const std::string& value) {
                          if (value.empty()) throw UsageError(need);
                          take(value);
                        });
  }

  // A whole number from `least` to `most`. The help shows the range and the
  // default (`default_text`, or `target`'s value before parsing).
  CLI::Option* number_option(CLI::App& app, const std::string& name, const std::string& value_name,
                             std::size_t& target, std::size_t least, std::size_t most,
                             const std::string& meaning, std::string default_text = "") {
    if (default_text.empty()) default_text = std::to_string(target);
    std::string note = "default: " + default_text;
    if (most != kUnbounded) {
      note += "; " + std::to_string(least) + " to " + std::to_string(most);
    } else if (least > 1) {
      note += "; at least " + std::to_string(least);
    }
    const std::string need = whole_number_need(name, least, most);
    return value_option(app, name, value_name, meaning + " (" + note + ").", need,
                        [&target, least, most, need](const std::string& value) {
                          std::size_t n = 0;
                          if (!parse_size(value, n) || n < least || n > most) {
                            throw UsageError(need);
                          }
                          target = n;
                        });
  }

  // --data-dir: serve's state, which journal, audit, freeze and results read
  // or write.
  void data_dir_option(CLI::App& app) {
    text_option(app, "--data-dir", "DIR",
                "Where toolmux keeps its state (default: $XDG_STATE_HOME/toolmux, else "
                "~/.local/state/toolmux).",
                [this](const std::string& v) { cl_.serve.data_dir = v; });
  }

  // --store and --store-url-file: where serve keeps what instances share;
  // doctor checks the same store, journal and audit read it.
  void store_options(CLI::App& app) {
    text_option(app, "--store", "KIND",
                "Where offloaded results, the requestState key, the journal and the audit trail "
                "are kept: rocksdb (the data "
                "directory; default) or postgresql (shared by every instance on one database; "
                "the connection string comes from $TOOLMUX_POSTGRES_URL or --store-url-file).",
                [this](const std::string& v) { cl_.serve.store = store_kind(v); });
    text_option(app, "--store-url-file", "FILE",
                "With --store postgresql: a file whose first line is the connection string "
                "(a libpq URI or key=value pairs); used instead of $TOOLMUX_POSTGRES_URL.",
                [this](const std::string& v) { cl_.serve.store_url_file = v; });
  }

  static StoreKind store_kind(const std::string& v) {
    if (v == "rocksdb") return StoreKind::rocksdb;
    if (v == "postgresql") return StoreKind::postgresql;
    // Never repeat the value: a connection string may hold a password.
    if (v.rfind("postgresql://", 0) == 0 || v.rfind("postgres://", 0) == 0 ||
        v.find('=') != std::string::npos) {
      throw UsageError(
          "--store takes rocksdb or postgresql, not a connection string (the command line is "
          "visible to every user of the machine and it may hold a password): give "
          "--store postgresql and the connection string in $TOOLMUX_POSTGRES_URL or in a file "
          "named by --store-url-file");
    }
    throw UsageError("--store must be rocksdb or postgresql");
  }

  // An argument left over that is a connection string (`--store postgresql
  // postgresql://...`): refused as one, without repeating it.
  static void store_kind_check_extra(const std::string& arg) {
    if (arg.rfind("postgresql://", 0) == 0 || arg.rfind("postgres://", 0) == 0 ||
        (arg.rfind('-', 0) != 0 && arg.find('=') != std::string::npos)) {
      (void)store_kind(arg);
    }
  }

  void finish_store() {
    const ServeOptions& o = cl_.serve;
    if (!o.store_url_file.empty() && o.store != StoreKind::postgresql) {
      throw UsageError("--store-url-file needs --store postgresql");
    }
  }

  // --root and --allow-writes: what changes the tools serve offers, which check
  // and search take too.
  void tool_options(CLI::App& app) {
    text_option(app, "--root", "DIR",
                "A folder the filesystem tools may use; repeatable (default: the working "
                "directory).",
                [this](const std::string& v) { cl_.serve.roots.emplace_back(v); });
    flag_option(app, "--allow-writes", cl_.serve.allow_writes,
                "Offer write_text_file (a local mutation) inside the roots.");
  }

  void define_serve() {
    ServeOptions& o = cl_.serve;
    serve_ = app_.add_subcommand(
        "serve",
        "Serve MCP over stdio (one JSON-RPC message per line), or over Streamable HTTP with "
        "--http.");
    // An empty FILE (`--catalog=`) means none: a launcher that always passes
    // the option, such as the Claude Desktop extension (packaging/mcpb), can
    // then leave its catalog setting empty.
    value_option(*serve_, "--catalog", "FILE",
                 "Catalog file with command tools (see README, examples/catalog.json); empty: "
                 "none.",
                 "--catalog needs a value", [&o](const std::string& v) { o.catalog_file = v; });
    tool_options(*serve_);
    // serve's --root takes one or more folders (`--root A B`): a launcher's
    // list of folders (the extension's roots setting) expands into separate
    // arguments after one --root. check and search keep one each, as their
    // FILE and QUERY could follow.
    serve_->get_option("--root")
        ->type_name("DIR...")
        ->description(
            "Folders the filesystem tools may use: one or more after each --root, "
            "and --root is repeatable (default: the working directory).")
        ->expected(1, CLI::detail::expected_max_vector_size)
        ->allow_extra_args();
    data_dir_option(*serve_);
    store_options(*serve_);
    flag_option(*serve_, "--read-only", o.read_only,
                "Offer and run only read_only tools: every other tool is refused and left out of "
                "tools/list and tool_search, as under `toolmux freeze on`.");
    flag_option(*serve_, "--no-journal", no_journal_,
                "Keep no journal of mutations and no audit trail (benchmarks, throwaway "
                "servers).");
    number_option(*serve_, "--audit-retention-days", "N", o.audit_retention_days, 1, 36500,
                  "Audit records, and journal entries that have an outcome, are deleted after "
                  "this many days");
    number_option(*serve_, "--page-size", "N", o.page_size, 1, kUnbounded,
                  "Tools per tools/list page", "all on one page");
    number_option(*serve_, "--max-message-bytes", "N", o.max_message_bytes, 1024, kUnbounded,
                  "Largest message accepted");
    const std::string log_need = "--log-level must be debug, info, warning or error";
    value_option(*serve_, "--log-level", "LEVEL",
                 "stderr log level: debug, info, warning, error (default: info).",
                 "--log-level needs a value", [&o, log_need](const std::string& v) {
                   if (v.empty()) throw UsageError("--log-level needs a value");
                   const auto level = log_level_from_name(v);
                   if (!level) throw UsageError(log_need);
                   o.log_level = *level;
                 });
    number_option(*serve_, "--max-calls", "N", o.max_calls, 1, 1024,
                  "Calls (tools/call, resources/..., prompts/..., completion) running at once, "
                  "overall");
    number_option(*serve_, "--max-session-calls", "N", o.max_session_calls, 1, 1024,
                  "The same, per session");
    number_option(*serve_, "--max-queued-calls", "N", o.max_queued_calls, 0, 100000,
                  "Calls waiting to run; past it, a call is refused as busy over HTTP and "
                  "held over stdio");
    text_option(*serve_, "--otlp-endpoint", "URL",
                "Export traces and metrics over OTLP/HTTP to this collector (e.g. "
                "http://127.0.0.1:4318; /v1/traces and /v1/metrics are added). Default: "
                "$OTEL_EXPORTER_OTLP_ENDPOINT, else no export (docs/traces.md).",
                [&o](const std::string& v) { o.otlp_endpoint = v; });
    number_option(*serve_, "--shutdown-grace", "SECONDS", o.shutdown_grace_seconds, 1, kUnbounded,
                  "When stdin closes (or, over HTTP, on SIGTERM), how long running calls may "
                  "finish");

    const std::string http = "Options for serve --http";
    value_option(*serve_, "--http", "HOST:PORT",
                 "Serve Streamable HTTP on that address (e.g. 127.0.0.1:8080; port 0 picks a "
                 "free one; the log says which).",
                 "--http needs HOST:PORT", [&o](const std::string& v) { take_http_address(v, o); })
        ->group(http);
    text_option(*serve_, "--path", "PATH",
                "The MCP endpoint (default: /mcp). Also served: /health, /metrics, /status, "
                "/status.json.",
                [&o](const std::string& v) {
                  if (v[0] != '/') throw UsageError("--path must start with /");
                  for (const char* taken : {"/health", "/metrics", "/status", "/status.json"}) {
                    if (v == taken) throw UsageError("--path " + v + " is taken by toolmux's " + v);
                  }
                  o.http_path = v;
                })
        ->group(http);
    text_option(*serve_, "--allow-host", "NAME",
                "A Host header name accepted besides localhost, 127.0.0.1 and [::1]; "
                "repeatable. Needed when clients reach another name.",
                [&o](const std::string& v) { o.allowed_hosts.push_back(v); })
        ->group(http);
    text_option(*serve_, "--allow-origin", "ORIGIN",
                "A browser Origin accepted besides loopback ones; repeatable.",
                [&o](const std::string& v) { o.allowed_origins.push_back(v); })
        ->group(http);
    text_option(*serve_, "--tokens-file", "FILE",
                "Bearer tokens, \"principal=token\" per line; with it (or with $TOOLMUX_TOKENS "
                "holding the same entries) every request needs one.",
                [&o](const std::string& v) { o.tokens_file = v; })
        ->group(http);
    text_option(*serve_, "--status-principal", "NAME",
                "With bearer tokens, a principal who may see the status page (/status: every "
                "principal's sessions and calls); repeatable. Without tokens it is open to "
                "local clients.",
                [&o](const std::string& v) { o.status_principals.push_back(v); })
        ->group(http);
    text_option(*serve_, "--auth-issuer", "URL",
                "An OAuth 2.1 authorization server (or OpenID provider) whose access tokens "
                "count, as its metadata names it; repeatable. Needs --resource-url.",
                [&o](const std::string& v) { o.auth_issuers.push_back(v); })
        ->group(http);
    text_option(*serve_, "--resource-url", "URL",
                "This server's canonical URI, e.g. https://tools.example.com/mcp: the audience "
                "an access token must name (RFC 8707).",
                [&o](const std::string& v) { o.resource_url = v; })
        ->group(http);
    text_option(*serve_, "--auth-scope", "SCOPE=CLASSES",
                "A scope and the side-effect classes its tokens may call, comma-separated "
                "(read_only,local_mutation,remote_mutation,destructive); repeatable.",
                [&o](const std::string& v) {
                  const auto eq = v.find('=');
                  if (eq == 0 || eq == std::string::npos) {
                    throw UsageError("--auth-scope " + v + " is not SCOPE=CLASS[,CLASS...]");
                  }
                  std::vector<std::string> classes;
                  std::size_t at = eq + 1;
                  while (at <= v.size()) {
                    const auto comma = std::min(v.find(',', at), v.size());
                    const std::string name = v.substr(at, comma - at);
                    if (!side_effect_from_name(name)) {
                      throw UsageError("--auth-scope " + v + ": \"" + name +
                                       "\" is not a side-effect class (read_only, "
                                       "local_mutation, remote_mutation, destructive)");
                    }
                    classes.push_back(name);
                    at = comma + 1;
                  }
                  o.auth_scopes.emplace_back(v.substr(0, eq), std::move(classes));
                })
        ->group(http);
    text_option(*serve_, "--introspection-client", "ID",
                "Introspect opaque access tokens (RFC 7662) as this client; its secret is in "
                "$TOOLMUX_INTROSPECTION_SECRET or --introspection-secret-file.",
                [&o](const std::string& v) { o.introspection_client_id = v; })
        ->group(http);
    text_option(*serve_, "--introspection-secret-file", "FILE",
                "The introspection client's secret.",
                [&o](const std::string& v) { o.introspection_secret_file = v; })
        ->group(http);
    number_option(*serve_, "--max-sessions", "N", o.max_sessions, 1, kUnbounded,
                  "Open sessions at most; then new ones get 503")
        ->group(http);
    number_option(*serve_, "--session-idle", "SECONDS", o.session_idle_seconds, 1, kUnbounded,
                  "A session unused this long ends")
        ->group(http);
    number_option(*serve_, "--max-session-queued-calls", "N", o.max_session_queued_calls, 0, 100000,
                  "Calls one session may have waiting; past it its calls get \"toolmux is "
                  "busy\" while others still queue")
        ->group(http);
    number_option(*serve_, "--max-connections", "N", o.max_connections, 1, kUnbounded,
                  "Connections open at once; then 503")
        ->group(http);
    number_option(*serve_, "--max-connections-per-client", "N", o.max_connections_per_client, 1,
                  kUnbounded, "Connections open at once from one client address; then 503")
        ->group(http);
    number_option(*serve_, "--header-timeout", "SECONDS", o.header_timeout_seconds, 1, kUnbounded,
                  "A request head must arrive within this")
        ->group(http);
    number_option(*serve_, "--body-timeout", "SECONDS", o.body_timeout_seconds, 1, kUnbounded,
                  "A request body must arrive within this after its head")
        ->group(http);
  }

  static void take_http_address(const std::string& v, ServeOptions& o) {
    const auto colon = v.rfind(':');
    std::size_t port = 0;
    if (colon == std::string::npos || colon == 0 || !parse_size(v.substr(colon + 1), port) ||
        port > 65535) {
      throw UsageError("--http needs HOST:PORT, e.g. 127.0.0.1:8080 (got \"" + v + "\")");
    }
    o.http = true;
    o.http_host = v.substr(0, colon);
    if (o.http_host.size() > 2 && o.http_host.front() == '[' && o.http_host.back() == ']') {
      o.http_host = o.http_host.substr(1, o.http_host.size() - 2);
    }
    o.http_port = static_cast<int>(port);
  }

  void finish_serve() {
    if (const auto rest = serve_->remaining(); !rest.empty()) {
      store_kind_check_extra(rest.front());
      throw UsageError("unknown option \"" + rest.front() + "\" for serve");
    }
    const ServeOptions& o = cl_.serve;
    const bool http_only = !o.tokens_file.empty() || !o.allowed_hosts.empty() ||
                           !o.status_principals.empty() || !o.allowed_origins.empty() ||
                           o.http_path != "/mcp";
    if (http_only && !o.http) throw UsageError("those options need --http HOST:PORT");
    finish_store();
    cl_.serve.journal = !no_journal_;
    cl_.action = CommandLine::Action::serve;
  }

  void define_check() {
    check_ = app_.add_subcommand(
        "check",
        "Check a catalog file against the tools serve would offer with those options; list "
        "every problem with its JSON pointer. With --fuzz, also call every tool with valid "
        "argument sets and near misses generated from its input schema, through the argument "
        "checks only (no tool runs); with --fuzz --run, also run the tools with the valid "
        "sets; exit 1 on any failure.");
    check_
        ->add_option(
            "FILE",
            [this](const CLI::results_t& values) {
              cl_.check_file = values.front();
              return true;
            },
            "The catalog file.")
        ->type_name("FILE");
    tool_options(*check_);
    CheckFuzzOptions& fuzz = cl_.check_fuzz;
    flag_option(*check_, "--fuzz", fuzz.fuzz,
                "Fuzz every tool's input schema through the argument checks.");
    cases_ = number_option(*check_, "--cases", "N", fuzz.cases, 1, 1000,
                           "With --fuzz: valid argument sets per tool, each with its near misses");
    seed_ = number_option(*check_, "--seed", "S", fuzz.seed, 0, kUnbounded,
                          "With --fuzz: makes the cases reproducible");
    flag_option(*check_, "--run", fuzz.run,
                "With --fuzz: run each read_only tool with its first valid cases; a crash, a "
                "timeout or a bad result fails");
    flag_option(*check_, "--fuzz-mutating", fuzz.mutating,
                "With --fuzz --run: run local_mutation tools too, in a throwaway root");
  }

  void finish_check() {
    if (!check_->remaining().empty()) {
      throw UsageError("check takes one FILE and optionally --allow-writes, --root DIR and --fuzz");
    }
    if (cl_.check_file.empty()) throw UsageError("check needs a FILE");
    if ((cases_->count() > 0 || seed_->count() > 0) && !cl_.check_fuzz.fuzz) {
      throw UsageError("--cases and --seed go with --fuzz");
    }
    if (cl_.check_fuzz.run && !cl_.check_fuzz.fuzz) throw UsageError("--run goes with --fuzz");
    if (cl_.check_fuzz.mutating && !cl_.check_fuzz.run) {
      throw UsageError("--fuzz-mutating goes with --fuzz --run");
    }
    cl_.serve.catalog_file = cl_.check_file;
    cl_.action = CommandLine::Action::check;
  }

  void define_search() {
    search_ = app_.add_subcommand(
        "search", "Run tool_search's search over that catalog, as an operator tuning it would.");
    search_
        ->add_option(
            "QUERY",
            [this](const CLI::results_t& words) {
              for (const std::string& word : words) {
                cl_.search_query += (cl_.search_query.empty() ? "" : " ") + word;
              }
              return true;
            },
            "What to search for; its words may be separate arguments. None: list the sources "
            "(with --source: its groups or tools).")
        ->type_name("QUERY")
        ->expected(0, CLI::detail::expected_max_vector_size)
        ->allow_extra_args();  // every word, not only the first
    text_option(*search_, "--catalog", "FILE", "Catalog file whose tools to search.",
                [this](const std::string& v) { cl_.serve.catalog_file = v; });
    number_option(*search_, "--limit", "N", cl_.search_limit, 1, 20, "Tools listed at most");
    text_option(*search_, "--source", "ID",
                "Search only this source or group (as an answer or the list of sources names it).",
                [this](const std::string& v) { cl_.search_source = v; });
    text_option(*search_, "--alternative", "TEXT",
                "Another phrasing of the same need, searched with QUERY; up to 3.",
                [this](const std::string& v) { cl_.search_alternatives.push_back(v); });
    flag_option(
        *search_, "--explain", cl_.search_explain,
        "Show, for each tool found, which fields and words scored, and its source's share.");
    tool_options(*search_);
  }

  void finish_search() {
    if (const auto rest = search_->remaining(); !rest.empty()) {
      throw UsageError("unknown option \"" + rest.front() + "\" for search");
    }
    if (cl_.search_alternatives.size() > 3) throw UsageError("--alternative: at most 3");
    cl_.action = CommandLine::Action::search;
  }

  // --json, --data-dir, --store and --store-url-file: what journal and audit
  // list, and how.
  void listing_options(CLI::App& app, const std::string& json_description) {
    flag_option(app, "--json", cl_.json, json_description);
    data_dir_option(app);
    store_options(app);
  }

  void define_journal() {
    journal_ = app_.add_subcommand(
        "journal",
        "List every journaled call (each call of a tool that is not read_only), oldest first: "
        "time, call id, tool, class, principal, approver, idempotency key and state (its "
        "outcome, running, or interrupted: not re-run).");
    listing_options(*journal_, "JSON Lines: one object per call, every field.");
  }

  void define_audit() {
    audit_ = app_.add_subcommand(
        "audit",
        "List the audit trail, oldest first: one record per call, of every class (time, "
        "principal, session, tool, confirmation, approver, outcome, duration).");
    AuditQuery& q = cl_.audit_query;
    value_option(*audit_, "--since", "T",
                 "Only records from T on: an RFC 3339 time (2026-12-01T10:00:00Z) or a duration "
                 "back from now (90s, 15m, 2h, 7d).",
                 kSinceNeed, [&q](const std::string& v) {
                   if (auto at = parse_rfc3339(v)) {
                     q.since = *at;
                   } else if (auto back = parse_duration_back(v)) {
                     q.since = std::chrono::system_clock::now() - *back;
                   } else {
                     throw UsageError(std::string(kSinceNeed) + ", not \"" + clip_for_message(v) +
                                      "\"" + clipped_size_note(v));
                   }
                 });
    text_option(*audit_, "--tool", "NAME", "Only calls of this tool (its canonical name).",
                [&q](const std::string& v) { q.tool = v; });
    text_option(*audit_, "--principal", "P", "Only calls of this principal.",
                [&q](const std::string& v) { q.principal = v; });
    number_option(*audit_, "--limit", "N", q.limit, 1, 1'000'000,
                  "Only the newest N records (after the other filters)", "all");
    listing_options(*audit_, "JSON Lines: one object per record, every field.");
    define_audit_verify();
  }

  // `toolmux audit verify`: the word verify instead of a listing.
  void define_audit_verify() {
    audit_
        ->add_option(
            "ACTION",
            [this](const CLI::results_t& values) {
              if (values.front() != "verify") {
                // A connection string is refused without repeating it.
                store_kind_check_extra(values.front());
                throw UsageError("unknown option \"" + clip_for_message(values.front()) +
                                 "\" for audit");
              }
              cl_.audit_verify = true;
              return true;
            },
            "verify: walk the audit trail's hash chain (RocksDB) and name the first record that "
            "does not fit, or check that PostgreSQL's audit table refuses UPDATE and DELETE; "
            "exit 1 when something does not fit.")
        ->type_name("verify");
  }

  void finish_audit_verify() {
    const AuditQuery& q = cl_.audit_query;
    if (cl_.audit_verify &&
        (q.since || !q.tool.empty() || !q.principal.empty() || q.limit > 0 || cl_.json)) {
      throw UsageError(
          "--since, --tool, --principal, --limit and --json go with the listing, "
          "not with audit verify");
    }
  }

  void define_freeze() {
    freeze_ = app_.add_subcommand(
        "freeze",
        "Switch the write freeze on or off, or say whether it is on. While it is on, every "
        "server on that data directory (with --store postgresql: every instance on that store) "
        "refuses every tool but read_only ones and leaves them out of tools/list and "
        "tool_search; reads keep working.");
    freeze_
        ->add_option(
            "ACTION",
            [this](const CLI::results_t& values) {
              const std::string& v = values.front();
              if (v == "on") {
                cl_.freeze_action = FreezeAction::on;
              } else if (v == "off") {
                cl_.freeze_action = FreezeAction::off;
              } else if (v == "status") {
                cl_.freeze_action = FreezeAction::status;
              } else {
                throw UsageError("freeze needs on, off or status, not \"" + clip_for_message(v) +
                                 "\"");
              }
              return true;
            },
            "on, off or status.")
        ->type_name("ACTION");
    reason_ = text_option(*freeze_, "--reason", "TEXT",
                          "With on: why, shown in every refusal (at most 500 bytes).",
                          [this](const std::string& v) { cl_.freeze_reason = v; });
    data_dir_option(*freeze_);
    store_options(*freeze_);
  }

  // A command whose options are all named (journal, audit).
  void finish_plain(CLI::App& command, CommandLine::Action action) {
    if (const auto rest = command.remaining(); !rest.empty()) {
      store_kind_check_extra(rest.front());
      throw UsageError("unknown option \"" + rest.front() + "\" for " + command.get_name());
    }
    cl_.action = action;
  }

  void finish_freeze() {
    if (const auto rest = freeze_->remaining(); !rest.empty()) {
      store_kind_check_extra(rest.front());
      throw UsageError("unknown option \"" + rest.front() + "\" for freeze");
    }
    if (freeze_->get_option("ACTION")->count() == 0) {
      throw UsageError("freeze needs on, off or status");
    }
    if (reason_->count() > 0 && cl_.freeze_action != FreezeAction::on) {
      throw UsageError("--reason goes with freeze on");
    }
    finish_store();
    cl_.action = CommandLine::Action::freeze;
  }

  void define_results() {
    ResultsCommand& r = cl_.results;
    results_ = app_.add_subcommand(
        "results",
        "List, show or delete the large tool results stored for read_tool_result, of every "
        "session (with --store postgresql: of every instance). list: one line per result (when "
        "it was stored, its id, its session as the first 12 hex digits of the SHA-256 of the "
        "session id, which is a secret, or principal:NAME; its size, pages and type), oldest "
        "first. show ID: its "
        "details and its text. delete ID, or delete --session S and/or --older-than D: deletes "
        "and says what. A running server's results can be listed and shown; with --store "
        "rocksdb only that server can delete them. Exit 1 when an ID is not stored or the store "
        "cannot be read or written.");
    results_
        ->add_option(
            "ACTION",
            [&r](const CLI::results_t& values) {
              const std::string& v = values.front();
              if (v == "list") {
                r.action = ResultsCommand::Action::list;
              } else if (v == "show") {
                r.action = ResultsCommand::Action::show;
              } else if (v == "delete") {
                r.action = ResultsCommand::Action::remove;
              } else {
                throw UsageError("results needs list, show or delete, not \"" +
                                 clip_for_message(v) + "\"");
              }
              return true;
            },
            "list, show or delete.")
        ->type_name("ACTION");
    results_
        ->add_option(
            "ID",
            [&r](const CLI::results_t& values) {
              r.id = values.front();
              return true;
            },
            "With show and delete: the result's id (as list prints it).")
        ->type_name("ID");
    results_session_ = text_option(
        *results_, "--session", "S",
        "With list and delete: only the results of this session (its id, or the digest list "
        "prints).",
        [&r](const std::string& v) { r.session = v; });
    results_older_ = value_option(
        *results_, "--older-than", "D",
        "With list and delete: only results stored longer ago than D (90s, 15m, 2h, 7d).",
        kOlderThanNeed, [&r](const std::string& v) {
          auto back = parse_duration_back(v);
          if (!back) {
            throw UsageError(std::string(kOlderThanNeed) + ", not \"" + clip_for_message(v) + "\"" +
                             clipped_size_note(v));
          }
          r.created_before = std::chrono::system_clock::now() - *back;
        });
    results_page_ = number_option(*results_, "--page", "N", r.page, 1, kUnbounded,
                                  "With show: only page N of the text, in pages of 20000 "
                                  "characters as read_tool_result reads it",
                                  "the whole text");
    listing_options(*results_, "With list and show: JSON Lines, every field.");
  }

  void finish_results() {
    const ResultsCommand& r = cl_.results;
    if (const auto rest = results_->remaining(); !rest.empty()) {
      store_kind_check_extra(rest.front());
      throw UsageError("unknown option \"" + clip_for_message(rest.front()) + "\" for results");
    }
    if (results_->get_option("ACTION")->count() == 0) {
      throw UsageError("results needs list, show or delete");
    }
    const bool filtered = results_session_->count() > 0 || results_older_->count() > 0;
    const bool positional_id = results_->get_option("ID")->count() > 0;
    if (!dashed_id_.empty()) {
      if (positional_id) throw UsageError("results takes one ID");
      cl_.results.id = dashed_id_;
    }
    const bool has_id = positional_id || !dashed_id_.empty();
    if (results_page_->count() > 0 && r.action != ResultsCommand::Action::show) {
      throw UsageError("--page goes with results show");
    }
    switch (r.action) {
      case ResultsCommand::Action::list:
        if (has_id) throw UsageError("results list takes no ID (results show ID shows one)");
        break;
      case ResultsCommand::Action::show:
        if (!has_id) throw UsageError("results show needs the result's ID");
        if (filtered) throw UsageError("--session and --older-than go with list and delete");
        break;
      case ResultsCommand::Action::remove:
        if (has_id == filtered) {
          throw UsageError(
              "results delete needs either the result's ID or --session S and/or --older-than "
              "D");
        }
        if (cl_.json) throw UsageError("--json goes with results list and show");
        break;
    }
    finish_store();
    cl_.action = CommandLine::Action::results;
  }

  // `toolmux store backup DIR` and `toolmux store restore DIR [--force]`.
  void define_store() {
    StoreCommand& s = cl_.store;
    store_ = app_.add_subcommand(
        "store",
        "backup DIR: copy the data directory's state (the journal and audit trail, stored "
        "results, sessions, the requestState key, logins, search memory) into DIR, a new or "
        "empty folder, while servers keep running: the backup holds every write acknowledged "
        "before it started, and a manifest with each file's SHA-256. restore DIR: check the "
        "backup (naming what is damaged), then put it in place of the data directory, which no "
        "server may hold, and which must be empty unless --force. With --store postgresql: "
        "print the pg_dump or pg_restore procedure. Exit 1 when refused or failed.");
    store_
        ->add_option(
            "ACTION",
            [&s](const CLI::results_t& values) {
              const std::string& v = values.front();
              if (v == "backup") {
                s.action = StoreCommand::Action::backup;
              } else if (v == "restore") {
                s.action = StoreCommand::Action::restore;
              } else {
                throw UsageError("store needs backup or restore, not \"" + clip_for_message(v) +
                                 "\"");
              }
              return true;
            },
            "backup or restore.")
        ->type_name("ACTION");
    store_
        ->add_option(
            "DIR",
            [&s](const CLI::results_t& values) {
              s.dir = values.front();
              return true;
            },
            "The backup's folder.")
        ->type_name("DIR");
    store_force_ = flag_option(*store_, "--force", s.force,
                               "With restore: replace a data directory that is not empty.");
    data_dir_option(*store_);
    store_options(*store_);
  }

  void finish_store_command() {
    if (const auto rest = store_->remaining(); !rest.empty()) {
      store_kind_check_extra(rest.front());
      throw UsageError("unknown option \"" + clip_for_message(rest.front()) + "\" for store");
    }
    if (store_->get_option("ACTION")->count() == 0) {
      throw UsageError("store needs backup or restore");
    }
    const bool restore = cl_.store.action == StoreCommand::Action::restore;
    if (cl_.store.dir.empty()) {
      throw UsageError(std::string("store ") + (restore ? "restore" : "backup") +
                       " needs the backup's DIR");
    }
    if (store_force_->count() > 0 && !restore) throw UsageError("--force goes with store restore");
    finish_store();
    cl_.action = CommandLine::Action::store;
  }

  void define_import() {
    import_ = app_.add_subcommand(
        "import",
        "Read an MCP client's configuration (Claude Desktop's claude_desktop_config.json, "
        "Cursor's or VS Code's mcp.json) and write a catalog whose upstreams are its servers; "
        "print what was imported, skipped or left out and why, the variables to set for the "
        "secrets (names only), and the client configuration that replaces those servers with "
        "one toolmux entry.");
    ImportOptions& o = cl_.import;
    import_
        ->add_option(
            "FILE",
            [&o](const CLI::results_t& values) {
              o.input = values.front();
              return true;
            },
            "The client's configuration file.")
        ->type_name("FILE");
    value_option(*import_, "--format", "FORMAT",
                 "claude, cursor or vscode (default: told from the content).",
                 "--format needs claude, cursor or vscode", [&o](const std::string& v) {
                   o.format = client_format_from_name(v);
                   if (!o.format) {
                     throw UsageError("--format needs claude, cursor or vscode, not \"" +
                                      clip_for_message(v) + "\"");
                   }
                 });
    text_option(*import_, "--out", "FILE", "The catalog to write (default: toolmux-catalog.json).",
                [&o](const std::string& v) { o.out = v; });
    flag_option(*import_, "--force", o.force, "Replace the --out file when it exists.");
    flag_option(*import_, "--dry-run", o.dry_run,
                "Print the catalog and the client configuration; write nothing.");
  }

  void finish_import() {
    if (const auto rest = import_->remaining(); !rest.empty()) {
      throw UsageError("import takes one FILE and its options, not \"" +
                       clip_for_message(rest.front()) + "\"");
    }
    if (cl_.import.input.empty()) throw UsageError("import needs the client's configuration FILE");
    cl_.action = CommandLine::Action::import_config;
  }

  void define_doctor() {
    doctor_ = app_.add_subcommand(
        "doctor",
        "Check a setup and say what to fix, one line per check: the catalog is valid, each stdio "
        "upstream's command is found, each variable the catalog reads is set (values never "
        "shown), the data directory is writable, with --store postgresql the store is reachable, "
        "each upstream that needs a person's login has one, and the --http address is free. "
        "Exit 0 when all pass, 1 otherwise.");
    text_option(*doctor_, "--catalog", "FILE", "The catalog file serve would use.",
                [this](const std::string& v) { cl_.serve.catalog_file = v; });
    tool_options(*doctor_);
    data_dir_option(*doctor_);
    store_options(*doctor_);
    value_option(*doctor_, "--http", "HOST:PORT", "The address serve --http would listen on.",
                 "--http needs HOST:PORT",
                 [this](const std::string& v) { take_http_address(v, cl_.serve); });
  }

  // `toolmux login UPSTREAM` and `toolmux logout UPSTREAM`.
  void define_login() {
    login_ = app_.add_subcommand(
        "login",
        "Log in to an HTTP upstream whose \"oauth\" grant is authorization_code: prints the "
        "authorization URL (and opens a browser where there is one), takes the redirect on a "
        "loopback port, and keeps the tokens in the store, where every toolmux serving the "
        "catalog finds them and refreshes them.");
    logout_ = app_.add_subcommand(
        "logout", "Forget the login of an upstream (its tokens and client) in the store.");
    for (CLI::App* command : {login_, logout_}) {
      command
          ->add_option(
              "UPSTREAM",
              [this](const CLI::results_t& values) {
                cl_.login_upstream = values.front();
                return true;
              },
              "The upstream's name in the catalog's \"upstreams\".")
          ->type_name("UPSTREAM");
      data_dir_option(*command);
      store_options(*command);
    }
    text_option(*login_, "--catalog", "FILE", "The catalog file serve uses.",
                [this](const std::string& v) { cl_.serve.catalog_file = v; });
    flag_option(*login_, "--no-browser", cl_.login_no_browser,
                "Print the authorization URL only; open no browser.");
    number_option(*login_, "--timeout", "SECONDS", cl_.login_timeout_seconds, 10, 3600,
                  "How long to wait for the browser's redirect");
  }

  void finish_login(CLI::App& command, CommandLine::Action action) {
    if (const auto rest = command.remaining(); !rest.empty()) {
      store_kind_check_extra(rest.front());
      throw UsageError("unknown option \"" + clip_for_message(rest.front()) + "\" for " +
                       command.get_name());
    }
    if (cl_.login_upstream.empty()) {
      throw UsageError(command.get_name() + " needs the UPSTREAM's name");
    }
    if (action == CommandLine::Action::login && cl_.serve.catalog_file.empty()) {
      throw UsageError("login needs --catalog FILE, the catalog that names the upstream");
    }
    finish_store();
    cl_.action = action;
  }

  CommandLine& cl_;
  CLI::App app_;
  bool version_asked_ = false;
  CLI::App* serve_ = nullptr;
  CLI::App* check_ = nullptr;
  CLI::App* search_ = nullptr;
  CLI::App* journal_ = nullptr;
  CLI::App* audit_ = nullptr;
  CLI::App* freeze_ = nullptr;
  CLI::App* import_ = nullptr;
  CLI::App* doctor_ = nullptr;
  CLI::App* login_ = nullptr;
  CLI::App* logout_ = nullptr;
  CLI::Option* reason_ = nullptr;
  CLI::App* results_ = nullptr;
  CLI::Option* results_session_ = nullptr;
  CLI::Option* results_older_ = nullptr;
  CLI::Option* results_page_ = nullptr;
  CLI::App* store_ = nullptr;
  CLI::Option* store_force_ = nullptr;
  std::string dashed_id_;  // take_dashed_result_id
  bool no_journal_ = false;
  CLI::App* version_command_ = nullptr;
  CLI::App* help_command_ = nullptr;
  CLI::Option* cases_ = nullptr;
  CLI::Option* seed_ = nullptr;
  std::map<std::pair<const CLI::App*, std::string>, std::string> needs_;
};

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine cl;
  CommandLineDefinition definition(cl, args.empty() ? std::string_view() : args.front());
  std::string error;
  try {
    definition.parse(args);
    return cl;
  } catch (const UsageError& e) {
    error = e.what();
  } catch (const CLI::CallForHelp&) {
    cl.action = CommandLine::Action::help;
    return cl;
  } catch (const CLI::ArgumentMismatch& e) {
    // The arguments ran out before an option's value.
    error = definition.need_of(e.what());
  } catch (const CLI::ParseError& e) {
    error = e.what();
  }
  CommandLine failed;
  failed.action = CommandLine::Action::usage_error;
  failed.error = std::move(error);
  return failed;
}

std::string usage_text() {
  CommandLine defaults;
  CommandLineDefinition definition(defaults);
  return definition.app().help("", CLI::AppFormatMode::All);
}

std::vector<std::string> accepted_options() {
  CommandLine defaults;
  CommandLineDefinition definition(defaults);
  std::vector<std::string> names;
  const auto add = [&names](const CLI::App& app, const std::string& prefix) {
    for (const CLI::Option* opt : app.get_options()) {
      if (opt->get_positional() || opt == app.get_help_ptr()) continue;
      for (const std::string& name : opt->get_lnames()) names.push_back(prefix + "--" + name);
    }
  };
  add(definition.app(), "");
  for (const CLI::App* sub : definition.app().get_subcommands({})) {
    if (!sub->get_group().empty()) add(*sub, sub->get_name() + " ");
  }
  return names;
}

}  // namespace toolmux
