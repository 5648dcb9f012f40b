#include "src/base/digest.h"

#include <catch2/catch.hpp>

using toolmux::json_digest;
using toolmux::sha256_hex;

TEST_CASE("sha256_hex gives the standard digest") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("json_digest does not depend on the order members came in") {
  auto a = nlohmann::json::parse(R"({"path": "x", "force": true})");
  auto b = nlohmann::json::parse(R"({"force": true, "path": "x"})");
  CHECK(json_digest(a) == json_digest(b));
  CHECK(json_digest(a) != json_digest(nlohmann::json::parse(R"({"path": "y", "force": true})")));
  CHECK(json_digest(nullptr) != json_digest(nlohmann::json::object()));
}

TEST_CASE("Sha256Stream gives the digest of its pieces put together") {
  toolmux::Sha256Stream empty;
  CHECK(empty.hex() == sha256_hex(""));
  const std::string text(3 * 1000 * 1000 + 7, 'x');
  toolmux::Sha256Stream pieces;
  pieces.update("abc");
  CHECK(pieces.hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  toolmux::Sha256Stream stream;
  for (std::size_t at = 0; at < text.size(); at += 65537) {
    stream.update(std::string_view(text).substr(at, 65537));
  }
  CHECK(stream.hex() == sha256_hex(text));
}

TEST_CASE("blake2b_256_hex gives BLAKE2b with a 32-byte output") {
  CHECK(toolmux::blake2b_256_hex("") ==
        "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
  CHECK(toolmux::blake2b_256_hex("abc") ==
        "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319");
}

TEST_CASE("hmac_sha256_hex gives the standard MAC (RFC 4231, test case 2)") {
  CHECK(toolmux::hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(toolmux::hmac_sha256_hex("Jefe!", "what do ya want for nothing?") !=
        toolmux::hmac_sha256_hex("Jefe", "what do ya want for nothing?"));
}
