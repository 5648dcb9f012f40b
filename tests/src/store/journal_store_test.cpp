#include "src/store/journal_store.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <rocksdb/db.h>

#include "src/store/audit_chain.h"
#include "src/store/journal_records.h"
#include "src/store/pg_journal_store.h"
#include "src/store/pg_schema.h"
#include "src/store/pg_store.h"
#include "src/store/rocksdb_journal_store.h"
#include "src/store/spooled_journal_store.h"
#include "tests/support/eventually.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_child.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::system_clock;

namespace {

constexpr std::int64_t kStart = 1'800'000'000;  // 2027-01-15, seconds since the epoch

system_clock::time_point at(std::int64_t seconds_after_start) {
  return system_clock::time_point(std::chrono::seconds(kStart + seconds_after_start));
}

// A clock the test moves by hand.
struct FakeClock {
  std::shared_ptr<std::atomic<std::int64_t>> seconds =
      std::make_shared<std::atomic<std::int64_t>>(kStart);
  std::function<system_clock::time_point()> fn() const {
    auto s = seconds;
    return [s] { return system_clock::time_point(std::chrono::seconds(s->load())); };
  }
  void advance(std::chrono::seconds d) { *seconds += d.count(); }
};

JournalStoreOptions options_for(const std::filesystem::path& dir) {
  JournalStoreOptions options;
  options.data_dir = dir;
  return options;
}

std::unique_ptr<JournalStore> open_store(const JournalStoreOptions& options) {
  auto store = JournalStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

std::unique_ptr<RocksDbJournalStore> open_rocksdb(const JournalStoreOptions& options) {
  auto store = RocksDbJournalStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

JournalIntent intent(const std::string& call_id, const std::string& principal = "alice",
                     const std::string& key = "") {
  JournalIntent i;
  i.call_id = call_id;
  i.tool = "delete_file";
  i.side_effect = "destructive";
  i.arguments_digest = std::string(64, 'a');
  i.principal = principal;
  i.session = "s-1";
  i.approver = "bob";
  i.rationale = "clean up the build folder";
  i.idempotency_key = key;
  i.started = at(0);
  return i;
}

AuditRecord record(const std::string& call_id, system_clock::time_point time,
                   const std::string& tool = "delete_file", const std::string& principal = "alice",
                   const std::string& outcome = "ok") {
  AuditRecord r;
  r.time = time;
  r.call_id = call_id;
  r.principal = principal;
  r.session = "s-1";
  r.tool = tool;
  r.side_effect = "destructive";
  r.arguments = {{"path", "build/out.txt"}};
  r.confirmation = "accepted";
  r.approver = "bob";
  r.rationale = "clean up the build folder";
  r.outcome = outcome;
  r.duration_ms = 12.5;
  return r;
}

json text_result(const std::string& text) {
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", false}};
}

std::vector<std::string> call_ids(const std::vector<AuditRecord>& records) {
  std::vector<std::string> out;
  out.reserve(records.size());
  for (const auto& r : records) out.push_back(r.call_id);
  return out;
}

std::vector<AuditRecord> audit_of(const std::filesystem::path& dir, const AuditQuery& query = {}) {
  auto records = read_audit(dir, query);
  INFO(records.message());
  REQUIRE(records.ok());
  return std::move(records).value();
}

std::vector<JournalEntry> journal_of(const std::filesystem::path& dir) {
  auto entries = read_journal(dir);
  INFO(entries.message());
  REQUIRE(entries.ok());
  return std::move(entries).value();
}

// ---- The two implementations, for the tests of their one contract ----

template <typename T>
T checked(Result<T> result) {
  INFO(result.message());
  REQUIRE(result.ok());
  return std::move(result).value();
}

// RocksDB in a temporary data directory.
struct RocksDbBackend {
  TempDir dir;
  JournalStoreOptions options() const { return options_for(dir.path()); }
  std::vector<JournalEntry> journal() const { return journal_of(dir.path()); }
  std::vector<AuditRecord> audit(const AuditQuery& query = {}) const {
    return audit_of(dir.path(), query);
  }
  Result<std::vector<JournalEntry>> read_journal() const {
    return toolmux::read_journal(dir.path());
  }
  Status for_each_audit(const AuditQuery& query, const AuditRecordFn& fn) const {
    return for_each_audit_record(dir.path(), query, fn);
  }
};

std::shared_ptr<PgStore> open_postgres(const std::string& conninfo) {
  PgStoreOptions options;
  options.conninfo = conninfo;
  options.max_connections = 12;
  return checked(PgStore::open(options));
}

// A fresh PostgreSQL database, migrated. Each options() is another
// instance: a PgStore (a pool) of its own, as another process would have.
struct PgBackend {
  std::string conninfo = fresh_postgres_database();
  std::shared_ptr<PgStore> store = open_postgres(conninfo);
  PgPool& reader = store->pool();

  JournalStoreOptions options() const {
    JournalStoreOptions options;
    options.postgres = open_postgres(conninfo);
    return options;
  }
  std::vector<JournalEntry> journal() const { return checked(toolmux::read_journal(reader)); }
  std::vector<AuditRecord> audit(const AuditQuery& query = {}) const {
    return checked(toolmux::read_audit(reader, query));
  }
  Result<std::vector<JournalEntry>> read_journal() const { return toolmux::read_journal(reader); }
  Status for_each_audit(const AuditQuery& query, const AuditRecordFn& fn) const {
    return for_each_audit_record(reader, query, fn);
  }
};

// The next line the child wrote, without its newline, or "" (child gone, or
// nothing within 30 s).
std::string next_line(const Child& child) {
  std::string line;
  char c = 0;
  for (;;) {
    pollfd p{child.from_child, POLLIN, 0};
    if (::poll(&p, 1, 30'000) <= 0) return "";
    if (::read(child.from_child, &c, 1) != 1) return "";
    if (c == '\n') return line;
    line += c;
  }
}

bool write_line(const std::string& line) {
  const std::string text = line + "\n";
  return ::write(kChildOutFd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

}  // namespace

TEMPLATE_TEST_CASE("journal: an intent, then its outcome with the result and the audit record", "",
                   RocksDbBackend, PgBackend) {
  TestType b;
  auto store = open_store(b.options());
  REQUIRE(store->begin(intent("c1", "alice", "key-1")).ok());

  auto running = store->find_by_key("alice", "key-1");
  REQUIRE(running);
  CHECK(running->intent.call_id == "c1");
  CHECK(running->intent.tool == "delete_file");
  CHECK(running->intent.side_effect == "destructive");
  CHECK(running->intent.arguments_digest == std::string(64, 'a'));
  CHECK(running->intent.session == "s-1");
  CHECK(running->intent.approver == "bob");
  CHECK(running->intent.rationale == "clean up the build folder");
  CHECK(running->intent.started == at(0));
  CHECK_FALSE(running->outcome);
  CHECK(running->result.is_null());

  const json result = text_result("deleted build/out.txt");
  {
    auto f = store->finish("c1", "ok", result, record("", at(1)));
    INFO(f.message());
    REQUIRE(f.ok());
  }
  auto done = store->find_by_key("alice", "key-1");
  REQUIRE(done);
  CHECK(done->outcome == "ok");
  CHECK(done->ended);
  CHECK(done->result == result);
  CHECK_FALSE(done->result_too_large);

  // Read beside the writer: the entry, and the audit record the same batch wrote.
  auto entries = b.journal();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].intent.call_id == "c1");
  CHECK(entries[0].outcome == "ok");
  CHECK_FALSE(entries[0].running);
  CHECK(entries[0].result.is_null());  // read_journal leaves results out
  auto records = b.audit();
  REQUIRE(records.size() == 1);
  const AuditRecord& r = records[0];
  CHECK(r.call_id == "c1");  // filled in from finish's call id
  CHECK(r.time == at(1));
  CHECK(r.principal == "alice");
  CHECK(r.session == "s-1");
  CHECK(r.tool == "delete_file");
  CHECK(r.side_effect == "destructive");
  CHECK(r.arguments == json{{"path", "build/out.txt"}});
  CHECK(r.confirmation == "accepted");
  CHECK(r.approver == "bob");
  CHECK(r.rationale == "clean up the build folder");
  CHECK(r.outcome == "ok");
  CHECK(r.duration_ms == 12.5);

  // The outcome is written once; an unknown call has none to write.
  auto twice = store->finish("c1", "tool_error", nullptr, record("c1", at(2)));
  CHECK(twice.is_invalid_argument());
  CHECK(twice.message() == "call c1 already has an outcome (ok)");
  auto unknown = store->finish("c9", "ok", nullptr, record("c9", at(2)));
  CHECK(unknown.is_not_found());
  CHECK(unknown.message() == "call c9 has no intent in the journal");
  auto again = store->begin(intent("c1"));
  CHECK(again.is_invalid_argument());
  CHECK(again.message() == "call c1 is already in the journal");
  CHECK(store->begin(intent("")).is_invalid_argument());
  CHECK(b.audit().size() == 1);  // none of those wrote a record
}

TEMPLATE_TEST_CASE(
    "journal: a call left without an outcome is marked interrupted at the next open, once", "",
    RocksDbBackend, PgBackend) {
  TestType b;
  const auto options = b.options();
  {
    auto store = open_store(options);
    REQUIRE(store->begin(intent("c1", "alice", "key-1")).ok());
    REQUIRE(store->begin(intent("c2")).ok());
    REQUIRE(store->finish("c2", "ok", text_result("done"), record("c2", at(1))).ok());
    CHECK(store->interrupted().empty());
  }  // closed without finishing c1: as after a kill -9, the intent is on disk

  // No process holds the slot: the entry reads as not running.
  auto before = b.journal();
  REQUIRE(before.size() == 2);
  CHECK(before[0].intent.call_id == "c1");
  CHECK_FALSE(before[0].outcome);
  CHECK_FALSE(before[0].running);

  {
    auto store = open_store(options);
    REQUIRE(store->interrupted().size() == 1);
    const JournalEntry& e = store->interrupted()[0];
    CHECK(e.intent.call_id == "c1");
    CHECK(e.intent.principal == "alice");
    CHECK(e.outcome == "interrupted");
    CHECK(e.ended);
    // A repeat of its key finds it interrupted, with no result to replay.
    auto found = store->find_by_key("alice", "key-1");
    REQUIRE(found);
    CHECK(found->outcome == "interrupted");
    CHECK(found->result.is_null());
    CHECK_FALSE(found->result_too_large);
  }
  auto records = b.audit();
  REQUIRE(records.size() == 2);
  // Stamped with the time open() found it (the clock's), before c2's at(1).
  const AuditRecord& marked = records[0];
  CHECK(marked.call_id == "c1");
  CHECK(marked.outcome == "interrupted");
  CHECK(marked.principal == "alice");
  CHECK(marked.tool == "delete_file");
  CHECK(marked.confirmation == "accepted");
  CHECK(marked.approver == "bob");
  CHECK(marked.rationale == "clean up the build folder");
  CHECK(marked.idempotency_key == "key-1");

  // Marked once: a later open finds nothing more, and writes no second record.
  auto third = open_store(options);
  CHECK(third->interrupted().empty());
  CHECK(b.audit().size() == 2);
  auto after = b.journal();
  REQUIRE(after.size() == 2);
  CHECK(after[0].outcome == "interrupted");
}

TEMPLATE_TEST_CASE("journal: the idempotency index is per principal", "", RocksDbBackend,
                   PgBackend) {
  TestType b;
  auto store = open_store(b.options());
  REQUIRE(store->begin(intent("c1", "alice", "k")).ok());
  REQUIRE(store->begin(intent("c2", "bob", "k")).ok());
  auto reused = store->begin(intent("c3", "alice", "k"));
  CHECK(reused.is_invalid_argument());
  CHECK(reused.message() ==
        "the idempotency key \"k\" is already used by another call of this principal");
  // Calls without a key are never indexed.
  REQUIRE(store->begin(intent("c4", "alice")).ok());
  REQUIRE(store->begin(intent("c5", "alice")).ok());

  auto alice = store->find_by_key("alice", "k");
  auto bob = store->find_by_key("bob", "k");
  REQUIRE(alice);
  REQUIRE(bob);
  CHECK(alice->intent.call_id == "c1");
  CHECK(bob->intent.call_id == "c2");
  CHECK_FALSE(store->find_by_key("carol", "k"));
  CHECK_FALSE(store->find_by_key("alice", "other"));
  CHECK_FALSE(store->find_by_key("alice", ""));
  // The principal's length is part of the key: "ab"+"c" is not "a"+"bc".
  REQUIRE(store->begin(intent("c6", "ab", "c")).ok());
  CHECK_FALSE(store->find_by_key("a", "bc"));
}

TEMPLATE_TEST_CASE(
    "journal: a call that ended without finishing may begin again under its id and key", "",
    RocksDbBackend, PgBackend) {
  TestType b;
  auto store = open_store(b.options());
  REQUIRE(store->begin(intent("c1", "alice", "k")).ok());
  REQUIRE(store->finish("c1", "timed_out", nullptr, record("c1", at(1))).ok());
  // Asked again: it starts again, and the key names the new entry.
  REQUIRE(store->begin(intent("c1", "alice", "k")).ok());
  auto again = store->find_by_key("alice", "k");
  REQUIRE(again);
  CHECK_FALSE(again->outcome);
  REQUIRE(store->finish("c1", "ok", json{{"content", json::array()}}, record("c1", at(2))).ok());
  // A call that finished is never begun again.
  CHECK(store->begin(intent("c1", "alice", "k")).is_invalid_argument());
  CHECK(store->begin(intent("c2", "alice", "k")).is_invalid_argument());
  auto entries = b.read_journal();
  REQUIRE(entries.ok());
  REQUIRE(entries.value().size() == 2);
  CHECK(entries.value()[0].outcome == "timed_out");
  CHECK(entries.value()[1].outcome == "ok");
}

TEMPLATE_TEST_CASE("journal: a result too large to replay is not recorded, and its entry says so",
                   "", RocksDbBackend, PgBackend) {
  TestType b;
  auto store = open_store(b.options());
  const json small = text_result(std::string(1000, 'x'));
  const json large = text_result(std::string(kMaxReplayResultBytes, 'x'));
  REQUIRE(store->begin(intent("small", "alice", "k-small")).ok());
  REQUIRE(store->begin(intent("large", "alice", "k-large")).ok());
  REQUIRE(store->finish("small", "ok", small, record("small", at(1))).ok());
  REQUIRE(store->finish("large", "ok", large, record("large", at(1))).ok());

  auto kept = store->find_by_key("alice", "k-small");
  REQUIRE(kept);
  CHECK(kept->result == small);
  CHECK_FALSE(kept->result_too_large);
  auto dropped = store->find_by_key("alice", "k-large");
  REQUIRE(dropped);
  CHECK(dropped->outcome == "ok");
  CHECK(dropped->result.is_null());
  CHECK(dropped->result_too_large);
  // Both calls are audited all the same.
  CHECK(b.audit().size() == 2);
}

TEMPLATE_TEST_CASE("journal: an audit record's arguments are capped", "", RocksDbBackend,
                   PgBackend) {
  TestType b;
  auto store = open_store(b.options());
  AuditRecord big = record("c1", at(0));
  big.arguments = {{"text", std::string(kMaxAuditArgumentsBytes, 'x')}};
  REQUIRE(store->audit(big).ok());
  AuditRecord none = record("c2", at(1));
  none.arguments = nullptr;
  REQUIRE(store->audit(none).ok());
  auto records = b.audit();
  REQUIRE(records.size() == 2);
  CHECK(records[0].arguments ==
        "(16395 bytes of arguments, over the audit record's 16384-byte limit)");
  CHECK(records[1].arguments.is_null());
}

TEMPLATE_TEST_CASE("journal: an audit record keeps the arguments defaults filled in apart", "",
                   RocksDbBackend, PgBackend) {
  TestType b;
  auto store = open_store(b.options());
  AuditRecord filled = record("c1", at(0));
  filled.arguments = {{"path", "a.txt"}};
  filled.defaults = {{"limit", 20}, {"mode", "safe"}};
  REQUIRE(store->audit(filled).ok());
  REQUIRE(store->audit(record("c2", at(1))).ok());
  auto records = b.audit();
  REQUIRE(records.size() == 2);
  CHECK(records[0].arguments == json{{"path", "a.txt"}});
  CHECK(records[0].defaults == json{{"limit", 20}, {"mode", "safe"}});
  CHECK(records[1].defaults.is_null());
}

TEMPLATE_TEST_CASE(
    "journal: latest_audit gives the store's newest records, newest first, up to a limit", "",
    RocksDbBackend, PgBackend) {
  TestType b;
  auto store = open_store(b.options());
  CHECK(store->latest_audit(5).empty());
  // Out of time order: the newest by time comes first, not the last written.
  REQUIRE(store->audit(record("c2", at(20))).ok());
  REQUIRE(store->audit(record("c1", at(10))).ok());
  REQUIRE(store->begin(intent("c3")).ok());
  REQUIRE(store->finish("c3", "ok", text_result("done"), record("c3", at(30))).ok());
  CHECK(call_ids(store->latest_audit(5)) == std::vector<std::string>{"c3", "c2", "c1"});
  CHECK(call_ids(store->latest_audit(2)) == std::vector<std::string>{"c3", "c2"});
  CHECK(store->latest_audit(0).empty());
  const std::vector<AuditRecord> newest = store->latest_audit(1);
  REQUIRE(newest.size() == 1);
  CHECK(newest[0].tool == "delete_file");
  CHECK(newest[0].outcome == "ok");
  CHECK(newest[0].duration_ms == 12.5);
}

TEST_CASE("journal: two stores open at once take two slots, and the readers see both") {
  TempDir dir;
  const auto options = options_for(dir.path());
  auto first = open_rocksdb(options);
  auto second = open_rocksdb(options);
  CHECK(first->folder() == dir.path() / "journal" / "slot-0");
  CHECK(second->folder() == dir.path() / "journal" / "slot-1");

  // Replay is per slot.
  JournalIntent one = intent("c1", "alice", "k");
  JournalIntent two = intent("c2", "alice", "k");
  one.started = at(10);
  two.started = at(5);
  REQUIRE(first->begin(one).ok());
  REQUIRE(second->begin(two).ok());
  CHECK(first->find_by_key("alice", "k")->intent.call_id == "c1");
  CHECK(second->find_by_key("alice", "k")->intent.call_id == "c2");
  REQUIRE(first->finish("c1", "ok", nullptr, record("c1", at(11))).ok());

  // Both slots, merged by start; c2's process (this one) holds its slot.
  auto entries = journal_of(dir.path());
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].intent.call_id == "c2");
  CHECK(entries[0].running);
  CHECK(entries[1].intent.call_id == "c1");
  CHECK(entries[1].outcome == "ok");
  CHECK_FALSE(entries[1].running);

  // The slot-0 holder closes: the next open gets slot 0 back.
  first.reset();
  auto third = open_rocksdb(options);
  CHECK(third->folder() == dir.path() / "journal" / "slot-0");
  CHECK(third->find_by_key("alice", "k")->intent.call_id == "c1");

  // Every slot taken: a clear error naming the folder.
  auto options_of_two = options;
  options_of_two.max_slots = 2;
  auto refused = JournalStore::open(options_of_two);
  CHECK(refused.status().is_resource_exhausted());
  CHECK(refused.message().find("could not open the journal: none of the 2 slots in " +
                               (dir.path() / "journal").string()) == 0);
}

TEMPLATE_TEST_CASE(
    "journal: retention removes old audit records and finished entries, at most hourly", "",
    RocksDbBackend, PgBackend) {
  TestType b;
  FakeClock clock;
  auto options = b.options();
  options.audit_retention = hours(24);
  options.now = clock.fn();
  auto store = open_store(options);

  REQUIRE(store->audit(record("read-1", at(0), "read_text_file")).ok());
  REQUIRE(store->begin(intent("c1", "alice", "k")).ok());
  REQUIRE(store->finish("c1", "ok", text_result("done"), record("c1", at(0))).ok());
  REQUIRE(store->begin(intent("c2", "alice", "k2")).ok());  // never finishes

  // 23 hours on: nothing is old enough yet.
  clock.advance(hours(23));
  REQUIRE(store->audit(record("read-2", at(std::int64_t{23} * 3600), "read_text_file")).ok());
  CHECK(call_ids(b.audit()) == std::vector<std::string>{"read-1", "c1", "read-2"});

  // 25 hours on: the first hour's records go, and so does c1's entry (its key
  // is free again); c2, still without an outcome, stays.
  clock.advance(hours(2));
  REQUIRE(store->audit(record("read-3", at(std::int64_t{25} * 3600), "read_text_file")).ok());
  CHECK(call_ids(b.audit()) == std::vector<std::string>{"read-2", "read-3"});
  CHECK_FALSE(store->find_by_key("alice", "k"));
  CHECK(store->find_by_key("alice", "k2"));
  auto entries = b.journal();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].intent.call_id == "c2");
  REQUIRE(store->begin(intent("c3", "alice", "k")).ok());

