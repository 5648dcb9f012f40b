#include "src/base/sealed_box.h"

#include <sys/wait.h>
#include <unistd.h>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "src/base/random_id.h"

namespace toolmux {

TEST_CASE("a sealed text opens with its key into what was sealed, and with nothing else",
          "[sealed_box]") {
  const SealingKey key = SealingKey::random();
  const std::string plain = R"({"answers":{"user_name":{"action":"accept"}}})";
  const std::string sealed = seal(key, plain);
  CHECK(sealed.find("user_name") == std::string::npos);  // nothing readable
  REQUIRE(open_sealed(key, sealed) == plain);
  // A fresh nonce each time: the same text seals differently.
  CHECK(seal(key, plain) != sealed);
  CHECK(open_sealed(SealingKey::random(), sealed) == std::nullopt);
}

TEST_CASE("a sealed text changed anywhere, cut short or lengthened does not open", "[sealed_box]") {
  const SealingKey key = SealingKey::random();
  const std::string sealed = seal(key, "the state of one request");
  for (std::size_t i = 0; i < sealed.size(); ++i) {
    std::string changed = sealed;
    changed[i] = changed[i] == 'A' ? 'B' : 'A';
    INFO("character " << i);
    CHECK(open_sealed(key, changed) == std::nullopt);
  }
  CHECK(open_sealed(key, sealed.substr(0, sealed.size() - 1)) == std::nullopt);
  CHECK(open_sealed(key, sealed + "-TAMPERED") == std::nullopt);
  // One character more (6 bits the decoder would drop) is a change too.
  CHECK(open_sealed(key, sealed + "x") == std::nullopt);
  CHECK(open_sealed(key, sealed + "xx") == std::nullopt);
  CHECK(open_sealed(key, "") == std::nullopt);
  CHECK(open_sealed(key, "not base64url!") == std::nullopt);
}

TEST_CASE("a digest is the same for the same bytes and differs for others", "[sealed_box]") {
  CHECK(digest("abc") == digest("abc"));
  CHECK(digest("abc") != digest("abd"));
  CHECK(digest("").size() == 43);  // 32 bytes, base64url without padding
}

}  // namespace toolmux

// random_id (src/base/random_id.h), the other user of the kernel's randomness.
TEST_CASE("random ids are distinct, of the asked length, and a forked child's are its own") {
  std::set<std::string> seen;
  for (int i = 0; i < 5000; ++i) {
    const std::string id = toolmux::random_id(16);
    CHECK(id.size() == 22);  // 16 bytes as base64url without padding
    CHECK(seen.insert(id).second);
  }
  CHECK(toolmux::random_id().size() == 43);      // 32 bytes
  CHECK(toolmux::random_id(100).size() == 134);  // more than a pool's share: from the kernel
  // A child must not hand out the ids its parent hands out next.
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::string ids;
    for (int i = 0; i < 4; ++i) ids += toolmux::random_id(16);
    const ssize_t written = ::write(pipe_fds[1], ids.data(), ids.size());
    ::_exit(written == static_cast<ssize_t>(ids.size()) ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string from_child(88, '\0');
  std::size_t got = 0;
  while (got < from_child.size()) {
    const ssize_t n = ::read(pipe_fds[0], from_child.data() + got, from_child.size() - got);
    REQUIRE(n > 0);
    got += static_cast<std::size_t>(n);
  }
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  std::string from_parent;
  for (int i = 0; i < 4; ++i) from_parent += toolmux::random_id(16);
  for (int i = 0; i < 4; ++i) {
    const std::string mine = from_parent.substr(static_cast<std::size_t>(i) * 22, 22);
    CHECK(from_child.find(mine) == std::string::npos);
  }
}
