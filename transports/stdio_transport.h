// The stdio transport: newline-delimited messages on a pair of file
// descriptors (MCP stdio transport: one JSON-RPC message per line, UTF-8, no
// embedded newlines). It moves text only; it does not parse JSON.
//
// read_line() is called from one thread (the session's reader); write_line()
// from any number of threads, each line written whole, in one piece.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace toolmux {

class StdioTransport {
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

  void request_stop() { stop_.store(true); }
  bool stop_requested() const { return stop_.load(); }

 private:
  const int in_fd_;
  const int out_fd_;
  const std::size_t max_message_bytes_;
  std::string buffer_;
  std::size_t scan_from_ = 0;
  bool eof_ = false;
  bool skipping_ = false;  // inside an oversized line, dropping bytes until "\n"
  std::atomic<bool> stop_{false};
  std::mutex write_mutex_;
  bool peer_gone_ = false;
};

}  // namespace toolmux