  // At most once an hour: a record already past the retention, appended ten
  // minutes after the last sweep, stays until the next sweep an hour later.
  clock.advance(minutes(10));
  REQUIRE(store->audit(record("late", at(0))).ok());
  CHECK(b.audit().front().call_id == "late");
  clock.advance(hours(1));
  REQUIRE(store->audit(record("read-4", at(std::int64_t{26} * 3600 + 600), "read_text_file")).ok());
  if constexpr (std::is_same_v<TestType, RocksDbBackend>) {
    // RocksDB removes only the expired front of its chain (audit_chain.h):
    // "late" was appended after read-2 and read-3, which are kept.
    CHECK(call_ids(b.audit()) == std::vector<std::string>{"late", "read-2", "read-3", "read-4"});
  } else {
    CHECK(call_ids(b.audit()) == std::vector<std::string>{"read-2", "read-3", "read-4"});
  }

  // At open too: far ahead, everything finished goes.
  store.reset();
  clock.advance(hours(24 * 30));
  auto reopened = open_store(options);
  // c2 and c3, marked interrupted at this open, and their records.
  CHECK(call_ids(b.audit()) == std::vector<std::string>{"c2", "c3"});
  auto kept = b.journal();
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].outcome == "interrupted");
  CHECK(kept[1].outcome == "interrupted");
}

