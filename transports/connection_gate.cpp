#include "transports/connection_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/base/jsonrpc.h"

namespace toolmux {

using Clock = GatedConnection::Clock;

struct GatedConnection::Tally {
  std::mutex mutex;
  std::size_t open = 0;
  std::unordered_map<std::string, std::size_t> per_client;
};

namespace {

// Small reads (cpp-httplib reads a head a byte at a time) are served from a
// read-ahead of this size.
constexpr std::size_t kReadAhead = 4096;

int poll_ms(Clock::duration d) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<decltype(ms)>(ms, 0, 60'000));
}

// The address the limits count a client by: IPv4 (also IPv4-mapped IPv6) as
// is, other IPv6 by its /64, which one client usually holds whole.
std::string client_of(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return "unknown";
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    return ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text) ? text : "unknown";
  }
  if (address.ss_family == AF_INET6) {
    in6_addr a = reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      return ::inet_ntop(AF_INET, &a.s6_addr[12], text, sizeof text) ? text : "unknown";
    }
    if (IN6_IS_ADDR_LOOPBACK(&a)) return "::1";
    std::fill(std::begin(a.s6_addr) + 8, std::end(a.s6_addr), 0);
    return ::inet_ntop(AF_INET6, &a, text, sizeof text) ? std::string(text) + "/64" : "unknown";
  }
  return "unknown";
}

// Writes a whole small response without waiting (a refusal: if the socket
// cannot take it at once, the client was not reading anyway).
void send_refusal(int fd, int status, std::string_view phrase, std::string_view message,
                  bool retry_after) {
  const std::string body = jsonrpc::make_error(nullptr, -32000, message).dump();
  std::string text = "HTTP/1.1 " + std::to_string(status) + " " + std::string(phrase) + "\r\n";
  if (retry_after) text += "Retry-After: 1\r\n";
  text += "Content-Type: application/json\r\nConnection: close\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body;
  [[maybe_unused]] const ssize_t sent =
      ::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

// Closes a socket just refused, after reading what the client already sent:
// closing with unread bytes would reset the connection, and the client could
// lose the refusal.
void close_refused(int fd) {
  char buffer[4096];
  for (int i = 0; i < 16 && ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT) > 0; ++i) {
  }
  ::close(fd);
}

std::string seconds_text(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}

}  // namespace

// ---- GatedConnection ----

GatedConnection::GatedConnection(int fd, std::string client, std::shared_ptr<Tally> tally)
    : fd_(fd), client_(std::move(client)), tally_(std::move(tally)) {}

GatedConnection::~GatedConnection() {
  ::close(fd_);
  std::lock_guard lock(tally_->mutex);
  --tally_->open;
  auto it = tally_->per_client.find(client_);
  if (it != tally_->per_client.end() && --it->second == 0) tally_->per_client.erase(it);
}

ssize_t GatedConnection::read_more(char* out, std::size_t size, Clock::time_point deadline) {
  timed_out_ = false;
  if (ahead_pos_ < ahead_.size()) {  // size 0
    return 0;
  }
  ahead_.clear();
  ahead_pos_ = 0;
  searched_ = 0;
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline) {
      timed_out_ = true;
      return -1;
    }
    pollfd p{fd_, POLLIN, 0};
    // Nothing shorter than the deadline ends the wait: a client may pause
    // anywhere within it (poll_ms caps one wait at a minute; the loop goes on).
    const int ready = ::poll(&p, 1, poll_ms(deadline - now));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return -1;
    if (ready == 0) continue;  // the deadline, checked above, or the cap
    ssize_t n = 0;
    if (size < kReadAhead) {
      ahead_.resize(kReadAhead);
      n = ::recv(fd_, ahead_.data(), kReadAhead, MSG_DONTWAIT);
      ahead_.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
      if (n > 0) {
        ahead_pos_ = std::min(size, ahead_.size());
        std::memcpy(out, ahead_.data(), ahead_pos_);
        n = static_cast<ssize_t>(ahead_pos_);
      }
    } else {
      n = ::recv(fd_, out, size, MSG_DONTWAIT);
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n > 0) consumed_ += static_cast<std::uint64_t>(n);
    return n;
  }
}

