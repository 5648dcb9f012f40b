#include "src/app/catalog_host.h"

#include <pthread.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <utility>

#include "catalog/skills.h"
#include "src/app/write_freeze.h"

namespace toolmux {
namespace {

constexpr std::chrono::milliseconds kFilePoll{1000};
// Requests this close together are served by one rebuild.
constexpr std::chrono::milliseconds kSettle{100};

sigset_t reload_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  return set;
}

bool reload_signal_blocked() {
  sigset_t current;
  sigemptyset(&current);
  pthread_sigmask(SIG_BLOCK, nullptr, &current);
  return sigismember(&current, SIGHUP) == 1;
}

}  // namespace

void block_reload_signal() {
  const sigset_t set = reload_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

CatalogHost::CatalogHost(ServeOptions options, std::vector<NativeTool> native_tools,
                         std::shared_ptr<LazyResultStore> results, Logger& logger,
                         const std::filesystem::path& data_dir, NativeProviders native_providers)
    : options_(std::move(options)),
      native_tools_(std::move(native_tools)),
      native_providers_(std::move(native_providers)),
      results_(std::move(results)),
      logger_(logger),
      data_dir_(data_dir) {
  Upstream::Hooks hooks;
  hooks.on_tools_changed = [this](const std::string& upstream) {
    {
      std::lock_guard lock(mutex_);
      rebuild_wanted_ = true;
      if (announce_ && changed_upstreams_.size() < 256 &&
          std::find(changed_upstreams_.begin(), changed_upstreams_.end(), upstream) ==
              changed_upstreams_.end()) {
        changed_upstreams_.push_back(upstream);
      }
    }
    wake_.notify_all();
  };
  // Set before start() (set_tools_cache), which makes the first upstreams.
  hooks.read_tools = [this](const std::string& upstream) {
    return read_tools_ ? read_tools_(upstream) : std::nullopt;
  };
  hooks.write_tools = [this](const std::string& upstream,
                             const std::vector<nlohmann::json>& tools) {
    if (write_tools_) write_tools_(upstream, tools);
  };
  // A login is read at each start of its upstream (one made by `toolmux
  // login` meanwhile counts) and written when it is refreshed; its text is
  // never logged.
  hooks.read_login = [this](const std::string& upstream) -> std::string {
    if (!logins_) return {};
    auto read = logins_->read(upstream);
    if (read.ok()) return read->value_or("");
    logger_.write(LogLevel::warning, "upstream_login_unread",
                  {{"upstream", upstream}, {"reason", read.message()}});
    return {};
  };
  hooks.write_login = [this](const std::string& upstream, const std::string& login) {
    if (!logins_) return;
    if (const Status written = logins_->write(upstream, login); !written.ok()) {
      logger_.write(LogLevel::warning, "upstream_login_not_kept",
                    {{"upstream", upstream}, {"reason", written.message()}});
    }
  };
  hooks.on_notification = [this](const std::string& upstream, const std::string& method,
                                 const nlohmann::json& params) {
    // Resources and prompts of the catalog serving now.
    auto catalog = current();
    if (!catalog) return;
    auto features = catalog->upstream_features.find(upstream);
    if (features != catalog->upstream_features.end()) features->second.notify(method, params);
  };
  upstreams_ = std::make_unique<UpstreamSet>(
      logger_, data_dir.empty() ? data_dir : data_dir / "upstreams", std::move(hooks));
}

CatalogHost::~CatalogHost() { stop(); }

std::optional<std::string> CatalogHost::file_signature() const {
  if (options_.catalog_file.empty()) return std::nullopt;
  struct stat info {};
  if (::stat(options_.catalog_file.c_str(), &info) != 0) return std::string("missing");
  return std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) + ":" +
         std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec) +
         skills_signature();
}

std::string CatalogHost::skills_signature() const {
  // The skills of the catalog serving now: an edit of one of their files
  // reloads the catalog as an edit of the file does.
  const std::shared_ptr<const Catalog> now = current();
  if (!now || !now->skills) return "";
  return " skills:" + SkillSet::fingerprint(now->skills->roots());
}

