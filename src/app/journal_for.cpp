#include "src/app/journal_for.h"

#include <chrono>
#include <utility>

#include "src/app/time_text.h"
#include "src/store/lazy_result_store.h"

namespace toolmux {

std::shared_ptr<const CallJournal> journal_for(const ServeOptions& options, Logger& logger,
                                               std::shared_ptr<PgStore> shared,
                                               const std::string& instance_id) {
  if (!options.journal) {
    logger.write(LogLevel::warning, "journal_off",
                 {{"reason",
                   "--no-journal: calls that change something are neither journaled nor "
                   "audited, and idempotency keys are not honoured"}});
    return std::make_shared<const CallJournal>();
  }
  JournalStoreOptions store_options;
  store_options.data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  store_options.audit_retention = std::chrono::hours(24 * options.audit_retention_days);
  store_options.postgres = std::move(shared);
  store_options.instance_id = instance_id;
  store_options.logger = &logger;  // it outlives the journal
  // The logger outlives the journal: serve makes it first and ends last.
  return CallJournal::opening([store_options, &logger]() -> CallJournal::Opened {
    const auto unavailable = [&logger](const Status& why) {
      CallJournal::Opened failed{nullptr, why.message()};
      logger.write(
          LogLevel::error, "journal_unavailable",
          {{"reason", failed.unavailable},
           {"effect", "tools that are not read_only are refused while this process runs"}});
      return failed;
    };
    auto opened = JournalStore::open(store_options);
    if (!opened.ok()) return unavailable(opened.status());
    // Spent confirmations beside the journal: in the shared store, or in the
    // data directory, where every process on it sees them.
    auto spent = open_spent_tokens(store_options);
    if (!spent.ok()) return unavailable(spent.status());
    std::shared_ptr<JournalStore> store = std::move(opened).value();
    for (const JournalEntry& entry : store->interrupted()) {
      nlohmann::json fields = {{"call_id", entry.intent.call_id},
                               {"tool", entry.intent.tool},
                               {"principal", entry.intent.principal},
                               {"approver", entry.intent.approver},
                               {"started", format_rfc3339(entry.intent.started)},
                               {"effect",
                                "toolmux stopped while it ran; it may or may not have acted, and "
                                "it is not run again (toolmux journal lists it)"}};
      // PostgreSQL: the instance that ran it (maybe another one).
      if (!entry.instance.empty()) fields["instance"] = entry.instance;
      logger.write(LogLevel::warning, "call_interrupted", fields);
    }
    return {std::move(store), {}, std::move(*spent)};
  });
}

}  // namespace toolmux