ssize_t GatedConnection::write(const char* data, std::size_t size,
                               std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    pollfd p{fd_, POLLOUT, 0};
    const int ready = ::poll(&p, 1, poll_ms(deadline - Clock::now()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return -1;
    const ssize_t n = ::send(fd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    return n;
  }
}

bool GatedConnection::writable(std::chrono::milliseconds timeout) const {
  pollfd out{fd_, POLLOUT, 0};
  if (::poll(&out, 1, poll_ms(timeout)) <= 0) return false;
  // Readable with nothing to read: the client has closed.
  pollfd in{fd_, POLLIN, 0};
  if (::poll(&in, 1, 0) <= 0) return true;
  char byte = 0;
  const ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
}

bool GatedConnection::readable(std::chrono::milliseconds timeout) const {
  if (ahead_pos_ < ahead_.size()) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, poll_ms(timeout)) > 0;
}

std::size_t GatedConnection::head_end() const {
  // The blank line ends the head: "\r\n" right after a line's "\n" (what
  // cpp-httplib reads up to). What was searched before is not searched again:
  // a head sent a byte at a time costs its length, not its length squared.
  constexpr std::string_view kBlankLine = "\n\r\n";
  const std::size_t from = std::max(ahead_pos_, searched_);
  const std::size_t at = std::string_view(ahead_).find(kBlankLine, from);
  if (at != std::string_view::npos) return at + kBlankLine.size();
  searched_ = std::max(from, ahead_.size() - std::min(ahead_.size(), kBlankLine.size() - 1));
  return std::string::npos;
}

bool GatedConnection::has_complete_head() const { return head_end() != std::string::npos; }

bool GatedConnection::await_head(std::chrono::milliseconds wait, std::size_t max_head_bytes) {
  drop_consumed();
  const auto deadline = Clock::now() + wait;
  for (;;) {
    if (const std::size_t end = head_end(); end != std::string::npos) return end <= max_head_bytes;
    if (ahead_.size() > max_head_bytes) return false;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, poll_ms(deadline - now));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    char buffer[kReadAhead];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n <= 0) return false;  // closed or failed: the gate sees that too, and closes it
    ahead_.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string_view GatedConnection::head() const {
  const std::size_t end = head_end();
  if (end == std::string::npos) return {};
  return std::string_view(ahead_).substr(ahead_pos_, end - ahead_pos_);
}

void GatedConnection::drop_consumed() {
  ahead_.erase(0, ahead_pos_);
  searched_ -= std::min(searched_, ahead_pos_);
  ahead_pos_ = 0;
  if (ahead_.empty()) std::string().swap(ahead_);  // an idle connection holds no buffer
}

// ---- ConnectionGate ----

struct ConnectionGate::State {
  State(GateLimits l, Ready r) : limits(l), on_ready(std::move(r)) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  enum class Phase { head, linger };
  struct Arrival {
    std::shared_ptr<GatedConnection> connection;
    Phase phase;
  };
  struct Entry {
    std::shared_ptr<GatedConnection> connection;
    Phase phase = Phase::head;
    bool head_started = false;  // a byte of the head has arrived
    Clock::time_point deadline;
  };

  const GateLimits limits;
  const Ready on_ready;
  const std::shared_ptr<GatedConnection::Tally> tally = std::make_shared<GatedConnection::Tally>();
  int epoll_fd = -1;
  int wake_fd = -1;
  std::thread thread;

  std::mutex mutex;  // guards inbox and stopped
  std::vector<Arrival> inbox;
  bool stopped = false;

  std::atomic<std::size_t> waiting{0};
  std::atomic<std::uint64_t> refused_connections{0};
  std::atomic<std::uint64_t> refused_client_connections{0};
  std::atomic<std::uint64_t> header_timeouts{0};
  std::atomic<std::uint64_t> heads_too_large{0};

  // The gate's thread only.
  std::unordered_map<int, Entry> entries;
  std::set<std::pair<Clock::time_point, int>> deadlines;

  void push(std::shared_ptr<GatedConnection> connection, Phase phase) {
    {
      std::lock_guard lock(mutex);
      if (stopped) return;  // dropped: closed
      inbox.push_back(Arrival{std::move(connection), phase});
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
  }

  void run() {
    std::vector<epoll_event> events(256);
    for (;;) {
      int timeout = -1;
      if (!deadlines.empty()) timeout = poll_ms(deadlines.begin()->first - Clock::now());
      const int n = ::epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), timeout);
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd != wake_fd) {
          on_readable(fd);
        } else if (!take_arrivals()) {
          entries.clear();  // closes them
          waiting = 0;
          return;
        }
      }
      expire(Clock::now());
    }
  }

  // False once stopped.
  bool take_arrivals() {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t n = ::read(wake_fd, &count, sizeof count);
    std::vector<Arrival> arrivals;
    {
      std::lock_guard lock(mutex);
      if (stopped) return false;
      arrivals.swap(inbox);
    }
    for (auto& arrival : arrivals) add(std::move(arrival));
    return true;
  }

  void add(Arrival arrival) {
    GatedConnection& c = *arrival.connection;
    const auto now = Clock::now();
    Entry entry{std::move(arrival.connection), arrival.phase, false, now};
    if (arrival.phase == Phase::linger) {
      ::shutdown(c.fd_, SHUT_WR);
      entry.deadline = now + limits.linger_timeout;
    } else {
      c.drop_consumed();
      // What the thread that served it read ahead meets the same limit.
      const std::size_t end = c.head_end();
      if (head_too_large(c, end)) {
        refuse_large_head(c.fd_);
        return;  // dropped: closed
      }
      if (end != std::string::npos) {  // the client sent its next request already
        c.served_ = true;
        on_ready(std::move(entry.connection));
        return;
      }
      entry.head_started = !c.ahead_.empty();
      if (!c.served_) {
        entry.deadline = c.opened_ + limits.header_timeout;
      } else {
        entry.deadline = now + (entry.head_started ? limits.header_timeout : limits.idle_timeout);
      }
    }
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP;
    event.data.fd = c.fd_;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c.fd_, &event) != 0) return;  // dropped: closed
    deadlines.emplace(entry.deadline, c.fd_);
    entries.emplace(c.fd_, std::move(entry));
    ++waiting;
  }

  // Takes the entry out of the gate; the caller keeps or drops its connection.
  std::shared_ptr<GatedConnection> remove(int fd) {
    auto it = entries.find(fd);
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    deadlines.erase({it->second.deadline, fd});
    auto connection = std::move(it->second.connection);
    entries.erase(it);
    --waiting;
    return connection;
  }

  void on_readable(int fd) {
    auto it = entries.find(fd);
    if (it == entries.end()) return;
    Entry& entry = it->second;
    if (entry.phase == Phase::linger) {
      drain(fd);
    } else {
      read_head(fd, entry);
    }
  }

  void drain(int fd) {
    char buffer[16384];
    // Bounded per wake-up, so one fast client cannot hold the gate.
    for (int i = 0; i < 64; ++i) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
      remove(fd);  // the client closed (or failed): closed
      return;
    }
  }

  // Over max_head_bytes: the head up to `end` (head_end()), or all read
  // ahead while it is not whole.
  bool head_too_large(const GatedConnection& c, std::size_t end) const {
    return (end != std::string::npos ? end : c.ahead_.size()) > limits.max_head_bytes;
  }

  void refuse_large_head(int fd) {
    ++heads_too_large;
    send_refusal(fd, 431, "Request Header Fields Too Large",
                 "Request Header Fields Too Large: the request head is over " +
                     std::to_string(limits.max_head_bytes) + " bytes",
                 false);
  }

  void read_head(int fd, Entry& entry) {
    GatedConnection& c = *entry.connection;
    char buffer[16384];
    for (;;) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) {
        remove(fd);  // closed by the client, or failed
        return;
      }
      if (!entry.head_started && c.served_) {
        // A kept-alive connection starts its next head: it has header_timeout from now.
        deadlines.erase({entry.deadline, fd});
        entry.deadline = Clock::now() + limits.header_timeout;
        deadlines.emplace(entry.deadline, fd);
      }
      entry.head_started = true;
      c.ahead_.append(buffer, static_cast<std::size_t>(n));
      const std::size_t end = c.head_end();
      if (head_too_large(c, end)) {
        refuse_large_head(fd);
        remove(fd);
        return;
      }
      if (end != std::string::npos) {
        auto connection = remove(fd);
        connection->served_ = true;
        on_ready(std::move(connection));
        return;
      }
    }
  }

  void expire(Clock::time_point now) {
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
      const int fd = deadlines.begin()->second;
      const Entry& entry = entries.at(fd);
      if (entry.phase == Phase::head && (entry.head_started || !entry.connection->served_)) {
        // A head begun and not finished, or a new connection that sent none.
        ++header_timeouts;
        if (entry.head_started) {
          send_refusal(fd, 408, "Request Timeout",
                       "Request Timeout: the request head did not arrive within " +
                           seconds_text(limits.header_timeout),
                       false);
        }
      }
      remove(fd);  // idle past the keep-alive timeout, or lingered long enough: closed
    }
  }
};