ServeOptions CatalogHost::build_options() const {
  ServeOptions options = options_;
  std::lock_guard lock(mutex_);
  options.write_freeze = freeze_;
  return options;
}

CatalogHost::FreezeReading CatalogHost::read_freeze_file() const {
  FreezeReading reading;
  const std::string path = (data_dir_ / kWriteFreezeFile).string();
  reading.where = path;
  reading.reason = read_write_freeze(data_dir_);
  if (reading.reason) {
    // When `toolmux freeze on` wrote the file, which a restart keeps.
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) {
      reading.since = std::chrono::system_clock::time_point(
          std::chrono::duration_cast<std::chrono::system_clock::duration>(
              std::chrono::seconds(info.st_mtim.tv_sec) +
              std::chrono::nanoseconds(info.st_mtim.tv_nsec)));
    }
  }
  return reading;
}

bool CatalogHost::look_at_freeze() {
  if (!freeze_source_ && data_dir_.empty()) return false;
  FreezeReading reading = freeze_source_ ? freeze_source_() : read_freeze_file();
  if (!reading.known) return false;
  std::lock_guard lock(mutex_);
  if (reading.reason == freeze_) return false;
  const bool on = reading.reason.has_value();
  logger_.write(on ? LogLevel::warning : LogLevel::info,
                on ? "write_freeze_on" : "write_freeze_off",
                {{"file", reading.where}, {"reason", reading.reason.value_or("")}});
  freeze_ = std::move(reading.reason);
  freeze_since_.reset();
  if (on) freeze_since_ = reading.since.value_or(std::chrono::system_clock::now());
  return true;
}

std::optional<std::chrono::system_clock::time_point> CatalogHost::freeze_since() const {
  std::lock_guard lock(mutex_);
  return freeze_since_;
}

std::vector<std::shared_ptr<Upstream>> CatalogHost::upstreams() const { return upstreams_->list(); }

std::shared_ptr<const Catalog> CatalogHost::start(Problems& problems) {
  look_at_freeze();
  std::optional<CatalogLoad> load;
  if (!options_.catalog_file.empty()) {
    signature_ = file_signature();
    load = load_catalog_file(options_.catalog_file);
    if (!load->problems.empty()) {
      problems = load->problems;
      return nullptr;
    }
    if (!load->catalog.upstreams.empty()) {
      // Checked whole before any upstream starts (which can take long), as
      // `toolmux check` does; without upstreams, the build below is the check.
      if (!build_catalog(build_options(), results_, problems, native_tools_, nullptr, nullptr,
                         &*load)) {
        return nullptr;
      }
      upstreams_->update(load->catalog.upstreams);
    }
  }
  {
    std::lock_guard lock(mutex_);
    rebuild_wanted_ = false;  // what the upstreams listed while starting is in the build below
  }
  auto catalog =
      build_catalog(build_options(), results_, problems, native_tools_, upstreams_.get(), &logger_,
                    load ? &*load : nullptr, native_providers_, learning(load ? &*load : nullptr));
  if (!catalog) return nullptr;
  {
    std::lock_guard lock(mutex_);
    current_ = catalog;
    loaded_ = std::move(load);
  }
  // Taken before the file was read; its skills are known now.
  if (signature_) *signature_ += skills_signature();
  worker_ = std::thread([this] { run(); });
  if (reload_signal_blocked()) {
    signal_taker_ = std::thread([this] {
      const sigset_t set = reload_signals();
      while (true) {
        int signal = 0;
        if (sigwait(&set, &signal) != 0 || signal_taker_stop_.load()) return;
        logger_.write(LogLevel::info, "catalog_reload_signal", {{"signal", "SIGHUP"}});
        request_reload();
      }
    });
  }
  return catalog;
}

std::shared_ptr<const Catalog> CatalogHost::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