TEMPLATE_TEST_CASE("journal: read_audit filters by time, tool and principal, newest `limit` last",
                   "", RocksDbBackend, PgBackend) {
  TestType b;
  const auto options = b.options();
  auto first = open_store(options);
  auto second = open_store(options);
  // Interleaved in time across the two slots; both stay open (held) while read.
  REQUIRE(first->audit(record("a", at(0), "read_text_file", "alice")).ok());
  REQUIRE(second->audit(record("b", at(10), "delete_file", "bob")).ok());
  REQUIRE(first->audit(record("c", at(20), "delete_file", "alice")).ok());
  REQUIRE(second->audit(record("d", at(30), "read_text_file", "bob")).ok());
  REQUIRE(first->audit(record("e", at(40), "delete_file", "bob")).ok());

  using V = std::vector<std::string>;
  CHECK(call_ids(b.audit()) == V{"a", "b", "c", "d", "e"});
  AuditQuery since;
  since.since = at(20);
  CHECK(call_ids(b.audit(since)) == V{"c", "d", "e"});
  AuditQuery tool;
  tool.tool = "delete_file";
  CHECK(call_ids(b.audit(tool)) == V{"b", "c", "e"});
  AuditQuery principal;
  principal.principal = "bob";
  CHECK(call_ids(b.audit(principal)) == V{"b", "d", "e"});
  AuditQuery limit;
  limit.limit = 2;
  CHECK(call_ids(b.audit(limit)) == V{"d", "e"});
  AuditQuery all;
  all.since = at(5);
  all.tool = "delete_file";
  all.principal = "alice";
  CHECK(call_ids(b.audit(all)) == V{"c"});
  AuditQuery limited_filter;
  limited_filter.principal = "alice";
  limited_filter.limit = 1;
  CHECK(call_ids(b.audit(limited_filter)) == V{"c"});
  AuditQuery more_than_there;
  more_than_there.limit = 100;
  more_than_there.since = at(30);
  CHECK(call_ids(b.audit(more_than_there)) == V{"d", "e"});
  AuditQuery nothing;
  nothing.tool = "no_such_tool";
  CHECK(b.audit(nothing).empty());

  // The streaming form stops when told to.
  V seen;
  auto status = b.for_each_audit({}, [&](const AuditRecord& r) {
    seen.push_back(r.call_id);
    return seen.size() < 2;
  });
  CHECK(status.ok());
  CHECK(seen == V{"a", "b"});
}

namespace {

// Every file under `dir` with its size and modification time.
std::map<std::string, std::pair<std::uintmax_t, std::filesystem::file_time_type>> files_under(
    const std::filesystem::path& dir) {
  std::map<std::string, std::pair<std::uintmax_t, std::filesystem::file_time_type>> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      files[entry.path().string()] = {entry.file_size(), entry.last_write_time()};
    }
  }
  return files;
}

}  // namespace

TEST_CASE("an audit record written straight to text is the JSON of its tree, member for member") {
  AuditRecord r;
  r.time = at(42) + std::chrono::nanoseconds(123);
  r.call_id = "call-1";
  r.principal = "alice \"the admin\"\\ \u00e9";
  r.session = "http-7";
  r.tool = "delete_file";
  r.side_effect = "destructive";
  r.arguments = {{"path", "a\tb\n\x01"}, {"n", 3}, {"list", {1, 2.5, nullptr}}};
  r.confirmation = "accepted";
  r.approver = "bob";
  r.rationale = "line one\nline two";
  r.outcome = "ok";
  r.duration_ms = 12.375;
  r.idempotency_key = "k-[REDACTED]";
  const std::string text = audit_text(r);
  CHECK(json::parse(text) == audit_json(r));
  // nlohmann's objects sort their keys: the same bytes, member order included.
  CHECK(text == journal_json_text(audit_json(r)));
  const auto back = audit_from_text(text);
  REQUIRE(back.has_value());
  CHECK(back->principal == r.principal);
  CHECK(back->time == r.time);
  CHECK(back->duration_ms == r.duration_ms);

  SECTION("arguments that defaults filled in, in their place among the members") {
    AuditRecord filled = r;
    filled.defaults = {{"limit", 20}};
    CHECK(audit_text(filled) == journal_json_text(audit_json(filled)));
    CHECK(audit_from_text(audit_text(filled))->defaults == json{{"limit", 20}});
  }
  SECTION("no arguments, a whole duration, empty fields") {
    AuditRecord bare;
    bare.time = at(0);
    bare.duration_ms = 3;
    CHECK(json::parse(audit_text(bare)) == audit_json(bare));
  }
  SECTION("arguments over the limit are replaced by what their size was, as before") {
    AuditRecord big = r;
    big.arguments = {{"blob", std::string(kMaxAuditArgumentsBytes, 'x')}};
    CHECK(json::parse(audit_text(big)) == audit_json(big));
    CHECK(json::parse(audit_text(big))["arguments"].is_string());
  }
  SECTION("bad UTF-8 becomes U+FFFD and the text stays JSON") {
    AuditRecord bad = r;
    bad.tool = std::string("t\xff\xfeol");
    const json parsed = json::parse(audit_text(bad));
    CHECK(parsed["tool"] == "t\xef\xbf\xbd\xef\xbf\xbdol");
  }
}

TEST_CASE("journal: the readers write nothing, not even RocksDB's info log") {
  TempDir dir;
  {
    auto store = open_store(options_for(dir.path()));
    REQUIRE(store->begin(intent("c1")).ok());
    REQUIRE(store->audit(record("r1", at(0))).ok());
  }
  const auto before = files_under(dir.path());
  CHECK(journal_of(dir.path()).size() == 1);
  CHECK(audit_of(dir.path()).size() == 1);
  AuditQuery newest;
  newest.limit = 1;
  CHECK(audit_of(dir.path(), newest).size() == 1);
  CHECK(files_under(dir.path()) == before);
}