ConnectionGate::ConnectionGate(GateLimits limits, Ready on_ready)
    : limits_(limits), state_(std::make_shared<State>(limits, std::move(on_ready))) {}

ConnectionGate::~ConnectionGate() { stop(); }

Status ConnectionGate::start() {
  State& s = *state_;
  s.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  s.wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = s.wake_fd;
  if (s.epoll_fd < 0 || s.wake_fd < 0 ||
      ::epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, s.wake_fd, &event) != 0) {
    return Status::io_error(std::string("cannot watch connections (epoll): ") +
                            std::strerror(errno));
  }
  s.thread = std::thread([state = state_] { state->run(); });
  return Status::ok_status();
}

void ConnectionGate::admit(int fd) {
  // Client sockets must not leak into the processes command tools start.
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  State& s = *state_;
  std::string client = client_of(fd);
  {
    std::lock_guard lock(s.tally->mutex);
    if (s.tally->open >= limits_.max_connections) {
      ++s.refused_connections;
      send_refusal(fd, 503, "Service Unavailable",
                   "Service Unavailable: " + std::to_string(limits_.max_connections) +
                       " connections are open (the limit)",
                   true);
      close_refused(fd);
      return;
    }
    std::size_t& mine = s.tally->per_client[client];
    if (mine >= limits_.max_connections_per_client) {
      ++s.refused_client_connections;
      send_refusal(fd, 503, "Service Unavailable",
                   "Service Unavailable: " + std::to_string(mine) + " connections from " + client +
                       " are open (the limit per client)",
                   true);
      close_refused(fd);
      return;
    }
    ++mine;
    ++s.tally->open;
  }
  s.push(std::shared_ptr<GatedConnection>(new GatedConnection(fd, std::move(client), s.tally)),
         State::Phase::head);
}

