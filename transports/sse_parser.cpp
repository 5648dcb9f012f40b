#include "transports/sse_parser.h"

#include <algorithm>

namespace toolmux {

bool SseParser::feed(std::string_view bytes, const std::function<bool(const SseEvent&)>& on_event) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c != '\r' && c != '\n') continue;
    if (c == '\n' && after_cr_ && i == start && line_.empty()) {
      // The LF of a CRLF whose CR ended the line before.
      after_cr_ = false;
      start = i + 1;
      continue;
    }
    line_.append(bytes.data() + start, i - start);
    if (line_.size() > max_line_bytes()) return false;
    std::string text;
    text.swap(line_);
    after_cr_ = c == '\r';
    start = i + 1;
    if (!line(text, on_event)) return false;
  }
  if (start < bytes.size()) {
    after_cr_ = false;
    line_.append(bytes.data() + start, bytes.size() - start);
    if (line_.size() > max_line_bytes()) return false;
  }
  return true;
}

bool SseParser::line(std::string_view text, const std::function<bool(const SseEvent&)>& on_event) {
  if (first_line_) {
    first_line_ = false;
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  }
  if (text.empty()) {
    // Dispatch. The data buffer ends with the "\n" its last line added.
    SseEvent event;
    event.type.swap(type_);
    event.data.swap(data_);
    if (!event.data.empty()) event.data.pop_back();
    event.id = last_event_id_;
    if (event.data.empty()) return true;
    return on_event(event);
  }
  if (text.front() == ':') return true;  // a comment (keep-alive)
  const auto colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (data_.size() + value.size() + 1 > max_event_bytes_ + 1) return false;
    data_.append(value);
    data_ += '\n';
  } else if (field == "event") {
    type_ = value;
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_event_id_ = value;
  } else if (field == "retry") {
    if (!value.empty() && value.size() <= 9 &&
        std::all_of(value.begin(), value.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      retry_ = std::chrono::milliseconds(std::stoll(std::string(value)));
    }
  }
  return true;
}

}  // namespace toolmux
