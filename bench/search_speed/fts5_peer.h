// The peer of the search speed benchmark: SQLite FTS5 over the same documents
// as the tool search index, ranked with FTS5's built-in bm25().
//
// One in-memory database per Fts5Peer, with one FTS5 table of five columns
// (name, title, description, parameters, enums; porter stemming over
// unicode61). Not thread-safe: one thread uses a peer at a time. SQLite
// errors throw std::runtime_error with SQLite's message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/tool_search_index.h"

struct sqlite3;
struct sqlite3_stmt;

namespace toolmux::bench {

// bm25() weights of the five columns, in table order.
struct Fts5Weights {
  double name;
  double title;
  double description;
  double parameters;  // parameter names and descriptions, one column
  double enums;
};

class Fts5Peer {
 public:
  // Inserts every document in one transaction (rowid = index in `documents`),
  // then merges the index into one segment ('optimize') when `optimize`.
  Fts5Peer(const std::vector<SearchDocument>& documents, const Fts5Weights& weights, bool optimize);
  ~Fts5Peer();
  Fts5Peer(const Fts5Peer&) = delete;
  Fts5Peer& operator=(const Fts5Peer&) = delete;

  // Wall time of the inserts (with the commit) and of 'optimize', in ms.
  double insert_ms() const { return insert_ms_; }
  double optimize_ms() const { return optimize_ms_; }

  // The best `limit` rows for `match` (FTS5 query syntax, see match_expression)
  // by bm25() with the weights given, best first, as indexes into the
  // documents; `rows` is cleared first. The statement is prepared once, in the
  // constructor; each call binds, steps and resets it.
  void search(const std::string& match, int limit, std::vector<std::int64_t>& rows);

  // An FTS5 query matching any whitespace-separated word of `query`: each word
  // quoted (a word with punctuation, such as "list_issues", becomes a phrase of
  // its tokens), joined with OR. Empty when `query` has no word.
  static std::string match_expression(std::string_view query);

  // Bytes SQLite has allocated in this process right now, and the most it had
  // since the last reset (sqlite3_memory_used / sqlite3_memory_highwater).
  static std::size_t sqlite_memory_used();
  static std::size_t sqlite_memory_highwater(bool reset);
  static const char* sqlite_version();

 private:
  void exec(const char* sql);
  sqlite3* db_ = nullptr;
  sqlite3_stmt* query_ = nullptr;
  double insert_ms_ = 0;
  double optimize_ms_ = 0;
};

}  // namespace toolmux::bench