TEMPLATE_TEST_CASE("journal: calls journaled and audited from many threads at once are all there",
                   "", RocksDbBackend, PgBackend) {
  TestType b;
  auto store = open_store(b.options());
  constexpr int kThreads = 4;
  constexpr int kEach = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < kEach; ++n) {
        const std::string id = "m-" + std::to_string(t) + "-" + std::to_string(n);
        if (!store->begin(intent(id, "alice", id)).ok() ||
            !store->finish(id, "ok", text_result(id), record(id, at(n))).ok()) {
          ++failures;
        }
      }
    });
    threads.emplace_back([&, t] {
      for (int n = 0; n < kEach; ++n) {
        const std::string id = "r-" + std::to_string(t) + "-" + std::to_string(n);
        if (!store->audit(record(id, at(n), "read_text_file")).ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  CHECK(b.audit().size() == 2 * kThreads * kEach);
  CHECK(b.journal().size() == kThreads * kEach);
  CHECK(store->find_by_key("alice", "m-3-49")->result == text_result("m-3-49"));
}

TEST_CASE("journal: a data directory without a journal reads as empty") {
  TempDir dir;
  CHECK(journal_of(dir.path() / "nothing-here").empty());
  CHECK(audit_of(dir.path() / "nothing-here").empty());
}

// ---- Other processes (tests/support/test_child.h) ----

TEST_CASE("child: begin a call and wait", "[.child]") {
  const char* dir = std::getenv(kChildDirVariable);
  if (!dir) return;
  auto store = JournalStore::open(options_for(dir));
  if (!store.ok() || !(*store)->begin(intent("held-call", "carol", "k")).ok()) ::_exit(1);
  if (!write_line("ready")) ::_exit(2);
  char byte;
  while (::read(kChildInFd, &byte, 1) > 0) {
  }
  ::_exit(0);  // without closing the store: as a crash would
}

TEST_CASE("child: journal calls until killed", "[.child]") {
  const char* dir = std::getenv(kChildDirVariable);
  if (!dir) return;
  auto store = JournalStore::open(options_for(dir));
  if (!store.ok()) ::_exit(1);
  for (int n = 0;; ++n) {
    const std::string id = "call-" + std::to_string(n);
    if (!(*store)->begin(intent(id, "carol", "key-" + std::to_string(n))).ok()) ::_exit(2);
    // The tool "runs" a little, so that a kill often lands inside a call.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    AuditRecord r = record(id, system_clock::now());
    if (!(*store)->finish(id, "ok", text_result(id), r).ok()) ::_exit(3);
    if (!write_line(id)) ::_exit(4);
  }
}

TEST_CASE("child: open the journal and say which slot", "[.child]") {
  const char* dir = std::getenv(kChildDirVariable);
  if (!dir) return;
  auto store = RocksDbJournalStore::open(options_for(dir));
  if (!store.ok() || !write_line((*store)->folder().filename().string())) ::_exit(1);
  ::_exit(0);
}

TEST_CASE("journal: reading beside this process's own writer keeps its lock, by any path") {
  TempDir dir;
  auto store = open_store(options_for(dir.path()));
  REQUIRE(store->begin(intent("mine")).ok());
  // The data directory by another name: the reader must still see the slot as
  // this process's, and not open its LOCK file (closing it would drop the
  // lock RocksDB holds).
  std::filesystem::create_directory_symlink(dir.path(), dir / "alias");
  auto entries = journal_of(dir / "alias");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].running);
  // Another process still finds slot 0 taken.
  Child child = spawn_child("child: open the journal and say which slot", dir / "alias");
  const std::string slot = next_line(child);
  CHECK(finish(child, false) == 0);
  CHECK(slot == "slot-1");
}

TEST_CASE("journal: a call of a live process is running, and once killed it is interrupted") {
  TempDir dir;
  const auto options = options_for(dir.path());
  Child child = spawn_child("child: begin a call and wait", dir.path());
  const std::string ready = next_line(child);
  std::vector<JournalEntry> while_alive;
  if (ready == "ready") {
    auto entries = read_journal(dir.path());
    if (entries.ok()) while_alive = *entries;
  }
  // Another process holds slot 0: this one takes slot 1, and finds nothing there.
  std::unique_ptr<RocksDbJournalStore> beside;
  if (ready == "ready") {
    auto opened = RocksDbJournalStore::open(options);
    if (opened.ok()) beside = std::move(opened).value();
  }
  CHECK(finish(child, true) == -1);  // kill -9
  REQUIRE(ready == "ready");
  REQUIRE(while_alive.size() == 1);
  CHECK(while_alive[0].intent.call_id == "held-call");
  CHECK_FALSE(while_alive[0].outcome);
  CHECK(while_alive[0].running);
  REQUIRE(beside);
  CHECK(beside->folder() == dir.path() / "journal" / "slot-1");
  CHECK(beside->interrupted().empty());

  // The process is gone: its call no longer runs, and is not marked yet.
  auto after_kill = journal_of(dir.path());
  REQUIRE(after_kill.size() == 1);
  CHECK_FALSE(after_kill[0].outcome);
  CHECK_FALSE(after_kill[0].running);

  // The next open of slot 0 marks it.
  auto restarted = open_rocksdb(options);
  CHECK(restarted->folder() == dir.path() / "journal" / "slot-0");
  REQUIRE(restarted->interrupted().size() == 1);
  CHECK(restarted->interrupted()[0].intent.call_id == "held-call");
  auto records = audit_of(dir.path());
  REQUIRE(records.size() == 1);
  CHECK(records[0].call_id == "held-call");
  CHECK(records[0].outcome == "interrupted");
  CHECK(records[0].principal == "carol");
}

TEST_CASE("journal: a kill -9 never leaves an outcome without its audit record") {
  TempDir dir;
  Child child = spawn_child("child: journal calls until killed", dir.path());
  std::vector<std::string> finished;
  while (finished.size() < 25) {
    std::string id = next_line(child);
    if (id.empty()) break;
    finished.push_back(id);
  }
  // Somewhere inside the next call, most likely between its intent and outcome.
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  finish(child, true);
  REQUIRE(finished.size() == 25);

  // Before any open: an outcome exactly where there is an audit record.
  std::set<std::string> audited;
  for (const AuditRecord& r : audit_of(dir.path())) {
    CHECK(audited.insert(r.call_id).second);  // one each
    CHECK(r.outcome == "ok");
  }
  std::size_t without_outcome = 0;
  for (const JournalEntry& e : journal_of(dir.path())) {
    INFO(e.intent.call_id);
    CHECK(e.outcome.has_value() == (audited.count(e.intent.call_id) == 1));
    if (!e.outcome) ++without_outcome;
    CHECK_FALSE(e.running);
  }
  CHECK(without_outcome <= 1);
  for (const std::string& id : finished) CHECK(audited.count(id) == 1);

  // After the next open: every call has an outcome and exactly one record.
  auto store = open_store(options_for(dir.path()));
  CHECK(store->interrupted().size() == without_outcome);
  std::map<std::string, int> records;
  for (const AuditRecord& r : audit_of(dir.path())) ++records[r.call_id];
  for (const JournalEntry& e : journal_of(dir.path())) {
    INFO(e.intent.call_id);
    CHECK(e.outcome);
    CHECK(records[e.intent.call_id] == 1);
  }
}

// ---- PostgreSQL: instances sharing one database ----

namespace {

std::unique_ptr<PgJournalStore> open_pg(const JournalStoreOptions& options) {
  return checked(PgJournalStore::open(options));
}

JournalStoreOptions instance_options(const PgBackend& b, const std::string& id) {
  JournalStoreOptions options = b.options();
  options.instance_id = id;
  return options;
}

// The one row of `sql` on `conninfo`, first column, as text.
std::string query_one(const std::string& conninfo, const std::string& sql) {
  auto connection = connect_postgres(conninfo);
  auto rows = connection->exec(sql);
  INFO(sql << ": " << rows.message());
  REQUIRE(rows.ok());
  REQUIRE(rows->rows() == 1);
  return std::string(rows->text(0, 0));
}

// Ends the server process of the connection that holds the journal lock of
// the instance that began `call_id`, as a crash of that instance would, and
// waits until the lock is gone.
void kill_instance_connection(const PgBackend& b, const std::string& call_id) {
  const std::string locks =
      " FROM pg_locks l JOIN toolmux_journal j ON l.objid = j.holder::bigint::oid WHERE "
      "j.call_id = '" +
      call_id + "' AND l.locktype = 'advisory' AND l.objsubid = 2 AND l.classid = " +
      std::to_string(kPgJournalHolderSpace) +
      " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())";
  REQUIRE(query_one(b.conninfo, "SELECT bool_and(pg_terminate_backend(l.pid))" + locks) == "t");
  for (int i = 0; i < 500; ++i) {
    if (query_one(b.conninfo, "SELECT count(*)" + locks) == "0") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the instance's lock was still held 5 s after its connection was ended");
}

}  // namespace

TEST_CASE("journal on PostgreSQL: one key begun on two instances at once has one winner") {
  PgBackend b;
  auto first = open_pg(instance_options(b, "instance-a"));
  auto second = open_pg(instance_options(b, "instance-b"));
  for (int round = 0; round < 20; ++round) {
    const std::string key = "key-" + std::to_string(round);
    std::atomic<int> waiting{2};
    Status a = Status::io_error("not run");
    Status c = Status::io_error("not run");
    auto go = [&waiting](JournalStore& store, const JournalIntent& i, Status& out) {
      --waiting;
      while (waiting.load() > 0) {
      }
      out = store.begin(i);
    };
    std::thread other(go, std::ref(*second), intent("b-" + key, "alice", key), std::ref(c));
    go(*first, intent("a-" + key, "alice", key), a);
    other.join();
    INFO(round << ": " << a.message() << " / " << c.message());
    CHECK(a.ok() != c.ok());
    const Status& lost = a.ok() ? c : a;
    CHECK(lost.is_invalid_argument());
    CHECK(lost.message() ==
          "the idempotency key \"" + key + "\" is already used by another call of this principal");
    // Both instances find the winner.
    const std::string winner = (a.ok() ? "a-" : "b-") + key;
    auto seen_first = first->find_by_key("alice", key);
    auto seen_second = second->find_by_key("alice", key);
    REQUIRE(seen_first);
    REQUIRE(seen_second);
    CHECK(seen_first->intent.call_id == winner);
    CHECK(seen_second->intent.call_id == winner);
  }
  // A call id is one call across instances too.
  REQUIRE(first->begin(intent("same-id")).ok());
  CHECK(second->begin(intent("same-id")).message() == "call same-id is already in the journal");
}

TEST_CASE("journal on PostgreSQL: a call finished on one instance is replayed from another") {
  PgBackend b;
  auto first = open_pg(instance_options(b, "instance-a"));
  auto second = open_pg(instance_options(b, "instance-b"));
  REQUIRE(first->begin(intent("c1", "alice", "k")).ok());
  auto running = second->find_by_key("alice", "k");
  REQUIRE(running);
  CHECK_FALSE(running->outcome);  // its instance lives: still running
  const json result = text_result("deleted build/out.txt");
  REQUIRE(first->finish("c1", "ok", result, record("c1", at(1))).ok());
  auto done = second->find_by_key("alice", "k");
  REQUIRE(done);
  CHECK(done->outcome == "ok");
  CHECK(done->result == result);
  REQUIRE(second->audit(record("r1", at(2), "read_text_file", "bob")).ok());

  // One audit trail: every instance's records, each naming its instance.
  auto records = b.audit();
  REQUIRE(records.size() == 2);
  CHECK(records[0].call_id == "c1");
  CHECK(records[0].instance == "instance-a");
  CHECK(records[1].call_id == "r1");
  CHECK(records[1].instance == "instance-b");
  CHECK(call_ids(first->latest_audit(5)) == std::vector<std::string>{"r1", "c1"});
  auto entries = b.journal();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].instance == "instance-a");
  CHECK(second->where().find("database t") != std::string::npos);
}

