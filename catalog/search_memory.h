// What tool_search learns from use: which tools were called after searches
// with which words. A call that follows a search (in the same session, or by
// the same principal) is a click; SearchMemory keeps, for each query term,
// the tools clicked after searches that had it, so that the next search with
// those words ranks those tools higher (CatalogSearchRequest::memory).
//
// What is kept: normalized terms only (terms(): a query's words lower-cased,
// stemmed, stop words out; no term longer than kMaxTermBytes, none of digits
// only and none with kMaxTermDigits digits or more, so that ids, numbers and
// phone numbers are not kept: "k8s" is kept, "555" and "2010" are not), each with the names of the
// tools clicked and a count. Never the query's text, never a call's arguments.
//
// Bounds: at most max_terms terms, each with at most max_tools tools. A click
// on a new tool for a term whose tools are full replaces that term's weakest
// tool; a new term when the terms are full first drops the weakest tenth of
// them (by their decayed total count). The memory use is then at most about
// max_terms x max_tools x (tool name + 48) bytes.
//
// Decay: counts halve every half_life of wall time. Each term keeps the time
// of its last change and its counts are decayed when it is touched (or read,
// without changing it); a tool whose count falls under kForgottenCount is
// dropped, and a term with no tool left with it. So an association that is
// not used again fades; one click of 30 days ago weighs half of one today
// (with the default half life).
//
// The saved form (to_bytes/from_bytes) is versioned binary with a checksum,
// meant for a file in the data directory (src/store/search_memory_file.h):
// from_bytes checks every length and count against the end of its input and
// the bounds above, and answers anything else with an error, leaving the
// memory as it was.
//
// Shared by several instances (src/store/pg_search_memory.h): each keeps its
// own memory for ranking, and an outbox of the clicks it recorded, which the
// keeper sends to the shared store and takes back what all instances sent
// (merge). The outbox is off unless keep_outbox() turned it on.
//
// Thread-safe: every method may be called from any thread at once (readers
// share a lock: boosts, associations, to_bytes, the counts; record,
// from_bytes, merge and the outbox take it alone).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace toolmux {

struct SearchMemoryOptions {
  std::size_t max_terms = 20000;
  std::size_t max_tools = 8;  // per term
  std::chrono::seconds half_life{std::chrono::hours(24 * 30)};
  // boosts(): a term's share for a tool is count / (term's total + smoothing),
  // so that one click is a hint (1 / 2) and many are near certainty.
  double smoothing = 1.0;
  // The wall clock, replaceable in tests of decay.
  std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;
};

class SearchMemory {
 public:
  // The longest term kept, in bytes; longer ones are ids or blobs, not words.
  static constexpr std::size_t kMaxTermBytes = 32;
  // A term with this many digits or more is not kept, nor one of digits only.
  static constexpr std::size_t kMaxTermDigits = 4;
  // The most terms of one query that count (the first ones).
  static constexpr std::size_t kMaxQueryTerms = 32;
  // The longest tool name kept, in bytes.
  static constexpr std::size_t kMaxToolBytes = 256;
  // A decayed count under this is forgotten.
  static constexpr double kForgottenCount = 0.05;
  // The largest input from_bytes reads.
  static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

  explicit SearchMemory(SearchMemoryOptions options = {});
  SearchMemory(const SearchMemory&) = delete;
  SearchMemory& operator=(const SearchMemory&) = delete;
  ~SearchMemory();

  // The terms of a query as the memory keeps them: its words as running text
  // (split at anything but letters and digits, so "list_issues" is "list",
  // "issu"), lower-cased, stemmed (Snowball English), stop words out, without
  // the terms the bounds above leave out, each once, at most kMaxQueryTerms.
  // The same whatever the catalog's search options, so that what was learned
  // survives a change of them.
  static std::vector<std::string> terms(std::string_view query);

  // A click: `tool` (the name a call uses) was called after a search whose
  // terms (terms() of its query) were `terms`. Terms that terms() would not
  // give (too long, too many digits, empty) are ignored; so is a tool name
  // that is empty, longer than kMaxToolBytes or not UTF-8.
  void record(const std::vector<std::string>& terms, const std::string& tool);

