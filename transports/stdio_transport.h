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
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

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
  std::mutex write_mutex_;
  bool peer_gone_ = false;
};

}  // namespace toolmux
