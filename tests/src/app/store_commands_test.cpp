#include "src/app/store_commands.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <nlohmann/json.hpp>

#include "src/app/cli.h"
#include "src/app/store_backup.h"
#include "src/app/time_text.h"
#include "src/base/redact.h"
#include "src/store/journal_store.h"
#include "src/store/pg_store.h"
#include "src/store/result_store.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"

using nlohmann::json;
using std::chrono::system_clock;
using toolmux::AuditRecord;
using toolmux::CommandLine;
using toolmux::JournalIntent;
using toolmux::JournalStore;
using toolmux::JournalStoreOptions;
using toolmux::testing::TempDir;

namespace {

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

// Parses `args` as the command line would and runs the command.
Run run(const std::vector<std::string>& args) {
  const CommandLine cl = toolmux::parse_command_line(args);
  INFO(cl.error);
  REQUIRE(cl.action != CommandLine::Action::usage_error);
  std::ostringstream out;
  std::ostringstream err;
  Run r;
  switch (cl.action) {
    case CommandLine::Action::journal:
      r.code = toolmux::run_journal(cl, out, err);
      break;
    case CommandLine::Action::audit:
      r.code = toolmux::run_audit(cl, out, err);
      break;
    case CommandLine::Action::freeze:
      r.code = toolmux::run_freeze(cl, out, err);
      break;
    case CommandLine::Action::results:
      r.code = toolmux::run_results(cl, out, err);
      break;
    case CommandLine::Action::store:
      r.code = toolmux::run_store(cl, out, err);
      break;
    default:
      FAIL("not a store command");
  }
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines a listing printed: a header and `rows` rows, with exit code 0.
std::vector<std::string> table_of(const std::vector<std::string>& args, std::size_t rows) {
  const Run r = run(args);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == rows + 1);
  return lines;
}

std::unique_ptr<JournalStore> open_store(const TempDir& dir) {
  JournalStoreOptions options;
  options.data_dir = dir.path();
  auto store = JournalStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

JournalIntent intent(const std::string& call_id, system_clock::time_point started,
                     const std::string& key = "") {
  JournalIntent i;
  i.call_id = call_id;
  i.tool = "delete_file";
  i.side_effect = "destructive";
  i.arguments_digest = "ab12";
  i.principal = "alice";
  i.approver = "bob";
  i.rationale = "old logs";
  i.idempotency_key = key;
  i.started = started;
  return i;
}

AuditRecord record(const std::string& call_id, system_clock::time_point time,
                   const std::string& tool, const std::string& principal) {
  AuditRecord r;
  r.time = time;
  r.call_id = call_id;
  r.principal = principal;
  r.tool = tool;
  r.side_effect = "read_only";
  r.arguments = {{"path", "a.txt"}};
  r.confirmation = "not_required";
  r.outcome = "ok";
  r.duration_ms = 3.25;
  return r;
}

const system_clock::time_point kDay{std::chrono::seconds(1'796'119'200)};  // 2026-12-01T10:00Z

}  // namespace

TEST_CASE("toolmux journal: every journaled call, oldest first, with its state") {
  TempDir dir;
  const std::string d = dir.path().string();
  Run empty = run({"journal", "--data-dir", d});
  CHECK(empty.code == 0);
  CHECK(empty.out == "No journaled calls in " + d + "/journal.\n");
  CHECK(run({"journal", "--data-dir", d, "--json"}).out.empty());

  {
    auto store = open_store(dir);
    REQUIRE(store->begin(intent("c-dead", kDay)).ok());
  }                              // closed with c-dead unfinished, as a crash would leave it
  auto store = open_store(dir);  // marks c-dead interrupted
  REQUIRE(store->begin(intent("c-ok", kDay + std::chrono::seconds(1), "key-7")).ok());
  REQUIRE(store->finish("c-ok", "ok", json::object(), record("c-ok", kDay, "delete_file", "alice"))
              .ok());
  REQUIRE(store->begin(intent("c-running", kDay + std::chrono::seconds(2))).ok());

  const auto lines = table_of({"journal", "--data-dir", d}, 3);
  CHECK(lines[0] ==
        "STARTED                   CALL              TOOL                  CLASS            "
        "PRINCIPAL     APPROVER      KEY           STATE");
  CHECK(lines[1] ==
        "2026-12-01T10:00:00.000Z  c-dead            delete_file           destructive      "
        "alice         bob           -             interrupted: not re-run");
  CHECK(lines[2] ==
        "2026-12-01T10:00:01.000Z  c-ok              delete_file           destructive      "
        "alice         bob           key-7         ok");
  CHECK(lines[3].find("c-running") != std::string::npos);
  CHECK(lines[3].substr(lines[3].size() - 9) == "  running");

  Run jsonl = run({"journal", "--json", "--data-dir", d});
  const auto objects = lines_of(jsonl.out);
  REQUIRE(objects.size() == 3);
  const json ok = json::parse(objects[1]);
  CHECK(ok == json{{"started", "2026-12-01T10:00:01.000Z"},
                   {"ended", ok["ended"]},
                   {"call_id", "c-ok"},
                   {"tool", "delete_file"},
                   {"side_effect", "destructive"},
                   {"arguments_digest", "ab12"},
                   {"principal", "alice"},
                   {"session", nullptr},
                   {"approver", "bob"},
                   {"rationale", "old logs"},
                   {"idempotency_key", "key-7"},
                   {"outcome", "ok"},
                   {"state", "ok"},
                   {"result_too_large", false}});
  CHECK(ok["ended"].is_string());
  CHECK(json::parse(objects[0])["state"] == "interrupted");
  CHECK(json::parse(objects[0])["outcome"] == "interrupted");
  CHECK(json::parse(objects[2])["state"] == "running");
  CHECK(json::parse(objects[2])["outcome"].is_null());
}

TEST_CASE("toolmux audit: a table, JSON Lines, and the filters") {
  TempDir dir;
  const std::string d = dir.path().string();
  CHECK(run({"audit", "--data-dir", d}).out == "No audit records in " + d + "/journal.\n");
  CHECK(run({"audit", "--data-dir", d, "--tool", "x"}).out ==
        "No audit records in " + d + "/journal match those filters.\n");

  const auto now = system_clock::now();
  {
    auto store = open_store(dir);
    REQUIRE(
        store->audit(record("r1", now - std::chrono::hours(3), "read_text_file", "alice")).ok());
    AuditRecord guarded = record("r2", now - std::chrono::minutes(10), "delete_file", "bob");
    guarded.session = "s-9";
    guarded.side_effect = "destructive";
    guarded.confirmation = "accepted";
    guarded.approver = "carol";
    guarded.rationale = "[REDACTED] rotated";
    guarded.duration_ms = 12'345;
    guarded.idempotency_key = "k1";
    REQUIRE(store->audit(guarded).ok());
    // A principal with a terminal escape in it is printed harmless.
    REQUIRE(store->audit(record("r3", now, "read_text_file", "evil\x1b[2J")).ok());
  }

  const auto lines = table_of({"audit", "--data-dir", d}, 3);
  CHECK(lines[0] ==
        "TIME                      PRINCIPAL     SESSION       TOOL                  "
        "CONFIRMATION  APPROVER      OUTCOME            DURATION");
  CHECK(lines[1].find("  alice         -             read_text_file        not_required  -    "
                      "         ok                 3.2 ms") != std::string::npos);
  CHECK(lines[2].find("  bob           s-9           delete_file           accepted      carol "
                      "        ok                 12.3 s") != std::string::npos);
  CHECK(lines[3].find("  evil [2J") != std::string::npos);
  for (const auto& line : lines) CHECK(line.find('\x1b') == std::string::npos);

  using V = std::vector<std::string>;
  const auto ids = [](const Run& r) {
    V out;
    for (const auto& line : lines_of(r.out)) out.push_back(json::parse(line)["call_id"]);
    return out;
  };
  CHECK(ids(run({"audit", "--json", "--data-dir", d})) == V{"r1", "r2", "r3"});
  CHECK(ids(run({"audit", "--json", "--data-dir", d, "--since", "1h"})) == V{"r2", "r3"});
  CHECK(ids(run({"audit", "--json", "--data-dir", d, "--since", "2000-01-01T00:00:00Z"})) ==
        V{"r1", "r2", "r3"});
  CHECK(ids(run({"audit", "--json", "--data-dir", d, "--tool", "read_text_file"})) ==
        V{"r1", "r3"});
  CHECK(ids(run({"audit", "--json", "--data-dir", d, "--principal", "bob"})) == V{"r2"});
  CHECK(ids(run({"audit", "--json", "--data-dir", d, "--limit", "2"})) == V{"r2", "r3"});

  const auto objects = lines_of(run({"audit", "--json", "--data-dir", d}).out);
  REQUIRE(objects.size() == 3);
  const json r2 = json::parse(objects[1]);
  CHECK(r2["session"] == "s-9");
  CHECK(r2["tool"] == "delete_file");
  CHECK(r2["side_effect"] == "destructive");
  CHECK(r2["arguments"] == json{{"path", "a.txt"}});
  CHECK(r2["confirmation"] == "accepted");
  CHECK(r2["approver"] == "carol");
  CHECK(r2["rationale"] == "[REDACTED] rotated");
  CHECK(r2["outcome"] == "ok");
  CHECK(r2["duration_ms"] == 12'345);
  CHECK(r2["idempotency_key"] == "k1");
  CHECK(r2["time"].get<std::string>().size() == 24);
  const json r1 = json::parse(objects[0]);
  CHECK(r1["session"].is_null());
  CHECK(r1["approver"].is_null());
  CHECK(r1["rationale"].is_null());
  CHECK(r1["idempotency_key"].is_null());
}

TEST_CASE("toolmux journal and audit: a journal that cannot be read is an error naming it") {
  TempDir dir;
  dir.write("journal/slot-0/CURRENT", "not a manifest name\n");
  Run journal = run({"journal", "--data-dir", dir.path().string()});
  CHECK(journal.code == 1);
  CHECK(journal.out.empty());
  CHECK(journal.err.find("toolmux: could not read the journal in " +
                         (dir / "journal" / "slot-0").string() + ": ") == 0);
  CHECK(run({"audit", "--data-dir", dir.path().string()}).code == 1);
}

TEST_CASE("toolmux freeze: on with a reason, status, off") {
  TempDir dir;
  const std::string d = dir.path().string();
  Run off = run({"freeze", "status", "--data-dir", d});
  CHECK(off.code == 0);
  CHECK(off.out == "Write freeze off in " + d + ".\n");
  Run on = run({"freeze", "on", "--reason", "incident 42", "--data-dir", d});
  CHECK(on.code == 0);
  CHECK(on.out ==
        "Write freeze on in " + d + ": servers on it refuse every tool but read_only ones.\n");
  CHECK(run({"freeze", "status", "--data-dir", d}).out ==
        "Write freeze on in " + d + ": incident 42.\n");
  CHECK(run({"freeze", "--data-dir", d, "on"}).code == 0);
  CHECK(run({"freeze", "status", "--data-dir", d}).out ==
        "Write freeze on in " + d + " (no reason given).\n");
  CHECK(run({"freeze", "off", "--data-dir", d}).out == "Write freeze off in " + d + ".\n");
  CHECK(run({"freeze", "status", "--data-dir", d}).out == "Write freeze off in " + d + ".\n");

  dir.write("file", "x");
  Run failed = run({"freeze", "on", "--data-dir", (dir / "file" / "state").string()});
  CHECK(failed.code == 1);
  CHECK(failed.err.find("toolmux: could not create the data directory ") == 0);
}

TEST_CASE(
    "toolmux journal, audit and freeze show every text redacted, an idempotency key too, and the "
    "journal keeps the key as sent for replay") {
  TempDir dir;
  const std::string d = dir.path().string();
  const std::string token = "ghp_aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jK2mN5p";
  const std::string known = "store-commands-test-secret-Qz81";
  toolmux::register_secret(known);  // as serve does with a fromEnv value
  const std::string key = "retry " + token + " " + known;
  {
    auto store = open_store(dir);
    REQUIRE(store->begin(intent("c-key", kDay, key)).ok());
    // A record as an older toolmux wrote it: a client's unknown tool name and
    // the key as sent.
    AuditRecord unknown = record("c-key", kDay, token, "alice");
    unknown.arguments = {{"note", "password=hunter2-Xy9"}};
    unknown.idempotency_key = key;
    REQUIRE(store->finish("c-key", "ok", json::object(), unknown).ok());
    // The key is still found as sent: a repeat is replayed.
    const auto found = store->find_by_key("alice", key);
    REQUIRE(found.has_value());
    CHECK(found->intent.call_id == "c-key");
  }
  const auto no_secret = [&](const std::string& text) {
    INFO(text);
    CHECK(text.find(token) == std::string::npos);
    CHECK(text.find("ghp_") == std::string::npos);
    CHECK(text.find(known) == std::string::npos);
    CHECK(text.find("hunter2") == std::string::npos);
  };

  const auto journal = table_of({"journal", "--data-dir", d}, 1);
  no_secret(journal[1]);
  CHECK(journal[1].find("retry [REDACTED:github_token] [REDACTED]  ok") != std::string::npos);
  const json entry = json::parse(run({"journal", "--json", "--data-dir", d}).out);
  no_secret(entry.dump());
  CHECK(entry["idempotency_key"] == "retry [REDACTED:github_token] [REDACTED]");

  const auto audit = table_of({"audit", "--data-dir", d}, 1);
  no_secret(audit[1]);
  CHECK(audit[1].find("[REDACTED:github_token]") != std::string::npos);
  const json r = json::parse(run({"audit", "--json", "--data-dir", d}).out);
  no_secret(r.dump());
  CHECK(r["tool"] == "[REDACTED:github_token]");
  CHECK(r["arguments"] == json{{"note", "password=[REDACTED:secret_value]"}});
  CHECK(r["idempotency_key"] == "retry [REDACTED:github_token] [REDACTED]");

  REQUIRE(run({"freeze", "on", "--reason", "rotating " + token, "--data-dir", d}).code == 0);
  const Run status = run({"freeze", "status", "--data-dir", d});
  no_secret(status.out);
  CHECK(status.out == "Write freeze on in " + d + ": rotating [REDACTED:github_token].\n");
}

// ---- --store postgresql: what every instance wrote ----

namespace {

// A journal of its own on `postgres`: one instance of a deployment.
std::unique_ptr<JournalStore> open_instance(const std::shared_ptr<toolmux::PgStore>& postgres,
                                            const std::string& id) {
  JournalStoreOptions options;
  options.postgres = postgres;
  options.instance_id = id;
  auto store = JournalStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

// TOOLMUX_POSTGRES_URL set while it lives.
struct PostgresUrl {
  explicit PostgresUrl(const std::string& url) { ::setenv("TOOLMUX_POSTGRES_URL", url.c_str(), 1); }
  ~PostgresUrl() { ::unsetenv("TOOLMUX_POSTGRES_URL"); }
  PostgresUrl(const PostgresUrl&) = delete;
  PostgresUrl& operator=(const PostgresUrl&) = delete;
};

}  // namespace

TEST_CASE("toolmux journal and audit --store postgresql: the calls of every instance") {
  const std::string conninfo = toolmux::testing::fresh_postgres_database();
  toolmux::PgStoreOptions store_options;
  store_options.conninfo = conninfo;
  auto postgres = toolmux::PgStore::open(store_options);
  INFO(postgres.message());
  REQUIRE(postgres.ok());
  auto first = open_instance(*postgres, "instance-1");
  auto second = open_instance(*postgres, "instance-2");
  REQUIRE(first->begin(intent("c-ok", kDay, "key-7")).ok());
  REQUIRE(first
              ->finish("c-ok", "ok", nullptr,
                       record("c-ok", kDay + std::chrono::seconds(2), "delete_file", "alice"))
              .ok());
  REQUIRE(second->begin(intent("c-running", kDay + std::chrono::seconds(1))).ok());
  REQUIRE(
      second->audit(record("r-1", kDay + std::chrono::seconds(3), "read_text_file", "bob")).ok());
  const PostgresUrl url(conninfo);

  const auto journal = table_of({"journal", "--store", "postgresql"}, 2);
  CHECK(journal[1].find("c-ok") != std::string::npos);
  CHECK(journal[1].substr(journal[1].size() - 2) == "ok");
  CHECK(journal[2].find("c-running") != std::string::npos);
  CHECK(journal[2].substr(journal[2].size() - 7) == "running");

  const Run audit = run({"audit", "--json", "--store", "postgresql"});
  INFO(audit.err);
  REQUIRE(audit.code == 0);
  const auto lines = lines_of(audit.out);
  REQUIRE(lines.size() == 2);
  const json ok = json::parse(lines[0]);
  const json read = json::parse(lines[1]);
  CHECK(ok["call_id"] == "c-ok");
  CHECK(ok["instance"] == "instance-1");
  CHECK(read["call_id"] == "r-1");
  CHECK(read["instance"] == "instance-2");
  CHECK(table_of({"audit", "--store", "postgresql", "--principal", "bob"}, 1)[1].find("bob") !=
        std::string::npos);

  // The same from a file instead of the variable.
  TempDir dir;
  std::ofstream(dir / "url") << conninfo << "\n";
  table_of({"journal", "--store", "postgresql", "--store-url-file", (dir / "url").string()}, 2);
}

TEST_CASE("toolmux journal and audit --store postgresql: nothing yet, or no connection string") {
  const std::string conninfo = toolmux::testing::fresh_postgres_database();
  {
    const PostgresUrl url(conninfo);
    const Run journal = run({"journal", "--store", "postgresql"});
    CHECK(journal.code == 0);
    CHECK(journal.out.find("No journaled calls in the store at host ") == 0);
    CHECK(journal.out.find("conninfo") == std::string::npos);
    const Run audit = run({"audit", "--store", "postgresql"});
    CHECK(audit.code == 0);
    CHECK(audit.out.find("No audit records in the store at host ") == 0);
  }
  const Run missing = run({"audit", "--store", "postgresql"});
  CHECK(missing.code == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err ==
        "toolmux: --store postgresql needs a connection string: set TOOLMUX_POSTGRES_URL or give "
        "--store-url-file FILE\n");
}

// ---- toolmux results ----

namespace {

using toolmux::ResultStore;
using toolmux::ResultStoreOptions;

// Two sessions' ids, and what `toolmux results` names them by: the first 12
// hex digits of each id's SHA-256 (printf %s session-alice | sha256sum).
const std::string kAlice = "session-alice";
const std::string kBob = "session-bob";
const std::string kAliceTag = "a095c7c2121d";
const std::string kBobTag = "f217023f6d99";
const std::string kDayText = "2026-12-01T10:00:00.000Z";

// A result store as a server opens it, its clock at `at`: RocksDB in `dir`
// (the lowest free slot), or PostgreSQL.
std::unique_ptr<ResultStore> open_results(const TempDir& dir, system_clock::time_point at,
                                          std::shared_ptr<toolmux::PgStore> postgres = nullptr) {
  ResultStoreOptions options;
  options.data_dir = dir.path();
  options.postgres = std::move(postgres);
  options.now = [at] { return at; };
  auto store = ResultStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

std::string put_result(ResultStore& store, const std::string& owner, const std::string& text,
                       const toolmux::StoredFormat& format = {}) {
  auto id = store.put(owner, text, format);
  INFO(id.message());
  REQUIRE(id.ok());
  return *id;
}

// A row of `toolmux results list`.
std::string result_row(const std::string& created, const std::string& id, const std::string& tag,
                       const std::string& bytes, const std::string& pages,
                       const std::string& type) {
  return created + "  " + id + "  " + tag + "  " + bytes + std::string(10 - bytes.size(), ' ') +
         "  " + pages + std::string(5 - pages.size(), ' ') + "  " + type;
}

}  // namespace

TEST_CASE("toolmux results list: every session's results, oldest first, a session as a digest") {
  TempDir dir;
  const std::string d = dir.path().string();
  Run empty = run({"results", "list", "--data-dir", d});
  CHECK(empty.code == 0);
  CHECK(empty.err.empty());
  CHECK(empty.out == "No stored results in " + d + "/results.\n");
  CHECK(run({"results", "list", "--json", "--data-dir", d}).out.empty());

  // Two servers on one data directory (slot-0 and slot-1), both running.
  auto first = open_results(dir, kDay);
  auto second = open_results(dir, kDay + std::chrono::seconds(1));
  const std::string a1 = put_result(*first, kAlice, std::string(45'000, 'x'));
  const std::string b1 =
      put_result(*second, kBob, "iVBORw0K", toolmux::StoredFormat{"image/png", true});
  // Stored a moment ago (the others long ago, for --older-than).
  const auto recent = std::chrono::floor<std::chrono::seconds>(system_clock::now());
  const std::string recent_text = toolmux::format_rfc3339(recent);
  auto later = open_results(dir, recent);  // slot-2
  const std::string a2 = put_result(*later, kAlice, "");
  // A 2026-07-28 request's results are its principal's: no secret, shown as is.
  const std::string c1 = put_result(*later, "principal:carol", "c");

  const auto lines = table_of({"results", "list", "--data-dir", d}, 4);
  CHECK(lines[0] ==
        "CREATED                   ID                                           "
        "SESSION       BYTES       PAGES  TYPE");
  CHECK(lines[1] == result_row(kDayText, a1, kAliceTag, "45000", "3", "text/plain"));
  CHECK(lines[2] ==
        result_row("2026-12-01T10:00:01.000Z", b1, kBobTag, "8", "1", "image/png (base64)"));
  CHECK(lines[3] == result_row(recent_text, a2, kAliceTag, "0", "1", "text/plain"));
  CHECK(lines[4] == recent_text + "  " + c1 + "  principal:carol  1           1      text/plain");
  // A session id is a bearer credential: never printed.
  const Run jsonl = run({"results", "list", "--json", "--data-dir", d});
  CHECK(jsonl.out.find("session-") == std::string::npos);
  for (const auto& line : lines) CHECK(line.find("session-") == std::string::npos);

  const auto objects = lines_of(jsonl.out);
  REQUIRE(objects.size() == 4);
  CHECK(json::parse(objects[3])["session"] == "principal:carol");
  CHECK(json::parse(objects[1]) == json{{"id", b1},
                                        {"session", kBobTag},
                                        {"created", "2026-12-01T10:00:01.000Z"},
                                        {"bytes", 8},
                                        {"chars", 8},
                                        {"pages", 1},
                                        {"mime_type", "image/png"},
                                        {"base64", true}});

  using V = std::vector<std::string>;
  const auto ids = [&](V args) {
    args.insert(args.end(), {"--json", "--data-dir", d});
    V out;
    for (const auto& line : lines_of(run(args).out)) out.push_back(json::parse(line)["id"]);
    return out;
  };
  // --session: the session's id, or its digest as listed (12 digits or more).
  CHECK(ids({"results", "list", "--session", kAlice}) == V{a1, a2});
  CHECK(ids({"results", "list", "--session", kAliceTag}) == V{a1, a2});
  CHECK(ids({"results", "list", "--session", kBobTag + "e5"}).empty());
  CHECK(ids({"results", "list", "--session", kBobTag.substr(0, 6)}).empty());
  CHECK(ids({"results", "list", "--session", "principal:carol"}) == V{c1});
  CHECK(ids({"results", "list", "--older-than", "1d"}) == V{a1, b1});
  CHECK(ids({"results", "list", "--older-than", "1d", "--session", kBob}) == V{b1});
  CHECK(run({"results", "list", "--session", "nobody", "--data-dir", d}).out ==
        "No stored results in " + d + "/results match those filters.\n");
}

TEST_CASE("toolmux results show: the details and the text, redacted and terminal-safe, by page") {
  TempDir dir;
  const std::string d = dir.path().string();
  const std::string token = "ghp_aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jK2mN5p";
  const std::string text = "line one\ntoken " + token + " \x1b[2J x\xe2\x80\xae end";
  const std::string pages =
      std::string(20'000, 'a') + std::string(20'000, 'b') + std::string(5'000, 'c');
  std::string id;
  std::string paged;
  {
    auto store = open_results(dir, kDay);
    id = put_result(*store, kAlice, text);
    paged = put_result(*store, kBob, pages);
  }
  const std::string details = "ID       " + id + "\nSESSION  " + kAliceTag + "\nCREATED  " +
                              kDayText + "\nBYTES    " + std::to_string(text.size()) +
                              "\nCHARS    " + std::to_string(text.size() - 2) +
                              "\nPAGES    1\nTYPE     text/plain\n\n";
  Run shown = run({"results", "show", id, "--data-dir", d});
  CHECK(shown.code == 0);
  CHECK(shown.err.empty());
  CHECK(shown.out == details + "line one\ntoken [REDACTED:github_token] \\u001b[2J x\\u202e end\n");
  CHECK(shown.out.find(token) == std::string::npos);
  CHECK(shown.out.find(kAlice) == std::string::npos);

  const json object = json::parse(run({"results", "show", id, "--json", "--data-dir", d}).out);
  CHECK(object["id"] == id);
  CHECK(object["session"] == kAliceTag);
  CHECK(object["text"] == "line one\ntoken [REDACTED:github_token] \x1b[2J x\xe2\x80\xae end");
  CHECK(object.find("page") == object.end());

  Run second = run({"results", "show", paged, "--page", "2", "--data-dir", d});
  CHECK(second.code == 0);
  CHECK(second.out == "ID       " + paged + "\nSESSION  " + kBobTag + "\nCREATED  " + kDayText +
                          "\nBYTES    45000\nCHARS    45000\nPAGES    3\nTYPE     text/plain\n"
                          "PAGE     2 of 3: characters 20000 to 40000\n\n" +
                          std::string(20'000, 'b') + "\n");
  CHECK(run({"results", "show", paged, "--page", "3", "--data-dir", d})
            .out.find("PAGE     3 of 3: characters 40000 to 45000\n\n" + std::string(5'000, 'c') +
                      "\n") != std::string::npos);
  CHECK(run({"results", "show", paged, "--data-dir", d}).out.find(pages + "\n") !=
        std::string::npos);
  const json page =
      json::parse(run({"results", "show", paged, "--page", "3", "--json", "--data-dir", d}).out);
  CHECK(page["page"] == 3);
  CHECK(page["text"] == std::string(5'000, 'c'));

  Run past = run({"results", "show", paged, "--page", "4", "--data-dir", d});
  CHECK(past.code == 1);
  CHECK(past.out.empty());
  CHECK(past.err == "toolmux: result " + paged + " has 3 pages, not 4\n");

  Run missing = run({"results", "show", "no-such-\x1b[2J-id", "--data-dir", d});
  CHECK(missing.code == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err == "toolmux: no stored result no-such- [2J-id\n");
}

TEST_CASE("toolmux results delete: one result, a session's, older ones, not a running server's") {
  TempDir dir;
  const std::string d = dir.path().string();
  auto stopped = open_results(dir, kDay);                 // slot-0
  auto running = open_results(dir, system_clock::now());  // slot-1
  const std::string a1 = put_result(*stopped, kAlice, "one");
  const std::string a2 = put_result(*stopped, kAlice, "two!");
  const std::string b1 = put_result(*stopped, kBob, "three");
  const std::string b2 = put_result(*running, kBob, "four");
  stopped.reset();  // its server stopped; the other runs on

  Run one = run({"results", "delete", a1, "--data-dir", d});
  CHECK(one.code == 0);
  CHECK(one.err.empty());
  CHECK(one.out ==
        "Deleted result " + a1 + " (session " + kAliceTag + ", 3 bytes) from " + d + "/results.\n");
  Run again = run({"results", "delete", a1, "--data-dir", d});
  CHECK(again.code == 1);
  CHECK(again.out.empty());
  CHECK(again.err == "toolmux: no stored result " + a1 + "\n");

  const std::string held = "toolmux: result " + b2 + " is in " + d +
                           "/results/slot-1, which a running toolmux holds: only that process "
                           "can delete it (when its session ends, or past the retention)\n";
  Run refused = run({"results", "delete", b2, "--data-dir", d});
  CHECK(refused.code == 1);
  CHECK(refused.out.empty());
  CHECK(refused.err == held);

  Run session = run({"results", "delete", "--session", kBobTag, "--data-dir", d});
  CHECK(session.code == 1);
  CHECK(session.out == "Deleted result " + b1 + " (session " + kBobTag +
                           ", 5 bytes).\nDeleted 1 result from " + d +
                           "/results; 1 could not be deleted.\n");
  CHECK(session.err == held);

  Run older = run({"results", "delete", "--older-than", "1h", "--data-dir", d});
  CHECK(older.code == 0);
  CHECK(older.err.empty());
  CHECK(older.out == "Deleted result " + a2 + " (session " + kAliceTag +
                         ", 4 bytes).\nDeleted 1 result from " + d + "/results.\n");
  CHECK(run({"results", "delete", "--session", "nobody", "--data-dir", d}).out ==
        "No stored results in " + d + "/results match those filters.\n");

  // What is left: the running server's result, which it still reads; and
  // the deleted ones are gone for a server that takes slot-0 again.
  const auto left = table_of({"results", "list", "--data-dir", d}, 1);
  CHECK(left[1].find(b2) != std::string::npos);
  CHECK(running->read(kBob, b2, 0, 10).value().text == "four");
  auto restarted = open_results(dir, kDay);
  CHECK(restarted->list_all().value().empty());
  CHECK(restarted->stored_count() == 0);
}

TEST_CASE("toolmux results --store postgresql: the results of every instance") {
  const std::string conninfo = toolmux::testing::fresh_postgres_database();
  TempDir dir;
  auto first = open_results(dir, kDay, toolmux::testing::open_postgres_store(conninfo));
  auto second = open_results(dir, kDay + std::chrono::seconds(1),
                             toolmux::testing::open_postgres_store(conninfo));
  const PostgresUrl url(conninfo);
  const Run empty = run({"results", "list", "--store", "postgresql"});
  CHECK(empty.code == 0);
  CHECK(empty.out.find("No stored results in the store at host ") == 0);

  const std::string a1 = put_result(*first, kAlice, "from the first");
  const std::string b1 = put_result(*second, kBob, "from the second");
  const auto lines = table_of({"results", "list", "--store", "postgresql"}, 2);
  CHECK(lines[1] == result_row(kDayText, a1, kAliceTag, "14", "1", "text/plain"));
  CHECK(lines[2] == result_row("2026-12-01T10:00:01.000Z", b1, kBobTag, "15", "1", "text/plain"));

  const Run shown = run({"results", "show", b1, "--store", "postgresql"});
  CHECK(shown.code == 0);
  CHECK(shown.out.find("SESSION  " + kBobTag + "\n") != std::string::npos);
  CHECK(shown.out.substr(shown.out.size() - 17) == "\nfrom the second\n");

  const Run deleted = run({"results", "delete", a1, "--store", "postgresql"});
  CHECK(deleted.code == 0);
  CHECK(deleted.out.find("Deleted result " + a1 + " (session " + kAliceTag +
                         ", 14 bytes) from the store at host ") == 0);
  CHECK(first->list(kAlice).empty());
  const Run missing = run({"results", "delete", a1, "--store", "postgresql"});
  CHECK(missing.code == 1);
  CHECK(missing.err == "toolmux: no stored result " + a1 + "\n");
  table_of({"results", "list", "--store", "postgresql", "--session", kBob}, 1);
}

// ---- toolmux store backup and restore ----

namespace fs = std::filesystem;
using toolmux::testing::read_file;
using toolmux::testing::write_file;

namespace {

std::unique_ptr<toolmux::JournalStore> open_journal(const fs::path& data_dir) {
  toolmux::JournalStoreOptions options;
  options.data_dir = data_dir;
  auto store = toolmux::JournalStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

// A data directory with a journal of `calls` finished calls, a state key
// (mode 0600) and the write freeze's file.
void fill_state(const fs::path& data_dir, int calls, const std::string& prefix = "call-") {
  auto store = open_journal(data_dir);
  const system_clock::time_point day{std::chrono::seconds(1'796'119'200)};
  for (int i = 0; i < calls; ++i) {
    toolmux::JournalIntent intent;
    intent.call_id = prefix + std::to_string(i);
    intent.tool = "write_text_file";
    intent.side_effect = "local_mutation";
    intent.principal = "alice";
    intent.started = day + std::chrono::seconds(i);
    REQUIRE(store->begin(intent).ok());
    toolmux::AuditRecord record;
    record.time = intent.started;
    record.call_id = intent.call_id;
    record.principal = "alice";
    record.tool = intent.tool;
    record.outcome = "ok";
    REQUIRE(store->finish(intent.call_id, "ok", json::object(), record).ok());
  }
  write_file(data_dir / "state.key", std::string(32, 'k'));
  fs::permissions(data_dir / "state.key", fs::perms::owner_read | fs::perms::owner_write);
  write_file(data_dir / "write-freeze", "incident 7");
}

// The journal's file with the most bytes in a backup.
fs::path largest_table_file(const fs::path& backup) {
  fs::path largest;
  for (const auto& entry : fs::directory_iterator(backup / "journal" / "slot-0")) {
    if (entry.path().extension() == ".sst" &&
        (largest.empty() || entry.file_size() > fs::file_size(largest))) {
      largest = entry.path();
    }
  }
  REQUIRE(!largest.empty());
  return largest;
}

}  // namespace

TEST_CASE("toolmux store backup and restore: a running journal's calls come back whole") {
  TempDir dir;
  const fs::path data = dir.path() / "state";
  fill_state(data, 50);
  const auto listed = run({"journal", "--json", "--data-dir", data.string()});
  REQUIRE(lines_of(listed.out).size() == 50);
  const fs::path backup = dir.path() / "backup";
  {
    auto writer = open_journal(data);  // held, as by a running server, while it is backed up
    const Run saved = run({"store", "backup", backup.string(), "--data-dir", data.string()});
    INFO(saved.err);
    REQUIRE(saved.code == 0);
    CHECK(saved.err.empty());
    const auto lines = lines_of(saved.out);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == "Backed up " + data.string() + " into " + backup.string() + ":");
    CHECK(lines[1].starts_with("  journal/slot-0  "));
    CHECK(lines[1].find(" keys, ") != std::string::npos);
    CHECK(lines[2].starts_with("  2 other files, 32 bytes"));  // state.key, the journal's spool
    CHECK(lines[3].ends_with(" in all, the manifest toolmux-backup.json included."));
  }
  CHECK(fs::exists(backup / "toolmux-backup.json"));
  CHECK(!fs::exists(backup / "write-freeze"));  // a restored state is not frozen
  CHECK(!fs::exists(backup / "journal" / "slot-0" / "LOCK"));
  CHECK((fs::status(backup).permissions() & fs::perms::all) == fs::perms::owner_all);
  // Nothing is left beside it.
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    CHECK((entry.path() == data || entry.path() == backup));
  }

  const fs::path restored = dir.path() / "restored";
  const Run back = run({"store", "restore", backup.string(), "--data-dir", restored.string()});
  INFO(back.err);
  REQUIRE(back.code == 0);
  CHECK(back.out.starts_with("Restored " + backup.string() + " into " + restored.string() +
                             " (verified first):\n"));
  CHECK(run({"journal", "--json", "--data-dir", restored.string()}).out == listed.out);
  CHECK(read_file(restored / "state.key") == std::string(32, 'k'));
  CHECK((fs::status(restored / "state.key").permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  // The restored journal takes new calls.
  fill_state(restored, 1, "after-");
  CHECK(lines_of(run({"journal", "--json", "--data-dir", restored.string()}).out).size() == 51);
}

TEST_CASE("toolmux store backup: a DIR that is not new or empty, or a link, is refused") {
  TempDir dir;
  const fs::path data = dir.path() / "state";
  fill_state(data, 1);
  const fs::path full = dir.path() / "full";
  write_file(full / "notes.txt", "mine");
  Run r = run({"store", "backup", full.string(), "--data-dir", data.string()});
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "toolmux: " + full.string() +
                     " exists and is not empty: a backup goes into a new or empty folder\n");
  CHECK(read_file(full / "notes.txt") == "mine");

  const fs::path empty = dir.path() / "empty";
  fs::create_directories(empty);
  const fs::path link = dir.path() / "link";
  fs::create_directory_symlink(empty, link);
  r = run({"store", "backup", link.string(), "--data-dir", data.string()});
  CHECK(r.code == 1);
  CHECK(r.err == "toolmux: " + link.string() +
                     " is a symbolic link: give the folder the backup goes into itself, new or "
                     "empty\n");
  CHECK(fs::is_empty(empty));

  r = run({"store", "backup", (data / "backups").string(), "--data-dir", data.string()});
  CHECK(r.code == 1);
  CHECK(r.err.find("is inside the data directory") != std::string::npos);

  // An empty folder is fine: the backup takes its place.
  r = run({"store", "backup", empty.string(), "--data-dir", data.string()});
  CHECK(r.code == 0);
  CHECK(fs::exists(empty / "toolmux-backup.json"));
}

TEST_CASE("toolmux store restore: a damaged backup is refused, each problem named") {
  TempDir dir;
  const fs::path data = dir.path() / "state";
  fill_state(data, 20);
  const fs::path backup = dir.path() / "backup";
  REQUIRE(run({"store", "backup", backup.string(), "--data-dir", data.string()}).code == 0);
  const fs::path restored = dir.path() / "restored";
  const auto restore = [&] {
    return run({"store", "restore", backup.string(), "--data-dir", restored.string()});
  };

  SECTION("a table file changed") {
    const fs::path table = largest_table_file(backup);
    std::string bytes = read_file(table);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x55);
    write_file(table, bytes);
    fs::remove(backup / "state.key");
    const Run r = restore();
    CHECK(r.code == 1);
    CHECK(r.err == "toolmux: the backup in " + backup.string() +
                       " is damaged (2 problems); nothing was restored:\n"
                       "  journal/slot-0/" +
                       table.filename().string() +
                       " is not what was backed up: its SHA-256 differs from the manifest's\n"
                       "  state.key is missing\n");
  }
  SECTION("a file cut short") {
    const fs::path table = largest_table_file(backup);
    const auto size = fs::file_size(table);
    fs::resize_file(table, size - 10);
    const Run r = restore();
    CHECK(r.code == 1);
    CHECK(r.err.find("journal/slot-0/" + table.filename().string() + " has " +
                     std::to_string(size - 10) + " bytes, not the " + std::to_string(size) +
                     " the manifest lists") != std::string::npos);
  }
  SECTION("no manifest") {
    fs::remove(backup / "toolmux-backup.json");
    const Run r = restore();
    CHECK(r.code == 1);
    CHECK(r.err == "toolmux: " + backup.string() +
                       " is not a toolmux backup: it has no toolmux-backup.json\n");
  }
  SECTION("a manifest whose path leaves the backup") {
    std::string manifest = read_file(backup / "toolmux-backup.json");
    const auto at = manifest.find("\"state.key\"");
    REQUIRE(at != std::string::npos);
    manifest.replace(at, 11, "\"../outside\"");
    write_file(backup / "toolmux-backup.json", manifest);
    const Run r = restore();
    CHECK(r.code == 1);
    CHECK(r.err.find("is not a file entry (path inside the backup") != std::string::npos);
  }
  CHECK(!fs::exists(restored));  // nothing was restored
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    CHECK((entry.path() == data || entry.path() == backup));  // no leftover folder
  }
}

TEST_CASE("toolmux store restore: a held data directory is refused, one not empty needs --force") {
  TempDir dir;
  const fs::path data = dir.path() / "state";
  fill_state(data, 3);
  const fs::path backup = dir.path() / "backup";
  REQUIRE(run({"store", "backup", backup.string(), "--data-dir", data.string()}).code == 0);
  fill_state(data, 5, "later-");  // the data directory moves on: 8 calls
  const fs::path target = dir.path() / "target";
  write_file(target / "notes.txt", "mine");

  Run r = run({"store", "restore", backup.string(), "--data-dir", target.string()});
  CHECK(r.code == 1);
  CHECK(r.err == "toolmux: the data directory " + target.string() +
                     " is not empty: --force replaces what it holds with the backup\n");
  CHECK(read_file(target / "notes.txt") == "mine");

  {
    auto server = open_journal(data);  // a running server holds the journal
    r = run({"store", "restore", backup.string(), "--data-dir", data.string(), "--force"});
    CHECK(r.code == 1);
    CHECK(r.err == "toolmux: a running toolmux holds " + (data / "journal" / "slot-0").string() +
                       ": stop the servers on " + data.string() + " before restoring into it\n");
  }
  CHECK(lines_of(run({"journal", "--json", "--data-dir", data.string()}).out).size() == 8);

  r = run({"store", "restore", backup.string(), "--data-dir", data.string(), "--force"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(lines_of(run({"journal", "--json", "--data-dir", data.string()}).out).size() == 3);
  CHECK(!fs::exists(data / "write-freeze"));
}

TEST_CASE("toolmux store: usage errors") {
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"store"}, "store needs backup or restore"},
           {{"store", "copy", "x"}, "store needs backup or restore, not \"copy\""},
           {{"store", "backup"}, "store backup needs the backup's DIR"},
           {{"store", "backup", "x", "--force"}, "--force goes with store restore"},
       }) {
    const CommandLine cl = toolmux::parse_command_line(args);
    CHECK(cl.action == CommandLine::Action::usage_error);
    CHECK(cl.error == message);
  }
}

TEST_CASE("toolmux store with --store postgresql prints the pg_dump procedure and copies nothing") {
  TempDir dir;
  const fs::path backup = dir.path() / "pg";
  Run r = run({"store", "backup", backup.string(), "--store", "postgresql"});
  CHECK(r.code == 1);
  CHECK(r.err.starts_with("toolmux: store backup does not copy a PostgreSQL store"));
  CHECK(r.out.find("pg_dump --format=custom --table='toolmux_*' --file=" +
                   (backup / "toolmux.dump").string() + " \"$TOOLMUX_POSTGRES_URL\"\n") !=
        std::string::npos);
  CHECK(!fs::exists(backup));
  r = run({"store", "restore", backup.string(), "--store", "postgresql"});
  CHECK(r.code == 1);
  CHECK(r.out.find("pg_restore --clean --if-exists --single-transaction") != std::string::npos);
}

TEST_CASE("toolmux audit verify: the chain intact in one line, or the record that does not fit") {
  TempDir dir;
  const std::string d = dir.path().string();
  Run r = run({"audit", "verify", "--data-dir", d});
  CHECK(r.code == 0);
  CHECK(r.out == "No chained audit records in " + d + "/journal.\n");
  std::filesystem::path folder;
  {
    auto store = open_store(dir);
    folder = dir.path() / "journal" / "slot-0";
    REQUIRE(store->audit(record("r1", kDay, "read_text_file", "alice")).ok());
    REQUIRE(
        store->audit(record("r2", kDay + std::chrono::seconds(1), "read_text_file", "bob")).ok());
    REQUIRE(
        store->audit(record("r3", kDay + std::chrono::seconds(2), "read_text_file", "eve")).ok());
  }
  r = run({"audit", "verify", "--data-dir", d});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out ==
        "3 records, chain intact from 2026-12-01T10:00:00.000Z to 2026-12-01T10:00:02.000Z.\n");

  {
    // bob's record edited in place, as someone with the files could.
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(rocksdb::Options(), folder.string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek("a/"); it->Valid() && it->key().starts_with("a/"); it->Next()) {
      std::string value = it->value().ToString();
      if (const auto at = value.find("\"principal\":\"bob\""); at != std::string::npos) {
        value.replace(at, 17, "\"principal\":\"bot\"");
        REQUIRE(db->Put(rocksdb::WriteOptions(), it->key(), value).ok());
      }
    }
  }
  r = run({"audit", "verify", "--data-dir", d});
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "toolmux: the audit chain in " + folder.string() +
                     " breaks at record 1 (time 2026-12-01T10:00:01.000Z, call r2): hash mismatch: "
                     "its stored bytes do not hash to what record 2 holds for it (edited after it "
                     "was written)\n");
}

TEST_CASE("toolmux audit verify --store postgresql: says what it checks, and fails without it") {
  const std::string conninfo = toolmux::testing::fresh_postgres_database();
  auto instance = open_instance(toolmux::testing::open_postgres_store(conninfo), "instance-1");
  REQUIRE(instance->audit(record("r-1", kDay, "read_text_file", "bob")).ok());
  const PostgresUrl url(conninfo);

  Run r = run({"audit", "verify", "--store", "postgresql"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("1 records in the store at ") == 0);
  CHECK(r.out.find(", not hash-chained: PostgreSQL's audit table is append-only instead (trigger "
                   "toolmux_audit_append_only refuses UPDATE, TRUNCATE and every DELETE but "
                   "retention's); the login ") != std::string::npos);

  auto connection = toolmux::testing::connect_postgres(conninfo);
  REQUIRE(
      connection->exec("ALTER TABLE toolmux_audit DISABLE TRIGGER toolmux_audit_append_only").ok());
  r = run({"audit", "verify", "--store", "postgresql"});
  CHECK(r.code == 1);
  CHECK(r.err.find("is not append-only: its trigger toolmux_audit_append_only is missing or "
                   "disabled") != std::string::npos);
}
