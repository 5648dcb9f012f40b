#include "src/store/spooled_journal_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "src/store/journal_records.h"

namespace toolmux {

namespace {

using nlohmann::json;

// Spool files per base: as many processes as may share a data directory.
constexpr int kMaxSpoolFiles = 16;
// The longest line read back from a spool (a result is at most
// kMaxReplayResultBytes; its record, intent and audit record add a little).
constexpr std::size_t kMaxLineBytes = kMaxReplayResultBytes * 2 + (std::size_t{1} << 20);

// A failure worth trying again: the store could not be reached or failed a
// write. A refusal (no intent, an outcome already there) is final.
bool try_again(const Status& status) { return status.is_unavailable() || status.is_io_error(); }

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string spool_path(const std::filesystem::path& base, int k) {
  return base.string() + "-" + std::to_string(k) + ".spool";
}

// Opens `path` (creating it when `create`) and locks it for this process: -1
// when it is missing, is not a regular file, or another process holds it.
int open_locked(const std::string& path, bool create) {
  const int fd = ::open(
      path.c_str(),
      O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (create ? O_CREAT : 0), 0600);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The lines of the file `fd` holds, at most `limit` bytes of them; a last
// line without its newline (a write cut short) is left out.
std::vector<std::string> read_lines(int fd, std::size_t limit) {
  std::vector<std::string> lines;
  std::string text;
  char buffer[65536];
  ::lseek(fd, 0, SEEK_SET);
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > limit) break;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    if (end - start <= kMaxLineBytes) lines.emplace_back(text, start, end - start);
    start = end + 1;
  }
  return lines;
}

}  // namespace

// A kept record as a line of the spool file.
std::string SpooledJournalStore::spool_line(const Kept& item) {
  json line = {{"id", item.id}, {"kind", item.outcome ? "outcome" : "audit"}};
  if (item.outcome) {
    JournalEntry entry;
    entry.intent = item.intent;
    line["intent"] = entry_json(entry);
    line["outcome"] = item.outcome_name;
    line["result"] = item.result;
  }
  line["audit"] = audit_json(item.record);
  return journal_json_text(line) + "\n";
}

SpooledJournalStore::SpooledJournalStore(std::unique_ptr<JournalStore> store, SpoolOptions options)
    : store_(std::move(store)), options_(std::move(options)) {}

Result<std::unique_ptr<SpooledJournalStore>> SpooledJournalStore::open(
    std::unique_ptr<JournalStore> store, SpoolOptions options) {
  std::unique_ptr<SpooledJournalStore> spooled(
      new SpooledJournalStore(std::move(store), std::move(options)));
  if (Status opened = spooled->open_spools(); !opened.ok()) return opened;
  // What an earlier process kept goes to the store before anything else;
  // a call it wrote the outcome of was not interrupted after all.
  std::set<std::string> written;
  {
    std::unique_lock lock(spooled->mutex_);
    for (const Kept& item : spooled->kept_) {
      if (item.outcome) written.insert(item.intent.call_id);
    }
  }
  spooled->write_kept();
  {
    std::unique_lock lock(spooled->mutex_);
    for (const Kept& item : spooled->kept_) written.erase(item.intent.call_id);
  }
  for (const JournalEntry& entry : spooled->store_->interrupted()) {
    if (!written.count(entry.intent.call_id)) spooled->interrupted_.push_back(entry);
  }
  spooled->thread_ = std::thread([raw = spooled.get()] { raw->run(); });
  return spooled;
}

SpooledJournalStore::~SpooledJournalStore() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  write_kept();  // last chance; what is left stays in the spool file
  std::lock_guard lock(mutex_);
  if (spool_.fd >= 0) ::close(spool_.fd);
}

