#include "transports/stdio_child_transport.h"

#include <utility>

namespace toolmux {

Result<std::unique_ptr<StdioChildTransport>> StdioChildTransport::start(
    const ChildCommand& command, StdioChild::StderrSink on_stderr) {
  Result<std::unique_ptr<StdioChild>> child = StdioChild::start(command, std::move(on_stderr));
  if (!child.ok()) return child.status();
  std::string description = "stdio:";
  for (const std::string& arg : command.argv) description += " " + arg;
  return std::unique_ptr<StdioChildTransport>(new StdioChildTransport(
      std::move(child).value(), command.max_message_bytes, std::move(description)));
}

StdioChildTransport::StdioChildTransport(std::unique_ptr<StdioChild> child,
                                         std::size_t max_message_bytes, std::string description)
    : child_(std::move(child)),
      max_message_bytes_(max_message_bytes),
      description_(std::move(description)) {}

StdioChildTransport::~StdioChildTransport() { close(); }

void StdioChildTransport::start(OnMessage on_message, OnClosed on_closed, OnDropped on_dropped) {
  reader_ = std::thread(
      [this, on_message = std::move(on_message), on_closed = std::move(on_closed),
       on_dropped = std::move(on_dropped)] { read(on_message, on_closed, on_dropped); });
}

void StdioChildTransport::read(const OnMessage& on_message, const OnClosed& on_closed,
                               const OnDropped& on_dropped) {
  while (auto line = child_->transport().read_line()) {
    if (line->oversized) {
      if (on_dropped) {
        on_dropped("a message over the limit of " + std::to_string(max_message_bytes_) + " bytes");
      }
      continue;
    }
    if (line->text.find_first_not_of(" \t\r") == std::string::npos) continue;
    on_message(line->text);
  }
  // Its stdout is closed: it exited or is exiting. Say how, when it is quick to know.
  auto status = child_->exit_description(std::chrono::milliseconds(200));
  on_closed(status ? *status : "closed its output");
}

bool StdioChildTransport::send(const std::string& text) {
  return child_->transport().write_line(text);
}

void StdioChildTransport::close() {
  std::lock_guard lock(close_mutex_);
  child_->stop();
  if (reader_.joinable()) reader_.join();
}

}  // namespace toolmux