  // Tool name -> weight in [0, 1): for each of the (distinct, valid) terms,
  // the tool's share of that term's clicks (count / (total + smoothing)),
  // summed and divided by the number of terms. A query whose every term led
  // to one tool, many times, gives it nearly 1; a term never clicked gives
  // nothing and dilutes the rest. Empty when nothing is known.
  using Boosts = std::map<std::string, double, std::less<>>;
  Boosts boosts(const std::vector<std::string>& terms) const;

  // The tools of one term with their decayed counts, strongest first (ties by
  // name); empty when the term is not kept. For tests and --explain.
  std::vector<std::pair<std::string, double>> associations(std::string_view term) const;

  const SearchMemoryOptions& options() const { return options_; }
  std::size_t term_count() const;
  std::size_t association_count() const;  // (term, tool) pairs
  // Changes so far (clicks recorded, from_bytes, merges): a saver saves when it moved.
  std::uint64_t changes() const;

  // The saved form, with counts decayed to now: "TMSM", version, time saved,
  // terms, checksum. Forgotten entries are left out.
  std::string to_bytes() const;
  // Replaces what the memory holds with a saved form. An error (invalid_argument
  // naming what is wrong and where; resource_exhausted over kMaxBytes) leaves
  // it unchanged. More terms or tools than the options allow keep the
  // strongest. A form saved "in the future" (the clock went back) counts as
  // saved now.
  Status from_bytes(std::string_view bytes);

  // The outbox: clicks recorded and not yet taken, summed by (term, tool).
  using Outbox = std::map<std::pair<std::string, std::string>, double>;
  // Turns the outbox on, holding at most `limit` pairs: a click on a further
  // pair still counts here but is not kept for sending (outbox_dropped()).
  void keep_outbox(std::size_t limit);
  // The clicks recorded since the last take (empty when the outbox is off).
  Outbox take_outbox();
  // Puts back clicks taken but not sent, added to those recorded since,
  // within the limit.
  void return_outbox(const Outbox& clicks);
  // Clicks not kept for sending because the outbox was full.
  std::uint64_t outbox_dropped() const;

  // A (term, tool) pair as a shared store holds it: its count as of `stamp`
  // (seconds since the epoch).
  struct SharedCount {
    std::string term;
    std::string tool;
    double count = 0;
    std::int64_t stamp = 0;
  };
  // Sets each pair's count to the shared one decayed to now (the store has
  // every instance's clicks, this one's included), within this memory's
  // bounds: a pair for a full term replaces the term's weakest tool only when
  // stronger; a new term when the terms are full makes room as record() does.
  // A count forgotten (under kForgottenCount once decayed) removes the pair.
  // Read from a store anyone with access may write: a pair with a term
  // terms() would not give, an invalid tool name, or a count that is not a
  // finite number >= 0 is skipped; counts over a billion count as a billion.
  void merge(const std::vector<SharedCount>& counts);

 private:
  struct Tool {
    std::string name;
    double count;
  };
  struct Term {
    std::int64_t stamp;  // seconds since the epoch of the last change
    std::vector<Tool> tools;
  };
  using Terms = std::unordered_map<std::string, Term>;

  std::int64_t now_seconds() const;
  double decay(std::int64_t stamp, std::int64_t now) const;
  // Brings a term's counts to `now` and drops the forgotten.
  void refresh(Term& term, std::int64_t now) const;
  // Drops the weakest terms until `room` more fit: at least a tenth of
  // max_terms when `by_tenths`, else just enough.
  void make_room(Terms& terms, std::int64_t now, std::size_t room, bool by_tenths) const;
  // Adds `count` clicks of (term, tool) to the outbox, within its limit. Under
  // the lock.
  void add_to_outbox(std::string term, const std::string& tool, double count);

  SearchMemoryOptions options_;
  mutable std::shared_mutex mutex_;
  Terms terms_;
  std::uint64_t changes_ = 0;
  bool outbox_on_ = false;
  std::size_t outbox_limit_ = 0;
  Outbox outbox_;
  std::uint64_t outbox_dropped_ = 0;
};

}  // namespace toolmux