TEST_CASE(
    "journal on PostgreSQL: a killed instance's running call is marked by another, not re-run") {
  PgBackend b;
  auto doomed = open_pg(instance_options(b, "instance-a"));
  auto survivor = open_pg(instance_options(b, "instance-b"));
  REQUIRE(doomed->begin(intent("x", "alice", "k")).ok());
  REQUIRE(doomed->begin(intent("y", "alice")).ok());
  auto before = b.journal();
  REQUIRE(before.size() == 2);
  CHECK(before[0].running);

  kill_instance_connection(b, "x");
  auto after = b.journal();
  REQUIRE(after.size() == 2);
  CHECK_FALSE(after[0].outcome);
  CHECK_FALSE(after[0].running);

  // The maintenance pass of the other instance marks both, once.
  auto marked = checked(survivor->maintain(false));
  REQUIRE(marked.size() == 2);
  CHECK(marked[0].intent.call_id == "x");
  CHECK(marked[0].outcome == "interrupted");
  CHECK(marked[0].instance == "instance-a");
  CHECK(marked[1].intent.call_id == "y");
  CHECK(checked(survivor->maintain(false)).empty());
  auto records = b.audit();
  REQUIRE(records.size() == 2);
  CHECK(records[0].call_id == "x");
  CHECK(records[0].outcome == "interrupted");
  CHECK(records[0].idempotency_key == "k");

  // A repeat of its key, on either instance, finds it interrupted: not run again.
  auto found = survivor->find_by_key("alice", "k");
  REQUIRE(found);
  CHECK(found->outcome == "interrupted");
  CHECK(found->result.is_null());
  // The instance that ran it lived on: what the call came to replaces
  // "interrupted", and a repeat of its key is answered from it.
  auto late = doomed->finish("x", "ok", text_result("done"), record("x", at(5)));
  INFO(late.message());
  REQUIRE(late.ok());
  found = survivor->find_by_key("alice", "k");
  REQUIRE(found);
  CHECK(found->outcome == "ok");
  CHECK(found->result == text_result("done"));
  records = b.audit();
  REQUIRE(records.size() == 3);
  CHECK(records[2].call_id == "x");
  CHECK(records[2].outcome == "ok");
  // Once it has a real outcome, that one stays.
  CHECK(doomed->finish("x", "tool_error", text_result("again"), record("x", at(6)))
            .is_invalid_argument());

  // It goes on with a new lock: its next call is running, not marked.
  REQUIRE(doomed->begin(intent("z", "alice")).ok());
  CHECK(checked(survivor->maintain(false)).empty());
  CHECK(b.journal().back().running);
}

TEST_CASE("journal on PostgreSQL: find_by_key marks a call of a dead instance at once") {
  PgBackend b;
  auto doomed = open_pg(instance_options(b, "instance-a"));
  auto survivor = open_pg(instance_options(b, "instance-b"));
  REQUIRE(doomed->begin(intent("x", "alice", "k")).ok());
  kill_instance_connection(b, "x");
  auto found = survivor->find_by_key("alice", "k");
  REQUIRE(found);
  CHECK(found->outcome == "interrupted");
  auto records = b.audit();
  REQUIRE(records.size() == 1);
  CHECK(records[0].outcome == "interrupted");
  CHECK(checked(survivor->maintain(false)).empty());
  // Like any call that did not finish, it may be asked for again.
  REQUIRE(survivor->begin(intent("x2", "alice", "k")).ok());
}

TEST_CASE("journal on PostgreSQL: finish writes the outcome and the audit record or neither") {
  PgBackend b;
  auto store = open_pg(b.options());
  REQUIRE(store->begin(intent("c1", "alice", "k")).ok());
  auto connection = connect_postgres(b.conninfo);
  REQUIRE(connection
              ->exec("CREATE FUNCTION toolmux_test_refuse() RETURNS trigger LANGUAGE plpgsql AS "
                     "$$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$")
              .ok());
  REQUIRE(connection
              ->exec("CREATE FUNCTION toolmux_test_die() RETURNS trigger LANGUAGE plpgsql AS $$ "
                     "BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); "
                     "PERFORM pg_sleep(5); RETURN NEW; END $$")
              .ok());
  const auto nothing_written = [&] {
    auto entries = b.journal();
    REQUIRE(entries.size() == 1);
    CHECK_FALSE(entries[0].outcome);
    CHECK(b.audit().empty());
    auto found = store->find_by_key("alice", "k");
    REQUIRE(found);
    CHECK_FALSE(found->outcome);
  };

  SECTION("the audit record's insert fails") {
    REQUIRE(connection
                ->exec("CREATE TRIGGER refuse BEFORE INSERT ON toolmux_audit FOR EACH ROW "
                       "EXECUTE FUNCTION toolmux_test_refuse()")
                .ok());
    auto failed = store->finish("c1", "ok", text_result("done"), record("c1", at(1)));
    CHECK(failed.is_io_error());
    CHECK(failed.message().find("refused by the test") != std::string::npos);
    nothing_written();
    REQUIRE(connection->exec("DROP TRIGGER refuse ON toolmux_audit").ok());
  }
  SECTION("the connection dies between the two") {
    REQUIRE(connection
                ->exec("CREATE TRIGGER die BEFORE INSERT ON toolmux_audit FOR EACH ROW "
                       "EXECUTE FUNCTION toolmux_test_die()")
                .ok());
    auto failed = store->finish("c1", "ok", text_result("done"), record("c1", at(1)));
    INFO(failed.message());
    CHECK(failed.is_unavailable());
    nothing_written();
    REQUIRE(connection->exec("DROP TRIGGER die ON toolmux_audit").ok());
  }
  // Tried again, both are there.
  REQUIRE(store->finish("c1", "ok", text_result("done"), record("c1", at(1))).ok());
  CHECK(b.journal()[0].outcome == "ok");
  CHECK(b.audit().size() == 1);
}

