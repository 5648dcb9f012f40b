#include "src/base/status.h"

namespace toolmux {

std::string Status::to_string() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk:
      return name;
    case Code::kInvalidArgument:
      name = "InvalidArgument";
      break;
    case Code::kNotFound:
      name = "NotFound";
      break;
    case Code::kOutOfRange:
      name = "OutOfRange";
      break;
    case Code::kIOError:
      name = "IOError";
      break;
    case Code::kUnavailable:
      name = "Unavailable";
      break;
    case Code::kResourceExhausted:
      name = "ResourceExhausted";
      break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace toolmux
