// A shared library opened when it is first needed (dlopen), for a dependency
// that only some configurations use: libpq for `--store postgresql`
// (src/store/pg_connection.cpp), libjose for an authorization server's keys
// (transports/oauth_resource.cpp). Linked into the executable, such a library
// and everything it needs are loaded and relocated at every start: libpq
// alone pulls in twenty (Kerberos, LDAP, GnuTLS among them), libjose seeds
// OpenSSL's random generator from its constructor.
//
// A library is opened once, with RTLD_NOW | RTLD_LOCAL (every symbol bound
// at once, none shared with later libraries), and never closed: the
// addresses taken from it stay valid for the life of the process. open() and
// symbol() may be called from any thread.
#pragma once

#include <string>
#include <utility>

#include "src/base/status.h"

namespace toolmux {

class SharedLibrary {
 public:
  // Opens `soname` (as the dynamic loader finds it: "libpq.so.5"), or says
  // that it could not, naming the library, what it is needed for (`purpose`,
  // "the PostgreSQL store") and the Debian package that ships it.
  static Result<SharedLibrary> open(const std::string& soname, const std::string& purpose,
                                    const std::string& package);

  // The address of the function `name` in the library or the libraries it
  // needs, or an error naming both (a library older than the one built against).
  Result<void*> symbol(const char* name) const;

  // Points `slot` at the function `name`, typed as the slot is: declared as
  // `decltype(&::name)`, the type of the library header's declaration, so that
  // a call through it is checked as a direct one is.
  template <typename Function>
  Status bind(Function*& slot, const char* name) const {
    auto address = symbol(name);
    if (!address.ok()) return address.status();
    slot = reinterpret_cast<Function*>(*address);
    return Status::ok_status();
  }

 private:
  SharedLibrary(void* handle, std::string soname) : handle_(handle), soname_(std::move(soname)) {}
  void* handle_;
  std::string soname_;
};

}  // namespace toolmux