// A native tool's change made in the transaction the store lends it commits
// with the call's outcome and audit record (catalog/store_transaction.h).
TEST_CASE("journal on PostgreSQL: a lent transaction commits the change with the outcome") {
  PgBackend b;
  auto store = open_pg(b.options());
  REQUIRE(store->begin(intent("c1", "alice", "k")).ok());
  auto outside = connect_postgres(b.conninfo);
  REQUIRE(outside->exec("CREATE TABLE items (id integer PRIMARY KEY, name text)").ok());
  const auto items = [&] {
    auto rows = outside->exec("SELECT count(*) FROM items");
    REQUIRE(rows.ok());
    return rows->integer(0, 0);
  };
  // Neither the change nor the outcome nor the audit record.
  const auto nothing_written = [&] {
    CHECK(items() == 0);
    CHECK_FALSE(b.journal()[0].outcome);
    CHECK(b.audit().empty());
  };
  auto lent = store->lend_transaction();
  REQUIRE(lent);
  CHECK_FALSE(lent->begun());

  SECTION("committed: the row, the outcome and the audit record, together") {
    auto inserted =
        lent->exec("INSERT INTO items VALUES ($1, $2) RETURNING id, name", {"1", std::nullopt});
    REQUIRE(inserted.ok());
    CHECK(lent->begun());
    CHECK(inserted->columns == std::vector<std::string>{"id", "name"});
    REQUIRE(inserted->rows.size() == 1);
    CHECK(inserted->rows[0][0] == "1");
    CHECK_FALSE(inserted->rows[0][1]);
    // A failed statement undoes itself only; the transaction goes on.
    auto twice = lent->exec("INSERT INTO items VALUES (1, 'again')");
    CHECK(twice.status().is_io_error());
    CHECK(twice.status().message().find("duplicate key") != std::string::npos);
    auto refused = lent->exec("  commit");
    CHECK(refused.status().is_invalid_argument());
    REQUIRE(lent->exec("INSERT INTO items VALUES (2, 'two')").ok());
    CHECK(items() == 0);  // not yet committed
    REQUIRE(store->finish_in(*lent, "c1", "ok", text_result("done"), record("c1", at(1))).ok());
    CHECK(items() == 2);
    CHECK(b.journal()[0].outcome == "ok");
    CHECK(b.audit().size() == 1);
    CHECK(lent->exec("INSERT INTO items VALUES (3, 'late')").status().is_invalid_argument());
    CHECK(items() == 2);
  }
  SECTION("the audit record cannot be written: the change is rolled back with it") {
    REQUIRE(outside
                ->exec("CREATE FUNCTION toolmux_test_refuse() RETURNS trigger LANGUAGE plpgsql "
                       "AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$")
                .ok());
    REQUIRE(outside
                ->exec("CREATE TRIGGER refuse BEFORE INSERT ON toolmux_audit FOR EACH ROW "
                       "EXECUTE FUNCTION toolmux_test_refuse()")
                .ok());
    REQUIRE(lent->exec("INSERT INTO items VALUES (1, 'one')").ok());
    auto failed = store->finish_in(*lent, "c1", "ok", text_result("done"), record("c1", at(1)));
    CHECK(failed.is_io_error());
    CHECK_FALSE(lent->fate_unknown());
    nothing_written();
  }
  SECTION("the change breaks a constraint checked at COMMIT: neither is written") {
    REQUIRE(outside
                ->exec("CREATE TABLE tags (item integer REFERENCES items (id) DEFERRABLE "
                       "INITIALLY DEFERRED)")
                .ok());
    REQUIRE(lent->exec("INSERT INTO tags VALUES (42)").ok());
    auto failed = store->finish_in(*lent, "c1", "ok", text_result("done"), record("c1", at(1)));
    CHECK(failed.is_io_error());
    CHECK(failed.message().find("foreign key") != std::string::npos);
    CHECK_FALSE(lent->fate_unknown());
    nothing_written();
  }
  SECTION("the connection dies during COMMIT: nobody can tell, and nothing is written after") {
    REQUIRE(outside
                ->exec("CREATE FUNCTION toolmux_test_die() RETURNS trigger LANGUAGE plpgsql AS $$ "
                       "BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); "
                       "PERFORM pg_sleep(5); RETURN NEW; END $$")
                .ok());
    // A deferred trigger: it runs at COMMIT.
    REQUIRE(outside
                ->exec("CREATE CONSTRAINT TRIGGER die AFTER INSERT ON items DEFERRABLE INITIALLY "
                       "DEFERRED FOR EACH ROW EXECUTE FUNCTION toolmux_test_die()")
                .ok());
    REQUIRE(lent->exec("INSERT INTO items VALUES (1, 'one')").ok());
    auto failed = store->finish_in(*lent, "c1", "ok", text_result("done"), record("c1", at(1)));
    INFO(failed.message());
    CHECK(failed.is_unavailable());
    CHECK(lent->fate_unknown());
    nothing_written();
  }
  SECTION("rolled back: nothing of the change stays, and the call finishes apart") {
    REQUIRE(lent->exec("INSERT INTO items VALUES (1, 'one')").ok());
    lent->roll_back();
    CHECK(lent->exec("INSERT INTO items VALUES (2, 'two')").status().is_invalid_argument());
    REQUIRE(store->finish("c1", "crashed", nullptr, record("c1", at(1))).ok());
    CHECK(items() == 0);
    CHECK(b.journal()[0].outcome == "crashed");
  }
  SECTION("a transaction the tool never used: the outcome is written as finish writes it") {
    REQUIRE(store->finish_in(*lent, "c1", "ok", text_result("done"), record("c1", at(1))).ok());
    CHECK(b.journal()[0].outcome == "ok");
    CHECK(b.audit().size() == 1);
  }
}

TEST_CASE("journal in RocksDB: no transaction is lent") {
  RocksDbBackend b;
  CHECK_FALSE(open_store(b.options())->lend_transaction());
}

TEST_CASE("journal on PostgreSQL: the readers page through many rows") {
  PgBackend b;
  auto store = open_pg(b.options());
  constexpr int kCalls = 1234;  // more than two pages
  for (int n = 0; n < kCalls; ++n) {
    // Many in one nanosecond: the pages are keyed by time and sequence.
    REQUIRE(store->audit(record("r" + std::to_string(n), at(n / 100))).ok());
  }
  for (int n = 0; n < 600; ++n) {
    JournalIntent i = intent("c" + std::to_string(n));
    i.started = at(n / 100);
    REQUIRE(store->begin(i).ok());
  }
  auto records = b.audit();
  REQUIRE(records.size() == kCalls);
  for (int n = 0; n < kCalls; ++n) CHECK(records[n].call_id == "r" + std::to_string(n));
  auto entries = b.journal();
  REQUIRE(entries.size() == 600);
  CHECK(entries[599].intent.call_id == "c599");
  CHECK(entries[599].running);
  AuditQuery newest;
  newest.limit = 3;
  CHECK(call_ids(b.audit(newest)) == std::vector<std::string>{"r1231", "r1232", "r1233"});
}

TEST_CASE("child: begin a call on PostgreSQL and wait", "[.child]") {
  const char* conninfo = std::getenv(kChildDirVariable);
  if (!conninfo) return;
  JournalStoreOptions options;
  options.postgres = open_postgres(conninfo);
  options.instance_id = "child";
  auto store = PgJournalStore::open(options);
  if (!store.ok() || !(*store)->begin(intent("held-call", "carol", "k")).ok()) ::_exit(1);
  if (!write_line("ready")) ::_exit(2);
  char byte;
  while (::read(kChildInFd, &byte, 1) > 0) {
  }
  ::_exit(0);  // without closing the store: as a crash would
}

TEST_CASE("journal on PostgreSQL: a killed process's call is marked interrupted at the next open") {
  PgBackend b;
  Child child = spawn_child("child: begin a call on PostgreSQL and wait", b.conninfo);
  const std::string ready = next_line(child);
  std::vector<JournalEntry> while_alive;
  if (ready == "ready") while_alive = b.journal();
  CHECK(finish(child, true) == -1);  // kill -9
  REQUIRE(ready == "ready");
  REQUIRE(while_alive.size() == 1);
  CHECK(while_alive[0].running);

  // The server notices the closed connection and drops the child's lock.
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = !b.journal()[0].running;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(gone);
  auto next = open_pg(b.options());
  REQUIRE(next->interrupted().size() == 1);
  CHECK(next->interrupted()[0].intent.call_id == "held-call");
  CHECK(next->interrupted()[0].instance == "child");
  auto records = b.audit();
  REQUIRE(records.size() == 1);
  CHECK(records[0].outcome == "interrupted");
  CHECK(records[0].principal == "carol");
}

TEST_CASE("journal on PostgreSQL: a database no server has used reads as empty") {
  PgPoolOptions options;
  options.conninfo = fresh_postgres_database();
  auto pool = checked(PgPool::make(options));
  CHECK(checked(read_journal(*pool)).empty());
  CHECK(checked(read_audit(*pool, {})).empty());
  AuditQuery newest;
  newest.limit = 5;
  CHECK(checked(read_audit(*pool, newest)).empty());
  // Nothing was created by reading.
  CHECK(query_one(options.conninfo, "SELECT to_regclass('toolmux_audit') IS NULL") == "t");
}

TEST_CASE("journal on PostgreSQL: a server restart refuses calls meanwhile, then they go on") {
  PgBackend b;
  auto options = b.options();
  auto store = open_pg(options);
  REQUIRE(store->begin(intent("before", "alice", "k")).ok());

  postgres_server().pause();
  auto refused = store->begin(intent("during"));
  postgres_server().resume();
  INFO(refused.message());
  CHECK(refused.is_unavailable());
  CHECK(refused.message().find("database t") != std::string::npos);  // where, no secrets

  // Once the pool's back-off has passed, this instance's maintenance pass
  // takes its lock again first: its call that ran across the restart is not
  // taken for a dead instance's, and records its outcome.
  Result<std::vector<JournalEntry>> pass = Status::unavailable("not tried");
  for (int i = 0; i < 100 && !pass.ok(); ++i) {
    pass = store->maintain(false);
    if (!pass.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(pass.message());
  REQUIRE(pass.ok());
  CHECK(pass->empty());
  auto running = store->find_by_key("alice", "k");
  REQUIRE(running);
  CHECK_FALSE(running->outcome);
  REQUIRE(store->begin(intent("after")).ok());
  REQUIRE(store->finish("before", "ok", text_result("done"), record("before", at(1))).ok());
  auto entries = b.journal();
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].outcome == "ok");
  CHECK(entries[1].running);
}

// ---- What the store cannot take: kept in a spool, written when it can ----

TEST_CASE("journal: an outcome written over \"interrupted\" replaces it (RocksDB)") {
  TempDir dir;
  { REQUIRE(open_rocksdb(options_for(dir.path()))->begin(intent("c1", "alice", "k")).ok()); }
  auto store = open_rocksdb(options_for(dir.path()));  // marks c1 interrupted
  REQUIRE(store->interrupted().size() == 1);
  REQUIRE(store->finish("c1", "ok", text_result("done"), record("c1", at(1))).ok());
  auto found = store->find_by_key("alice", "k");
  REQUIRE(found);
  CHECK(found->outcome == "ok");
  CHECK(found->result == text_result("done"));
  std::vector<std::string> outcomes;
  for (const AuditRecord& r : audit_of(dir.path())) outcomes.push_back(r.outcome);
  CHECK(outcomes == std::vector<std::string>{"interrupted", "ok"});
  // A real outcome stays.
  CHECK(store->finish("c1", "tool_error", text_result("again"), record("c1", at(2)))
            .is_invalid_argument());
}

