#include "src/base/sealed_box.h"

#include <catch2/catch.hpp>

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
