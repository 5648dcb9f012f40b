// The replay and journal stages with a real journal (RocksDB in a temporary
// folder): a mutation's intent is written before it runs and its outcome
// after; a repeat with the same idempotency key is answered from the journal;
// a call left without an outcome is found interrupted and never re-run.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>

#include "catalog/store_transaction.h"
#include "src/base/digest.h"
#include "src/pipeline/journal.h"
#include "src/pipeline/record.h"
#include "src/pipeline/replay.h"
#include "src/store/pg_journal_store.h"
#include "src/store/spooled_journal_store.h"
#include "tests/support/eventually.h"
#include "tests/support/pipeline_fixture.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

// A door a tool waits at, whatever it is asked, until the test opens it.
struct Door {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  bool reached = false;

  void wait() {
    std::unique_lock lock(mutex);
    reached = true;
    changed.notify_all();
    changed.wait(lock, [this] { return open; });
  }
  bool wait_reached() {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(5), [this] { return reached; });
  }
  void let_through() {
    std::lock_guard lock(mutex);
    open = true;
    changed.notify_all();
  }
};

// The fixture's tools plus remove_item (local_mutation), which counts its runs.
struct JournalFixture : PipelineFixture {
  std::shared_ptr<Door> door = std::make_shared<Door>();
  TempDir dir;
  std::shared_ptr<std::atomic<int>> runs = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<const CallJournal> journal = std::make_shared<const CallJournal>();

  JournalFixture() {
    auto registry = make_test_registry();
    ToolSpec s = spec("remove_item", object_schema({{"id", {{"type", "integer"}}}}, {"id"}));
    s.side_effect = "local_mutation";
    auto counter = runs;
    REQUIRE(registry
                ->add(s,
                      [counter](const json& args, CallContext& context) {
                        ++*counter;
                        return ToolResult::text("removed " + args["id"].dump() + " as " +
                                                context.call_id());
                      })
                .empty());
    // remove_in_outage: a mutation during which PostgreSQL stops.
    ToolSpec outage = s;
    outage.name = "remove_in_outage";
    REQUIRE(registry
                ->add(outage,
                      [counter](const json& args, CallContext&) {
                        ++*counter;
                        postgres_server().pause();
                        return ToolResult::text("removed " + args["id"].dump());
                      })
                .empty());
    // label_item: a mutation whose schema gives its label a default.
    ToolSpec label = spec(
        "label_item", object_schema({{"id", {{"type", "integer"}}},
                                     {"label", {{"type", "string"}, {"default", "unlabelled"}}}},
                                    {"id"}));
    label.side_effect = "local_mutation";
    REQUIRE(registry
                ->add(label,
                      [](const json& args, CallContext&) {
                        return ToolResult::text("labelled " + args["id"].dump() + " " +
                                                args["label"].get<std::string>());
                      })
                .empty());
    // slow_remove: a mutation that goes on past its 100 ms timeout, and past
    // a cancellation, until the test lets it end; slow_count, a read alike.
    ToolSpec slow = s;
    slow.name = "slow_remove";
    slow.timeout = std::chrono::milliseconds(100);
    auto waits_at = door;
    REQUIRE(registry
                ->add(slow,
                      [counter, waits_at](const json& args, CallContext&) {
                        ++*counter;
                        waits_at->wait();
                        return ToolResult::text("removed " + args["id"].dump() + " at last");
                      })
                .empty());
    ToolSpec slow_read = slow;
    slow_read.name = "slow_count";
    slow_read.side_effect = "read_only";
    REQUIRE(registry
                ->add(slow_read,
                      [waits_at](const json&, CallContext&) {
                        waits_at->wait();
                        return ToolResult::text("counted at last");
                      })
                .empty());
    // add_item: a native tool that adds its item in the store transaction
    // lent to it, and a tag naming item id + 100 ("tag", which commits only
    // once that item exists), or throws after adding ("throw").
    ToolSpec add = spec(
        "add_item", object_schema({{"id", {{"type", "integer"}}}, {"then", {{"type", "string"}}}},
                                  {"id", "then"}));
    add.side_effect = "local_mutation";
    REQUIRE(registry
                ->add(add,
                      [counter](const json& args, CallContext& context) {
                        ++*counter;
                        StoreTransaction* transaction = context.store_transaction();
                        if (!transaction) return ToolResult::error("no store transaction was lent");
                        const int id = args["id"].get<int>();
                        auto added = transaction->exec("INSERT INTO items VALUES ($1)",
                                                       {std::to_string(id)});
                        if (!added.ok()) return ToolResult::error(added.message());
                        if (args["then"] == "throw") throw std::runtime_error("out of ink");
                        if (args["then"] == "tag") {
                          auto tagged = transaction->exec("INSERT INTO tags VALUES ($1)",
                                                          {std::to_string(id + 100)});
                          if (!tagged.ok()) return ToolResult::error(tagged.message());
                        }
                        return ToolResult::text("added " + std::to_string(id));
                      })
                .empty());
    catalog = make_test_catalog(registry);
    open();
  }

