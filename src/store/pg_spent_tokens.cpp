#include "src/store/pg_spent_tokens.h"

#include <utility>

#include "src/store/db_keys.h"
#include "src/store/pg_connection.h"

namespace toolmux {

namespace {

constexpr std::int64_t kSweepEveryNs = 60'000'000'000;  // a minute

}  // namespace

PgSpentTokens::PgSpentTokens(std::shared_ptr<PgStore> postgres,
                             std::function<std::chrono::system_clock::time_point()> now)
    : postgres_(std::move(postgres)), now_(now ? std::move(now) : std::chrono::system_clock::now) {}

Result<bool> PgSpentTokens::spend(const std::string& token,
                                  std::chrono::system_clock::time_point expires) {
  if (Status bad = check_spent_token(token); !bad.ok()) return bad;
  auto lease = postgres_->pool().acquire();
  if (!lease.ok()) return lease.status();
  const std::int64_t now = to_ns(now_());
  if (std::int64_t last = last_sweep_ns_.load();
      now - last >= kSweepEveryNs && last_sweep_ns_.compare_exchange_strong(last, now)) {
    // Best effort: what is left now goes at the next sweep, here or elsewhere.
    (void)(*lease)->exec("DELETE FROM toolmux_spent_tokens WHERE expires_ns < $1",
                         {PgParam::integer(now - std::chrono::nanoseconds(kForgetAfter).count())});
  }
  auto spent = (*lease)->exec(
      "INSERT INTO toolmux_spent_tokens (token, expires_ns) VALUES ($1, $2) "
      "ON CONFLICT (token) DO NOTHING RETURNING token",
      {PgParam::text(token), PgParam::integer(to_ns(expires))});
  if (!spent.ok()) return spent.status();
  return spent->rows() == 1;
}

}  // namespace toolmux
