#include "src/store/pg_search_memory.h"

#include <charconv>
#include <limits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/store/pg_schema.h"

namespace toolmux {

namespace {

// The most pairs sent in one statement (all of one send commit together).
constexpr std::size_t kSendBatch = 1000;

// A count decayed to $1 (seconds since the epoch) with a half life of $2
// seconds, in SQL.
constexpr const char* kDecayed = "count * power(0.5, greatest($1 - stamp, 0)::float8 / $2::float8)";

std::string half_life_seconds(const SearchMemoryOptions& options) {
  // No decay (a half life of zero) as one too long to matter.
  const auto seconds = options.half_life.count();
  return std::to_string(seconds > 0 ? seconds : std::int64_t{1} << 40);
}

// The memory's clock, in seconds since the epoch, as its stamps are.
std::int64_t seconds_now(const SearchMemoryOptions& options) {
  return std::chrono::duration_cast<std::chrono::seconds>(options.now().time_since_epoch()).count();
}

double parse_count(std::string_view text) {
  double value = std::numeric_limits<double>::quiet_NaN();
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size()
             ? value
             : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

PgSearchMemory::PgSearchMemory(PgPool& pool, std::shared_ptr<SearchMemory> memory, Logger& logger,
                               PgSearchMemoryOptions options)
    : pool_(pool), memory_(std::move(memory)), logger_(logger), options_(options) {
  memory_->keep_outbox(options_.outbox_limit);
  if (options_.period.count() > 0) thread_ = std::thread([this] { run(); });
}

PgSearchMemory::~PgSearchMemory() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  (void)save_now();
}

Status PgSearchMemory::save_now() {
  std::lock_guard lock(sync_mutex_);
  Status sent = send();
  note(sent);
  return sent;
}

Status PgSearchMemory::sync_now() {
  std::lock_guard lock(sync_mutex_);
  Status status = send();
  if (status.ok()) status = read_news();
  note(status);
  return status;
}

void PgSearchMemory::note(const Status& status) {
  if (status.ok() == !failing_) return;
  failing_ = !status.ok();
  if (failing_) {
    logger_.write(LogLevel::warning, "search_memory_not_shared",
                  {{"reason", status.message()},
                   {"effect", "clicks are kept here and sent when the store answers again"}});
  } else {
    logger_.write(LogLevel::info, "search_memory_shared", {{"store", "postgresql"}});
  }
}

Status PgSearchMemory::send() {
  SearchMemory::Outbox clicks = memory_->take_outbox();
  if (clicks.empty()) return Status::ok_status();
  const SearchMemoryOptions& memory_options = memory_->options();
  const std::int64_t now = seconds_now(memory_options);
  auto fail = [&](Status status) {
    memory_->return_outbox(clicks);
    return status;
  };
  auto lease = pool_.acquire();
  if (!lease.ok()) return fail(lease.status());
  auto transaction = PgTransaction::begin(**lease);
  if (!transaction.ok()) return fail(transaction.status());
  // One writer at a time: revisions then commit in the order they are taken.
  auto locked = transaction->exec("SELECT pg_advisory_xact_lock($1)",
                                  {PgParam::integer(kPgLockSearchMemoryWrites)});
  if (!locked.ok()) return fail(locked.status());
  auto at = clicks.begin();
  while (at != clicks.end()) {
    nlohmann::json batch = nlohmann::json::array();
    for (; at != clicks.end() && batch.size() < kSendBatch; ++at)
      batch.push_back(
          {{"term", at->first.first}, {"tool", at->first.second}, {"count", at->second}});
    auto written = transaction->exec(
        R"sql(INSERT INTO toolmux_search_memory AS m (term, tool, count, stamp, revision)
SELECT c.term, c.tool, c.count, $2, nextval('toolmux_search_memory_revisions')
  FROM jsonb_to_recordset($1::jsonb) AS c(term text, tool text, count float8)
ON CONFLICT (term, tool) DO UPDATE SET
  count = m.count * power(0.5, greatest(EXCLUDED.stamp - m.stamp, 0)::float8 / $3::float8)
          + EXCLUDED.count,
  stamp = greatest(EXCLUDED.stamp, m.stamp),
  revision = EXCLUDED.revision)sql",
        {PgParam::text(batch.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
         PgParam::integer(now), PgParam::text(half_life_seconds(memory_options))});
    if (!written.ok()) return fail(written.status());
  }
  if (Status committed = transaction->commit(); !committed.ok()) return fail(committed);
  return Status::ok_status();
}

Status PgSearchMemory::read_news() {
  const std::string batch = std::to_string(options_.read_batch);
  for (;;) {
    auto lease = pool_.acquire();
    if (!lease.ok()) return lease.status();
    auto rows = (*lease)->exec(
        "SELECT term, tool, count, stamp, revision FROM toolmux_search_memory "
        "WHERE revision > $1 ORDER BY revision LIMIT " +
            batch,
        {PgParam::integer(read_revision_)});
    if (!rows.ok()) return rows.status();
    std::vector<SearchMemory::SharedCount> counts;
    counts.reserve(static_cast<std::size_t>(rows->rows()));
    for (int row = 0; row < rows->rows(); ++row) {
      counts.push_back({std::string(rows->text(row, 0)), std::string(rows->text(row, 1)),
                        parse_count(rows->text(row, 2)), rows->integer(row, 3)});
      read_revision_ = std::max(read_revision_, rows->integer(row, 4));
    }
    memory_->merge(counts);
    if (static_cast<std::size_t>(rows->rows()) < options_.read_batch) return Status::ok_status();
  }
}

Result<std::size_t> PgSearchMemory::trim_now() {
  const SearchMemoryOptions& memory_options = memory_->options();
  const std::int64_t now = seconds_now(memory_options);
  auto lease = pool_.acquire();
  if (!lease.ok()) return lease.status();
  auto transaction = PgTransaction::begin(**lease);
  if (!transaction.ok()) return transaction.status();
  auto mine = try_advisory_xact_lock(*transaction, kPgLockSearchMemoryTrim);
  if (!mine.ok()) return mine.status();
  if (!*mine) return std::size_t{0};  // another instance is at it
  const std::vector<PgParam> decay{PgParam::integer(now),
                                   PgParam::text(half_life_seconds(memory_options))};
  auto with = [&decay](std::int64_t bound) {
    auto params = decay;
    params.push_back(PgParam::integer(bound));
    return params;
  };
  const std::string decayed = kDecayed;
  std::size_t deleted = 0;
  // Forgotten pairs; then the weakest tools of a term past max_tools; then the
  // weakest terms past max_terms.
  auto forgotten = transaction->exec("DELETE FROM toolmux_search_memory WHERE " + decayed + " < " +
                                         std::to_string(SearchMemory::kForgottenCount),
                                     decay);
  if (!forgotten.ok()) return forgotten.status();
  deleted += forgotten->affected();
  auto extra_tools = transaction->exec(
      "DELETE FROM toolmux_search_memory m USING (SELECT term, tool FROM (SELECT term, tool, "
      "row_number() OVER (PARTITION BY term ORDER BY " +
          decayed +
          " DESC, tool) AS rank FROM toolmux_search_memory) ranked WHERE rank > $3) extra "
          "WHERE m.term = extra.term AND m.tool = extra.tool",
      with(static_cast<std::int64_t>(memory_options.max_tools)));
  if (!extra_tools.ok()) return extra_tools.status();
  deleted += extra_tools->affected();
  auto extra_terms = transaction->exec(
      "DELETE FROM toolmux_search_memory WHERE term IN (SELECT term FROM toolmux_search_memory "
      "GROUP BY term ORDER BY sum(" +
          decayed + ") DESC, term OFFSET $3)",
      with(static_cast<std::int64_t>(memory_options.max_terms)));
  if (!extra_terms.ok()) return extra_terms.status();
  deleted += extra_terms->affected();
  if (Status committed = transaction->commit(); !committed.ok()) return committed;
  return deleted;
}

void PgSearchMemory::run() {
  auto next_trim = std::chrono::steady_clock::now();
  std::unique_lock lock(stop_mutex_);
  while (!stopping_) {
    lock.unlock();
    (void)sync_now();
    if (std::chrono::steady_clock::now() >= next_trim) {
      next_trim = std::chrono::steady_clock::now() + options_.trim_period;
      auto trimmed = trim_now();
      if (!trimmed.ok()) {
        logger_.write(LogLevel::warning, "search_memory_not_trimmed",
                      {{"reason", trimmed.status().message()}});
      } else if (*trimmed > 0) {
        logger_.write(LogLevel::info, "search_memory_trimmed", {{"deleted", *trimmed}});
      }
    }
    lock.lock();
    stop_wake_.wait_for(lock, options_.period, [this] { return stopping_; });
  }
}

}  // namespace toolmux