int CatalogHost::add_listener(Listener listener) {
  std::lock_guard lock(listeners_mutex_);
  listeners_.emplace_back(next_listener_, std::move(listener));
  return next_listener_++;
}

void CatalogHost::remove_listener(int id) {
  std::lock_guard lock(listeners_mutex_);
  std::erase_if(listeners_, [id](const auto& entry) { return entry.first == id; });
}

void CatalogHost::request_reload() {
  {
    std::lock_guard lock(mutex_);
    reload_wanted_ = true;
    local_reload_wanted_ = true;
  }
  wake_.notify_all();
}

void CatalogHost::set_freeze_source(FreezeSource source) { freeze_source_ = std::move(source); }

void CatalogHost::set_tools_cache(ReadTools read, WriteTools write) {
  read_tools_ = std::move(read);
  write_tools_ = std::move(write);
}

void CatalogHost::set_logins(std::shared_ptr<UpstreamLogins> logins) {
  logins_ = std::move(logins);
}

void CatalogHost::set_search_memory_keeper(MemoryKeeper keeper) {
  memory_keeper_factory_ = std::move(keeper);
}

void CatalogHost::set_announce(Announce announce) { announce_ = std::move(announce); }

void CatalogHost::take_peer_event(std::string_view kind, const nlohmann::json& data) {
  const bool resync = kind == "resync";
  std::vector<std::shared_ptr<Upstream>> relist;
  if (kind == "list_changed" && data.contains("upstream") && data["upstream"].is_string()) {
    if (auto upstream = upstreams_->find(data["upstream"].get<std::string>())) {
      relist.push_back(std::move(upstream));
    }
  } else if (resync) {
    relist = upstreams_->list();
  }
  for (const auto& upstream : relist) upstream->request_relist();
  {
    std::lock_guard lock(mutex_);
    if (kind == "reload" || resync) reload_wanted_ = true;
    if (kind == "freeze" || resync) freeze_look_wanted_ = true;
  }
  wake_.notify_all();
}

void CatalogHost::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (signal_taker_.joinable()) {
    signal_taker_stop_.store(true);
    pthread_kill(signal_taker_.native_handle(), SIGHUP);
    signal_taker_.join();
  }
  upstreams_->stop();
  // The calls that learned have ended: the memory is saved (when it changed).
  std::lock_guard lock(learning_mutex_);
  memory_keeper_.reset();
}

std::shared_ptr<SearchClicks> CatalogHost::learning(const CatalogLoad* load) {
  if (load && !load->catalog.search_learn) return nullptr;
  std::lock_guard lock(learning_mutex_);
  if (!clicks_) {
    auto memory = std::make_shared<SearchMemory>();
    if (memory_keeper_factory_)
      memory_keeper_ = memory_keeper_factory_(memory);
    else if (!data_dir_.empty())
      memory_keeper_ = std::make_unique<SearchMemoryFile>(data_dir_, memory, logger_);
    logger_.write(LogLevel::info, "search_learning",
                  {{"file", memory_keeper_ ? memory_keeper_->where() : std::string()},
                   {"terms", memory->term_count()}});
    clicks_ = std::make_shared<SearchClicks>(std::move(memory));
  }
  return clicks_;
}