Status SpooledJournalStore::open_spools() {
  std::error_code ec;
  std::filesystem::create_directories(options_.base.parent_path(), ec);
  std::lock_guard lock(mutex_);
  std::vector<SpoolFile> others;
  for (int k = 0; k < kMaxSpoolFiles; ++k) {
    const std::string path = spool_path(options_.base, k);
    const int fd = open_locked(path, spool_.fd < 0);
    if (fd < 0) continue;
    if (spool_.fd < 0) {
      spool_ = {fd, path, 0};
    } else {
      others.push_back({fd, path, 0});
    }
  }
  if (spool_.fd < 0) {
    return Status::io_error("could not open a spool file for the journal at " +
                            spool_path(options_.base, 0) + " (or the next " +
                            std::to_string(kMaxSpoolFiles - 1) +
                            "): each is missing, not a regular file, or held by another process");
  }
  // This process's own spool (left by the process before it), then the
  // others it could lock (their processes are gone): each record moved into
  // its own, synced, before their files are emptied.
  const auto load = [this](int fd, bool own) {
    std::map<std::uint64_t, Kept> found;
    std::uint64_t max_id = 0;
    for (const std::string& line : read_lines(fd, options_.max_bytes * 2)) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_object()) continue;  // damaged: skipped
      if (auto done = j.find("done"); done != j.end() && done->is_number_unsigned()) {
        found.erase(done->get<std::uint64_t>());
        continue;
      }
      Kept item;
      item.id = j.value("id", std::uint64_t{0});
      auto record = audit_from_json(j.value("audit", json()));
      if (item.id == 0 || !record) continue;
      item.record = std::move(*record);
      if (j.value("kind", "") == "outcome") {
        auto entry = entry_from_json(j.value("intent", json()));
        if (!entry || entry->intent.call_id.empty()) continue;
        item.outcome = true;
        item.intent = std::move(entry->intent);
        item.outcome_name = j.value("outcome", "");
        item.result = j.value("result", json());
      }
      max_id = std::max(max_id, item.id);
      found[item.id] = std::move(item);
    }
    if (own) next_id_ = max_id + 1;
    return found;
  };
  for (auto& [id, item] : load(spool_.fd, true)) {
    kept_.push_back(std::move(item));
  }
  struct stat st {};
  spool_.bytes = ::fstat(spool_.fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  bool moved = false;
  for (SpoolFile& other : others) {
    for (auto& [id, item] : load(other.fd, false)) {
      item.id = next_id_++;
      const std::string text = spool_line(item);
      if (!write_all(spool_.fd, text)) break;
      spool_.bytes += text.size();
      kept_.push_back(std::move(item));
      moved = true;
    }
  }
  if (moved) ::fdatasync(spool_.fd);
  for (SpoolFile& other : others) {
    if (::ftruncate(other.fd, 0) == 0) ::fdatasync(other.fd);
    ::close(other.fd);
  }
  return Status::ok_status();
}

bool SpooledJournalStore::keep(Kept item, bool sync) {
  std::unique_lock lock(mutex_);
  item.id = next_id_++;
  const std::string text = spool_line(item);
  if (kept_.size() >= options_.max_items || spool_.bytes + text.size() > options_.max_bytes) {
    log(LogLevel::error, "journal_record_dropped",
        {{"call_id", item.record.call_id},
         {"reason", "the spool of what the store could not take is full (" +
                        std::to_string(kept_.size()) + " records, " + std::to_string(spool_.bytes) +
                        " bytes)"}});
    return false;
  }
  if (!write_all(spool_.fd, text) || (sync && ::fdatasync(spool_.fd) != 0)) {
    // A line cut short would spoil the next one: cut it off.
    (void)::ftruncate(spool_.fd, static_cast<off_t>(spool_.bytes));
    return false;
  }
  spool_.bytes += text.size();
  if (!keeping_logged_) {
    keeping_logged_ = true;
    log(LogLevel::warning, "journal_keeping",
        {{"where", store_->where()},
         {"spool", spool_.path.string()},
         {"effect",
          "outcomes and audit records the store cannot take are kept here and written when it "
          "is back; a repeat of a kept call's idempotency key is refused until then"}});
  }
  kept_.push_back(std::move(item));
  return true;
}

Status SpooledJournalStore::begin(const JournalIntent& intent) {
  Status begun = store_->begin(intent);
  if (begun.ok()) {
    std::lock_guard lock(mutex_);
    running_[intent.call_id] = intent;
  }
  return begun;
}

Status SpooledJournalStore::finish(const std::string& call_id, const std::string& outcome,
                                   const nlohmann::json& result, const AuditRecord& audit) {
  Status finished = store_->finish(call_id, outcome, result, audit);
  std::optional<JournalIntent> intent;
  {
    std::lock_guard lock(mutex_);
    if (auto it = running_.find(call_id); it != running_.end()) {
      intent = std::move(it->second);
      running_.erase(it);
    }
  }
  if (finished.ok() || !try_again(finished) || !intent) return finished;
  Kept item;
  item.outcome = true;
  item.intent = std::move(*intent);
  item.outcome_name = outcome;
  // A result too large to replay is not kept either: its repeat is refused.
  if (!result.is_null() && journal_json_text(result).size() <= kMaxReplayResultBytes) {
    item.result = result;
  }
  item.record = audit;
  if (item.record.call_id.empty()) item.record.call_id = call_id;
  if (item.record.time.time_since_epoch().count() == 0) {
    item.record.time = std::chrono::system_clock::now();
  }
  return keep(std::move(item), true) ? Status::ok_status() : finished;
}