TEST_CASE("journal: a spool file left by a dead process is written at the next open") {
  TempDir dir;
  JournalIntent i = intent("c1", "alice", "k");
  {
    auto first = open_rocksdb(options_for(dir.path()));
    REQUIRE(first->begin(i).ok());
  }
  // What the process kept, as it writes it: a damaged line, the outcome, a
  // record written since (done), and a last line cut short by the kill.
  JournalEntry entry;
  entry.intent = i;
  const json outcome = {{"id", 1},
                        {"kind", "outcome"},
                        {"intent", entry_json(entry)},
                        {"outcome", "ok"},
                        {"result", text_result("done")},
                        {"audit", audit_json(record("c1", at(1)))}};
  const json read = {{"id", 2}, {"kind", "audit"}, {"audit", audit_json(record("r1", at(2)))}};
  {
    std::ofstream spool(dir.path() / "journal" / "slot-0-0.spool");
    spool << "{not json\n"
          << outcome.dump() << "\n"
          << read.dump() << "\n"
          << json{{"done", 2}}.dump() << "\n"
          << "{\"id\": 3, \"kind\": \"au";
  }
  auto store = open_store(options_for(dir.path()));
  CHECK(store->kept() == 0);
  CHECK(store->interrupted().empty());  // its outcome was in the spool
  auto found = store->find_by_key("alice", "k");
  REQUIRE(found);
  CHECK(found->outcome == "ok");
  CHECK(found->result == text_result("done"));
  auto records = audit_of(dir.path());
  REQUIRE(records.size() == 2);  // interrupted at the open, then ok; r1 was written before
  CHECK(records[1].outcome == "ok");
  CHECK(std::filesystem::file_size(dir.path() / "journal" / "slot-0-0.spool") == 0);
}

namespace {

// A JournalIntent begun now (the store compares it with the server's start).
JournalIntent intent_now(const std::string& call_id, const std::string& key = "") {
  JournalIntent i = intent(call_id, "alice", key);
  i.started = system_clock::now();
  return i;
}

// `open` tried until the server is back from a restart (the pool backs off).
template <typename Open>
auto once_back(Open open) {
  decltype(open()) opened = Status::unavailable("not tried");
  eventually(
      [&] {
        opened = open();
        return opened.ok();
      },
      std::chrono::seconds(15));
  INFO(opened.message());
  REQUIRE(opened.ok());
  return std::move(opened).value();
}

// An instance on `b` whose spool is in `dir` (JournalStore::open's default).
JournalStoreOptions spooled_options(const PgBackend& b, const TempDir& dir) {
  JournalStoreOptions options = b.options();
  options.data_dir = dir.path();
  return options;
}

}  // namespace

TEST_CASE(
    "journal on PostgreSQL: an outcome the server cannot take is kept, pending, then written") {
  PgBackend b;
  TempDir dir;
  auto store = open_store(spooled_options(b, dir));
  REQUIRE(store->begin(intent_now("c1", "k")).ok());

  postgres_server().pause();
  const Status finished = store->finish("c1", "ok", text_result("done"), record("c1", at(1)));
  const Status read = store->audit(record("r1", at(2), "read_text_file"));
  const auto pending = store->find_by_key("alice", "k");
  const std::size_t kept = store->kept();
  postgres_server().resume();

  INFO(finished.message());
  CHECK(finished.ok());
  CHECK(read.ok());
  CHECK(kept == 2);
  REQUIRE(pending);
  CHECK(pending->outcome_pending);  // neither run again nor answered yet
  CHECK_FALSE(pending->outcome);
  // Back: the next repeat (or the spool's thread) writes them first.
  std::optional<JournalEntry> found;
  CHECK(eventually(
      [&] {
        found = store->find_by_key("alice", "k");
        return found && found->outcome;
      },
      std::chrono::seconds(15)));
  REQUIRE(found);
  CHECK(found->outcome == "ok");
  CHECK(found->result == text_result("done"));
  CHECK(eventually([&] { return store->kept() == 0; }, std::chrono::seconds(5)));
  CHECK(call_ids(b.audit()) == std::vector<std::string>{"c1", "r1"});
}

TEST_CASE(
    "journal on PostgreSQL: what a process kept is written by the next one, before it serves") {
  PgBackend b;
  TempDir dir;
  {
    auto store = open_store(spooled_options(b, dir));
    REQUIRE(store->begin(intent_now("c1", "k")).ok());
    postgres_server().pause();
    REQUIRE(store->finish("c1", "ok", text_result("done"), record("c1", at(1))).ok());
  }  // stopped while the server is down: the outcome stays in the spool file
  postgres_server().resume();

  const JournalStoreOptions next_options = spooled_options(b, dir);
  auto next = once_back([&] { return JournalStore::open(next_options); });
  CHECK(next->kept() == 0);
  CHECK(next->interrupted().empty());
  auto found = next->find_by_key("alice", "k");
  REQUIRE(found);
  CHECK(found->outcome == "ok");
  CHECK(found->result == text_result("done"));
  auto records = b.audit();
  REQUIRE(records.size() == 1);
  CHECK(records[0].outcome == "ok");
}

TEST_CASE(
    "journal on PostgreSQL: after a server restart, a live instance's call is not taken for dead") {
  PgBackend b;
  auto judge = open_pg(instance_options(b, "instance-a"));
  auto runner = open_pg(instance_options(b, "instance-b"));
  REQUIRE(runner->begin(intent_now("x", "k")).ok());
  postgres_server().pause();
  postgres_server().resume();

  // Every instance lost its lock with the server. The other one's pass,
  // before the runner is back, leaves its call running.
  auto pass = once_back([&] { return judge->maintain(false); });
  CHECK(pass.empty());
  auto found = judge->find_by_key("alice", "k");
  REQUIRE(found);
  CHECK_FALSE(found->outcome);
  REQUIRE(runner->keep_alive().ok());  // its lock again
  CHECK(b.journal()[0].running);
  REQUIRE(runner->finish("x", "ok", text_result("done"), record("x", at(1))).ok());
  CHECK(b.journal()[0].outcome == "ok");
}

TEST_CASE(
    "journal on PostgreSQL: an instance that does not come back is taken for dead after the "
    "grace") {
  PgBackend b;
  JournalStoreOptions judge_options = instance_options(b, "instance-a");
  judge_options.restart_grace = std::chrono::seconds(2);
  auto judge = open_pg(judge_options);
  {
    auto gone = open_pg(instance_options(b, "instance-b"));
    REQUIRE(gone->begin(intent_now("x", "k")).ok());
    postgres_server().pause();
  }  // the instance stops while the server is down
  postgres_server().resume();
  auto pass = once_back([&] { return judge->maintain(false); });
  CHECK(pass.empty());
  std::vector<JournalEntry> marked;
  CHECK(eventually(
      [&] {
        auto again = judge->maintain(false);
        if (again.ok()) marked = std::move(*again);
        return !marked.empty();
      },
      std::chrono::seconds(10)));
  REQUIRE(marked.size() == 1);
  CHECK(marked[0].intent.call_id == "x");
}

TEST_CASE("journal on PostgreSQL: a full spool refuses more, and says so") {
  PgBackend b;
  TempDir dir;
  SpoolOptions spool;
  spool.base = dir.path() / "spool";
  spool.max_items = 1;
  auto store = checked(SpooledJournalStore::open(open_pg(b.options()), spool));
  CHECK(store->writable().ok());
  postgres_server().pause();
  const Status first = store->audit(record("r1", at(1), "read_text_file"));
  const Status full = store->writable();
  const Status second = store->audit(record("r2", at(2), "read_text_file"));
  postgres_server().resume();
  CHECK(first.ok());
  CHECK(full.is_resource_exhausted());
  CHECK(full.message().find("1 records kept") != std::string::npos);
  CHECK(second.is_unavailable());  // the store's own failure: not kept
  CHECK(eventually([&] { return store->kept() == 0; }, std::chrono::seconds(15)));
  CHECK(store->writable().ok());
  CHECK(call_ids(b.audit()) == std::vector<std::string>{"r1"});
}

// ---- The audit chain (RocksDB; src/store/audit_chain.h) ----

namespace {

// The slot's database opened for writing, as someone with the files could,
// for tests that tamper with it (the store closed first).
std::unique_ptr<rocksdb::DB> open_slot_for_tampering(const std::filesystem::path& folder) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options;
  const rocksdb::Status status = rocksdb::DB::Open(options, folder.string(), &raw);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return std::unique_ptr<rocksdb::DB>(raw);
}

// The a/ key and stored bytes of the audit record of `call_id`.
std::pair<std::string, std::string> stored_record(rocksdb::DB& db, const std::string& call_id) {
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
  for (it->Seek("a/"); it->Valid() && it->key().starts_with("a/"); it->Next()) {
    const json j = json::parse(it->value().ToString(), nullptr, false);
    if (j.is_object() && j.value("call_id", "") == call_id) {
      return {it->key().ToString(), it->value().ToString()};
    }
  }
  FAIL("no audit record of " << call_id);
  return {};
}

AuditChainReport verified(const std::filesystem::path& dir) {
  auto report = verify_audit_chain(dir);
  INFO(report.message());
  REQUIRE(report.ok());
  return *report;
}

std::string problem_text(const AuditChainReport& report) {
  return report.problem ? report.problem->call_id + ": " + report.problem->why : "";
}

// A slot with five records: c1 and c2 finished calls, r1 to r3 reads.
std::filesystem::path five_records(const TempDir& dir) {
  auto store = open_rocksdb(options_for(dir.path()));
  REQUIRE(store->audit(record("r1", at(1), "read_text_file")).ok());
  REQUIRE(store->begin(intent("c1")).ok());
  REQUIRE(store->finish("c1", "ok", text_result("done"), record("c1", at(2))).ok());
  REQUIRE(store->audit(record("r2", at(3), "read_text_file")).ok());
  REQUIRE(store->begin(intent("c2")).ok());
  REQUIRE(store->finish("c2", "ok", text_result("done"), record("c2", at(4))).ok());
  REQUIRE(store->audit(record("r3", at(5), "read_text_file")).ok());
  return store->folder();
}

}  // namespace

