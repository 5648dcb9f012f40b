// ClientTransport over a child process's stdin and stdout
// (transports/stdio_child.h): the stdio transport of an upstream MCP server.
// One thread reads the child's stdout, a line per message; a line over the
// child's max_message_bytes is skipped and reported through on_dropped.
// on_closed comes when the child closes its stdout (it exited, or is
// exiting), with how it exited when that is known within a moment.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "transports/client_transport.h"
#include "transports/stdio_child.h"

namespace toolmux {

class StdioChildTransport final : public ClientTransport {
 public:
  // Starts the child, or says why it cannot be started (StdioChild::start).
  // `on_stderr` gets the child's stderr line by line (StdioChild::StderrSink).
  static Result<std::unique_ptr<StdioChildTransport>> start(const ChildCommand& command,
                                                            StdioChild::StderrSink on_stderr);
  ~StdioChildTransport() override;

  void start(OnMessage on_message, OnClosed on_closed, OnDropped on_dropped = nullptr) override;
  bool send(const std::string& text) override;
  void close() override;
  std::string describe() const override { return description_; }

 private:
  StdioChildTransport(std::unique_ptr<StdioChild> child, std::size_t max_message_bytes,
                      std::string description);
  void read(const OnMessage& on_message, const OnClosed& on_closed, const OnDropped& on_dropped);

  std::unique_ptr<StdioChild> child_;
  const std::size_t max_message_bytes_;
  const std::string description_;
  std::mutex close_mutex_;
  std::thread reader_;
};

}  // namespace toolmux