  // `call` is answered from the journal with `text`, its tool having run once.
  void check_replayed(ToolCall call, const std::string& text) {
    const CallResult replayed = pipeline(call);
    CHECK(replayed.replayed);
    CHECK(text_at(replayed) == text);
    CHECK(*runs == 1);
  }

  // The outcomes of the audit records of `call_id`, oldest first.
  std::vector<std::string> audited_outcomes(const std::string& call_id) const {
    std::vector<std::string> outcomes;
    auto audit = read_audit(dir.path(), {});
    REQUIRE(audit.ok());
    for (const AuditRecord& r : audit.value()) {
      if (r.call_id == call_id) outcomes.push_back(r.outcome);
    }
    return outcomes;
  }

  void open() {
    use(nullptr);  // the store is closed before it opens again
    JournalStoreOptions options;
    options.data_dir = dir.path();
    auto opened = JournalStore::open(options);
    REQUIRE(opened.ok());
    use(std::make_shared<const CallJournal>(std::move(opened).value()));
  }

  void use(std::shared_ptr<const CallJournal> next) {
    pipeline = nullptr;
    journal = std::move(next);
    if (journal) pipeline = build_call_pipeline(logger, metrics, running, nullptr, journal);
  }

  JournalStore& store() const { return *journal->store(); }

  // The intent of a remove_item call of `id` with `key`, begun (as by a
  // process that is still running it, or died during it).
  void begin(const std::string& call_id, int id, const std::string& key) {
    JournalIntent intent;
    intent.call_id = call_id;
    intent.tool = "remove_item";
    intent.side_effect = "local_mutation";
    intent.arguments_digest = json_digest(json{{"id", id}});
    intent.principal = "local";
    intent.idempotency_key = key;
    intent.started = std::chrono::system_clock::now();
    REQUIRE(store().begin(intent).ok());
  }

  ToolCall keyed(const std::string& arguments, const std::string& key,
                 const std::string& id = "call-1", const std::string& tool = "remove_item") {
    ToolCall call = make_call(tool, arguments);
    call.call_id = id;
    call.context->set_call_id(id);
    call.idempotency_key = key;
    return call;
  }
};

}  // namespace

TEST_CASE("a mutation is journaled with its outcome and audited once") {
  JournalFixture f;
  ToolCall call = f.keyed(R"({"id": 7})", "");
  CallResult r = f.pipeline(call);
  CHECK(text_at(r) == "removed 7 as call-1");
  CHECK(call.audited);
  auto entries = read_journal(f.dir.path());
  REQUIRE(entries.ok());
  REQUIRE(entries.value().size() == 1);
  const JournalEntry& entry = entries.value()[0];
  CHECK(entry.intent.call_id == "call-1");
  CHECK(entry.intent.tool == "remove_item");
  CHECK(entry.intent.side_effect == "local_mutation");
  CHECK(entry.outcome == "ok");
  auto audit = read_audit(f.dir.path(), {});
  REQUIRE(audit.ok());
  REQUIRE(audit.value().size() == 1);
  CHECK(audit.value()[0].tool == "remove_item");
  CHECK(audit.value()[0].outcome == "ok");
  CHECK(audit.value()[0].arguments == json{{"id", 7}});
}

TEST_CASE("a default filled in reaches the tool, and the audit tells it from what was sent") {
  JournalFixture f;
  ToolCall call = f.make_call("label_item", R"({"id": 4})");
  call.call_id = "call-4";
  CHECK(text_at(f.pipeline(call)) == "labelled 4 unlabelled");
  auto audit = read_audit(f.dir.path(), {});
  REQUIRE(audit.ok());
  REQUIRE(audit.value().size() == 1);
  CHECK(audit.value()[0].arguments == json{{"id", 4}});
  CHECK(audit.value()[0].defaults == json{{"label", "unlabelled"}});

  ToolCall sent = f.make_call("label_item", R"({"id": 5, "label": "mine"})");
  sent.call_id = "call-5";
  CHECK(text_at(f.pipeline(sent)) == "labelled 5 mine");
  auto both = read_audit(f.dir.path(), {});
  REQUIRE(both.value().size() == 2);
  CHECK(both.value()[1].arguments == json{{"id", 5}, {"label", "mine"}});
  CHECK(both.value()[1].defaults.is_null());
}

