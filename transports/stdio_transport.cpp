#include "transports/stdio_transport.h"

#include <sys/uio.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>
#include <utility>

#include "src/base/json_text.h"
#include "src/base/jsonrpc.h"

namespace toolmux {

StdioTransport::StdioTransport(int in_fd, int out_fd, std::size_t max_message_bytes)
    : in_fd_(in_fd), out_fd_(out_fd), max_message_bytes_(max_message_bytes) {}

std::optional<StdioTransport::Line> StdioTransport::read_line() {
  char chunk[65536];
  while (true) {
    // A complete line already buffered?
    const std::size_t newline = buffer_.find('\n', std::max(start_, scan_from_));
    if (newline != std::string::npos) {
      Line line;
      if (skipping_) {
        line.oversized = true;
        skipping_ = false;
      } else {
        line.text = buffer_.substr(start_, newline - start_);
        if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
        if (line.text.size() > max_message_bytes_) {
          line.text.clear();
          line.oversized = true;
        }
      }
      start_ = newline + 1;
      scan_from_ = start_;
      return line;
    }
    // No whole line left: what remains (part of one) moves to the front.
    buffer_.erase(0, start_);
    start_ = 0;
    scan_from_ = buffer_.size();
    // Bound memory: past the limit, keep reading but drop the bytes.
    if (buffer_.size() > max_message_bytes_) {
      skipping_ = true;
      buffer_.clear();
      scan_from_ = 0;
    }
    if (eof_) {
      if (buffer_.empty() && !skipping_) return std::nullopt;
      // A last line without "\n" still counts.
      Line line;
      line.oversized = skipping_;
      if (!skipping_) line.text = std::move(buffer_);
      buffer_.clear();
      skipping_ = false;
      return line;
    }
    const ssize_t n = ::read(in_fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      eof_ = true;
    } else if (errno == EINTR) {
      if (stop_requested()) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
}

bool StdioTransport::whole_line_buffered() {
  // What it looks through, read_line() need not look through again.
  const std::size_t newline = buffer_.find('\n', std::max(start_, scan_from_));
  scan_from_ = newline == std::string::npos ? buffer_.size() : newline;
  return newline != std::string::npos;
}

void StdioTransport::flush_pending() {
  std::lock_guard lock(write_mutex_);
  if (!pending_.empty()) flush_locked(std::nullopt);
}

void StdioTransport::serve(ServerPeer& peer, const JsonLimits& limits) {
  reader_.store(std::this_thread::get_id());
  // A stop signal interrupts a blocked read; it is also looked at before each
  // line, for lines already buffered and a peer that held the reader meanwhile.
  while (!stop_requested()) {
    auto line = read_line();
    if (!line) break;
    // While another whole line waits, what this thread writes for this one
    // waits to go out with what it writes for that one (see the header).
    batching_ = whole_line_buffered();
    if (line->oversized) {
      jsonrpc::Message unreadable;
      unreadable.error_code = jsonrpc::kParseError;
      unreadable.error =
          "Parse error: message is larger than " + std::to_string(max_message_bytes_) + " bytes";
      peer.deliver(std::move(unreadable), Carrier::hand_off);
    } else if (line->text.find_first_not_of(" \t\r") != std::string::npos) {
      peer.deliver(jsonrpc::parse_message(line->text, limits), Carrier::reader);
    }
    if (!batching_) flush_pending();
  }
  batching_ = false;
  flush_pending();
}

void StdioTransport::send(const nlohmann::json& message, const nlohmann::json& /*related*/) {
  // Strings are valid UTF-8 by the time they get here (the result boundary
  // checks tool output); replacing bad UTF-8 (json_text) is the last line of
  // defence, not a path.
  write_line(json_text(message));
}

bool StdioTransport::write_line(std::string_view text) {
  std::lock_guard lock(write_mutex_);
  if (peer_gone_) return false;
  // batching_ is the reader's own: read only on its thread.
  if (std::this_thread::get_id() == reader_.load() && batching_) {
    pending_.append(text);
    pending_ += '\n';
    return pending_.size() < kMaxPendingBytes || flush_locked(std::nullopt);
  }
  return flush_locked(text);
}

bool StdioTransport::flush_locked(std::optional<std::string_view> text) {
  if (peer_gone_) {
    pending_.clear();
    return false;
  }
  // What is kept, then the text and its newline, in one write (writev),
  // without copying the text to append the newline.
  static constexpr char kNewline = '\n';
  std::string_view pieces[3];
  int count = 0;
  if (!pending_.empty()) pieces[count++] = pending_;
  if (text) {
    pieces[count++] = *text;
    pieces[count++] = std::string_view(&kNewline, 1);
  }
  int first = 0;
  while (first < count) {
    iovec parts[3];
    int used = 0;
    for (int i = first; i < count; ++i) {
      if (pieces[i].empty()) continue;
      parts[used++] = {const_cast<char*>(pieces[i].data()), pieces[i].size()};
    }
    if (used == 0) break;
    const ssize_t n = ::writev(out_fd_, parts, used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      peer_gone_ = true;
      pending_.clear();
      return false;
    }
    // Past what was written.
    auto left = static_cast<std::size_t>(n);
    while (first < count && left >= pieces[first].size()) {
      left -= pieces[first].size();
      ++first;
    }
    if (first < count) pieces[first].remove_prefix(left);
  }
  // A burst's buffer is kept for the next, up to its bound.
  if (pending_.capacity() > 2 * kMaxPendingBytes) {
    std::string().swap(pending_);
  } else {
    pending_.clear();
  }
  return true;
}

}  // namespace toolmux
