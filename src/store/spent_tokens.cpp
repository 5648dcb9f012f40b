#include "src/store/spent_tokens.h"

#include <algorithm>
#include <utility>

#include "src/store/pg_spent_tokens.h"
#include "src/store/spent_token_files.h"

namespace toolmux {

Status check_spent_token(const std::string& token) {
  if (token.empty() || token.size() > SpentTokens::kMaxTokenChars) {
    return Status::invalid_argument("a spent token is 1 to " +
                                    std::to_string(SpentTokens::kMaxTokenChars) + " characters");
  }
  const bool plain = std::all_of(token.begin(), token.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
  if (!plain) {
    return Status::invalid_argument("a spent token is made of A-Z, a-z, 0-9, '-' and '_' only");
  }
  return Status::ok_status();
}

Result<std::shared_ptr<SpentTokens>> open_spent_tokens(const JournalStoreOptions& options) {
  if (options.postgres) {
    return std::shared_ptr<SpentTokens>(std::make_shared<PgSpentTokens>(options.postgres));
  }
  auto files = SpentTokenFiles::open(options.data_dir / "journal" / "spent", options.now);
  if (!files.ok()) return files.status();
  return std::shared_ptr<SpentTokens>(std::move(*files));
}

Result<bool> MemorySpentTokens::spend(const std::string& token,
                                      std::chrono::system_clock::time_point expires) {
  if (Status bad = check_spent_token(token); !bad.ok()) return bad;
  std::lock_guard lock(mutex_);
  if (spent_.contains(token)) return false;
  if (spent_.size() >= capacity_) {
    const auto forget_before = now_() - kForgetAfter;
    std::erase_if(spent_, [&](const auto& entry) { return entry.second < forget_before; });
  }
  if (spent_.size() >= capacity_) {
    return Status::resource_exhausted(
        "toolmux remembers at most " + std::to_string(capacity_) +
        " used confirmations in memory (serve --no-journal), and all are recent");
  }
  spent_.emplace(token, expires);
  return true;
}

}  // namespace toolmux
