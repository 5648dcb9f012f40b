#include "src/base/shared_library.h"

#include <dlfcn.h>

#include <utility>

namespace toolmux {

Result<SharedLibrary> SharedLibrary::open(const std::string& soname, const std::string& purpose,
                                          const std::string& package) {
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return Status::unavailable(
        purpose + " needs " + soname + " (Debian package " + package +
        "), which could not be loaded: " + (why != nullptr ? why : "no reason given"));
  }
  return SharedLibrary(handle, soname);
}

Result<void*> SharedLibrary::symbol(const char* name) const {
  ::dlerror();  // clears an earlier error, so that the one read below is this lookup's
  void* address = ::dlsym(handle_, name);
  if (address == nullptr) {
    return Status::unavailable(soname_ + " has no function " + name +
                               ": it is older than the version toolmux was built with");
  }
  return address;
}

}  // namespace toolmux
