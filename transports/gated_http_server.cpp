#include "transports/gated_http_server.h"

#include <netdb.h>
#include <strings.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <utility>

#include "src/base/elastic_threads.h"
#include "src/base/jsonrpc.h"
#include "transports/http_headers.h"

namespace toolmux {
namespace {

using Clock = GatedConnection::Clock;

// The request a pool thread is serving, for the post-routing check and the
// static members (handlers are called on that thread, with no way to reach
// the connection).
struct ServedRequest {
  explicit ServedRequest(const GatedConnection& c) : connection(c) {}

  const GatedConnection& connection;
  std::string head;  // as sent (header_as_sent)
  bool head_read = false;
  std::uint64_t body_start = 0;
  std::optional<std::uint64_t> content_length;
  bool chunked = false;
  bool body_read = false;
  bool timed_out = false;
  bool close = false;

  // Called by cpp-httplib once the head is read, before the handler.
  void start(const httplib::Request& req) {
    head_read = true;
    body_start = connection.consumed();
    // As cpp-httplib reads a body: chunked first, else Content-Length.
    chunked =
        strcasecmp(http_headers::value(req.headers, "Transfer-Encoding").c_str(), "chunked") == 0;
    if (!chunked && http_headers::has(req.headers, "Content-Length")) {
      content_length =
          std::strtoull(http_headers::value(req.headers, "Content-Length").c_str(), nullptr, 10);
    }
  }

  // Bytes of the request are still unread (or, when its head could not be
  // read, what follows it is unknown).
  bool body_left() const {
    if (!head_read) return true;
    if (chunked) return !body_read;
    if (content_length) return connection.consumed() - body_start < *content_length;
    return false;
  }
};

thread_local ServedRequest* t_request = nullptr;

class GatedStream final : public httplib::Stream {
 public:
  // Reads wait for the client until `deadline` (its body's), however long it
  // pauses: cpp-httplib's read timeout (5 s) would end a body that has
  // body_timeout to arrive, and as an unreadable one (400, not 408).
  // A body that times out is counted in `timeouts` as it does, before its
  // answer is written.
  GatedStream(GatedConnection& connection, ServedRequest& request, Clock::time_point deadline,
              std::chrono::milliseconds write_timeout, std::atomic<std::uint64_t>& timeouts)
      : c_(connection),
        request_(request),
        deadline_(deadline),
        write_timeout_(write_timeout),
        timeouts_(timeouts) {}

  bool is_readable() const override {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now());
    return c_.readable(std::max(left, std::chrono::milliseconds(0)));
  }
  bool is_writable() const override { return c_.writable(write_timeout_); }
  ssize_t read(char* ptr, size_t size) override {
    const ssize_t n = c_.read(ptr, size, deadline_);
    if (n < 0 && c_.timed_out() && !request_.timed_out) {
      request_.timed_out = true;
      ++timeouts_;
    }
    return n;
  }
  ssize_t write(const char* ptr, size_t size) override {
    return c_.write(ptr, size, write_timeout_);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(false, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(true, ip, port);
  }
  socket_t socket() const override { return c_.socket(); }

 private:
  void address_of(bool local, std::string& ip, int& port) const {
    sockaddr_storage address{};
    socklen_t size = sizeof address;
    auto* a = reinterpret_cast<sockaddr*>(&address);
    if ((local ? ::getsockname(c_.socket(), a, &size) : ::getpeername(c_.socket(), a, &size)) != 0)
      return;
    std::array<char, NI_MAXHOST> host{};
    std::array<char, NI_MAXSERV> service{};
    if (::getnameinfo(a, size, host.data(), host.size(), service.data(), service.size(),
                      NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host.data();
      port = std::atoi(service.data());
    }
  }

  GatedConnection& c_;
  ServedRequest& request_;
  const Clock::time_point deadline_;
  const std::chrono::milliseconds write_timeout_;
  std::atomic<std::uint64_t>& timeouts_;
};

// cpp-httplib hands each accepted socket to process_and_close_socket through
// its task queue: this one runs it at once, on the accepting thread (it only
// gives the socket to the gate). Shutting the queue down stops the gate and
// waits briefly for the requests being served.
class GateQueue final : public httplib::TaskQueue {
 public:
  GateQueue(ConnectionGate& gate, std::shared_ptr<ElasticThreads> threads)
      : gate_(gate), threads_(std::move(threads)) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {
    gate_.stop();
    threads_->shutdown(std::chrono::seconds(2));
  }

 private:
  ConnectionGate& gate_;
  std::shared_ptr<ElasticThreads> threads_;
};

std::chrono::milliseconds to_ms(time_t sec, time_t usec) {
  return std::chrono::milliseconds(sec * 1000 + usec / 1000);
}

}  // namespace

GatedHttpServer::GatedHttpServer(Limits limits, std::shared_ptr<ElasticThreads> threads)
    : limits_(limits),
      threads_(std::move(threads)),
      gate_(limits.gate, [this](std::shared_ptr<GatedConnection> connection) {
        if (!threads_->post([this, connection]() mutable { serve(std::move(connection)); })) {
          // No thread to be had: say so, and close (the last owner goes here).
          static constexpr char kBusy[] =
              "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\n"
              "Connection: close\r\n\r\n";
          connection->write(kBusy, sizeof kBusy - 1, std::chrono::milliseconds(100));
        }
      }) {
  new_task_queue = [this] { return new GateQueue(gate_, threads_); };
  set_exception_handler([this](const httplib::Request&, httplib::Response& res,
                               const std::exception_ptr& thrown) {
    std::string what = "an exception that is not a std::exception";
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    if (on_handler_exception_) on_handler_exception_(what);
    res.status = 500;
    res.headers.clear();
    res.set_content(jsonrpc::make_error(nullptr, jsonrpc::kInternalError,
                                        "Internal error: toolmux failed to answer this request; "
                                        "its log says why")
                        .dump(),
                    "application/json");
  });
  // Decided as the response is written, when the handler has read what it reads.
  set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (t_request && t_request->body_left()) {
      res.set_header("Connection", "close");
      t_request->close = true;
    }
  });
}

