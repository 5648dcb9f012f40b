#include "src/pipeline/call_journal.h"

#include <chrono>
#include <utility>

namespace toolmux {

CallJournal::CallJournal() : CallJournal(nullptr) {}

CallJournal::CallJournal(std::shared_ptr<JournalStore> store, std::string unavailable,
                         std::shared_ptr<SpentTokens> spent) {
  promise_.set_value(Opened{std::move(store), std::move(unavailable), std::move(spent)});
  hook_due_ = false;
}

std::shared_ptr<CallJournal> CallJournal::opening(std::function<Opened()> open) {
  auto journal = std::shared_ptr<CallJournal>(new CallJournal(PrivateTag{}));
  CallJournal* self = journal.get();
  journal->opener_ = std::thread([self, open = std::move(open)] {
    self->promise_.set_value(open());
    self->opened_now();
  });
  return journal;
}

CallJournal::~CallJournal() {
  if (opener_.joinable()) opener_.join();
}

bool CallJournal::ready() const {
  return opened_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

Result<bool> CallJournal::spend(const std::string& token,
                                std::chrono::system_clock::time_point expires) const {
  const Opened& open = opened();
  if (open.spent) return open.spent->spend(token, expires);
  // Fail closed: without its store, toolmux cannot tell whether another
  // process used the confirmation already.
  if (!open.unavailable.empty()) return Status::unavailable(open.unavailable);
  return memory_->spend(token, expires);
}

void CallJournal::opened_now() {
  // After the value is set: the hook may read store() without waiting.
  std::lock_guard lock(hook_mutex_);
  hook_due_ = false;
  if (hook_) hook_();
}

void CallJournal::on_ready(std::function<void()> hook) const {
  std::unique_lock lock(hook_mutex_);
  hook_ = std::move(hook);
  if (hook_due_ || !hook_) return;
  // Already open: the opening thread has gone past its hook, so run it here.
  std::function<void()> run = hook_;
  lock.unlock();
  run();
}

}  // namespace toolmux