Status SpooledJournalStore::finish_in(LentTransaction& transaction, const std::string& call_id,
                                      const std::string& outcome, const nlohmann::json& result,
                                      const AuditRecord& audit) {
  Status finished = store_->finish_in(transaction, call_id, outcome, result, audit);
  if (finished.ok()) {
    std::lock_guard lock(mutex_);
    running_.erase(call_id);
  }
  return finished;
}

Status SpooledJournalStore::audit(const AuditRecord& record) {
  Status audited = store_->audit(record);
  if (audited.ok() || !try_again(audited)) return audited;
  Kept item;
  item.record = record;
  if (item.record.time.time_since_epoch().count() == 0) {
    item.record.time = std::chrono::system_clock::now();
  }
  // Not synced, as RocksDB does not sync a record without an intent.
  return keep(std::move(item), false) ? Status::ok_status() : audited;
}

std::optional<JournalEntry> SpooledJournalStore::find_by_key(const std::string& principal,
                                                             const std::string& key) const {
  const auto kept_entry = [&]() -> std::optional<JournalEntry> {
    std::lock_guard lock(mutex_);
    for (const Kept& item : kept_) {
      if (item.outcome && item.intent.principal == principal &&
          item.intent.idempotency_key == key) {
        JournalEntry entry;
        entry.intent = item.intent;
        entry.outcome_pending = true;
        return entry;
      }
    }
    return std::nullopt;
  };
  if (kept_entry()) {
    // Its outcome goes to the store before the repeat is answered.
    write_kept();
    if (auto still = kept_entry()) return still;
  }
  return store_->find_by_key(principal, key);
}

std::vector<AuditRecord> SpooledJournalStore::latest_audit(std::size_t limit) const {
  return store_->latest_audit(limit);
}

Status SpooledJournalStore::writable() const {
  std::lock_guard lock(mutex_);
  if (kept_.size() < options_.max_items && spool_.bytes < options_.max_bytes) {
    return Status::ok_status();
  }
  return Status::resource_exhausted("the journal's store (" + store_->where() +
                                    ") cannot be written, and the " + std::to_string(kept_.size()) +
                                    " records kept for it meanwhile fill its spool (" +
                                    spool_.path.string() + ")");
}

std::size_t SpooledJournalStore::kept() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

Status SpooledJournalStore::write_one(const Kept& item) const {
  if (!item.outcome) return store_->audit(item.record);
  Status finished =
      store_->finish(item.intent.call_id, item.outcome_name, item.result, item.record);
  // Written before (a spool whose last lines were lost), or refused for good.
  if (finished.is_invalid_argument()) return Status::ok_status();
  return finished;
}

std::size_t SpooledJournalStore::write_kept() const {
  std::lock_guard writer(writer_mutex_);
  std::size_t written = 0;
  std::size_t index = 0;  // the first record not tried this round
  for (;;) {
    Kept item;
    {
      std::lock_guard lock(mutex_);
      if (index >= kept_.size()) break;
      item = kept_[index];
    }
    Status status = write_one(item);
    if (try_again(status)) {
      if (status.is_unavailable()) break;  // the store is away: later
      ++index;                             // this one failed: the next may not
      continue;
    }
    if (!status.ok()) {
      log(LogLevel::error, "journal_record_dropped",
          {{"call_id", item.record.call_id}, {"reason", status.message()}});
    }
    std::lock_guard lock(mutex_);
    // Only this writer removes records, so `index` still names `item`.
    kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(index));
    const std::string done = journal_json_text(json{{"done", item.id}}) + "\n";
    if (write_all(spool_.fd, done)) spool_.bytes += done.size();
    ++written;
  }
  std::lock_guard lock(mutex_);
  if (written > 0) {
    if (kept_.empty() && ::ftruncate(spool_.fd, 0) == 0) spool_.bytes = 0;
    ::fdatasync(spool_.fd);
  }
  if (kept_.empty() && keeping_logged_) {
    keeping_logged_ = false;
    log(LogLevel::info, "journal_kept_written",
        {{"where", store_->where()}, {"effect", "every kept record is in the store now"}});
  }
  return kept_.size();
}

void SpooledJournalStore::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kept_.empty() ? options_.keep_alive : options_.retry);
    if (stopping_) break;
    const bool any = !kept_.empty();
    lock.unlock();
    (void)store_->keep_alive();
    if (any) write_kept();
    lock.lock();
  }
}

void SpooledJournalStore::log(LogLevel level, const std::string& event,
                              const nlohmann::json& fields) const {
  if (options_.logger) options_.logger->write(level, event, fields);
}

}  // namespace toolmux
