#include "src/app/cli.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace toolmux;
using Action = CommandLine::Action;
using toolmux::FreezeAction;

namespace {

std::string describe(const std::vector<std::string>& args) {
  std::string out = "toolmux";
  for (const std::string& a : args) out += " " + a;
  return out;
}

CommandLine parse_ok(const std::vector<std::string>& args) {
  INFO(describe(args));
  CommandLine cl = parse_command_line(args);
  INFO("error: " << cl.error);
  CHECK(cl.action != Action::usage_error);
  return cl;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The README's "Command line" synopsis: the code block after the heading.
std::string readme_synopsis() {
  const std::string readme = read_file(TOOLMUX_TEST_DATA "/../../README.md");
  const auto section = readme.find("\n## Command line\n");
  REQUIRE(section != std::string::npos);
  const auto start = readme.find("```\n", section);
  const auto end = readme.find("```\n", start + 4);
  REQUIRE(end != std::string::npos);
  return readme.substr(start, end - start);
}

// The command ("serve") and the option ("--max-calls") of an accepted_options() entry.
std::pair<std::string, std::string> split_entry(const std::string& entry) {
  const auto space = entry.find(' ');
  if (space == std::string::npos) return {"", entry};
  return {entry.substr(0, space), entry.substr(space + 1)};
}

}  // namespace

TEST_CASE("cli: the top-level actions", "[cli]") {
  CHECK(parse_ok({"--version"}).action == Action::version);
  CHECK(parse_ok({"version"}).action == Action::version);
  CHECK(parse_ok({"--help"}).action == Action::help);
  CHECK(parse_ok({"-h"}).action == Action::help);
  CHECK(parse_ok({"help"}).action == Action::help);
  CHECK(parse_ok({"serve", "--help"}).action == Action::help);
  CHECK(parse_ok({"serve", "--catalog", "c.json", "-h"}).action == Action::help);
  CHECK(parse_ok({"check", "--help"}).action == Action::help);
  CHECK(parse_ok({"search", "--help"}).action == Action::help);
  CHECK(parse_ok({"journal", "--help"}).action == Action::help);
  CHECK(parse_ok({"audit", "--help"}).action == Action::help);
  CHECK(parse_ok({"freeze", "--help"}).action == Action::help);
  CHECK(parse_ok({"results", "--help"}).action == Action::help);
}

TEST_CASE("cli: login and logout name an upstream, and login needs the catalog", "[cli]") {
  const CommandLine login =
      parse_ok({"login", "linear", "--catalog", "c.json", "--no-browser", "--timeout", "60"});
  CHECK(login.action == Action::login);
  CHECK(login.login_upstream == "linear");
  CHECK(login.serve.catalog_file == "c.json");
  CHECK(login.login_no_browser);
  CHECK(login.login_timeout_seconds == 60);
  CHECK(parse_ok({"login", "x", "--catalog", "c.json"}).login_timeout_seconds == 300);
  const CommandLine logout = parse_ok({"logout", "linear", "--data-dir", "/tmp/d"});
  CHECK(logout.action == Action::logout);
  CHECK(logout.login_upstream == "linear");
  const CommandLine no_catalog = parse_command_line({"login", "linear"});
  CHECK(no_catalog.action == Action::usage_error);
  CHECK(no_catalog.error == "login needs --catalog FILE, the catalog that names the upstream");
  const CommandLine no_name = parse_command_line({"logout"});
  CHECK(no_name.action == Action::usage_error);
  CHECK(no_name.error == "logout needs the UPSTREAM's name");
  CHECK(parse_command_line({"login", "x", "--catalog", "c", "--timeout", "5"}).action ==
        Action::usage_error);
}

TEST_CASE("cli: serve without options has every default", "[cli]") {
  const CommandLine cl = parse_ok({"serve"});
  REQUIRE(cl.action == Action::serve);
  const ServeOptions defaults;
  const ServeOptions& o = cl.serve;
  CHECK(o.catalog_file.empty());
  CHECK(o.roots.empty());
  CHECK(o.data_dir.empty());
  CHECK_FALSE(o.allow_writes);
  CHECK(o.page_size == 0);
  CHECK(o.max_message_bytes == 16u << 20);
  CHECK(o.log_level == LogLevel::info);
  CHECK(o.max_calls == 64);
  CHECK(o.max_session_calls == 16);
  CHECK(o.max_queued_calls == 256);
  CHECK_FALSE(o.http);
  CHECK(o.http_path == "/mcp");
  CHECK(o.max_session_queued_calls == 64);
  CHECK(o.max_sessions == defaults.max_sessions);
  CHECK(o.shutdown_grace_seconds == 10);
  CHECK_FALSE(o.read_only);
  CHECK(o.journal);
  CHECK(o.audit_retention_days == 30);
}

TEST_CASE("cli: serve's guarded-mutation options", "[cli]") {
  const CommandLine cl =
      parse_ok({"serve", "--read-only", "--no-journal", "--audit-retention-days", "7"});
  REQUIRE(cl.action == Action::serve);
  CHECK(cl.serve.read_only);
  CHECK_FALSE(cl.serve.journal);
  CHECK(cl.serve.audit_retention_days == 7);
  CHECK(parse_ok({"serve", "--audit-retention-days=36500"}).serve.audit_retention_days == 36500);
}

TEST_CASE("cli: import and doctor", "[cli]") {
  const CommandLine plain = parse_ok({"import", "claude_desktop_config.json"});
  REQUIRE(plain.action == Action::import_config);
  CHECK(plain.import.input == "claude_desktop_config.json");
  CHECK_FALSE(plain.import.format);
  CHECK(plain.import.out == "toolmux-catalog.json");
  CHECK_FALSE(plain.import.force);
  CHECK_FALSE(plain.import.dry_run);
  const CommandLine every = parse_ok(
      {"import", "--format", "vscode", "--out", "/c.json", "--force", "--dry-run", "mcp.json"});
  CHECK(every.import.input == "mcp.json");
  CHECK(every.import.format == toolmux::ClientFormat::vscode);
  CHECK(every.import.out == "/c.json");
  CHECK(every.import.force);
  CHECK(every.import.dry_run);

  const CommandLine doctor = parse_ok({"doctor"});
  REQUIRE(doctor.action == Action::doctor);
  CHECK(doctor.serve.catalog_file.empty());
  CHECK_FALSE(doctor.serve.http);
  const CommandLine checked = parse_ok({"doctor", "--catalog", "c.json", "--data-dir", "/d",
                                        "--http", "127.0.0.1:8080", "--root", "/r"});
  CHECK(checked.serve.catalog_file == "c.json");
  CHECK(checked.serve.data_dir == "/d");
  CHECK(checked.serve.http);
  CHECK(checked.serve.http_host == "127.0.0.1");
  CHECK(checked.serve.http_port == 8080);
  CHECK(checked.serve.roots == std::vector<std::filesystem::path>{"/r"});
}

TEST_CASE("cli: journal, audit and freeze", "[cli]") {
  const CommandLine journal = parse_ok({"journal"});
  REQUIRE(journal.action == Action::journal);
  CHECK_FALSE(journal.json);
  CHECK(journal.serve.data_dir.empty());
  const CommandLine journal_json = parse_ok({"journal", "--json", "--data-dir", "/d"});
  CHECK(journal_json.json);
  CHECK(journal_json.serve.data_dir == "/d");

  const CommandLine audit = parse_ok({"audit"});
  REQUIRE(audit.action == Action::audit);
  CHECK_FALSE(audit.audit_query.since);
  CHECK(audit.audit_query.tool.empty());
  CHECK(audit.audit_query.principal.empty());
  CHECK(audit.audit_query.limit == 0);
  const CommandLine filtered =
      parse_ok({"audit", "--since", "2026-12-01T10:00:00Z", "--tool", "delete_file", "--principal",
                "alice", "--limit", "50", "--json", "--data-dir", "/d"});
  REQUIRE(filtered.action == Action::audit);
  CHECK(filtered.audit_query.since ==
        std::chrono::system_clock::time_point(std::chrono::seconds(1'796'119'200)));
  CHECK(filtered.audit_query.tool == "delete_file");
  CHECK(filtered.audit_query.principal == "alice");
  CHECK(filtered.audit_query.limit == 50);
  CHECK(filtered.json);
  CHECK(filtered.serve.data_dir == "/d");
  // A duration is counted back from when the command line was read.
  const auto before = std::chrono::system_clock::now();
  const CommandLine back = parse_ok({"audit", "--since", "2h"});
  const auto after = std::chrono::system_clock::now();
  REQUIRE(back.audit_query.since);
  CHECK(*back.audit_query.since >= before - std::chrono::hours(2));
  CHECK(*back.audit_query.since <= after - std::chrono::hours(2));
  CHECK_FALSE(audit.audit_verify);
  const CommandLine verify = parse_ok({"audit", "verify", "--data-dir", "/d"});
  REQUIRE(verify.action == Action::audit);
  CHECK(verify.audit_verify);
  CHECK(verify.serve.data_dir == "/d");
  CHECK(parse_ok({"audit", "verify", "--store", "postgresql"}).audit_verify);
  CHECK(parse_command_line({"audit", "check"}).error == "unknown option \"check\" for audit");
  CHECK(parse_command_line({"audit", "verify", "--limit", "5"}).error ==
        "--since, --tool, --principal, --limit and --json go with the listing, not with audit "
        "verify");

  const CommandLine on = parse_ok({"freeze", "on", "--reason", "incident 42", "--data-dir", "/d"});
  REQUIRE(on.action == Action::freeze);
  CHECK(on.freeze_action == FreezeAction::on);
  CHECK(on.freeze_reason == "incident 42");
  CHECK(on.serve.data_dir == "/d");
  CHECK(parse_ok({"freeze", "off"}).freeze_action == FreezeAction::off);
  CHECK(parse_ok({"freeze", "status"}).freeze_action == FreezeAction::status);
  CHECK(parse_ok({"freeze", "--reason", "r", "on"}).freeze_action == FreezeAction::on);
}

TEST_CASE("cli: results list, show and delete", "[cli]") {
  using toolmux::ResultsCommand;
  const CommandLine list = parse_ok({"results", "list"});
  REQUIRE(list.action == Action::results);
  CHECK(list.results.action == ResultsCommand::Action::list);
  CHECK(list.results.session.empty());
  CHECK_FALSE(list.results.created_before);
  CHECK_FALSE(list.json);
  const auto before = std::chrono::system_clock::now();
  const CommandLine filtered = parse_ok(
      {"results", "list", "--session", "abc", "--older-than", "2h", "--json", "--data-dir", "/d"});
  const auto after = std::chrono::system_clock::now();
  CHECK(filtered.results.session == "abc");
  REQUIRE(filtered.results.created_before);
  CHECK(*filtered.results.created_before >= before - std::chrono::hours(2));
  CHECK(*filtered.results.created_before <= after - std::chrono::hours(2));
  CHECK(filtered.json);
  CHECK(filtered.serve.data_dir == "/d");

  const CommandLine show = parse_ok({"results", "show", "ID1", "--page", "3"});
  CHECK(show.results.action == ResultsCommand::Action::show);
  CHECK(show.results.id == "ID1");
  CHECK(show.results.page == 3);
  CHECK(parse_ok({"results", "show", "ID1"}).results.page == 0);
  const CommandLine one = parse_ok({"results", "delete", "ID1", "--store", "postgresql"});
  CHECK(one.results.action == ResultsCommand::Action::remove);
  CHECK(one.results.id == "ID1");
  CHECK(one.serve.store == toolmux::StoreKind::postgresql);
  CHECK(parse_ok({"results", "delete", "--session", "abc"}).results.session == "abc");
  CHECK(parse_ok({"results", "delete", "--older-than", "7d"}).results.created_before);
  // An id may start with '-' (base64url): it is still the ID, not an option,
  // unless it is an option's value.
  const std::string dashed = "-" + std::string(42, 'A');
  const CommandLine dashed_show = parse_ok({"results", "show", dashed, "--page", "2"});
  CHECK(dashed_show.results.id == dashed);
  CHECK(dashed_show.results.page == 2);
  CHECK(parse_ok({"results", "delete", "--data-dir", "/d", dashed}).results.id == dashed);
  const CommandLine dashed_session = parse_ok({"results", "delete", "--session", dashed});
  CHECK(dashed_session.results.session == dashed);
  CHECK(dashed_session.results.id.empty());
  CHECK(parse_command_line({"results", "show", "ID1", dashed}).error == "results takes one ID");
}

TEST_CASE("cli: serve takes each kind of option", "[cli]") {
  const CommandLine cl = parse_ok({"serve",
                                   "--catalog",
                                   "c.json",
                                   "--root",
                                   "/a",
                                   "--root",
                                   "/b",
                                   "--data-dir",
                                   "/d",
                                   "--allow-writes",
                                   "--page-size",
                                   "7",
                                   "--max-message-bytes",
                                   "1024",
                                   "--log-level",
                                   "warning",
                                   "--max-calls",
                                   "1024",
                                   "--max-session-calls",
                                   "1",
                                   "--max-queued-calls",
                                   "0",
                                   "--shutdown-grace",
                                   "3",
                                   "--otlp-endpoint",
                                   "http://127.0.0.1:4318"});
  REQUIRE(cl.action == Action::serve);
  const ServeOptions& o = cl.serve;
  CHECK(o.catalog_file == "c.json");
  CHECK(o.roots == std::vector<std::filesystem::path>{"/a", "/b"});
  CHECK(o.data_dir == "/d");
  CHECK(o.allow_writes);
  CHECK(o.page_size == 7);
  CHECK(o.max_message_bytes == 1024);
  CHECK(o.log_level == LogLevel::warning);
  CHECK(o.max_calls == 1024);
  CHECK(o.max_session_calls == 1);
  CHECK(o.max_queued_calls == 0);
  CHECK(o.shutdown_grace_seconds == 3);
  CHECK(o.otlp_endpoint == "http://127.0.0.1:4318");
}

// What the Claude Desktop extension (packaging/mcpb/manifest.json) runs: its
// list of folders expanded after one --root, and an empty catalog setting.
TEST_CASE("cli: serve --store and --store-url-file", "[cli]") {
  CHECK(parse_ok({"serve"}).serve.store == StoreKind::rocksdb);
  CHECK(parse_ok({"serve", "--store", "rocksdb"}).serve.store == StoreKind::rocksdb);
  const CommandLine pg =
      parse_ok({"serve", "--store", "postgresql", "--store-url-file", "/run/toolmux/url"});
  CHECK(pg.serve.store == StoreKind::postgresql);
  CHECK(pg.serve.store_url_file == "/run/toolmux/url");
  CHECK(parse_ok({"doctor", "--store=postgresql"}).serve.store == StoreKind::postgresql);
}

TEST_CASE("cli: a connection string on the command line is refused without repeating it", "[cli]") {
  const std::string refusal =
      "--store takes rocksdb or postgresql, not a connection string (the command line is "
      "visible to every user of the machine and it may hold a password): give --store "
      "postgresql and the connection string in $TOOLMUX_POSTGRES_URL or in a file named by "
      "--store-url-file";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"serve", "--store", "postgresql://toolmux:s3cret@db.example/toolmux"},
           {"serve", "--store", "postgres://toolmux:s3cret@db.example/toolmux"},
           {"serve", "--store=host=db.example password=s3cret"},
           {"serve", "--store", "postgresql", "postgresql://toolmux:s3cret@db.example/toolmux"},
           {"serve", "--store", "postgresql", "host=db.example", "password=s3cret"},
           {"doctor", "--store", "postgresql://toolmux:s3cret@db.example/toolmux"},
           {"doctor", "--store", "postgresql", "postgresql://toolmux:s3cret@db.example/toolmux"},
           {"journal", "--store", "postgresql", "postgresql://toolmux:s3cret@db.example/toolmux"},
           {"audit", "--store", "postgresql", "host=db.example", "password=s3cret"},
           {"freeze", "status", "--store", "postgresql",
            "postgresql://toolmux:s3cret@db.example/toolmux"}}) {
    INFO(describe(args));
    const CommandLine cl = parse_command_line(args);
    CHECK(cl.action == Action::usage_error);
    CHECK(cl.error == refusal);
  }
}

TEST_CASE("cli: serve --root takes several folders and an empty --catalog means none", "[cli]") {
  const CommandLine cl =
      parse_ok({"serve", "--catalog=", "--root", "/a", "/b", "/c", "--root", "/d", "--read-only"});
  REQUIRE(cl.action == Action::serve);
  CHECK(cl.serve.catalog_file.empty());
  CHECK(cl.serve.roots == std::vector<std::filesystem::path>{"/a", "/b", "/c", "/d"});
  CHECK(cl.serve.read_only);
}

TEST_CASE("cli: serve --http and its options", "[cli]") {
  const CommandLine cl = parse_ok({"serve",
                                   "--http",
                                   "[::1]:0",
                                   "--path",
                                   "/x",
                                   "--allow-host",
                                   "a.example",
                                   "--allow-host",
                                   "b.example",
                                   "--allow-origin",
                                   "https://o.example",
                                   "--tokens-file",
                                   "t.txt",
                                   "--status-principal",
                                   "ops",
                                   "--status-principal",
                                   "alice",
                                   "--max-sessions",
                                   "5",
                                   "--session-idle",
                                   "60",
                                   "--max-session-queued-calls",
                                   "100000",
                                   "--max-connections",
                                   "9",
                                   "--max-connections-per-client",
                                   "3",
                                   "--header-timeout",
                                   "4",
                                   "--body-timeout",
                                   "8"});
  REQUIRE(cl.action == Action::serve);
  const ServeOptions& o = cl.serve;
  CHECK(o.http);
  CHECK(o.http_host == "::1");
  CHECK(o.http_port == 0);
  CHECK(o.http_path == "/x");
  CHECK(o.allowed_hosts == std::vector<std::string>{"a.example", "b.example"});
  CHECK(o.allowed_origins == std::vector<std::string>{"https://o.example"});
  CHECK(o.tokens_file == "t.txt");
  CHECK(o.status_principals == std::vector<std::string>{"ops", "alice"});
  CHECK(o.max_sessions == 5);
  CHECK(o.session_idle_seconds == 60);
  CHECK(o.max_session_queued_calls == 100000);
  CHECK(o.max_connections == 9);
  CHECK(o.max_connections_per_client == 3);
  CHECK(o.header_timeout_seconds == 4);
  CHECK(o.body_timeout_seconds == 8);

  const CommandLine named = parse_ok({"serve", "--http", "localhost:8080"});
  CHECK(named.serve.http_host == "localhost");
  CHECK(named.serve.http_port == 8080);
}

TEST_CASE("cli: a repeated option keeps its last value, and a value may start with '-'", "[cli]") {
  const CommandLine cl =
      parse_ok({"serve", "--max-calls", "4", "--max-calls", "8", "--catalog", "-odd.json"});
  CHECK(cl.serve.max_calls == 8);
  CHECK(cl.serve.catalog_file == "-odd.json");
  // --name=value is the same as --name value.
  CHECK(parse_ok({"serve", "--max-calls=5"}).serve.max_calls == 5);
}

TEST_CASE("cli: check takes FILE, the tool options and the fuzz options in any order", "[cli]") {
  const CommandLine plain = parse_ok({"check", "catalog.json"});
  REQUIRE(plain.action == Action::check);
  CHECK(plain.check_file == "catalog.json");
  CHECK(plain.serve.catalog_file == "catalog.json");
  CHECK_FALSE(plain.check_fuzz.fuzz);
  CHECK(plain.check_fuzz.cases == 20);
  CHECK(plain.check_fuzz.seed == 1);

  const CommandLine fuzz = parse_ok({"check", "--fuzz", "--root", "/r", "catalog.json",
                                     "--allow-writes", "--cases", "1000", "--seed", "0"});
  REQUIRE(fuzz.action == Action::check);
  CHECK(fuzz.check_file == "catalog.json");
  CHECK(fuzz.serve.roots == std::vector<std::filesystem::path>{"/r"});
  CHECK(fuzz.serve.allow_writes);
  CHECK(fuzz.check_fuzz.fuzz);
  CHECK(fuzz.check_fuzz.cases == 1000);
  CHECK(fuzz.check_fuzz.seed == 0);
  CHECK_FALSE(fuzz.check_fuzz.run);
  CHECK_FALSE(fuzz.check_fuzz.mutating);

  const CommandLine run = parse_ok({"check", "--fuzz-mutating", "f", "--run", "--fuzz"});
  CHECK(run.check_fuzz.fuzz);
  CHECK(run.check_fuzz.run);
  CHECK(run.check_fuzz.mutating);
}

TEST_CASE("cli: search joins its words into one query", "[cli]") {
  const CommandLine cl = parse_ok({"search", "--limit", "2", "list", "the", "--allow-writes",
                                   "entries", "--catalog", "c.json", "--root", "/r"});
  REQUIRE(cl.action == Action::search);
  CHECK(cl.search_query == "list the entries");
  CHECK(cl.search_limit == 2);
  CHECK(cl.serve.catalog_file == "c.json");
  CHECK(cl.serve.roots == std::vector<std::filesystem::path>{"/r"});
  CHECK(cl.serve.allow_writes);
  CHECK(parse_ok({"search", "x"}).search_limit == 5);
}

TEST_CASE("cli: search takes a source, alternatives and --explain, and no query lists sources",
          "[cli]") {
  const CommandLine cl =
      parse_ok({"search", "--source", "twilio/TwilioChatV2", "--alternative", "send sms", "text",
                "--alternative", "create message", "--explain", "customer"});
  REQUIRE(cl.action == Action::search);
  CHECK(cl.search_query == "text customer");
  CHECK(cl.search_source == "twilio/TwilioChatV2");
  CHECK(cl.search_alternatives == std::vector<std::string>{"send sms", "create message"});
  CHECK(cl.search_explain);
  const CommandLine outline = parse_ok({"search"});
  REQUIRE(outline.action == Action::search);
  CHECK(outline.search_query.empty());
  CHECK_FALSE(outline.search_explain);
}

TEST_CASE("cli: each usage error names what was wrong", "[cli]") {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{},
       "missing command (serve, check, search, journal, audit, freeze, results, store, import, "
       "doctor, login, logout, --version, --help)"},
      {{"import"}, "import needs the client's configuration FILE"},
      {{"import", "a.json", "b.json"}, "import takes one FILE and its options, not \"b.json\""},
      {{"import", "a.json", "--format", "windsurf"},
       "--format needs claude, cursor or vscode, not \"windsurf\""},
      {{"import", "a.json", "--format"}, "--format needs claude, cursor or vscode"},
      {{"doctor", "--http", "8080"}, "--http needs HOST:PORT, e.g. 127.0.0.1:8080 (got \"8080\")"},
      {{"doctor", "extra"}, "unknown option \"extra\" for doctor"},
      {{"frobnicate"}, "unknown command \"frobnicate\""},
      {{"--bogus"}, "unknown command \"--bogus\""},
      {{"serve", "--no-such-option"}, "unknown option \"--no-such-option\" for serve"},
      {{"serve", "--store", "sqlite"}, "--store must be rocksdb or postgresql"},
      {{"serve", "--store"}, "--store needs a value"},
      {{"serve", "--store-url-file", "/run/url"}, "--store-url-file needs --store postgresql"},
      {{"doctor", "--store-url-file", "/run/url"}, "--store-url-file needs --store postgresql"},
      {{"serve", "--bogus=1"}, "unknown option \"--bogus=1\" for serve"},
      {{"serve", "extra"}, "unknown option \"extra\" for serve"},
      {{"serve", "--version"}, "unknown option \"--version\" for serve"},
      {{"serve", "check"}, "unknown option \"check\" for serve"},
      {{"serve", "--catalog"}, "--catalog needs a value"},
      {{"serve", "--root"}, "--root needs a value"},
      {{"serve", "--data-dir", ""}, "--data-dir needs a value"},
      // `--name=` is an empty value, never the next argument.
      {{"serve", "--data-dir=", "--root", "/r"}, "--data-dir needs a value"},
      {{"serve", "--page-size", "0"}, "--page-size needs a whole number above 0"},
      {{"serve", "--page-size", "x"}, "--page-size needs a whole number above 0"},
      {{"serve", "--max-message-bytes", "1023"},
       "--max-message-bytes needs a whole number of at least 1024"},
      {{"serve", "--log-level", "loud"}, "--log-level must be debug, info, warning or error"},
      {{"serve", "--log-level"}, "--log-level needs a value"},
      {{"serve", "--max-calls", "0"}, "--max-calls needs a whole number from 1 to 1024"},
      {{"serve", "--max-calls", "1025"}, "--max-calls needs a whole number from 1 to 1024"},
      {{"serve", "--max-calls", "-1"}, "--max-calls needs a whole number from 1 to 1024"},
      {{"serve", "--max-calls", "0x10"}, "--max-calls needs a whole number from 1 to 1024"},
      {{"serve", "--max-calls", " 5"}, "--max-calls needs a whole number from 1 to 1024"},
      {{"serve", "--max-calls"}, "--max-calls needs a whole number from 1 to 1024"},
      {{"serve", "--max-calls", "0", "--max-calls", "5"},
       "--max-calls needs a whole number from 1 to 1024"},
      {{"serve", "--max-session-calls", "0"},
       "--max-session-calls needs a whole number from 1 to 1024"},
      {{"serve", "--max-queued-calls", "100001"},
       "--max-queued-calls needs a whole number from 0 to 100000"},
      {{"serve", "--shutdown-grace", "0"}, "--shutdown-grace needs a whole number above 0"},
      {{"serve", "--http"}, "--http needs HOST:PORT"},
      {{"serve", "--http", "nope"}, "--http needs HOST:PORT, e.g. 127.0.0.1:8080 (got \"nope\")"},
      {{"serve", "--http", ":80"}, "--http needs HOST:PORT, e.g. 127.0.0.1:8080 (got \":80\")"},
      {{"serve", "--http", "h:65536"},
       "--http needs HOST:PORT, e.g. 127.0.0.1:8080 (got \"h:65536\")"},
      {{"serve", "--http", "h:1", "--path", "mcp"}, "--path must start with /"},
      {{"serve", "--path", "/x"}, "those options need --http HOST:PORT"},
      {{"serve", "--allow-host", "h"}, "those options need --http HOST:PORT"},
      {{"serve", "--allow-origin", "o"}, "those options need --http HOST:PORT"},
      {{"serve", "--tokens-file", "t"}, "those options need --http HOST:PORT"},
      {{"serve", "--status-principal", "ops"}, "those options need --http HOST:PORT"},
      {{"serve", "--http", "h:1", "--path", "/status"},
       "--path /status is taken by toolmux's /status"},
      {{"serve", "--http", "h:1", "--path", "/metrics"},
       "--path /metrics is taken by toolmux's /metrics"},
      {{"serve", "--http", "h:1", "--max-session-queued-calls", "100001"},
       "--max-session-queued-calls needs a whole number from 0 to 100000"},
      {{"serve", "--max-sessions", "0"}, "--max-sessions needs a whole number above 0"},
      {{"serve", "--session-idle", "0"}, "--session-idle needs a whole number above 0"},
      {{"serve", "--max-connections", "0"}, "--max-connections needs a whole number above 0"},
      {{"serve", "--max-connections-per-client", "0"},
       "--max-connections-per-client needs a whole number above 0"},
      {{"serve", "--header-timeout", "0"}, "--header-timeout needs a whole number above 0"},
      {{"serve", "--body-timeout", "x"}, "--body-timeout needs a whole number above 0"},
      {{"check"}, "check needs a FILE"},
      {{"check", "a", "b"},
       "check takes one FILE and optionally --allow-writes, --root DIR and --fuzz"},
      {{"check", "--bogus", "f"},
       "check takes one FILE and optionally --allow-writes, --root DIR and --fuzz"},
      {{"check", "--root"}, "--root needs a value"},
      {{"check", "f", "--cases", "5"}, "--cases and --seed go with --fuzz"},
      {{"check", "f", "--seed", "5"}, "--cases and --seed go with --fuzz"},
      {{"check", "--fuzz", "f", "--cases", "0"}, "--cases needs a whole number from 1 to 1000"},
      {{"check", "--fuzz", "f", "--cases", "1001"}, "--cases needs a whole number from 1 to 1000"},
      {{"check", "--fuzz", "f", "--cases"}, "--cases needs a whole number from 1 to 1000"},
      {{"check", "--fuzz", "f", "--seed", "x"}, "--seed needs a whole number"},
      {{"check", "--fuzz", "f", "--seed"}, "--seed needs a whole number"},
      {{"check", "f", "--run"}, "--run goes with --fuzz"},
      {{"check", "--fuzz", "f", "--fuzz-mutating"}, "--fuzz-mutating goes with --fuzz --run"},
      {{"search", "--alternative", "a", "--alternative", "b", "--alternative", "c", "--alternative",
        "d", "q"},
       "--alternative: at most 3"},
      {{"search", "--source"}, "--source needs a value"},
      {{"search", "--explain=yes", "q"}, "--explain takes no value"},
      {{"search", "--limit", "0", "x"}, "--limit needs a whole number from 1 to 20"},
      {{"search", "--limit", "21", "x"}, "--limit needs a whole number from 1 to 20"},
      {{"search", "--limit"}, "--limit needs a whole number from 1 to 20"},
      {{"search", "--catalog"}, "--catalog needs a value"},
      {{"search", "--bogus", "q"}, "unknown option \"--bogus\" for search"},
      {{"search", "-x", "q"}, "unknown option \"-x\" for search"},
      {{"serve", "--allow-writes=yes"}, "--allow-writes takes no value"},
      {{"serve", "--read-only=yes"}, "--read-only takes no value"},
      {{"serve", "--no-journal=1"}, "--no-journal takes no value"},
      {{"serve", "--audit-retention-days", "0"},
       "--audit-retention-days needs a whole number from 1 to 36500"},
      {{"serve", "--audit-retention-days", "36501"},
       "--audit-retention-days needs a whole number from 1 to 36500"},
      {{"journal", "extra"}, "unknown option \"extra\" for journal"},
      {{"journal", "--since", "1h"}, "unknown option \"--since\" for journal"},
      {{"journal", "--data-dir"}, "--data-dir needs a value"},
      {{"audit", "--since", "yesterday"},
       "--since needs an RFC 3339 time (2026-12-01T10:00:00Z) or a duration back from now (90s, "
       "15m, 2h, 7d), not \"yesterday\""},
      {{"audit", "--since", "2026-12-01"},
       "--since needs an RFC 3339 time (2026-12-01T10:00:00Z) or a duration back from now (90s, "
       "15m, 2h, 7d), not \"2026-12-01\""},
      {{"audit", "--since"},
       "--since needs an RFC 3339 time (2026-12-01T10:00:00Z) or a duration back from now (90s, "
       "15m, 2h, 7d)"},
      {{"audit", "--limit", "0"}, "--limit needs a whole number from 1 to 1000000"},
      {{"audit", "--tool", ""}, "--tool needs a value"},
      {{"audit", "--principal"}, "--principal needs a value"},
      {{"audit", "--json=yes"}, "--json takes no value"},
      {{"audit", "delete_file"}, "unknown option \"delete_file\" for audit"},
      {{"results"}, "results needs list, show or delete"},
      {{"results", "purge"}, "results needs list, show or delete, not \"purge\""},
      {{"results", "list", "ID1"}, "results list takes no ID (results show ID shows one)"},
      {{"results", "list", "--page", "2"}, "--page goes with results show"},
      {{"results", "show"}, "results show needs the result's ID"},
      {{"results", "show", "ID1", "--page", "0"}, "--page needs a whole number above 0"},
      {{"results", "show", "ID1", "--session", "s"},
       "--session and --older-than go with list and delete"},
      {{"results", "delete"},
       "results delete needs either the result's ID or --session S and/or --older-than D"},
      {{"results", "delete", "ID1", "--session", "s"},
       "results delete needs either the result's ID or --session S and/or --older-than D"},
      {{"results", "delete", "ID1", "--json"}, "--json goes with results list and show"},
      {{"results", "list", "--older-than", "soon"},
       "--older-than needs a duration (90s, 15m, 2h, 7d), not \"soon\""},
      {{"results", "show", "a", "b"}, "unknown option \"b\" for results"},
      {{"results", "list", "--store-url-file", "f"}, "--store-url-file needs --store postgresql"},
      {{"freeze"}, "freeze needs on, off or status"},
      {{"freeze", "maybe"}, "freeze needs on, off or status, not \"maybe\""},
      {{"freeze", "on", "off"}, "unknown option \"off\" for freeze"},
      {{"freeze", "off", "--reason", "r"}, "--reason goes with freeze on"},
      {{"freeze", "status", "--reason", "r"}, "--reason goes with freeze on"},
      {{"freeze", "on", "--reason"}, "--reason needs a value"},
      {{"check", "--fuzz=1", "f"}, "--fuzz takes no value"},
      {{"--version=2"}, "--version takes no value"},
  };
  for (const Case& c : cases) {
    INFO(describe(c.args));
    const CommandLine cl = parse_command_line(c.args);
    CHECK(cl.action == Action::usage_error);
    CHECK(cl.error == c.error);
  }
}