TEST_CASE("a read is audited but not journaled") {
  JournalFixture f;
  ToolCall call = f.make_call("echo", echo_args("hi"));
  call.call_id = "read-1";
  CHECK(text_at(f.pipeline(call)) == "hi");
  CHECK(read_journal(f.dir.path()).value().empty());
  auto audit = read_audit(f.dir.path(), {});
  REQUIRE(audit.value().size() == 1);
  CHECK(audit.value()[0].tool == "echo");
  CHECK(audit.value()[0].confirmation == "not_required");
}

TEST_CASE("the same idempotency key twice: one run, the same result twice") {
  JournalFixture f;
  ToolCall first = f.keyed(R"({"id": 7})", "key-A", "call-1");
  ToolCall second = f.keyed(R"({"id": 7})", "key-A", "call-2");
  const std::string once = text_at(f.pipeline(first));
  CallResult again = f.pipeline(second);
  CHECK(*f.runs == 1);
  CHECK(text_at(again) == once);
  CHECK(again.replayed);
  CHECK(second.confirmation == "replayed");
}

TEST_CASE("the same key with other arguments is refused, and so is a key still running") {
  JournalFixture f;
  ToolCall first = f.keyed(R"({"id": 7})", "key-A", "call-1");
  f.pipeline(first);
  ToolCall other = f.keyed(R"({"id": 8})", "key-A", "call-2");
  CallResult r = f.pipeline(other);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK_THAT(text_at(r), Catch::Contains("was used for another call (with other arguments)"));
  CHECK(*f.runs == 1);

  f.begin("call-9", 9, "key-B");
  ToolCall during = f.keyed(R"({"id": 9})", "key-B", "call-10");
  CHECK_THAT(text_at(f.pipeline(during)), Catch::Contains("is still running"));
  CHECK(*f.runs == 1);
}

// A retry meanwhile is told it is still running; one after is answered from
// the journal.
TEST_CASE("a mutation running past its timeout records its real outcome when it ends") {
  JournalFixture f;
  ToolCall first = f.keyed(R"({"id": 3})", "key-S", "call-1", "slow_remove");
  const CallResult timed = f.pipeline(first);
  CHECK(timed.outcome == CallOutcome::timed_out);
  CHECK_THAT(text_at(timed), Catch::Contains("timed out after 100 ms"));
  // The caller's answer is audited at once; the entry is still running.
  CHECK(f.audited_outcomes("call-1") == std::vector<std::string>{"timed_out"});
  auto running = f.store().find_by_key("local", "key-S");
  REQUIRE(running);
  CHECK_FALSE(running->outcome);

  ToolCall during = f.keyed(R"({"id": 3})", "key-S", "call-2", "slow_remove");
  CHECK_THAT(text_at(f.pipeline(during)), Catch::Contains("is still running"));
  CHECK(*f.runs == 1);

  f.door->let_through();
  REQUIRE(f.running->wait_until_idle(std::chrono::seconds(5)));
  CHECK(f.audited_outcomes("call-1") == std::vector<std::string>{"timed_out", "ok"});
  auto ended = f.store().find_by_key("local", "key-S");
  REQUIRE(ended);
  CHECK(ended->outcome == "ok");

  f.check_replayed(f.keyed(R"({"id": 3})", "key-S", "call-3", "slow_remove"), "removed 3 at last");
}

// A mutation's in its journal entry; a read's in a second audit record.
TEST_CASE("a cancelled call is audited cancelled, then its real outcome when the tool ends") {
  for (const std::string tool : {"slow_remove", "slow_count"}) {
    INFO(tool);
    JournalFixture f;
    ToolCall call = f.make_call(tool, R"({"id": 4})");
    call.call_id = "call-c";
    const std::shared_ptr<CallControl> control = call.control;
    auto answered = std::async(std::launch::async, [&f, &call] { return f.pipeline(call); });
    REQUIRE(f.door->wait_reached());
    control->cancel();
    const CallResult r = answered.get();
    INFO(text_at(r));
    CHECK(r.outcome == CallOutcome::cancelled);
    CHECK(f.audited_outcomes("call-c") == std::vector<std::string>{"cancelled"});

    f.door->let_through();
    REQUIRE(f.running->wait_until_idle(std::chrono::seconds(5)));
    CHECK(f.audited_outcomes("call-c") == std::vector<std::string>{"cancelled", "ok"});
    auto entries = read_journal(f.dir.path());
    REQUIRE(entries.ok());
    if (tool == "slow_remove") {
      REQUIRE(entries.value().size() == 1);
      CHECK(entries.value()[0].outcome == "ok");
    } else {
      CHECK(entries.value().empty());
    }
  }
}