void CatalogHost::run() {
  std::unique_lock lock(mutex_);
  auto next_poll = std::chrono::steady_clock::now() + kFilePoll;
  while (!stopping_) {
    wake_.wait_until(lock, next_poll, [this] {
      return stopping_ || reload_wanted_ || rebuild_wanted_ || freeze_look_wanted_;
    });
    if (stopping_) break;
    if (freeze_look_wanted_) {
      freeze_look_wanted_ = false;
      lock.unlock();
      const bool freeze_changed = look_at_freeze();
      lock.lock();
      if (freeze_changed) rebuild_wanted_ = true;
    }
    if (std::chrono::steady_clock::now() >= next_poll) {
      next_poll = std::chrono::steady_clock::now() + kFilePoll;
      lock.unlock();
      const auto signature = file_signature();
      lock.lock();
      if (signature != signature_) {
        signature_ = signature;
        logger_.write(LogLevel::info, "catalog_file_changed",
                      {{"file", options_.catalog_file.string()}});
        reload_wanted_ = true;
        local_reload_wanted_ = true;
      }
      lock.unlock();
      const bool freeze_changed = look_at_freeze();
      lock.lock();
      if (freeze_changed) rebuild_wanted_ = true;
    }
    if (!reload_wanted_ && !rebuild_wanted_) continue;
    // Let a burst settle (an editor writing, several upstreams restarting).
    wake_.wait_for(lock, kSettle, [this] { return stopping_; });
    if (stopping_) break;
    const bool reload_now = reload_wanted_;
    const bool announce_reload = local_reload_wanted_;
    reload_wanted_ = false;
    local_reload_wanted_ = false;
    rebuild_wanted_ = false;
    const std::vector<std::string> changed = std::exchange(changed_upstreams_, {});
    lock.unlock();
    const bool reloaded = reload_now ? reload() : (rebuild(), false);
    // Told after the catalog serves the change, so that an instance told
    // and asking back finds it.
    if (announce_) {
      if (reloaded && announce_reload) announce_("reload", nlohmann::json::object());
      for (const std::string& upstream : changed) {
        announce_("list_changed", {{"upstream", upstream}});
      }
    }
    lock.lock();
  }
}

bool CatalogHost::reload() {
  if (options_.catalog_file.empty()) return false;
  CatalogLoad load = load_catalog_file(options_.catalog_file);
  Problems problems = load.problems;
  // Refused with the `toolmux check` report; what served before goes on.
  auto reject = [&] {
    logger_.write(LogLevel::error, "catalog_rejected",
                  {{"file", options_.catalog_file.string()},
                   {"problems", problems.size()},
                   {"report", format_problems(problems)},
                   {"serving", "the catalog loaded before"}});
  };
  if (problems.empty()) {
    build_catalog(build_options(), results_, problems, native_tools_, nullptr, nullptr, &load);
  }
  if (!problems.empty()) {
    reject();
    return false;
  }
  upstreams_->update(load.catalog.upstreams);
  {
    // The upstreams that (re)started listed their tools already: the build
    // below has them.
    std::lock_guard lock(mutex_);
    rebuild_wanted_ = false;
  }
  auto catalog = build_catalog(build_options(), results_, problems, native_tools_, upstreams_.get(),
                               &logger_, &load, native_providers_, learning(&load));
  if (!catalog) {
    reject();
    return false;
  }
  {
    std::lock_guard lock(mutex_);
    loaded_ = std::move(load);
  }
  logger_.write(
      LogLevel::info, "catalog_reloaded",
      {{"file", options_.catalog_file.string()}, {"tools", catalog->registry->tools().size()}});
  replace(catalog);
  return true;
}

void CatalogHost::rebuild() {
  std::optional<CatalogLoad> load;
  {
    std::lock_guard lock(mutex_);
    load = loaded_;
  }
  Problems problems;
  auto catalog =
      build_catalog(build_options(), results_, problems, native_tools_, upstreams_.get(), &logger_,
                    load ? &*load : nullptr, native_providers_, learning(load ? &*load : nullptr));
  if (!catalog) {
    // The same file built before: only an upstream's tools can be at fault.
    logger_.write(LogLevel::error, "catalog_rebuild_failed",
                  {{"problems", problems.size()}, {"report", format_problems(problems)}});
    return;
  }
  logger_.write(LogLevel::info, "catalog_rebuilt",
                {{"tools", catalog->registry->tools().size()},
                 {"upstream_tools", catalog->upstream_tool_count}});
  replace(catalog);
}

void CatalogHost::replace(const std::shared_ptr<const Catalog>& catalog) {
  {
    std::lock_guard lock(mutex_);
    current_ = catalog;
  }
  std::lock_guard lock(listeners_mutex_);
  for (const auto& [id, listener] : listeners_) listener(catalog);
}

}  // namespace toolmux
