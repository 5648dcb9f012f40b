#include "transports/closure_watch.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

namespace toolmux {

namespace {
// The epoll tag of the wake-up eventfd; watches count from 1.
constexpr std::uint64_t kWake = 0;
}  // namespace

struct ClosureWatch::State {
  std::mutex mutex;
  std::condition_variable finished;  // a running on_close returned
  int epoll_fd = -1;
  int wake_fd = -1;
  bool stopping = false;
  std::thread thread;
  std::thread::id thread_id;
  struct Entry {
    int fd;
    std::function<void()> on_close;
  };
  std::unordered_map<std::uint64_t, Entry> entries;
  std::uint64_t next_id = 1;
  std::uint64_t running = 0;  // the watch whose on_close runs now

  ~State() {
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  // Under `mutex`. False when the thread or its descriptors cannot be had.
  bool start() {
    if (thread.joinable()) return true;
    if (stopping) return false;
    if (epoll_fd < 0) epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (wake_fd < 0) wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (epoll_fd < 0 || wake_fd < 0) return false;
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.u64 = kWake;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &wake) != 0 && errno != EEXIST) return false;
    try {
      thread = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      return false;
    }
    thread_id = thread.get_id();
    return true;
  }

  void run() {
    std::array<epoll_event, 64> events{};
    for (;;) {
      const int n = ::epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return;
      for (int i = 0; i < n; ++i) {
        const std::uint64_t id = events[static_cast<std::size_t>(i)].data.u64;
        std::function<void()> on_close;
        {
          std::lock_guard lock(mutex);
          if (stopping) return;
          if (id == kWake) continue;
          auto it = entries.find(id);
          if (it == entries.end()) continue;  // unwatched since epoll_wait returned
          ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, it->second.fd, nullptr);
          on_close = std::move(it->second.on_close);
          entries.erase(it);
          running = id;
        }
        on_close();
        {
          std::lock_guard lock(mutex);
          running = 0;
        }
        finished.notify_all();
      }
    }
  }

  void unwatch(std::uint64_t id) {
    std::unique_lock lock(mutex);
    auto it = entries.find(id);
    if (it != entries.end()) {
      ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, it->second.fd, nullptr);
      entries.erase(it);
      return;
    }
    if (std::this_thread::get_id() == thread_id) return;  // from its own on_close
    finished.wait(lock, [&] { return running != id || stopping; });
  }
};

ClosureWatch::Watch::Watch(Watch&& other) noexcept
    : state_(std::move(other.state_)), id_(other.id_) {}

ClosureWatch::Watch& ClosureWatch::Watch::operator=(Watch&& other) noexcept {
  if (this != &other) {
    reset();
    state_ = std::move(other.state_);
    id_ = other.id_;
  }
  return *this;
}

void ClosureWatch::Watch::reset() {
  if (state_) state_->unwatch(id_);
  state_.reset();
}

ClosureWatch::ClosureWatch() : state_(std::make_shared<State>()) {}

ClosureWatch::~ClosureWatch() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    if (state_->wake_fd >= 0) {
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t written = ::write(state_->wake_fd, &one, sizeof one);
    }
  }
  state_->finished.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
}

ClosureWatch::Watch ClosureWatch::watch(int fd, std::function<void()> on_close) {
  std::lock_guard lock(state_->mutex);
  if (!state_->start()) return {};
  const std::uint64_t id = state_->next_id++;
  state_->entries.emplace(id, State::Entry{fd, std::move(on_close)});
  epoll_event event{};
  // Level-triggered: a peer gone before the watch began is told at once.
  event.events = EPOLLRDHUP;
  event.data.u64 = id;
  if (::epoll_ctl(state_->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) {
    state_->entries.erase(id);
    return {};
  }
  return {state_, id};
}

}  // namespace toolmux