TEST_CASE(
    "a call left running when toolmux died is interrupted, and runs again only when asked, "
    "under its old call id") {
  JournalFixture f;
  f.begin("call-old", 3, "key-C");
  f.open();  // as the next start does
  REQUIRE(f.store().interrupted().size() == 1);
  CHECK(f.store().interrupted()[0].intent.call_id == "call-old");
  CHECK(*f.runs == 0);  // nothing re-ran it

  ToolCall again = f.keyed(R"({"id": 3})", "key-C", "call-new");
  CHECK(text_at(f.pipeline(again)) == "removed 3 as call-old");
  CHECK(*f.runs == 1);
}

TEST_CASE("while the journal is unavailable a mutation does not run, and a read does") {
  JournalFixture f;
  f.use(std::make_shared<const CallJournal>(nullptr, "every slot is taken"));
  ToolCall call = f.keyed(R"({"id": 7})", "");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::stopped);
  CHECK_THAT(text_at(r), Catch::Contains("journal"));
  CHECK_THAT(text_at(r), Catch::Contains("every slot is taken"));
  CHECK(*f.runs == 0);
  ToolCall read = f.make_call("echo", echo_args("hi"));
  CHECK(text_at(f.pipeline(read)) == "hi");
}

TEST_CASE("a journal opening on its own thread: a mutation waits for it, and the hook runs once") {
  JournalFixture f;
  f.use(nullptr);
  std::promise<void> go;
  std::shared_future<void> gate = go.get_future().share();
  auto path = f.dir.path();
  auto opening = CallJournal::opening([gate, path] {
    gate.wait();  // the open takes as long as the test says
    JournalStoreOptions options;
    options.data_dir = path;
    auto opened = JournalStore::open(options);
    if (!opened.ok()) return CallJournal::Opened{nullptr, opened.status().message()};
    return CallJournal::Opened{std::move(opened).value(), {}};
  });
  std::atomic<int> hooked{0};
  opening->on_ready([&hooked] { ++hooked; });
  CHECK_FALSE(opening->ready());
  CHECK(hooked == 0);
  f.use(opening);

  // The call waits for the open, so it runs on a thread of its own.
  auto call = std::async(std::launch::async, [&f] {
    ToolCall mutation = f.keyed(R"({"id": 5})", "key-D");
    return text_at(f.pipeline(mutation));
  });
  CHECK(call.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  CHECK(*f.runs == 0);  // not before it is journaled
  go.set_value();
  CHECK(call.get() == "removed 5 as call-1");
  CHECK(opening->ready());
  CHECK(hooked == 1);
  REQUIRE(opening->store());
  CHECK(opening->store()->find_by_key("local", "key-D"));

  // A hook given once the journal is open runs at once; an empty one removes it.
  opening->on_ready([&hooked] { ++hooked; });
  CHECK(hooked == 2);
  opening->on_ready({});
  CHECK(hooked == 2);
}

TEST_CASE(
    "PostgreSQL down: a finished call's repeat is pending, never run twice, and a full spool "
    "refuses "
    "calls") {
  JournalFixture f;
  JournalStoreOptions options;
  options.postgres = open_postgres_store(fresh_postgres_database());
  auto pg = PgJournalStore::open(options);
  REQUIRE(pg.ok());
  SpoolOptions spool;
  spool.base = f.dir.path() / "spool";
  spool.max_items = 3;  // the outcome, the refused repeat's record, the read's
  auto spooled = SpooledJournalStore::open(std::move(pg).value(), spool);
  REQUIRE(spooled.ok());
  f.use(std::make_shared<const CallJournal>(std::move(spooled).value()));

  ToolCall first = f.keyed(R"({"id": 7})", "key-A", "call-1", "remove_in_outage");
  const CallResult done = f.pipeline(first);  // the server stops while it runs
  ToolCall repeat = f.keyed(R"({"id": 7})", "key-A", "call-2", "remove_in_outage");
  const CallResult pending = f.pipeline(repeat);
  ToolCall read = f.make_call("echo", echo_args("hi"));
  const CallResult read_done = f.pipeline(read);  // its record fills the spool
  ToolCall refused = f.make_call("echo", echo_args("again"));
  const CallResult read_refused = f.pipeline(refused);
  postgres_server().resume();

  CHECK(text_at(done) == "removed 7");
  CHECK(pending.outcome == CallOutcome::denied);
  CHECK_THAT(text_at(pending), Catch::Contains("Outcome pending"));
  CHECK(text_at(read_done) == "hi");
  CHECK(read_refused.outcome == CallOutcome::stopped);
  CHECK_THAT(text_at(read_refused), Catch::Contains("its audit trail cannot be written now"));
  CHECK(*f.runs == 1);

  // Back: what was kept is written, and the repeat is answered from it.
  CHECK(eventually([&] { return f.store().kept() == 0; }, std::chrono::seconds(15)));
  f.check_replayed(f.keyed(R"({"id": 7})", "key-A", "call-3", "remove_in_outage"), "removed 7");
}

// catalog/store_transaction.h: on PostgreSQL a native tool's change commits
// with its call's outcome and audit record, or not at all.
TEST_CASE("a native tool's change commits with its outcome, or nothing changes") {
  JournalFixture f;
  // The embedded store lends none.
  ToolCall embedded = f.keyed(R"({"id": 1, "then": "return"})", "", "call-0", "add_item");
  const CallResult without = f.pipeline(embedded);
  CHECK(text_at(without) == "no store transaction was lent");

  const std::string conninfo = fresh_postgres_database();
  std::shared_ptr<PgStore> postgres = open_postgres_store(conninfo);
  JournalStoreOptions options;
  options.postgres = postgres;
  options.data_dir = f.dir.path();  // its spool
  auto opened = JournalStore::open(options);
  REQUIRE(opened.ok());
  f.use(std::make_shared<const CallJournal>(std::move(opened).value()));
  auto outside = connect_postgres(conninfo);
  REQUIRE(outside->exec("CREATE TABLE items (id integer PRIMARY KEY)").ok());
  REQUIRE(outside
              ->exec("CREATE TABLE tags (item integer REFERENCES items (id) DEFERRABLE "
                     "INITIALLY DEFERRED)")
              .ok());
  const auto items = [&] {
    auto rows =
        outside->exec("SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM items");
    REQUIRE(rows.ok());
    return std::string(rows->text(0, 0));
  };
  const auto outcome_of = [&](const std::string& call_id) {
    auto rows = outside->exec(
        "SELECT coalesce(outcome, 'none') FROM toolmux_journal WHERE call_id = $1 ORDER BY seq "
        "DESC LIMIT 1",
        {PgParam::text(call_id)});
    REQUIRE(rows.ok());
    REQUIRE(rows->rows() == 1);
    return std::string(rows->text(0, 0));
  };
  const auto audited = [&](const std::string& call_id) {
    auto rows = outside->exec(
        "SELECT string_agg(outcome, ',' ORDER BY seq) FROM toolmux_audit WHERE call_id = $1",
        {PgParam::text(call_id)});
    REQUIRE(rows.ok());
    return std::string(rows->text(0, 0));
  };

  const auto run = [&](const std::string& arguments, const std::string& key, const std::string& id,
                       const std::string& tool) {
    ToolCall call = f.keyed(arguments, key, id, tool);
    return f.pipeline(call);
  };
  const CallResult added = run(R"({"id": 1, "then": "return"})", "k1", "call-1", "add_item");
  CHECK(text_at(added) == "added 1");
  CHECK(items() == "1");
  CHECK(outcome_of("call-1") == "ok");
  CHECK(audited("call-1") == "ok");

  const CallResult crashed = run(R"({"id": 2, "then": "throw"})", "k2", "call-2", "add_item");
  CHECK(crashed.outcome == CallOutcome::crashed);
  CHECK(items() == "1");
  CHECK(outcome_of("call-2") == "crashed");

  // The tag names item 103, which does not exist at COMMIT: the client is
  // told nothing changed, and the same call again runs again.
  const int runs_before = *f.runs;
  const CallResult refused = run(R"({"id": 3, "then": "tag"})", "k3", "call-3", "add_item");
  CHECK(refused.outcome == CallOutcome::stopped);
  CHECK_THAT(text_at(refused),
             Catch::Contains("its change was not committed, so nothing changed") &&
                 Catch::Contains("foreign key"));
  CHECK(items() == "1");
  CHECK(outcome_of("call-3") == "stopped");
  CHECK(audited("call-3") == "stopped");
  REQUIRE(outside->exec("INSERT INTO items VALUES (103)").ok());
  const CallResult again = run(R"({"id": 3, "then": "tag"})", "k3", "call-4", "add_item");
  CHECK(text_at(again) == "added 3");
  CHECK(*f.runs == runs_before + 2);
  CHECK(items() == "1,3,103");
  // And a third time it is answered from the journal.
  const CallResult replayed = run(R"({"id": 3, "then": "tag"})", "k3", "call-5", "add_item");
  CHECK(replayed.replayed);
  CHECK(*f.runs == runs_before + 2);

  // The connection dies during COMMIT (a deferred trigger ends it): the
  // client is told toolmux cannot tell, the entry keeps no outcome, and the
  // audit trail has what the client was told.
  REQUIRE(outside
              ->exec("CREATE FUNCTION toolmux_test_die() RETURNS trigger LANGUAGE plpgsql AS $$ "
                     "BEGIN IF NEW.id = 9 THEN PERFORM pg_terminate_backend(pg_backend_pid()); "
                     "PERFORM pg_sleep(5); END IF; RETURN NEW; END $$")
              .ok());
  REQUIRE(outside
              ->exec("CREATE CONSTRAINT TRIGGER die AFTER INSERT ON items DEFERRABLE INITIALLY "
                     "DEFERRED FOR EACH ROW EXECUTE FUNCTION toolmux_test_die()")
              .ok());
  const CallResult unknown = run(R"({"id": 9, "then": "return"})", "k9", "call-9", "add_item");
  CHECK(unknown.outcome == CallOutcome::stopped);
  CHECK_THAT(text_at(unknown),
             Catch::Contains("toolmux cannot tell whether its change was committed") &&
                 Catch::Contains("the journal's entry of call call-9 will say"));
  CHECK(items() == "1,3,103");
  CHECK(outcome_of("call-9") == "none");
  CHECK(audited("call-9") == "stopped");
}

TEST_CASE("a tool name a client sent that reached no tool is audited and counted redacted") {
  JournalFixture f;
  const std::string token = "ghp_aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jK2mN5p";
  ToolCall call = f.make_call(token, "{}");
  CHECK(f.pipeline(call).outcome == CallOutcome::unknown_tool);
  auto audit = read_audit(f.dir.path(), {});
  REQUIRE(audit.ok());
  REQUIRE(audit.value().size() == 1);
  CHECK(audit.value()[0].tool == "[REDACTED:github_token]");
  CHECK(audit.value()[0].outcome == "unknown_tool");
  CHECK(f.metrics.calls(stages::kUnknownToolLabel, "unknown_tool") == 1);
  CHECK(f.metrics.render_prometheus().find("ghp_") == std::string::npos);
}

TEST_CASE(
    "an idempotency key holding a secret: kept as sent for replay, redacted in the audit record "
    "of a call found interrupted") {
  JournalFixture f;
  const std::string key = "retry:ghp_aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jK2mN5p";
  f.begin("call-old", 4, key);
  f.open();  // as the next start does: marks it interrupted
  auto audit = read_audit(f.dir.path(), {});
  REQUIRE(audit.ok());
  REQUIRE(audit.value().size() == 1);
  CHECK(audit.value()[0].outcome == "interrupted");
  CHECK(audit.value()[0].idempotency_key == "retry:[REDACTED:github_token]");

  // The repeat finds it by the key as sent, runs it under its call id, and a
  // second repeat is replayed.
  ToolCall again = f.keyed(R"({"id": 4})", key, "call-new");
  CHECK(text_at(f.pipeline(again)) == "removed 4 as call-old");
  ToolCall replay = f.keyed(R"({"id": 4})", key, "call-newer");
  CallResult replayed = f.pipeline(replay);
  CHECK(replayed.replayed);
  CHECK(text_at(replayed) == "removed 4 as call-old");
  CHECK(*f.runs == 1);
  audit = read_audit(f.dir.path(), {});
  REQUIRE(audit.ok());
  for (const AuditRecord& r : audit.value())
    CHECK(r.idempotency_key.find("ghp_") == std::string::npos);
}
