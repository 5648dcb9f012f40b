// Spent tokens (spent_tokens.h) as files, for the processes that share one
// data directory: one empty file per token in a folder
// (data_dir/journal/spent), named by the token, whose modification time is
// the token's expiry. The journal's slots are RocksDB databases of one
// process each; a folder is seen by all of them, and creating a file with
// O_CREAT | O_EXCL | O_NOFOLLOW is atomic across processes: of two that spend
// one token at once, one creates its file, the other finds it there. The file
// and the folder are synced before spend() says a token is spent, so a spent
// token outlives a power cut.
//
// Expired files (their expiry plus kForgetAfter past) are removed at open and
// then at most once a minute, by the next spend(). The folder holds one file
// per confirmed call of the last minutes.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include "src/base/unique_fd.h"
#include "src/store/spent_tokens.h"

namespace toolmux {

class SpentTokenFiles final : public SpentTokens {
 public:
  // The tokens in `folder`, made (mode 0700) when missing; its expired files
  // removed. io_error naming the folder when it cannot be made or opened, or
  // is a symbolic link.
  static Result<std::unique_ptr<SpentTokenFiles>> open(
      const std::filesystem::path& folder,
      std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now);
  SpentTokenFiles(const SpentTokenFiles&) = delete;
  SpentTokenFiles& operator=(const SpentTokenFiles&) = delete;

  // io_error naming the file when it cannot be made, stamped or synced (it
  // is removed again then: the token is not spent).
  Result<bool> spend(const std::string& token,
                     std::chrono::system_clock::time_point expires) override;

  // Removes the files whose expiry plus kForgetAfter has passed.
  void forget_expired();

 private:
  SpentTokenFiles(std::filesystem::path folder, UniqueFd folder_fd,
                  std::function<std::chrono::system_clock::time_point()> now);

  const std::filesystem::path folder_;
  const UniqueFd folder_fd_;  // the folder, opened once: files are made and removed in it
  const std::function<std::chrono::system_clock::time_point()> now_;
  std::atomic<std::int64_t> last_sweep_s_{0};  // when forget_expired last ran, in now_'s seconds
};

}  // namespace toolmux