TEST_CASE("cli: the help documents every option the parser accepts, with its default", "[cli]") {
  const std::string help = usage_text();
  const std::vector<std::string> accepted = accepted_options();
  // Every option toolmux has had, so that none is lost.
  const std::vector<std::string> known_options = {"--version",
                                                  "serve --catalog",
                                                  "serve --root",
                                                  "serve --data-dir",
                                                  "serve --allow-writes",
                                                  "serve --page-size",
                                                  "serve --max-message-bytes",
                                                  "serve --log-level",
                                                  "serve --max-calls",
                                                  "serve --max-session-calls",
                                                  "serve --max-queued-calls",
                                                  "serve --shutdown-grace",
                                                  "serve --otlp-endpoint",
                                                  "serve --http",
                                                  "serve --path",
                                                  "serve --allow-host",
                                                  "serve --allow-origin",
                                                  "serve --tokens-file",
                                                  "serve --status-principal",
                                                  "serve --max-sessions",
                                                  "serve --session-idle",
                                                  "serve --max-session-queued-calls",
                                                  "serve --max-connections",
                                                  "serve --max-connections-per-client",
                                                  "serve --header-timeout",
                                                  "serve --body-timeout",
                                                  "check --allow-writes",
                                                  "check --root",
                                                  "check --fuzz",
                                                  "check --cases",
                                                  "check --seed",
                                                  "search --catalog",
                                                  "search --limit",
                                                  "search --allow-writes",
                                                  "search --root",
                                                  "serve --read-only",
                                                  "serve --no-journal",
                                                  "serve --audit-retention-days",
                                                  "journal --json",
                                                  "journal --data-dir",
                                                  "audit --since",
                                                  "audit --tool",
                                                  "audit --principal",
                                                  "audit --limit",
                                                  "audit --json",
                                                  "audit --data-dir",
                                                  "freeze --reason",
                                                  "freeze --data-dir",
                                                  "import --format",
                                                  "import --out",
                                                  "import --force",
                                                  "import --dry-run",
                                                  "doctor --catalog",
                                                  "doctor --data-dir",
                                                  "doctor --http",
                                                  "doctor --root",
                                                  "doctor --allow-writes",
                                                  "serve --store",
                                                  "serve --store-url-file",
                                                  "doctor --store",
                                                  "doctor --store-url-file",
                                                  "login --catalog",
                                                  "login --no-browser",
                                                  "login --timeout",
                                                  "login --data-dir",
                                                  "login --store",
                                                  "logout --data-dir",
                                                  "logout --store",
                                                  "results --session",
                                                  "results --older-than",
                                                  "results --page",
                                                  "results --json",
                                                  "results --data-dir",
                                                  "results --store",
                                                  "results --store-url-file"};
  for (const std::string& known : known_options) {
    CHECK(std::find(accepted.begin(), accepted.end(), known) != accepted.end());
  }
  for (const std::string& entry : accepted) {
    INFO(entry);
    const auto [command, option] = split_entry(entry);
    if (command.empty()) {
      CHECK(help.find("\ntoolmux " + option + " ") != std::string::npos);
    } else {
      // Each command's options are listed after its synopsis line.
      const auto section = help.find("\ntoolmux " + command + " ");
      REQUIRE(section != std::string::npos);
      CHECK(help.find("    " + option + " ", section) != std::string::npos);
    }
    // ... and the parser accepts it: it is no unknown option.
    if (!command.empty()) {
      const CommandLine cl = parse_command_line({command, option, "1", "x"});
      CHECK(cl.error.find("\"" + option + "\"") == std::string::npos);
    }
  }
  INFO(help);
  CHECK(help.find("(default: 64; 1 to 1024)") != std::string::npos);  // --max-calls
  CHECK(help.find("(default: 16777216; at least 1024)") !=
        std::string::npos);                                              // --max-message-bytes
  CHECK(help.find("(default: all on one page)") != std::string::npos);   // --page-size
  CHECK(help.find("(default: 20; 1 to 1000)") != std::string::npos);     // --cases
  CHECK(help.find("(default: 5; 1 to 20)") != std::string::npos);        // --limit
  CHECK(help.find("(default: 0; 0 to 100000)") == std::string::npos);    // no such
  CHECK(help.find("(default: 256; 0 to 100000)") != std::string::npos);  // --max-queued-calls
  CHECK(help.find("(default: 30; 1 to 36500)") != std::string::npos);    // --audit-retention-days
  CHECK(help.find("all; 1 to 1000000).") != std::string::npos);          // audit --limit
  CHECK(help.find("\ntoolmux freeze [options] ACTION\n") != std::string::npos);
  CHECK(help.find("\ntoolmux results [options] ACTION ID\n") != std::string::npos);
}

TEST_CASE("cli: the README's synopsis names every option the parser accepts", "[cli]") {
  const std::string synopsis = readme_synopsis();
  for (const std::string& entry : accepted_options()) {
    INFO(entry << "\n" << synopsis);
    const auto [command, option] = split_entry(entry);
    CHECK(synopsis.find(option) != std::string::npos);
    if (!command.empty()) {
      // On the command's own lines (its synopsis runs to the next "toolmux ").
      const auto start = synopsis.find("toolmux " + command);
      REQUIRE(start != std::string::npos);
      const auto end = synopsis.find("\ntoolmux ", start);
      CHECK(synopsis.substr(start, end - start).find(option) != std::string::npos);
    }
  }
}