void ConnectionGate::wait_for_request(std::shared_ptr<GatedConnection> connection) {
  state_->push(std::move(connection), State::Phase::head);
}

void ConnectionGate::linger(std::shared_ptr<GatedConnection> connection) {
  state_->push(std::move(connection), State::Phase::linger);
}

void ConnectionGate::stop() {
  State& s = *state_;
  std::vector<State::Arrival> left;
  {
    std::lock_guard lock(s.mutex);
    s.stopped = true;
    left.swap(s.inbox);
  }
  if (s.wake_fd >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(s.wake_fd, &one, sizeof one);
  }
  if (s.thread.joinable() && s.thread.get_id() != std::this_thread::get_id()) s.thread.join();
  left.clear();  // closes them
}

std::size_t ConnectionGate::open_connections() const {
  const State& s = *state_;
  std::lock_guard lock(s.tally->mutex);
  return s.tally->open;
}

GateStats ConnectionGate::stats() const {
  const State& s = *state_;
  GateStats out;
  out.open = open_connections();
  out.waiting = s.waiting.load();
  out.refused_connections = s.refused_connections.load();
  out.refused_client_connections = s.refused_client_connections.load();
  out.header_timeouts = s.header_timeouts.load();
  out.heads_too_large = s.heads_too_large.load();
  return out;
}

}  // namespace toolmux
