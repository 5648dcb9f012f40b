// Spent tokens (spent_tokens.h) in PostgreSQL, seen by every toolmux instance
// on one database: a confirmation used through one instance is refused
// through any other.
//
// Table (migration 7, pg_schema.cpp): toolmux_spent_tokens, one row per
// token with its expiry. spend() is one INSERT ... ON CONFLICT DO NOTHING: the
// primary key makes one of two instances spending a token at once the one
// that spent it. Expired rows (expiry plus kForgetAfter past) are deleted at
// most once a minute, by the next spend() of each instance. When the store
// cannot be reached, spend() answers the pool's Status (unavailable): no
// token is taken for unspent.
//
// Thread-safe: spend() takes a connection from the store's pool for its
// duration.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "src/store/pg_store.h"
#include "src/store/spent_tokens.h"

namespace toolmux {

class PgSpentTokens final : public SpentTokens {
 public:
  explicit PgSpentTokens(
      std::shared_ptr<PgStore> postgres,
      std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now);

  Result<bool> spend(const std::string& token,
                     std::chrono::system_clock::time_point expires) override;

 private:
  const std::shared_ptr<PgStore> postgres_;
  const std::function<std::chrono::system_clock::time_point()> now_;
  std::atomic<std::int64_t> last_sweep_ns_{0};  // when spend() last deleted expired rows
};

}  // namespace toolmux
