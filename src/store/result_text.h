// What both result stores (rocksdb_result_store, pg_result_store) share of
// result_store.h's contract: ids, chunks, the answers they give, and a page
// assembled from the chunks it covers. Internal to src/store.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/base/utf8.h"
#include "src/store/result_store.h"

namespace toolmux::result_text {

inline constexpr std::size_t kIdBytes = 32;
inline constexpr std::size_t kIdLength = 43;  // base64url of 32 bytes, no padding
// A chunk holds at most this much text, cut on a character boundary.
inline constexpr std::size_t kChunkBytes = std::size_t{64} << 10;

// Whether `id` could be an id put() made: kIdLength characters of base64url.
// Anything else is unknown without asking the store (which may not accept it
// as a parameter: a NUL byte, bytes that are not UTF-8).
inline bool may_be_id(std::string_view id) {
  return id.size() == kIdLength &&
         id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
             std::string_view::npos;
}

// One answer for an unknown id, an expired result and another owner's, so
// that ids cannot be probed.
inline Status not_found() {
  return Status::not_found("no such result (unknown, expired, or another owner's)");
}

// What remove() answers for an id the store does not hold (the operator
// named it: no owner to hide it from).
inline Status no_such_result(std::string_view id) {
  return Status::not_found("no stored result " + std::string(id));
}

inline Status past_the_end(std::uint64_t offset, std::uint64_t chars) {
  return Status::out_of_range("offset " + std::to_string(offset) +
                              " is past the end of the result (" + std::to_string(chars) +
                              " characters)");
}

// What put() refuses before storing anything: a MIME type too long, text that
// is not UTF-8, text larger than the whole store.
inline Status check_put(std::string_view text, const StoredFormat& format,
                        std::uint64_t max_bytes) {
  if (format.mime_type.size() > StoredFormat::kMaxMimeTypeBytes) {
    return Status::invalid_argument("the MIME type is longer than " +
                                    std::to_string(StoredFormat::kMaxMimeTypeBytes) + " bytes");
  }
  if (!is_valid_utf8(text)) return Status::invalid_argument("the result is not valid UTF-8");
  if (text.size() > max_bytes) {
    return Status::resource_exhausted("result of " + std::to_string(text.size()) +
                                      " bytes is larger than the store's limit of " +
                                      std::to_string(max_bytes) + " bytes");
  }
  return {};
}

// The retention in nanoseconds, capped at 100 years so that arithmetic on
// times cannot overflow.
inline std::int64_t retention_ns(std::chrono::seconds retention) {
  constexpr std::int64_t kMaxSeconds = 100ll * 365 * 24 * 3600;
  const std::int64_t secs = std::clamp<std::int64_t>(retention.count(), 0, kMaxSeconds);
  return secs * 1'000'000'000;
}

// Cuts `text` into chunks of at most kChunkBytes on character boundaries (a
// chunk is read back as text on its own) and calls add(chunk, first_char) for
// each, in order, until one returns false. Returns whether all were added.
template <typename Add>
bool for_each_chunk(std::string_view text, Add&& add) {
  std::size_t pos = 0;
  std::uint64_t chars_before = 0;
  while (pos < text.size()) {
    const std::string_view chunk = utf8_prefix(text.substr(pos), kChunkBytes);
    if (!add(chunk, chars_before)) return false;
    chars_before += utf8_length(chunk);
    pos += chunk.size();
  }
  return true;
}

// A page being assembled from the chunks it covers, in order: the first
// `skip` characters are dropped, then at most `want` kept.
class PageText {
 public:
  PageText(std::uint64_t skip, std::uint64_t want) : skip_(skip), want_(want) {}

  void add(std::string_view chunk) {
    const char* p = chunk.data();
    const std::size_t n = chunk.size();
    std::size_t i = 0;
    for (; skip_ > 0 && i < n; --skip_) i += utf8_lead_length(p[i]);
    const std::size_t start = i;
    for (; taken_ < want_ && i < n; ++taken_) i += utf8_lead_length(p[i]);
    text_.append(p + start, std::min(i, n) - start);
  }
  bool complete() const { return taken_ >= want_; }
  std::string& text() { return text_; }

 private:
  std::uint64_t skip_;
  std::uint64_t want_;
  std::uint64_t taken_ = 0;
  std::string text_;
};

}  // namespace toolmux::result_text
