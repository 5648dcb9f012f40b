#include "bench/search_speed/fts5_peer.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include <sqlite3.h>

namespace toolmux::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
  throw std::runtime_error("sqlite: " + std::string(what) + ": " +
                           (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

using Statement = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

Statement prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &statement, nullptr) != SQLITE_OK)
    fail(db, sql);
  return {statement, &sqlite3_finalize};
}

void bind_text(sqlite3* db, sqlite3_stmt* statement, int column, const std::string& text) {
  if (sqlite3_bind_text(statement, column, text.data(), static_cast<int>(text.size()),
                        SQLITE_STATIC) != SQLITE_OK)
    fail(db, "bind");
}

// The parameters column: each parameter's name, then its description.
std::string parameter_text(const SearchDocument& document) {
  std::string text;
  for (const auto& [name, description] : document.parameters) {
    text += name;
    text += ' ';
    text += description;
    text += '\n';
  }
  return text;
}

std::string enum_text(const SearchDocument& document) {
  std::string text;
  for (const auto& value : document.enum_values) {
    text += value;
    text += ' ';
  }
  return text;
}

}  // namespace

Fts5Peer::Fts5Peer(const std::vector<SearchDocument>& documents, const Fts5Weights& weights,
                   bool optimize) {
  auto start = Clock::now();
  // One thread uses the connection: no per-connection mutex, as the index has none.
  if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("sqlite: open: " + message);
  }
  try {
    exec(
        "CREATE VIRTUAL TABLE docs USING fts5(name, title, description, parameters, enums, "
        "tokenize='porter unicode61')");
    exec("BEGIN");
    const Statement insert =
        prepare(db_,
                "INSERT INTO docs(rowid, name, title, description, parameters, enums) "
                "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    std::string parameters;
    std::string enums;
    for (std::size_t i = 0; i < documents.size(); ++i) {
      const SearchDocument& d = documents[i];
      parameters = parameter_text(d);
      enums = enum_text(d);
      sqlite3_bind_int64(insert.get(), 1, static_cast<sqlite3_int64>(i));
      bind_text(db_, insert.get(), 2, d.name);
      bind_text(db_, insert.get(), 3, d.title);
      bind_text(db_, insert.get(), 4, d.description);
      bind_text(db_, insert.get(), 5, parameters);
      bind_text(db_, insert.get(), 6, enums);
      if (sqlite3_step(insert.get()) != SQLITE_DONE) fail(db_, "insert");
      sqlite3_reset(insert.get());
    }
    exec("COMMIT");
    insert_ms_ = ms_since(start);

    start = Clock::now();
    if (optimize) exec("INSERT INTO docs(docs) VALUES('optimize')");
    optimize_ms_ = ms_since(start);

    // ORDER BY bm25(...) rather than ORDER BY rank with the weights configured
    // as the table's rank: the same scores, and the faster of the two in our
    // runs (SQLite's sorter keeps only the LIMIT best).
    char sql[200];
    std::snprintf(sql, sizeof sql,
                  "SELECT rowid FROM docs WHERE docs MATCH ?1 "
                  "ORDER BY bm25(docs, %g, %g, %g, %g, %g) LIMIT ?2",
                  weights.name, weights.title, weights.description, weights.parameters,
                  weights.enums);
    query_ = prepare(db_, sql).release();
  } catch (...) {
    sqlite3_close(db_);  // every statement is finalized by now
    throw;
  }
}

Fts5Peer::~Fts5Peer() {
  sqlite3_finalize(query_);
  sqlite3_close(db_);
}

void Fts5Peer::exec(const char* sql) {
  // Only statements of this file: no result rows to read.
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(db_, sql);
}

void Fts5Peer::search(const std::string& match, int limit, std::vector<std::int64_t>& rows) {
  rows.clear();
  if (match.empty()) return;  // FTS5 refuses an empty query; nothing to match
  bind_text(db_, query_, 1, match);
  sqlite3_bind_int(query_, 2, limit);
  int status = 0;
  while ((status = sqlite3_step(query_)) == SQLITE_ROW)
    rows.push_back(sqlite3_column_int64(query_, 0));
  sqlite3_reset(query_);
  if (status != SQLITE_DONE) fail(db_, match);
}

std::string Fts5Peer::match_expression(std::string_view query) {
  std::string match;
  std::size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && (query[i] == ' ' || query[i] == '\t' || query[i] == '\n')) ++i;
    if (i == query.size()) break;
    if (!match.empty()) match += " OR ";
    match += '"';
    for (; i < query.size() && query[i] != ' ' && query[i] != '\t' && query[i] != '\n'; ++i) {
      if (query[i] == '"') match += '"';  // a quote inside a string is doubled
      match += query[i];
    }
    match += '"';
  }
  return match;
}

std::size_t Fts5Peer::sqlite_memory_used() {
  return static_cast<std::size_t>(sqlite3_memory_used());
}

std::size_t Fts5Peer::sqlite_memory_highwater(bool reset) {
  return static_cast<std::size_t>(sqlite3_memory_highwater(reset ? 1 : 0));
}

const char* Fts5Peer::sqlite_version() { return sqlite3_libversion(); }

}  // namespace toolmux::bench