TEST_CASE("audit chain: verify walks every record and finds the chain intact") {
  TempDir dir;
  five_records(dir);
  const AuditChainReport report = verified(dir.path());
  CHECK_FALSE(report.problem);
  CHECK(report.records == 5);
  CHECK(report.unchained == 0);
  CHECK(report.chains == 1);
  CHECK(report.first == at(1));
  CHECK(report.last == at(5));
  // The link is not part of what the readers show.
  CHECK(call_ids(audit_of(dir.path())) == std::vector<std::string>{"r1", "c1", "r2", "c2", "r3"});
}

TEST_CASE("audit chain: a record whose stored bytes were edited is named by verify") {
  TempDir dir;
  const auto folder = five_records(dir);
  {
    auto db = open_slot_for_tampering(folder);
    auto [key, value] = stored_record(*db, "c1");
    const auto at_outcome = value.find("\"outcome\":\"ok\"");
    REQUIRE(at_outcome != std::string::npos);
    value.replace(at_outcome, 14, "\"outcome\":\"no\"");
    REQUIRE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  }
  const AuditChainReport report = verified(dir.path());
  REQUIRE(report.problem);
  CHECK(report.problem->call_id == "c1");
  CHECK(report.problem->time == at(2));
  CHECK(report.problem->seq == 1);
  CHECK_THAT(report.problem->why, Catch::StartsWith("hash mismatch"));
}

TEST_CASE("audit chain: a record deleted from the middle is named by verify") {
  TempDir dir;
  const auto folder = five_records(dir);
  SECTION("the record and its place in the chain: the next record misses its predecessor") {
    {
      auto db = open_slot_for_tampering(folder);
      auto [key, value] = stored_record(*db, "r2");
      std::string place = "h/";
      for (int shift = 56; shift >= 0; shift -= 8)
        place += static_cast<char>((std::uint64_t{2} >> shift) & 0xff);
      REQUIRE(db->Delete(rocksdb::WriteOptions(), key).ok());
      REQUIRE(db->Delete(rocksdb::WriteOptions(), place).ok());
    }
    const AuditChainReport report = verified(dir.path());
    INFO(problem_text(report));
    REQUIRE(report.problem);
    CHECK(report.problem->call_id == "c2");
    CHECK(report.problem->time == at(4));
    CHECK_THAT(report.problem->why, Catch::StartsWith("missing predecessor"));
  }
  SECTION("the record alone: verify names its place and time") {
    {
      auto db = open_slot_for_tampering(folder);
      auto [key, value] = stored_record(*db, "r2");
      REQUIRE(db->Delete(rocksdb::WriteOptions(), key).ok());
    }
    const AuditChainReport report = verified(dir.path());
    INFO(problem_text(report));
    REQUIRE(report.problem);
    CHECK(report.problem->seq == 2);
    CHECK(report.problem->time == at(3));
    CHECK_THAT(report.problem->why, Catch::StartsWith("missing record"));
  }
}

TEST_CASE("audit chain: appends from many threads at once make one chain, not a fork") {
  TempDir dir;
  {
    auto store = open_rocksdb(options_for(dir.path()));
    std::vector<std::thread> threads;
    // Six threads of reads' records, written in groups (append_audit_grouped),
    // beside two of mutations' outcomes.
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int n = 0; n < 50; ++n) {
          const std::string id = "t" + std::to_string(t) + "-" + std::to_string(n);
          if (t % 4 != 3) {
            CHECK(store->audit(record(id, at(n), "read_text_file")).ok());
          } else {
            CHECK(store->begin(intent(id)).ok());
            CHECK(store->finish(id, "ok", text_result(id), record(id, at(n))).ok());
          }
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
  const AuditChainReport report = verified(dir.path());
  INFO(problem_text(report));
  CHECK_FALSE(report.problem);
  CHECK(report.records == 400);
}

TEST_CASE("audit chain: records written before the chain are unchained, not tampered") {
  TempDir dir;
  std::filesystem::path folder;
  {
    auto store = open_rocksdb(options_for(dir.path()));
    folder = store->folder();
  }
  {
    // As toolmux 0.1.0 wrote them: a/<time><seq>, the record's JSON, no link.
    auto db = open_slot_for_tampering(folder);
    for (int n = 0; n < 3; ++n) {
      std::string key = "a/";
      const std::uint64_t time =
          static_cast<std::uint64_t>(std::chrono::nanoseconds(at(n).time_since_epoch()).count()) ^
          (std::uint64_t{1} << 63);
      for (int shift = 56; shift >= 0; shift -= 8) key += static_cast<char>((time >> shift) & 0xff);
      for (int shift = 56; shift >= 0; shift -= 8) {
        key += static_cast<char>((static_cast<std::uint64_t>(n) >> shift) & 0xff);
      }
      REQUIRE(db->Put(rocksdb::WriteOptions(), key,
                      audit_text(record("old-" + std::to_string(n), at(n))))
                  .ok());
    }
  }
  {
    auto store = open_rocksdb(options_for(dir.path()));
    REQUIRE(store->audit(record("new-1", at(10))).ok());
    REQUIRE(store->audit(record("new-2", at(11))).ok());
  }
  const AuditChainReport report = verified(dir.path());
  INFO(problem_text(report));
  CHECK_FALSE(report.problem);
  CHECK(report.unchained == 3);
  CHECK(report.records == 2);
  CHECK(report.first == at(10));
  CHECK(audit_of(dir.path()).size() == 5);
}

TEST_CASE("audit chain: retention removes only the expired front and leaves a signed marker") {
  TempDir dir;
  FakeClock clock;
  auto options = options_for(dir.path());
  options.audit_retention = hours(24);
  options.now = clock.fn();
  std::filesystem::path folder;
  {
    auto store = open_rocksdb(options);
    folder = store->folder();
    REQUIRE(store->audit(record("old-1", at(0))).ok());
    REQUIRE(store->audit(record("old-2", at(60))).ok());
    REQUIRE(store->audit(record("new", at(std::int64_t{20} * 3600))).ok());
    // Appended after "new", already expired: removing it would leave a hole.
    REQUIRE(store->audit(record("late-old", at(120))).ok());
  }
  clock.advance(hours(25));
  { auto store = open_rocksdb(options); }  // retention at open
  CHECK(call_ids(audit_of(dir.path())) == std::vector<std::string>{"late-old", "new"});
  AuditChainReport report = verified(dir.path());
  INFO(problem_text(report));
  CHECK_FALSE(report.problem);
  CHECK(report.records == 2);
  CHECK(report.markers == 1);
  CHECK(report.removed == 2);

  // Later passes merge into the one marker; the chain goes on across it.
  clock.advance(hours(20));
  {
    auto store = open_rocksdb(options);
    REQUIRE(store->audit(record("newer", at(std::int64_t{46} * 3600))).ok());
  }
  report = verified(dir.path());
  CHECK_FALSE(report.problem);
  CHECK(report.records == 1);
  CHECK(report.markers == 1);
  CHECK(report.removed == 4);

  SECTION("an edited marker fails verify") {
    {
      auto db = open_slot_for_tampering(folder);
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
      it->Seek("m/");
      REQUIRE(it->Valid());
      REQUIRE(it->key().starts_with("m/"));
      std::string value = it->value().ToString();
      const auto removed = value.find("\"removed\":4");
      REQUIRE(removed != std::string::npos);
      value.replace(removed, 11, "\"removed\":3");
      REQUIRE(db->Put(rocksdb::WriteOptions(), it->key(), value).ok());
    }
    report = verified(dir.path());
    REQUIRE(report.problem);
    CHECK_THAT(report.problem->why, Catch::StartsWith("marker signature bad"));
  }
  SECTION("a marker removed leaves the chain without its start") {
    {
      auto db = open_slot_for_tampering(folder);
      std::string first = "m/";
      first.append(8, '\0');
      REQUIRE(db->Delete(rocksdb::WriteOptions(), first).ok());
    }
    report = verified(dir.path());
    REQUIRE(report.problem);
    CHECK(report.problem->call_id == "newer");
    CHECK_THAT(report.problem->why, Catch::StartsWith("missing predecessor"));
  }
}

TEST_CASE("journal on PostgreSQL: the audit table refuses UPDATE and DELETE, but not retention") {
  PgBackend b;
  FakeClock clock;
  auto options = b.options();
  options.audit_retention = hours(24);
  options.now = clock.fn();
  auto store = open_store(options);
  REQUIRE(store->audit(record("old", at(0))).ok());
  REQUIRE(store->audit(record("newer", at(std::int64_t{20} * 3600))).ok());

  auto connection = connect_postgres(b.conninfo);
  for (const char* statement :
       {"UPDATE toolmux_audit SET outcome = 'forged'", "DELETE FROM toolmux_audit",
        "DELETE FROM toolmux_audit WHERE call_id = 'old'", "TRUNCATE toolmux_audit"}) {
    auto refused = connection->exec(statement);
    INFO(statement);
    CHECK_FALSE(refused.ok());
    CHECK_THAT(refused.message(), Catch::Contains("toolmux_audit is append-only"));
  }
  CHECK(call_ids(b.audit()) == std::vector<std::string>{"old", "newer"});
  CHECK(b.audit().front().outcome == "ok");

  // Retention still deletes what is past it (at the next open).
  store.reset();
  clock.advance(hours(25));
  auto reopened = open_store(options);
  CHECK(call_ids(b.audit()) == std::vector<std::string>{"newer"});
  auto guard = pg_audit_guard(b.reader);
  REQUIRE(guard.ok());
  CHECK(guard->trigger);
  CHECK(guard->records == 1);
}
