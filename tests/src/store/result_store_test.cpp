// The contract of result_store.h, checked against both implementations (one
// test body, two stores: GENERATE runs it for each), then what is RocksDB's
// own (slots, ingestion, killed writers) and what is PostgreSQL's own (many
// instances on one database).
#include "src/store/result_store.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>

#include "src/store/pg_connection.h"
#include "src/store/pg_result_store.h"
#include "src/store/pg_schema.h"
#include "src/store/pg_store.h"
#include "src/store/rocksdb_result_store.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_child.h"

using toolmux::PgStore;
using toolmux::ResultStore;
using toolmux::ResultStoreOptions;
using toolmux::RocksDbResultStore;
using toolmux::testing::TempDir;
using Code = toolmux::Status::Code;

namespace {

// A clock the test moves by hand.
struct FakeClock {
  std::shared_ptr<std::atomic<std::int64_t>> seconds =
      std::make_shared<std::atomic<std::int64_t>>(1'700'000'000);
  std::function<std::chrono::system_clock::time_point()> fn() const {
    auto s = seconds;
    return [s] { return std::chrono::system_clock::time_point(std::chrono::seconds(s->load())); };
  }
  void advance(std::chrono::seconds d) { *seconds += d.count(); }
};

ResultStoreOptions options_for(const TempDir& dir) {
  ResultStoreOptions options;
  options.data_dir = dir.path();
  return options;
}

enum class Backend { rocksdb, postgresql };

// Where a test's stores live: a temporary data directory (RocksDB), or a
// fresh database on the test binary's PostgreSQL server.
struct Backing {
  explicit Backing(Backend kind) : backend(kind) {
    if (kind != Backend::postgresql) return;
    conninfo = toolmux::testing::fresh_postgres_database();
    postgres = another_instance();
  }
  // Another PgStore on the same database, as another instance would have.
  std::shared_ptr<PgStore> another_instance() const {
    toolmux::PgStoreOptions pg;
    pg.conninfo = conninfo;
    auto opened = PgStore::open(pg);
    INFO(opened.message());
    REQUIRE(opened.ok());
    return *opened;
  }
  ResultStoreOptions options() const {
    ResultStoreOptions options;
    options.data_dir = dir.path();
    options.postgres = postgres;
    return options;
  }
  Backend backend;
  TempDir dir;
  std::string conninfo;
  std::shared_ptr<PgStore> postgres;
};

// Both stores, one after the other (Catch's GENERATE runs the test for each).
#define EACH_BACKEND GENERATE(Backend::rocksdb, Backend::postgresql)

std::unique_ptr<ResultStore> open_store(const ResultStoreOptions& options) {
  auto store = ResultStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  CHECK(store.message().empty());
  return std::move(store).value();
}

std::unique_ptr<RocksDbResultStore> open_rocksdb(const ResultStoreOptions& options) {
  auto store = RocksDbResultStore::open(options);
  INFO(store.message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

std::string put(ResultStore& store, std::string_view owner, std::string_view text) {
  auto id = store.put(owner, text);
  INFO(id.message());
  REQUIRE(id.ok());
  REQUIRE(!id->empty());
  CHECK(id.message().empty());
  return std::move(id).value();
}

// Appends the UTF-8 encoding of code point `cp`.
void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// About `bytes` bytes of 1-, 2-, 3- and 4-byte characters in a random mix
// (deterministic), with the byte offset of every character in `starts`.
std::string mixed_text(std::size_t bytes, std::vector<std::size_t>* starts = nullptr,
                       unsigned seed = 42) {
  static const char32_t kSamples[] = {U'a', U'Z',  U'\n', U' ', U'é', U'ß', U'Ж',
                                      U'€', U'中', U'文', U'😀', U'𝄞', U'🚀', U'Ω'};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kSamples) - 1);
  std::string out;
  out.reserve(bytes + 4);
  while (out.size() < bytes) {
    if (starts) starts->push_back(out.size());
    append_utf8(out, kSamples[pick(rng)]);
  }
  return out;
}

std::size_t count_chars(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

bool starts_on_boundary(std::string_view s) {
  return s.empty() || (static_cast<unsigned char>(s.front()) & 0xc0) != 0x80;
}

// For threads (no REQUIRE there): the whole text read page by page, or
// nullopt when the result was evicted meanwhile.
std::optional<std::string> read_back_unless_evicted(const ResultStore& store,
                                                    std::string_view owner, std::string_view id,
                                                    std::size_t max_chars) {
  std::string back;
  std::uint64_t offset = 0;
  for (;;) {
    auto page = store.read(owner, id, offset, max_chars);
    if (!page.ok()) return std::nullopt;
    back += page->text;
    if (!page->next_offset) return back;
    offset = *page->next_offset;
  }
}

// Reads the whole result page by page, checking each page; returns the text.
std::string read_all(const ResultStore& store, std::string_view owner, std::string_view id,
                     std::size_t max_chars, std::uint64_t total_chars) {
  std::string all;
  std::uint64_t offset = 0;
  std::size_t pages = 0;
  for (;;) {
    auto page = store.read(owner, id, offset, max_chars);
    REQUIRE(page.ok());
    REQUIRE(page.status().code() == Code::kOk);
    REQUIRE(page->offset == offset);
    REQUIRE(page->total_chars == total_chars);
    REQUIRE(starts_on_boundary(page->text));
    std::size_t chars = count_chars(page->text);
    REQUIRE(chars == std::min<std::uint64_t>(max_chars, total_chars - offset));
    all += page->text;
    ++pages;
    if (!page->next_offset) {
      REQUIRE(offset + chars == total_chars);
      break;
    }
    REQUIRE(*page->next_offset == offset + chars);
    offset = *page->next_offset;
  }
  std::size_t expected_pages = total_chars == 0 ? 1 : (total_chars + max_chars - 1) / max_chars;
  CHECK(pages == expected_pages);
  return all;
}

// The code read() answers with: kOk, kNotFound or kOutOfRange.
Code read_error(const ResultStore& store, std::string_view owner, std::string_view id,
                std::uint64_t offset = 0, std::size_t max_chars = 100) {
  auto page = store.read(owner, id, offset, max_chars);
  return page.status().code();
}

std::uint64_t vm_hwm_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

}  // namespace

TEST_CASE("a result reads back page by page, byte for byte, with multi-byte characters") {
  Backing backing(EACH_BACKEND);
  auto store = open_store(backing.options());
  std::vector<std::size_t> starts;
  std::string text = mixed_text(5'000'000, &starts);
  std::string id = put(*store, "session-1", text);
  CHECK(store->stored_count() == 1);
  CHECK(store->stored_bytes() == text.size());

  for (std::size_t max_chars : {20000u, 4096u, 65537u, 333333u, 10'000'000u}) {
    INFO("max_chars " << max_chars);
    CHECK(read_all(*store, "session-1", id, max_chars, starts.size()) == text);
  }

  // Pages at arbitrary offsets are the matching characters.
  {
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::size_t> offset_dist(0, starts.size());
    std::uniform_int_distribution<std::size_t> size_dist(1, 70000);
    for (int i = 0; i < 300; ++i) {
      std::size_t offset = offset_dist(rng);
      std::size_t max_chars = size_dist(rng);
      auto page = store->read("session-1", id, offset, max_chars);
      REQUIRE(page.ok());
      std::size_t end_char = std::min(offset + max_chars, starts.size());
      std::size_t from = offset == starts.size() ? text.size() : starts[offset];
      std::size_t to = end_char == starts.size() ? text.size() : starts[end_char];
      REQUIRE(page->text == text.substr(from, to - from));
      if (end_char == starts.size()) {
        REQUIRE_FALSE(page->next_offset);
      } else {
        REQUIRE(page->next_offset == end_char);
      }
    }
  }
}

TEST_CASE("tiny pages cross chunk boundaries without splitting characters") {
  Backing backing(EACH_BACKEND);
  auto store = open_store(backing.options());
  // Just over two 64 KiB chunks, ending on a 4-byte character.
  std::vector<std::size_t> starts;
  std::string text = mixed_text(140'000, &starts, 3);
  starts.push_back(text.size());
  append_utf8(text, U'😀');
  std::size_t total = starts.size();
  std::string id = put(*store, "o", text);
  for (std::size_t max_chars : {5u, 11u}) {
    INFO("max_chars " << max_chars);
    CHECK(read_all(*store, "o", id, max_chars, total) == text);
  }
  // One and two characters at a time around each 64 KiB boundary.
  starts.push_back(text.size());
  for (std::size_t c = 0; c < total; ++c) {
    std::size_t near = starts[c] % 65536;
    if (starts[c] < 65536 || (near > 64 && near < 65536 - 64)) continue;
    for (std::size_t max_chars : {1u, 2u}) {
      auto page = store->read("o", id, c, max_chars);
      REQUIRE(page.ok());
      std::size_t end = std::min(c + max_chars, total);
      REQUIRE(page->text == text.substr(starts[c], starts[end] - starts[c]));
    }
  }
}

TEST_CASE("the ends of a result: last page, empty page at the end, offset past the end") {
  Backing backing(EACH_BACKEND);
  auto store = open_store(backing.options());
  std::string text = "h\xc3\xa9llo \xe4\xb8\xad \xf0\x9f\x98\x80!";  // "héllo 中 😀!"
  std::string id = put(*store, "o", text);

  auto first = store->read("o", id, 0, 5);
  REQUIRE(first.ok());
  CHECK(first->text == "h\xc3\xa9llo");
  CHECK(first->next_offset == 5u);
  CHECK(first->total_chars == 10);

  auto last = store->read("o", id, 5, 100);
  REQUIRE(last.ok());
  CHECK(last->text == " \xe4\xb8\xad \xf0\x9f\x98\x80!");
  CHECK_FALSE(last->next_offset);

  auto exact = store->read("o", id, 5, 5);
  REQUIRE(exact.ok());
  CHECK(exact->text == " \xe4\xb8\xad \xf0\x9f\x98\x80!");
  CHECK_FALSE(exact->next_offset);

  auto at_end = store->read("o", id, 10, 100);
  REQUIRE(at_end.ok());
  CHECK(at_end.status().code() == Code::kOk);
  CHECK(at_end->text.empty());
  CHECK(at_end->offset == 10);
  CHECK_FALSE(at_end->next_offset);

  CHECK(read_error(*store, "o", id, 11) == Code::kOutOfRange);
  CHECK(read_error(*store, "o", id, ~std::uint64_t{0}) == Code::kOutOfRange);
}

TEST_CASE("an empty result has one empty page") {
  Backing backing(EACH_BACKEND);
  auto store = open_store(backing.options());
  std::string id = put(*store, "o", "");
  auto page = store->read("o", id, 0, 100);
  REQUIRE(page.ok());
  CHECK(page->text.empty());
  CHECK(page->total_chars == 0);
  CHECK_FALSE(page->next_offset);
  CHECK(read_error(*store, "o", id, 1) == Code::kOutOfRange);
}

TEST_CASE("invalid UTF-8 is refused") {
  Backing backing(EACH_BACKEND);
  auto store = open_store(backing.options());
  for (const std::string& bad :
       {std::string("abc\xff"), std::string("\xc3"), std::string("\xed\xa0\x80"),
        std::string("\xc0\xaf"), std::string("\x80x")}) {
    auto refused = store->put("o", bad);
    CHECK_FALSE(refused.ok());
    CHECK(refused.status().is_invalid_argument());
    CHECK(refused.message() == "the result is not valid UTF-8");
  }
  CHECK(store->stored_count() == 0);
}

TEST_CASE("ids are random base64url, used exactly as given, and owned") {
  Backing backing(EACH_BACKEND);
  auto store = open_store(backing.options());
  std::set<std::string> ids;
  for (int i = 0; i < 200; ++i) {
    std::string id = put(*store, "o", "x");
    REQUIRE(id.size() == 43);
    REQUIRE(
        id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
        std::string::npos);
    ids.insert(id);
  }
  CHECK(ids.size() == 200);

  std::string id = put(*store, "alice", "secret");
  CHECK(read_error(*store, "alice", id) == Code::kOk);

  // Someone else's id answers exactly like an unknown one, at any offset.
  auto a = store->read("bob", id, 0, 100);
  auto b = store->read("bob", std::string(43, 'A'), 0, 100);
  CHECK_FALSE(a.ok());
  CHECK_FALSE(b.ok());
  CHECK(a.status().code() == Code::kNotFound);
  CHECK(b.status().code() == Code::kNotFound);
  CHECK(a.message() == b.message());
  CHECK(read_error(*store, "bob", id, 1000) == Code::kNotFound);
  CHECK(read_error(*store, "", id) == Code::kNotFound);
  CHECK(read_error(*store, "alice ", id) == Code::kNotFound);

  std::string upper = id;
  std::string lower = id;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (upper != id) CHECK(read_error(*store, "alice", upper) == Code::kNotFound);
  if (lower != id) CHECK(read_error(*store, "alice", lower) == Code::kNotFound);
  CHECK(read_error(*store, "alice", id + " ") == Code::kNotFound);
  CHECK(read_error(*store, "alice", " " + id) == Code::kNotFound);
  CHECK(read_error(*store, "alice", id.substr(0, 42)) == Code::kNotFound);
  // Not even a possible id: a NUL byte, bytes that are not UTF-8, at the length of one.
  CHECK(read_error(*store, "alice", id.substr(0, 42) + std::string(1, '\0')) == Code::kNotFound);
  CHECK(read_error(*store, "alice", id.substr(0, 41) + "\xc3\x28") == Code::kNotFound);
  CHECK(read_error(*store, "alice", "") == Code::kNotFound);
  // An id is no key prefix of anything else: "m/" + id + more is not it.
  CHECK(read_error(*store, "alice", id + "A") == Code::kNotFound);
}

TEST_CASE("results survive closing and reopening the store") {
  Backing backing(EACH_BACKEND);
  auto options = backing.options();
  std::string text = mixed_text(300'000);
  std::string id1;
  std::string id2;
  std::string where;
  {
    auto store = open_store(options);
    where = store->where();
    if (backing.backend == Backend::rocksdb) {
      CHECK(where == (backing.dir.path() / "results" / "slot-0").string());
    } else {
      CHECK(where.starts_with("PostgreSQL at host /tmp/tmpg-"));
    }
    id1 = put(*store, "a", text);
    id2 = put(*store, "b", "short");
  }
  auto store = open_store(options);
  CHECK(store->where() == where);
  CHECK(store->stored_count() == 2);
  CHECK(store->stored_bytes() == text.size() + 5);
  CHECK(read_all(*store, "a", id1, 20000, count_chars(text)) == text);
  CHECK(read_all(*store, "b", id2, 20000, 5) == "short");
}

TEST_CASE("a result's format is kept: listed, and across a reopen") {
  Backing backing(EACH_BACKEND);
  auto options = backing.options();
  std::string png;
  std::string long_mime;
  {
    auto store = open_store(options);
    png = store->put("a", "iVBORw0K", toolmux::StoredFormat{"image/png", true}).value();
    REQUIRE(png.size() == 43);
    REQUIRE(store->put("a", "[1]", toolmux::StoredFormat{"application/json", false}).ok());
    put(*store, "a", "plain");
    // A MIME type of more than 255 bytes is refused; 255 bytes are kept.
    auto too_long = store->put("a", "x", toolmux::StoredFormat{std::string(256, 'm'), false});
    CHECK_FALSE(too_long.ok());
    CHECK(too_long.status().is_invalid_argument());
    CHECK(too_long.message() == "the MIME type is longer than 255 bytes");
    long_mime = store->put("a", "x", toolmux::StoredFormat{std::string(255, 'm'), false}).value();
    CHECK(long_mime.size() == 43);
  }
  auto store = open_store(options);
  const auto listed = store->list("a");
  REQUIRE(listed.size() == 4);
  CHECK(listed[0].id == png);
  CHECK(listed[0].format.mime_type == "image/png");
  CHECK(listed[0].format.base64);
  CHECK(listed[1].format.mime_type == "application/json");
  CHECK_FALSE(listed[1].format.base64);
  CHECK(listed[2].format.mime_type == "text/plain");
  CHECK_FALSE(listed[2].format.base64);
  CHECK(listed[3].id == long_mime);
  CHECK(listed[3].format.mime_type == std::string(255, 'm'));
  CHECK(read_all(*store, "a", png, 3, 8) == "iVBORw0K");
}

TEST_CASE("results expire after the retention, also across a reopen") {
  Backing backing(EACH_BACKEND);
  FakeClock clock;
  auto options = backing.options();
  options.retention = std::chrono::hours(1);
  options.now = clock.fn();

  auto store = open_store(options);
  std::string old_id = put(*store, "o", "old");
  clock.advance(std::chrono::minutes(30));
  std::string new_id = put(*store, "o", "new");

  clock.advance(std::chrono::minutes(30) - std::chrono::seconds(1));
  CHECK(read_error(*store, "o", old_id) == Code::kOk);
  CHECK(store->expire_old() == 0);

  clock.advance(std::chrono::seconds(1));                     // old: created + retention == now
  CHECK(read_error(*store, "o", old_id) == Code::kNotFound);  // not yet deleted
  CHECK(store->stored_count() == 2);
  CHECK(store->expire_old() == 1);
  CHECK(store->stored_count() == 1);
  CHECK(store->stored_bytes() == 3);
  CHECK(read_error(*store, "o", old_id) == Code::kNotFound);
  CHECK(read_error(*store, "o", new_id) == Code::kOk);

  // Closed while new_id's time runs out: open() expires it.
  store.reset();
  clock.advance(std::chrono::minutes(31));
  store = open_store(options);
  CHECK(store->stored_count() == 0);
  CHECK(store->stored_bytes() == 0);
  CHECK(read_error(*store, "o", new_id) == Code::kNotFound);
}

TEST_CASE("a later put sweeps out expired results, so their space comes back") {
  Backing backing(EACH_BACKEND);
  FakeClock clock;
  auto options = backing.options();
  options.retention = std::chrono::hours(1);
  options.now = clock.fn();
  auto store = open_store(options);
  put(*store, "o", "old");
  clock.advance(std::chrono::hours(2));
  put(*store, "o", "new!");
  CHECK(store->stored_count() == 1);
  CHECK(store->stored_bytes() == 4);
}

TEST_CASE("past max_bytes the oldest results are evicted first") {
  Backing backing(EACH_BACKEND);
  FakeClock clock;
  auto options = backing.options();
  options.max_bytes = 1000;
  options.now = clock.fn();  // a clock that stands still: creation order decides
  auto store = open_store(options);

  std::string r1 = put(*store, "o", std::string(300, '1'));
  std::string r2 = put(*store, "p", std::string(300, '2'));
  std::string r3 = put(*store, "o", std::string(300, '3'));
  CHECK(store->stored_bytes() == 900);

  std::string r4 = put(*store, "o", std::string(300, '4'));
  CHECK(store->stored_count() == 3);
  CHECK(store->stored_bytes() == 900);
  CHECK(read_error(*store, "o", r1) == Code::kNotFound);
  CHECK(read_error(*store, "p", r2) == Code::kOk);

  // Across a reopen the order is kept.
  store.reset();
  store = open_store(options);
  CHECK(store->stored_bytes() == 900);
  std::string r5 = put(*store, "o", std::string(500, '5'));
  CHECK(read_error(*store, "p", r2) == Code::kNotFound);
  CHECK(read_error(*store, "o", r3) == Code::kNotFound);
  CHECK(read_error(*store, "o", r4) == Code::kOk);
  CHECK(read_error(*store, "o", r5) == Code::kOk);
  CHECK(store->stored_bytes() == 800);
  CHECK(store->stored_count() == 2);

  // Exactly max_bytes fits, after evicting everything else.
  std::string r6 = put(*store, "o", std::string(1000, '6'));
  CHECK(store->stored_count() == 1);
  CHECK(store->stored_bytes() == 1000);
  CHECK(read_error(*store, "o", r6) == Code::kOk);
}

TEST_CASE("a single result larger than max_bytes is refused") {
  Backing backing(EACH_BACKEND);
  auto options = backing.options();
  options.max_bytes = 1000;
  auto store = open_store(options);
  std::string kept = put(*store, "o", std::string(400, 'k'));

  auto too_big = store->put("o", std::string(1001, 'x'));
  CHECK_FALSE(too_big.ok());
  CHECK(too_big.status().is_resource_exhausted());
  CHECK(too_big.message() == "result of 1001 bytes is larger than the store's limit of 1000 bytes");
  CHECK(store->stored_count() == 1);
  CHECK(read_error(*store, "o", kept) == Code::kOk);
}

TEST_CASE("delete_owner deletes only that owner's results") {
  Backing backing(EACH_BACKEND);
  auto store = open_store(backing.options());
  std::string a1 = put(*store, "a", "one");
  std::string a2 = put(*store, "a", mixed_text(200'000));
  const std::string ab_text = "prefix of a longer owner";
  std::string ab = put(*store, "ab", ab_text);
  std::string b1 = put(*store, "b", "two");
  const std::uint64_t kept_bytes = ab_text.size() + 3;

  store->delete_owner("a");
  CHECK(read_error(*store, "a", a1) == Code::kNotFound);
  CHECK(read_error(*store, "a", a2) == Code::kNotFound);
  CHECK(read_error(*store, "ab", ab) == Code::kOk);
  CHECK(read_error(*store, "b", b1) == Code::kOk);
  CHECK(store->stored_count() == 2);
  CHECK(store->stored_bytes() == kept_bytes);

  store->delete_owner("nobody");
  CHECK(store->stored_count() == 2);
}

TEST_CASE("list_all gives every owner's results oldest first, expired ones too") {
  Backing backing(EACH_BACKEND);
  FakeClock clock;
  auto options = backing.options();
  options.retention = std::chrono::hours(1);
  options.now = clock.fn();
  auto store = open_store(options);
  CHECK(store->list_all().value().empty());
  const std::string a1 = put(*store, "a", "one");
  clock.advance(std::chrono::seconds(1));
  const std::string b1 =
      store->put("b", "{}", toolmux::StoredFormat{"application/json", false}).value();
  clock.advance(std::chrono::seconds(1));
  const std::string a2 = put(*store, "a", "\xc3\xa9t\xc3\xa9");
  // Past the retention: hidden from its owner, still stored until a sweep.
  clock.advance(std::chrono::minutes(59) + std::chrono::seconds(59));

  auto all = store->list_all();
  INFO(all.message());
  REQUIRE(all.ok());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].id == a1);
  CHECK((*all)[0].owner == "a");
  CHECK((*all)[0].bytes == 3);
  CHECK((*all)[0].created ==
        std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000)));
  CHECK((*all)[1].id == b1);
  CHECK((*all)[1].owner == "b");
  CHECK((*all)[1].format.mime_type == "application/json");
  CHECK((*all)[2].id == a2);
  CHECK((*all)[2].bytes == 5);
  CHECK((*all)[2].chars == 3);
  CHECK(read_error(*store, "a", a1) == Code::kNotFound);  // expired for its owner
  CHECK(store->list("a").size() == 1);
  CHECK(store->list("a")[0].owner == "a");
}

TEST_CASE("remove deletes one result whatever its owner, and names an id it does not hold") {
  Backing backing(EACH_BACKEND);
  auto store = open_store(backing.options());
  const std::string a1 = put(*store, "a", mixed_text(200'000));
  const std::string a2 = put(*store, "a", "two");
  const std::string b1 = put(*store, "b", "three");

  CHECK(store->remove(a1).ok());
  CHECK(read_error(*store, "a", a1) == Code::kNotFound);
  CHECK(read_error(*store, "a", a2) == Code::kOk);
  CHECK(read_error(*store, "b", b1) == Code::kOk);
  CHECK(store->stored_count() == 2);
  CHECK(store->stored_bytes() == 8);
  REQUIRE(store->list_all().value().size() == 2);

  const toolmux::Status again = store->remove(a1);
  CHECK(again.is_not_found());
  CHECK(again.message() == "no stored result " + a1);
  CHECK(store->remove("not-an-id").message() == "no stored result not-an-id");
  CHECK(store->stored_count() == 2);
}

TEST_CASE("concurrent puts and reads") {
  Backing backing(EACH_BACKEND);
  auto options = backing.options();
  options.max_bytes = 4'000'000;
  auto store = open_store(options);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::string owner = "owner-" + std::to_string(t);
      for (int i = 0; i < 20; ++i) {
        std::string text = mixed_text(100'000, nullptr, static_cast<unsigned>(t * 100 + i));
        auto put_id = store->put(owner, text);
        if (!put_id.ok()) {
          ++failures;
          continue;
        }
        auto back = read_back_unless_evicted(*store, owner, *put_id, 20000);
        if (back && *back != text) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  CHECK(store->stored_bytes() <= 4'000'000);
}

namespace {

// What the database in `folder` holds, read with RocksDB directly (read-only,
// replaying the log as an open would): the ids with metadata, the ids with
// chunks.
struct RawContents {
  std::set<std::string> with_meta;
  std::set<std::string> with_chunks;
};

RawContents raw_contents(const std::filesystem::path& folder) {
  RawContents out;
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options;
  auto status = rocksdb::DB::OpenForReadOnly(options, folder.string(), &raw);
  INFO(status.ToString());
  REQUIRE(status.ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string key = it->key().ToString();
    if (key.rfind("m/", 0) == 0) out.with_meta.insert(key.substr(2));
    if (key.rfind("c/", 0) == 0) out.with_chunks.insert(key.substr(2, 43));
  }
  REQUIRE(it->status().ok());
  return out;
}

std::size_t files_in(const std::filesystem::path& folder) {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    ++n;
  return n;
}

}  // namespace

TEST_CASE("results either side of 1 MiB: one batch below, an ingested table file above") {
  TempDir dir;
  FakeClock clock;
  auto options = options_for(dir);
  options.retention = std::chrono::hours(1);
  options.max_bytes = 5'500'000;
  options.now = clock.fn();
  auto store = open_rocksdb(options);
  const auto ingest = store->folder() / "ingest";

  // 1 MiB is the last size written as a batch; one more byte takes the other
  // path. Small results in between leave keys in the memtable that the
  // ingested files overlap, so RocksDB flushes it first.
  const std::string at_limit(1u << 20, 'a');
  std::string over_limit = mixed_text((1u << 20) - 8, nullptr, 11);
  over_limit.append((1u << 20) + 1 - over_limit.size(), 'b');
  const std::string big = mixed_text(2'500'000, nullptr, 12);

  std::string small1 = put(*store, "a", "first");
  std::string batch = put(*store, "a", at_limit);
  std::string ingested = put(*store, "b", over_limit);
  std::string small2 = put(*store, "b", "second");
  std::string big1 = put(*store, "a", big);
  CHECK(files_in(ingest) == 0);
  CHECK(store->stored_count() == 5);
  CHECK(store->stored_bytes() == 5 + at_limit.size() + over_limit.size() + 6 + big.size());

  CHECK(read_all(*store, "a", small1, 100, 5) == "first");
  CHECK(read_all(*store, "a", batch, 300'000, at_limit.size()) == at_limit);
  CHECK(read_all(*store, "b", ingested, 70'000, count_chars(over_limit)) == over_limit);
  CHECK(read_all(*store, "b", small2, 100, 6) == "second");
  CHECK(read_all(*store, "a", big1, 123'457, count_chars(big)) == big);
  CHECK(read_error(*store, "a", ingested) == Code::kNotFound);  // owned by b

  // Reopened: all there, counted, with sequence order kept for eviction.
  store.reset();
  store = open_rocksdb(options);
  CHECK(store->stored_count() == 5);
  CHECK(read_all(*store, "b", ingested, 70'000, count_chars(over_limit)) == over_limit);
  CHECK(read_all(*store, "a", big1, 1'000'000, count_chars(big)) == big);

  // 5.5 MB holds two big ones and little else: the oldest go first, small and large
  // alike, and an evicted ingested result is gone for good.
  std::string big2 = put(*store, "b", big);
  CHECK(read_error(*store, "a", small1) == Code::kNotFound);
  CHECK(read_error(*store, "a", batch) == Code::kNotFound);
  CHECK(read_error(*store, "b", ingested) == Code::kNotFound);
  CHECK(read_error(*store, "b", small2) == Code::kOk);
  CHECK(read_error(*store, "a", big1) == Code::kOk);
  CHECK(store->stored_count() == 3);
  CHECK(store->stored_bytes() == 6 + 2 * big.size());

  // delete_owner reaches ingested results.
  store->delete_owner("a");
  CHECK(read_error(*store, "a", big1) == Code::kNotFound);
  CHECK(read_all(*store, "b", big2, 500'000, count_chars(big)) == big);
  CHECK(store->stored_count() == 2);

  // So does expiry, at the same moment as for a small result.
  clock.advance(std::chrono::hours(1) - std::chrono::seconds(1));
  CHECK(read_error(*store, "b", big2) == Code::kOk);
  clock.advance(std::chrono::seconds(1));
  CHECK(read_error(*store, "b", big2) == Code::kNotFound);
  CHECK(store->expire_old() == 2);
  CHECK(store->stored_count() == 0);
  CHECK(store->stored_bytes() == 0);
  store.reset();
  RawContents raw = raw_contents(dir.path() / "results" / "slot-0");
  CHECK(raw.with_chunks.empty());
  CHECK(raw.with_meta.empty());
}

TEST_CASE("concurrent puts and reads of large results") {
  TempDir dir;
  auto options = options_for(dir);
  options.max_bytes = 8'000'000;
  auto store = open_rocksdb(options);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  threads.reserve(3);
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      std::string owner = "owner-" + std::to_string(t);
      for (int i = 0; i < 6; ++i) {
        std::size_t size = i % 2 == 0 ? 1'500'000 : 50'000;
        std::string text = mixed_text(size, nullptr, static_cast<unsigned>(t * 100 + i));
        auto put_id = store->put(owner, text);
        if (!put_id.ok()) {
          ++failures;
          continue;
        }
        auto back = read_back_unless_evicted(*store, owner, *put_id, 100'000);
        if (back && *back != text) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  CHECK(store->stored_bytes() <= 8'000'000);
  CHECK(files_in(store->folder() / "ingest") == 0);
}

TEST_CASE("each process takes the lowest free slot") {
  TempDir dir;
  auto options = options_for(dir);
  auto first = open_rocksdb(options);
  auto second = open_rocksdb(options);
  CHECK(first->folder() == dir.path() / "results" / "slot-0");
  CHECK(second->folder() == dir.path() / "results" / "slot-1");

  std::string in_first = put(*first, "o", "in slot 0");
  std::string in_second = put(*second, "o", "in slot 1");
  CHECK(read_error(*first, "o", in_first) == Code::kOk);
  CHECK(read_error(*second, "o", in_second) == Code::kOk);
  CHECK(read_error(*first, "o", in_second) == Code::kNotFound);
  CHECK(read_error(*second, "o", in_first) == Code::kNotFound);
  CHECK(first->stored_count() == 1);
  CHECK(second->stored_count() == 1);

  // The slot-0 holder closes: the next open gets slot 0 back, with its data.
  first.reset();
  auto third = open_rocksdb(options);
  CHECK(third->folder() == dir.path() / "results" / "slot-0");
  auto page = third->read("o", in_first, 0, 100);
  REQUIRE(page.ok());
  CHECK(page->text == "in slot 0");

  // All slots taken: a clear error naming the folder.
  options.max_slots = 2;
  auto refused = ResultStore::open(options);
  CHECK_FALSE(refused.ok());
  CHECK(refused.status().is_resource_exhausted());
  const std::string& open_error = refused.message();
  CHECK(open_error.find((dir.path() / "results").string()) != std::string::npos);
  CHECK(open_error.find("slot") != std::string::npos);
}

TEST_CASE("a slot opened read-only reads beside its writer and writes nothing") {
  TempDir dir;
  auto options = options_for(dir);
  auto writer = open_rocksdb(options);
  const std::string before = put(*writer, "o", "before");
  const auto folder = writer->folder();

  auto reader =
      RocksDbResultStore::open_slot(options, folder, RocksDbResultStore::Access::read_only);
  INFO(reader.message());
  REQUIRE(reader.ok());
  RocksDbResultStore& r = **reader;
  CHECK(r.folder() == folder);
  CHECK(read_error(r, "o", before) == Code::kOk);
  REQUIRE(r.list_all().value().size() == 1);
  CHECK(r.list_all().value()[0].owner == "o");
  const std::string refusal = "the result store in " + folder.string() + " is open read-only";
  CHECK(r.put("o", "x").message() == refusal);
  CHECK(r.remove(before).message() == refusal);
  CHECK(r.remove(before).is_io_error());
  r.delete_owner("o");
  CHECK(read_error(*writer, "o", before) == Code::kOk);

  // Only one process may write a slot: while the writer holds it, no second
  // writer; once it is gone, the slot opens for writing and deletes.
  auto second = RocksDbResultStore::open_slot(options, folder, RocksDbResultStore::Access::write);
  CHECK_FALSE(second.ok());
  CHECK(second.status().is_io_error());
  CHECK(second.message().find("could not open the result store in " + folder.string()) == 0);
  writer.reset();
  auto taken = RocksDbResultStore::open_slot(options, folder, RocksDbResultStore::Access::write);
  INFO(taken.message());
  REQUIRE(taken.ok());
  CHECK((*taken)->remove(before).ok());
  CHECK((*taken)->list_all().value().empty());

  // A folder with no database is no slot.
  auto none = RocksDbResultStore::open_slot(options, dir.path() / "results" / "slot-9",
                                            RocksDbResultStore::Access::read_only);
  CHECK_FALSE(none.ok());
  CHECK(none.message().find("could not read the result store in ") == 0);
}

// ---- Other processes ----
//
// A second process is this test binary run again (tests/support/test_child.h)
// for one hidden "child:" test case. It writes result ids to kChildOutFd and
// may wait for EOF on kChildInFd.

namespace {

using toolmux::testing::Child;
using toolmux::testing::finish;
using toolmux::testing::kChildInFd;
using toolmux::testing::kChildOutFd;
using toolmux::testing::spawn_child;

// The next id the child wrote, or "" (child gone, or nothing within 30 s).
std::string next_id(const Child& child) {
  std::string id(43, '\0');
  std::size_t got = 0;
  while (got < id.size()) {
    pollfd p{child.from_child, POLLIN, 0};
    if (::poll(&p, 1, 30'000) <= 0) return "";
    ssize_t n = ::read(child.from_child, id.data() + got, id.size() - got);
    if (n <= 0) return "";
    got += static_cast<std::size_t>(n);
  }
  return id;
}

bool write_id(const std::string& id) {
  return ::write(kChildOutFd, id.data(), id.size()) == static_cast<ssize_t>(id.size());
}

// Over 1 MiB: written as a table file and ingested.
const std::string& large_writer_text() {
  static const std::string text = mixed_text(3'000'000, nullptr, 9);
  return text;
}

// Up to 1 MiB: written in one WriteBatch.
const std::string& small_writer_text() {
  static const std::string text = mixed_text(900'000, nullptr, 10);
  return text;
}

[[noreturn]] void write_until_killed(const std::string& text) {
  ResultStoreOptions options;
  options.data_dir = std::getenv("TOOLMUX_STORE_CHILD_DIR");
  auto store = ResultStore::open(options);
  if (!store.ok()) ::_exit(1);
  for (;;) {
    auto id = (*store)->put("w", text);
    if (!id.ok() || !write_id(*id)) ::_exit(2);
  }
}

}  // namespace

TEST_CASE("child: hold slot 0", "[.child]") {
  const char* dir = std::getenv("TOOLMUX_STORE_CHILD_DIR");
  if (!dir) return;
  ResultStoreOptions options;
  options.data_dir = dir;
  auto store = RocksDbResultStore::open(options);
  if (!store.ok() || (*store)->folder().filename() != "slot-0") ::_exit(1);
  auto id = (*store)->put("child", "from the child");
  if (!id.ok() || !write_id(*id)) ::_exit(2);
  char byte;
  while (::read(kChildInFd, &byte, 1) > 0) {
  }
  ::_exit(0);  // without closing the store: the lock goes with the process
}

TEST_CASE("child: write large results until killed", "[.child]") {
  if (std::getenv("TOOLMUX_STORE_CHILD_DIR")) write_until_killed(large_writer_text());
}

TEST_CASE("child: write small results until killed", "[.child]") {
  if (std::getenv("TOOLMUX_STORE_CHILD_DIR")) write_until_killed(small_writer_text());
}

TEST_CASE("another process holding slot 0 makes this one take slot 1") {
  TempDir dir;
  auto options = options_for(dir);
  Child child = spawn_child("child: hold slot 0", dir.path());
  std::string child_id = next_id(child);
  std::unique_ptr<RocksDbResultStore> parent;
  if (!child_id.empty()) {
    auto opened = RocksDbResultStore::open(options);
    if (opened.ok()) parent = std::move(opened).value();
  }
  int status = finish(child, child_id.empty());  // EOF on kChildInFd: the child exits
  REQUIRE(!child_id.empty());
  CHECK(status == 0);
  REQUIRE(parent);
  CHECK(parent->folder() == dir.path() / "results" / "slot-1");
  CHECK(read_error(*parent, "child", child_id) == Code::kNotFound);

  // The child is gone: slot 0 is free again, with what the child stored.
  auto again = open_rocksdb(options);
  CHECK(again->folder() == dir.path() / "results" / "slot-0");
  auto page = again->read("child", child_id, 0, 100);
  REQUIRE(page.ok());
  CHECK(page->text == "from the child");
}

namespace {

// Kills a child writing `text` over and over at a few points of a put; each
// time, only whole results may be in the database, before open() too, and
// open() leaves no table file being written behind.
void check_killed_writer(const std::string& child_test, const std::string& text) {
  TempDir dir;
  auto options = options_for(dir);
  const std::filesystem::path folder = dir.path() / "results" / "slot-0";
  const std::filesystem::path ingest = folder / "ingest";
  std::vector<std::string> ids;
  for (int percent : {30, 60, 90}) {
    INFO("killed at " << percent << "% of a put");
    Child child = spawn_child(child_test, dir.path());
    std::size_t had = ids.size();
    auto last = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration one_put{};
    while (ids.size() < had + 3) {
      std::string id = next_id(child);
      if (id.empty()) break;
      ids.push_back(id);
      auto now = std::chrono::steady_clock::now();
      one_put = now - last;
      last = now;
    }
    // Somewhere in the next put. Wherever it lands, only whole results may show.
    std::this_thread::sleep_for(one_put * percent / 100);
    finish(child, true);
    REQUIRE(ids.size() == had + 3);

    // Nothing partial in the database even before open() tidies up.
    RawContents before = raw_contents(folder);
    for (const auto& id : before.with_chunks) CHECK(before.with_meta.count(id) == 1);
    // A table file left by a put killed before its ingestion.
    toolmux::testing::write_file(ingest / "left-behind.sst", "partial");

    auto store = open_rocksdb(options);
    CHECK(store->folder() == folder);
    CHECK(files_in(ingest) == 0);
    CHECK(store->stored_count() >= ids.size());
    CHECK(store->stored_count() == before.with_meta.size());
    CHECK(store->stored_bytes() == store->stored_count() * text.size());
    for (const auto& stored : ids) {
      CHECK(read_all(*store, "w", stored, 50000, count_chars(text)) == text);
    }
    store.reset();
    RawContents after = raw_contents(folder);
    CHECK(after.with_chunks == after.with_meta);
  }
}

}  // namespace

TEST_CASE("a process killed while writing a large result leaves only whole results") {
  check_killed_writer("child: write large results until killed", large_writer_text());
}

TEST_CASE("a process killed while writing a small result leaves only whole results") {
  check_killed_writer("child: write small results until killed", small_writer_text());
}

TEST_CASE("PostgreSQL: a 10 MB result read back in pages equals the original") {
  Backing backing(Backend::postgresql);
  auto store = open_store(backing.options());
  std::vector<std::size_t> starts;
  const std::string text = mixed_text(10'000'000, &starts, 11);
  const std::string id = put(*store, "o", text);
  CHECK(store->stored_bytes() == text.size());
  CHECK(read_all(*store, "o", id, 100'000, starts.size()) == text);
  // A page in the middle is the matching characters.
  auto page = store->read("o", id, 4'000'001, 3);
  REQUIRE(page.ok());
  CHECK(page->text == text.substr(starts[4'000'001], starts[4'000'004] - starts[4'000'001]));
  CHECK(page->next_offset == 4'000'004u);
  // Stored in chunks of at most 64 KiB, each with its first character.
  toolmux::PgLease lease = backing.postgres->pool().acquire().value();
  auto chunks = lease->exec(
      "SELECT count(*), max(length(data)), sum(chars) FROM toolmux_result_chunks "
      "WHERE result_id = $1",
      {toolmux::PgParam::text(id)});
  REQUIRE(chunks.ok());
  CHECK(chunks->integer(0, 0) >= 10'000'000 / 65536);
  CHECK(chunks->integer(0, 1) <= 65536);
  CHECK(chunks->integer(0, 2) == static_cast<std::int64_t>(starts.size()));
}

TEST_CASE("PostgreSQL: a result stored through one instance is read through another") {
  Backing backing(Backend::postgresql);
  auto first = open_store(backing.options());
  ResultStoreOptions other_options = backing.options();
  other_options.postgres = backing.another_instance();
  auto second = open_store(other_options);

  const std::string text = mixed_text(300'000, nullptr, 4);
  const std::string id = put(*first, "session", text);
  CHECK(read_all(*second, "session", id, 20'000, count_chars(text)) == text);
  CHECK(read_error(*second, "someone else", id) == Code::kNotFound);
  const auto listed = second->list("session");
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].id == id);
  CHECK(second->stored_count() == 1);
  // The session ends on the second instance: gone for the first too.
  second->delete_owner("session");
  CHECK(read_error(*first, "session", id) == Code::kNotFound);
  CHECK(first->stored_count() == 0);
}

TEST_CASE("PostgreSQL: eviction past max_bytes counts every instance's results") {
  Backing backing(Backend::postgresql);
  FakeClock clock;
  ResultStoreOptions options = backing.options();
  options.max_bytes = 1000;
  options.now = clock.fn();
  auto first = open_store(options);
  options.postgres = backing.another_instance();
  auto second = open_store(options);
  const std::string old_id = put(*first, "o", std::string(600, 'a'));
  const std::string new_id = put(*second, "o", std::string(600, 'b'));
  CHECK(read_error(*second, "o", old_id) == Code::kNotFound);
  CHECK(read_error(*first, "o", new_id) == Code::kOk);
  CHECK(first->stored_bytes() == 600);
}

TEST_CASE("PostgreSQL: expiry runs in one instance at a time") {
  Backing backing(Backend::postgresql);
  FakeClock clock;
  ResultStoreOptions options = backing.options();
  options.retention = std::chrono::hours(1);
  options.now = clock.fn();
  auto first = open_store(options);
  options.postgres = backing.another_instance();
  auto second = open_store(options);
  for (int i = 0; i < 20; ++i) put(i % 2 == 0 ? *first : *second, "o", "result");
  clock.advance(std::chrono::hours(2));

  {
    // While one instance holds the expiry lock, another's expiry skips.
    auto held =
        toolmux::PgExclusiveLock::try_take(backing.postgres->pool(), toolmux::kPgLockResultExpiry);
    REQUIRE(held.ok());
    REQUIRE(held->has_value());
    CHECK(second->expire_old() == 0);
    CHECK(second->stored_count() == 20);
  }
  // Both at once: each result is deleted once, by one of them.
  std::size_t by_first = 0;
  std::size_t by_second = 0;
  std::thread other([&] { by_second = second->expire_old(); });
  by_first = first->expire_old();
  other.join();
  CHECK(by_first + by_second == 20);
  CHECK(first->stored_count() == 0);
}

TEST_CASE("PostgreSQL: a stopped server makes put and read unavailable, until it is back") {
  toolmux::testing::PostgresServer server;  // its own: this test stops it
  toolmux::PgStoreOptions pg;
  pg.conninfo = server.create_database();
  auto opened = PgStore::open(pg);
  REQUIRE(opened.ok());
  ResultStoreOptions options;
  options.postgres = *opened;
  auto store = open_store(options);
  const std::string id = put(*store, "o", "kept");

  server.pause();
  auto refused = store->put("o", "lost");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().is_unavailable());
  CHECK(refused.message().find("host " + server.dir().string() + " port 5432 database t1") !=
        std::string::npos);
  auto unread = store->read("o", id, 0, 10);
  REQUIRE_FALSE(unread.ok());
  CHECK(unread.status().is_unavailable());  // not not_found: the id may well exist

  server.resume();
  std::optional<std::string> again;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!again && std::chrono::steady_clock::now() < until) {
    auto tried = store->put("o", "after");
    if (tried.ok())
      again = *tried;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(again);
  CHECK(read_all(*store, "o", id, 10, 4) == "kept");
  CHECK(read_all(*store, "o", *again, 10, 5) == "after");
}

// Not run by default: ./result_store_test "[.measure]"
TEST_CASE("measure: 10 MB put and page reads", "[.measure]") {
  TempDir dir;
  std::uint64_t at_start = vm_hwm_kib();
  auto store = open_rocksdb(options_for(dir));
  std::uint64_t opened = vm_hwm_kib();
  std::string text = mixed_text(10'000'000, nullptr, 5);
  std::size_t total = count_chars(text);
  std::uint64_t before = vm_hwm_kib();

  auto t0 = std::chrono::steady_clock::now();
  std::string id = put(*store, "o", text);
  auto t1 = std::chrono::steady_clock::now();
  std::uint64_t after_put = vm_hwm_kib();

  std::uint64_t offset = 0;
  std::size_t bytes = 0;
  std::size_t pages = 0;
  for (;;) {
    auto page = store->read("o", id, offset, 20000);
    REQUIRE(page.ok());
    bytes += page->text.size();
    ++pages;
    if (!page->next_offset) break;
    offset = *page->next_offset;
  }
  auto t2 = std::chrono::steady_clock::now();
  CHECK(bytes == text.size());
  std::uint64_t after_read = vm_hwm_kib();

  auto secs = [](auto d) { return std::chrono::duration<double>(d).count(); };
  double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("10 MB result (%zu chars, %zu bytes)\n", total, text.size());
  std::printf("put: %.3f s, %.1f MB/s\n", secs(t1 - t0), mb / secs(t1 - t0));
  std::printf("read: %zu pages of 20000 chars, %.3f s, %.1f MB/s\n", pages, secs(t2 - t1),
              mb / secs(t2 - t1));
  std::printf(
      "VmHWM: %llu KiB at the start, %llu KiB with the store open, %llu KiB with the text"
      " built, %llu KiB after put, %llu KiB after reads\n",
      static_cast<unsigned long long>(at_start), static_cast<unsigned long long>(opened),
      static_cast<unsigned long long>(before), static_cast<unsigned long long>(after_put),
      static_cast<unsigned long long>(after_read));
}

// Not run by default: ./result_store_test "[.measure-small]" (on its own: VmHWM
// is a high-water mark). A result at the 1 MiB limit goes in one WriteBatch.
TEST_CASE("measure: 1 MiB put and page reads", "[.measure-small]") {
  TempDir dir;
  auto store = open_rocksdb(options_for(dir));
  std::string text = mixed_text((1u << 20) - 4, nullptr, 5);
  std::uint64_t before = vm_hwm_kib();
  auto t0 = std::chrono::steady_clock::now();
  std::string id = put(*store, "o", text);
  auto t1 = std::chrono::steady_clock::now();
  std::uint64_t after_put = vm_hwm_kib();
  CHECK(read_all(*store, "o", id, 20000, count_chars(text)) == text);
  auto t2 = std::chrono::steady_clock::now();
  std::uint64_t after_read = vm_hwm_kib();
  auto secs = [](auto d) { return std::chrono::duration<double>(d).count(); };
  double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("%zu bytes: put %.4f s (%.1f MB/s), read %.4f s (%.1f MB/s)\n", text.size(),
              secs(t1 - t0), mb / secs(t1 - t0), secs(t2 - t1), mb / secs(t2 - t1));
  std::printf("VmHWM: %llu KiB with the text built, %llu KiB after put, %llu KiB after reads\n",
              static_cast<unsigned long long>(before), static_cast<unsigned long long>(after_put),
              static_cast<unsigned long long>(after_read));
}
