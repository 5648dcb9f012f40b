// The stdio server transport (transports/server_transport.h): newline-
// delimited messages on a pair of file descriptors (MCP stdio transport: one
// JSON-RPC message per line, UTF-8, no embedded newlines), for one session.
//
// serve() (or read_line()) is called from one thread, the session's reader:
// it parses each line at this boundary and delivers it to the session's
// ServerPeer with Carrier::hand_off, the reader going on once the peer
// returns (at once, unless it holds the reader to slow the client down). A line over
// max_message_bytes, or not a JSON-RPC message, is delivered as Kind::invalid
// (the server answers it with -32700 or -32600 on stdout); blank lines are
// skipped. As the session's MessageSink, send() and write_line() are called
// from any number of threads, each line written whole, in one piece.
//
// Answers a pipelining client's lines get on the reader's own thread (an
// instant tool's call, tools/list, ping) go out together: while another whole
// line already waits in the read buffer, a line written on the reader's thread
// is kept, and what is kept is written, in one write, once the reader has no
// whole line left (before it would wait for input), once kMaxPendingBytes are
// kept, or just before a line another thread writes (the order lines were
// written in is the order they go out). A client that waits for each answer
// before it sends the next line gets each at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "src/base/untrusted_json.h"
#include "transports/server_transport.h"

namespace toolmux {

class StdioTransport final : public MessageSink {
 public:
  StdioTransport(int in_fd, int out_fd, std::size_t max_message_bytes);

  struct Line {
    std::string text;        // without the trailing "\n" (or "\r\n")
    bool oversized = false;  // longer than max_message_bytes: text is empty, the line was skipped
  };

  // The next line, or nullopt at end of input, on a read error, or when a
  // signal interrupted the read and stop_requested() is true.
  std::optional<Line> read_line();

  // Appends "\n". Returns false once the peer has gone (EPIPE): later writes
  // are dropped.
  bool write_line(std::string_view text);

  // The most bytes of lines kept for one write (see above).
  static constexpr std::size_t kMaxPendingBytes = std::size_t{64} << 10;

  // Reads, parses and delivers every message to `peer` until end of input, a
  // read error, or a stop request.
  void serve(ServerPeer& peer, const JsonLimits& limits);

  // MessageSink: one channel, so `related_request` does not matter.
  void send(const nlohmann::json& message, const nlohmann::json& related_request) override;

  void request_stop() { stop_.store(true); }
  bool stop_requested() const { return stop_.load(); }

 private:
  const int in_fd_;
  const int out_fd_;
  const std::size_t max_message_bytes_;
  // Bytes read and not yet returned start at start_: a line taken moves
  // start_, and what is left moves to the front only before the next read, so
  // a backlog of many pipelined lines is not shifted once per line.
  std::string buffer_;
  std::size_t start_ = 0;
  std::size_t scan_from_ = 0;  // no "\n" in buffer_ before this offset (from start_)
  bool eof_ = false;
  bool skipping_ = false;  // inside an oversized line, dropping bytes until "\n"
  std::atomic<bool> stop_{false};
  // Writes what is kept, then `text` and its newline when given, in one
  // writev. With write_mutex_ held.
  bool flush_locked(std::optional<std::string_view> text);
  // serve() after each line: whether another whole line is buffered already.
  bool whole_line_buffered();
  // Writes what is kept, if anything.
  void flush_pending();

  std::mutex write_mutex_;
  bool peer_gone_ = false;
  std::string pending_;                  // lines kept for one write; under write_mutex_
  std::atomic<std::thread::id> reader_;  // serve()'s thread, once it runs
  bool batching_ = false;                // serve()'s thread only: keep its lines
};

}  // namespace toolmux
