#include "src/app/state_key.h"

#include "src/store/lazy_result_store.h"
#include "src/store/state_key.h"

namespace toolmux {

std::shared_ptr<const SealingKey> state_key_for(const ServeOptions& options, PgStore* shared,
                                                Logger& logger) {
  const std::filesystem::path dir =
      options.data_dir.empty() ? default_data_dir() : options.data_dir;
  Result<SealingKey> key =
      shared ? load_or_create_state_key(*shared) : load_or_create_state_key(dir);
  if (key.ok()) return std::make_shared<const SealingKey>(*key);
  logger.write(LogLevel::warning, "state_key_unavailable",
               {{"reason", key.message()},
                {"consequence", "requestState made by this process opens only in it"}});
  return std::make_shared<const SealingKey>(SealingKey::random());
}

}  // namespace toolmux
