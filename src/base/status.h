// What an operation that can fail returns: Status (success, or a code and a
// message saying what went wrong) and Result<T> (a T, or the Status of why
// there is none). Modelled on RocksDB's rocksdb::Status: built by named
// factories, tested with ok() or the is_*() predicates.
//
// Both are value types: copy them freely; a const one may be read from any
// thread. Nothing here throws except Result<T>::value() on a failed Result,
// which is a programming error (check ok() first). The message is the
// sentence a user or operator sees, unchanged: callers that show it show
// message(), never a code name.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace toolmux {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,    // the input is wrong (a bad path, URL, pattern, option)
    kNotFound,           // what was named does not exist
    kOutOfRange,         // a position or offset beyond the end
    kIOError,            // the file system, a process or the storage failed
    kUnavailable,        // a peer (an upstream, a connection) could not be reached
    kResourceExhausted,  // a limit was reached (too big, too many)
  };

  // Success: the default.
  Status() = default;

  static Status ok_status() { return {}; }
  static Status invalid_argument(std::string message) {
    return {Code::kInvalidArgument, std::move(message)};
  }
  static Status not_found(std::string message) { return {Code::kNotFound, std::move(message)}; }
  static Status out_of_range(std::string message) {
    return {Code::kOutOfRange, std::move(message)};
  }
  static Status io_error(std::string message) { return {Code::kIOError, std::move(message)}; }
  static Status unavailable(std::string message) {
    return {Code::kUnavailable, std::move(message)};
  }
  static Status resource_exhausted(std::string message) {
    return {Code::kResourceExhausted, std::move(message)};
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // "" when ok().
  const std::string& message() const { return message_; }

  bool is_invalid_argument() const { return code_ == Code::kInvalidArgument; }
  bool is_not_found() const { return code_ == Code::kNotFound; }
  bool is_out_of_range() const { return code_ == Code::kOutOfRange; }
  bool is_io_error() const { return code_ == Code::kIOError; }
  bool is_unavailable() const { return code_ == Code::kUnavailable; }
  bool is_resource_exhausted() const { return code_ == Code::kResourceExhausted; }

  // "InvalidArgument: <message>", "OK": for logs and test failures.
  std::string to_string() const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// A T, or the failed Status that says why there is none. Implicitly made from
// either, so a function returning Result<T> can `return value;` or
// `return Status::not_found(...);`. Made from an ok Status it is a failure
// with code kOk in release builds and asserts in debug builds: do not.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok());
  }

  bool ok() const { return value_.has_value(); }
  // Success when ok().
  const Status& status() const { return status_; }
  // status().message(): "" when ok().
  const std::string& message() const { return status_.message(); }

  // The value; throws std::bad_optional_access when !ok().
  T& value() & { return value_.value(); }
  const T& value() const& { return value_.value(); }
  T&& value() && { return std::move(value_).value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace toolmux
