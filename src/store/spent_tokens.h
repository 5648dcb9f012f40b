// Single-use tokens, remembered once spent: the ids of the answers that let a
// confirmed call run (ClientAnswer::answer_id; spent by the
// verify_confirmation stage), kept until they expire so that the same answer
// sent again is refused, by this process and by every other that shares the
// store. An interface with three implementations, one contract (the comments
// here hold for all three unless they name one):
//
// - SpentTokenFiles (spent_token_files.h): one file per token in
//   data_dir/journal/spent, seen by every process on the data directory
//   (each of which has a journal slot, a RocksDB of its own).
// - PgSpentTokens (pg_spent_tokens.h): a table in PostgreSQL, seen by every
//   instance on the database.
// - MemorySpentTokens (below): this process alone, for serve --no-journal.
//
// A token is kept at least until its expiry plus kForgetAfter, and forgotten
// some time after that: a token is presented only before its expiry (the
// requestState it comes in lapses then), and the margin covers clocks that
// differ a little. Spending is atomic: of any number of processes spending
// one token at once, exactly one is told it spent it.
//
// Kept apart from JournalStore (journal_store.h) because a spent token is no
// journal entry: it lives minutes, not the retention, and on one machine it
// lives beside the journal's slots rather than in one of them.
//
// Thread-safe: spend() may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "src/base/status.h"
#include "src/store/journal_store.h"

namespace toolmux {

class SpentTokens {
 public:
  // The longest token, in characters.
  static constexpr std::size_t kMaxTokenChars = 64;
  // How long past its expiry a token is still kept.
  static constexpr std::chrono::minutes kForgetAfter{1};

  virtual ~SpentTokens() = default;

  // Spends `token` (1 to kMaxTokenChars of A-Z, a-z, 0-9, '-' and '_'), to be
  // kept until `expires`: true the first time, false when it was spent
  // before. invalid_argument for a token of other characters or length;
  // unavailable or io_error when the store cannot be reached or written;
  // resource_exhausted when a bounded store is full of unexpired tokens. On
  // any error the token is not spent, and the caller must not act on it.
  virtual Result<bool> spend(const std::string& token,
                             std::chrono::system_clock::time_point expires) = 0;
};

// invalid_argument naming what is wrong with `token` as a token, or ok.
Status check_spent_token(const std::string& token);

// The tokens of the store the journal's options name: PostgreSQL's table
// when options.postgres is set, else the files in
// options.data_dir/journal/spent (made when missing). That
// implementation's open says how it fails.
Result<std::shared_ptr<SpentTokens>> open_spent_tokens(const JournalStoreOptions& options);

// In this process's memory: at most `capacity` unexpired tokens. A spend when
// it is full forgets the expired ones first, and is resource_exhausted when
// none is.
class MemorySpentTokens final : public SpentTokens {
 public:
  static constexpr std::size_t kDefaultCapacity = 65536;

  explicit MemorySpentTokens(
      std::size_t capacity = kDefaultCapacity,
      std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now)
      : capacity_(capacity), now_(std::move(now)) {}

  Result<bool> spend(const std::string& token,
                     std::chrono::system_clock::time_point expires) override;

 private:
  const std::size_t capacity_;
  const std::function<std::chrono::system_clock::time_point()> now_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::chrono::system_clock::time_point> spent_;  // -> expiry
};

}  // namespace toolmux