GatedHttpServer::~GatedHttpServer() { gate_.stop(); }

Status GatedHttpServer::start() { return gate_.start(); }

void GatedHttpServer::note_body_read() {
  if (t_request) t_request->body_read = true;
}

bool GatedHttpServer::body_timed_out() { return t_request && t_request->timed_out; }

int GatedHttpServer::current_socket() { return t_request ? t_request->connection.socket() : -1; }

std::vector<std::string> GatedHttpServer::header_as_sent(std::string_view name) {
  std::vector<std::string> values;
  if (!t_request) return values;
  const std::string_view head = t_request->head;
  // The request line first, then a field a line ("name: value"), each line
  // ending in CRLF (a bare LF is taken too, as cpp-httplib takes it).
  std::size_t at = head.find('\n');
  while (at != std::string_view::npos && at + 1 < head.size()) {
    const std::size_t start = at + 1;
    at = head.find('\n', start);
    std::string_view line =
        head.substr(start, (at == std::string_view::npos ? head.size() : at) - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t colon = line.find(':');
    if (colon != name.size() || strncasecmp(line.data(), name.data(), name.size()) != 0) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    values.emplace_back(value);
  }
  return values;
}

bool GatedHttpServer::process_and_close_socket(socket_t sock) {
  gate_.admit(sock);
  return true;
}

void GatedHttpServer::serve(std::shared_ptr<GatedConnection> connection) {
  const auto write_timeout = to_ms(write_timeout_sec_, write_timeout_usec_);
  for (;;) {
    ServedRequest request(*connection);
    request.head = connection->head();
    GatedStream stream(*connection, request, Clock::now() + limits_.body_timeout, write_timeout,
                       body_timeouts_);
    const bool stopping = svr_sock_ == INVALID_SOCKET;
    bool client_closes = false;
    t_request = &request;
    const bool written = process_request(stream, stopping, client_closes,
                                         [&request](httplib::Request& req) { request.start(req); });
    t_request = nullptr;
    if (!written || stopping || client_closes || request.close) {
      if (request.body_left()) gate_.linger(std::move(connection));
      return;  // else dropped: closed
    }
    // The client may have sent its next request already (pipelining), or
    // send it soon: served here, with no hand-off to the gate and back.
    const auto wait = gate_.open_connections() <= limits_.wait_while_open
                          ? std::min(limits_.next_request_wait, limits_.gate.idle_timeout)
                          : std::chrono::milliseconds(0);
    if (!connection->await_head(wait, limits_.gate.max_head_bytes)) {
      gate_.wait_for_request(std::move(connection));
      return;
    }
  }
}

}  // namespace toolmux
