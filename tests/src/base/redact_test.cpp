// Redaction: known secrets and credential shapes replaced, ordinary text left
// alone, JSON values walked with keys that name secrets.
#include "src/base/redact.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

using nlohmann::json;
using toolmux::needs_redaction;
using toolmux::redact;
using toolmux::redact_json;
using toolmux::register_secret;

namespace {

// `n` copies of `s`.
std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Checks that redact() and needs_redaction() agree on `text`, and that
// redacting twice changes nothing more.
std::string checked_redact(const std::string& text) {
  const std::string once = redact(text);
  CHECK(needs_redaction(text) == (once != text));
  CHECK(redact(once) == once);
  CHECK_FALSE(needs_redaction(once));
  return once;
}

}  // namespace

TEST_CASE("each credential shape is replaced by its label, the text around it kept") {
  const std::string gh36 = repeat("aB3", 12);  // 36 letters and digits
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED:aws_access_key_id] here"},
      {"ASIAY34FZKBOKMUTVV7A", "[REDACTED:aws_access_key_id]"},
      {"token: ghp_" + gh36, "token: [REDACTED:github_token]"},
      {"gho_" + gh36 + "x.", "[REDACTED:github_token]."},
      {"https://ghs_" + gh36 + "@github.com/x", "https://[REDACTED:github_token]@github.com/x"},
      {"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github_token]"},
      {"SLACK=xoxb-1234567890-abcdefghij", "SLACK=[REDACTED:slack_token]"},
      {"xoxp-12345-67890-abcdef", "[REDACTED:slack_token]"},
      {"sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "[REDACTED:anthropic_key]"},
      {"OPENAI sk-proj-abcdefghij0123456789ABCDE end", "OPENAI [REDACTED:openai_key] end"},
      {"sk-" + repeat("a1B2", 12), "[REDACTED:openai_key]"},
      {"stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED:stripe_key]"},
      {"rk_live_0123456789abcdefABCDEF", "[REDACTED:stripe_key]"},
      {"google AIzaSyA1234567890abcdefghijklmnopqrstuv", "google [REDACTED:google_api_key]"},
      {"jwt "
       "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_"
       "XgL0n3I9PlFUP0THsR8U!",
       "jwt [REDACTED:jwt]!"},
      {"Authorization: Bearer abcDEF0123456789xyz",
       "Authorization: Bearer [REDACTED:bearer_token]"},
      {"authorization: bearer  a.b.c-d_e~f+g/h=", "authorization: bearer  [REDACTED:bearer_token]"},
      {"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE "
       "KEY-----\nafter",
       "[REDACTED:private_key]\nafter"},
      {"x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "x [REDACTED:private_key]"},
      {"https://h/x?a=1&password=hunter2&b=2",
       "https://h/x?a=1&password=[REDACTED:secret_value]&b=2"},
      {"DB_PASSWORD=s3cr3t! next", "DB_PASSWORD=[REDACTED:secret_value] next"},
      {"--api-key=abc123 --x", "--api-key=[REDACTED:secret_value] --x"},
      {"client_secret=\"two words\" rest", "client_secret=\"[REDACTED:secret_value]\" rest"},
      {"Token='x'", "Token='[REDACTED:secret_value]'"},
      {"access_token=abc", "access_token=[REDACTED:secret_value]"},
      // A token run that reaches into a private key's first line stops there,
      // and a key id whose end the block hid is whole once it is replaced.
      {"Bearer abcDEF0123456789xyz-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----",
       "Bearer [REDACTED:bearer_token][REDACTED:private_key]"},
      {"password=-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY----- x",
       "password=[REDACTED:private_key] x"},
      {"AKIAIOSFODNN7EXAMPLE-----BEGIN PRIVATE KEY-----\nMIIB",
       "[REDACTED:aws_access_key_id][REDACTED:private_key]"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(checked_redact(c.text) == c.expected);
  }
}

TEST_CASE("ordinary text, paths, ids and digests are left alone") {
  const std::vector<std::string> texts = {
      "The quick brown fox jumps over the lazy dog.",
      "/home/user/projects/toolmux/src/base/redact.cpp:42",
      "C:\\Users\\someone\\AppData\\Local\\token-cache",
      "123e4567-e89b-12d3-a456-426614174000",
      "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "commit 677483b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6",
      "The bearer of this letter; Bearer authentication; bearer tokens are long",
      "task-manager sk-learn desk-1234 ask-me-anything-about-this-long-kebab-case-name",
      "password is required; the token count is 12; max_tokens=256",
      "if (token == expected) return; a==b",
      "password=",
      "Contact: someone@example.com, https://example.com/a?b=c&d=e",
      "eyJhbGciOiJIUzI1NiJ9 alone is not a JWT",
      "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
      "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
      "AKIA is a prefix; AKIAIOSFODNN7EXAMPLE2 is too long to be a key id",
      "ghp_short xoxb-short sk_live_short AIzaShort",
      "base64: SGVsbG8sIFdvcmxkIQ== and 0x7fffffff",
      "",
  };
  for (const std::string& text : texts) {
    INFO(text);
    CHECK_FALSE(needs_redaction(text));
    CHECK(redact(text) == text);
  }
}

TEST_CASE("a registered secret is replaced wherever it appears, and short values are ignored") {
  register_secret("Zq8-registered-secret-value");
  register_secret("short");  // under 8 bytes: ignored
  CHECK(checked_redact("before Zq8-registered-secret-value after") == "before [REDACTED] after");
  CHECK(checked_redact("inside xZq8-registered-secret-valuex") == "inside x[REDACTED]x");
  CHECK(checked_redact("a short text") == "a short text");
  // Of two that start alike, the longest one is replaced whole.
  register_secret("Zq8-registered-secret-value-longer");
  CHECK(checked_redact("Zq8-registered-secret-value-longer!") == "[REDACTED]!");
  // Registering again changes nothing.
  register_secret("Zq8-registered-secret-value");
  CHECK(checked_redact("Zq8-registered-secret-value") == "[REDACTED]");
}

TEST_CASE("a credential right after a known secret is found as it would be on its own") {
  register_secret("Ad1-adjacent-secret");
  const std::string key = "sk-" + repeat("a1B2", 12);
  CHECK(checked_redact("Ad1-adjacent-secret" + key) == "[REDACTED][REDACTED:openai_key]");
  CHECK(checked_redact("xAd1-adjacent-secretBearer abcDEF0123456789xyz") ==
        "x[REDACTED]Bearer [REDACTED:bearer_token]");
}

TEST_CASE("a secret that is part of a redaction label is not registered") {
  register_secret("REDACTED:jwt");
  register_secret("REDACTED");
  CHECK(checked_redact("[REDACTED:jwt] and REDACTED") == "[REDACTED:jwt] and REDACTED");
}

TEST_CASE("secrets registered on one thread are redacted on others") {
  std::thread registering([] { register_secret("Yp7-secret-from-another-thread"); });
  registering.join();
  std::string seen;
  std::thread redacting([&seen] { seen = redact("x Yp7-secret-from-another-thread y"); });
  redacting.join();
  CHECK(seen == "x [REDACTED] y");
  CHECK(redact("Yp7-secret-from-another-thread") == "[REDACTED]");
}

TEST_CASE("hostile texts are scanned in one bounded pass") {
  // Each would make a backtracking pattern or a naive rescan quadratic; a
  // second of work here means a rescan crept in.
  const std::vector<std::string> hostile = {
      repeat("sk-", 200000),
      repeat("eyJaaaaaaaaaaa.", 100000),
      repeat("token=\"", 100000),
      repeat("Bearer ", 100000),
      repeat("-----BEGIN ", 100000),
      repeat("password=password=", 50000),
      repeat("a", 1000000),
      repeat("AKIA", 200000),
      repeat("ghp_", 200000),
      "-----BEGIN PRIVATE KEY-----" + repeat("-----BEGIN PRIVATE KEY-----", 30000),
  };
  for (const std::string& text : hostile) {
    const std::string once = redact(text);
    CHECK(needs_redaction(text) == (once != text));
  }
  CHECK(redact(repeat("-----BEGIN PRIVATE KEY-----", 3)) == "[REDACTED:private_key]");
}

TEST_CASE("redact_json replaces the values of keys that name secrets, whatever their type") {
  const json in = {
      {"password", 1234},
      {"Authorization", "Basic dXNlcjpwYXNz"},
      {"nested", {{"api_key", {{"a", 1}}}, {"X-Api-Key", "k"}, {"access_token", nullptr}}},
      {"list", {"plain", "Bearer abcDEF0123456789xyz"}},
      {"token_count", 12},
      {"max_tokens", 256},
      {"nextPageToken", "page-2"},
      {"path", "/tmp/x"},
  };
  const json out = redact_json(in);
  CHECK(out["password"] == "[REDACTED]");
  CHECK(out["Authorization"] == "[REDACTED]");
  CHECK(out["nested"]["api_key"] == "[REDACTED]");
  CHECK(out["nested"]["X-Api-Key"] == "[REDACTED]");
  CHECK(out["nested"]["access_token"] == "[REDACTED]");
  CHECK(out["list"] == json::array({"plain", "Bearer [REDACTED:bearer_token]"}));
  CHECK(out["token_count"] == 12);
  CHECK(out["max_tokens"] == 256);
  CHECK(out["nextPageToken"] == "page-2");
  CHECK(out["path"] == "/tmp/x");
}

TEST_CASE("redact_json replaces what lies deeper than 64 levels") {
  json deep = "leaf";
  for (int i = 0; i < 70; ++i) deep = json::array({deep});
  json out = redact_json(deep);
  int levels = 1;
  while (out.is_array()) {
    out = out[0];
    ++levels;
  }
  CHECK(out == "[REDACTED:depth]");
  CHECK(levels == 65);
  json shallow = json::array({json::array({"x"})});
  CHECK(redact_json(shallow) == shallow);
}
