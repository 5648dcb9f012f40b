// Redaction: known secrets and credential shapes replaced, ordinary text left
// alone, JSON values walked with keys that name secrets; and the classes of
// personal data an operator turns on (src/base/personal_data.h), each with
// what it catches and what it does not.
#include "src/base/redact.h"

#include "src/base/personal_data.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

using nlohmann::json;
using toolmux::needs_redaction;
using toolmux::PersonalData;
using toolmux::PersonalDataClasses;
using toolmux::redact;
using toolmux::redact_json;
using toolmux::redact_personal_data;
using toolmux::redact_personal_data_json;
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

// The set of the classes named.
PersonalDataClasses classes_of(std::initializer_list<PersonalData> kinds) {
  PersonalDataClasses classes;
  for (PersonalData kind : kinds) classes.insert(kind);
  return classes;
}

// Every class.
PersonalDataClasses all_classes() {
  PersonalDataClasses classes;
  for (std::string_view name : toolmux::personal_data_names()) {
    classes.insert(*toolmux::personal_data_from_name(name));
  }
  return classes;
}

// `text` with the personal data of `classes` redacted, checking that
// redacting twice changes nothing more.
std::string checked_redact_personal(const std::string& text,
                                    PersonalDataClasses classes = all_classes()) {
  const std::string once = redact_personal_data(text, classes);
  CHECK(redact_personal_data(once, classes) == once);
  return once;
}

struct PersonalCase {
  std::string text;
  std::string expected;
};

// Checks each case with every class on: `expected` is what a reader sees.
void check_personal_cases(const std::vector<PersonalCase>& cases) {
  for (const PersonalCase& c : cases) {
    INFO(c.text);
    CHECK(checked_redact_personal(c.text) == c.expected);
  }
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

TEST_CASE("each class of personal data is replaced by its label, and only when it is on") {
  const std::string text =
      "mail alice@example.com, call +1 555 123 4567, card 4111 1111 1111 1111, "
      "IBAN DE89 3704 0044 0532 0130 00, SSN 123-45-6789, NINO AB123456C.";
  CHECK(checked_redact_personal(text) ==
        "mail [REDACTED:email], call [REDACTED:phone], card [REDACTED:payment_card], "
        "IBAN [REDACTED:iban], SSN [REDACTED:us_ssn], NINO [REDACTED:uk_nino].");
  CHECK(checked_redact_personal(text, classes_of({PersonalData::email, PersonalData::iban})) ==
        "mail [REDACTED:email], call +1 555 123 4567, card 4111 1111 1111 1111, "
        "IBAN [REDACTED:iban], SSN 123-45-6789, NINO AB123456C.");
  // Off by default: no class, no change.
  CHECK(redact_personal_data(text, PersonalDataClasses{}) == text);
  // Secrets' redaction knows none of them.
  CHECK_FALSE(needs_redaction(text));
}

TEST_CASE("personal data classes are named as the catalog file names them") {
  CHECK(toolmux::personal_data_names() == std::vector<std::string_view>{"email", "phone",
                                                                        "payment_card", "iban",
                                                                        "us_ssn", "uk_nino"});
  CHECK(toolmux::personal_data_from_name("payment_card") == PersonalData::payment_card);
  CHECK(toolmux::personal_data_name(PersonalData::uk_nino) == "uk_nino");
  CHECK_FALSE(toolmux::personal_data_from_name("Email").has_value());
  CHECK_FALSE(toolmux::personal_data_from_name("credit_card").has_value());
}

TEST_CASE("e-mail: an address with a dotted domain, wherever it stands, and nothing else") {
  check_personal_cases({
      {"mail alice@example.com now", "mail [REDACTED:email] now"},
      {"Alice.Smith+tag@mail.example.co.uk.", "[REDACTED:email]."},
      {"<bob_o-neil%x@EXAMPLE.ORG>", "<[REDACTED:email]>"},
      {"jos\xc3\xa9.garcia@example.com", "[REDACTED:email]"},  // a non-ASCII local part
      {"see https://example.com/users/bob@example.org/profile",
       "see https://example.com/users/[REDACTED:email]/profile"},
      {"mailto:carol@example.net?subject=hi", "mailto:[REDACTED:email]?subject=hi"},
      // A URL's user:password@host cannot be told from an address.
      {"https://alice:secret@host.example.org/x", "https://alice:[REDACTED:email]/x"},
      {"git@github.com:org/repo.git", "[REDACTED:email]:org/repo.git"},
      // Not addresses: no dot in the domain, an IP address, no local part, an
      // encoded '@', a top-level domain with a digit.
      {"user@localhost and root@server", "user@localhost and root@server"},
      {"x@192.168.0.1", "x@192.168.0.1"},
      {"@alice on a forum", "@alice on a forum"},
      {"alice%40example.com", "alice%40example.com"},
      {"a@b.c2 and a@-b.com", "a@b.c2 and a@-b.com"},
  });
}

TEST_CASE("phone: '+' and 8 to 15 digits, or a North American number, not dates or versions") {
  check_personal_cases({
      {"call +1 555 123 4567 now", "call [REDACTED:phone] now"},
      {"+44 (0)20 7946 0958", "[REDACTED:phone]"},
      {"+1 (555) 123-4567", "[REDACTED:phone]"},
      {"+14155552671", "[REDACTED:phone]"},
      {"+49.30.1234.5678", "[REDACTED:phone]"},
      {"+1-555-123-4567x123", "[REDACTED:phone]x123"},  // the extension stays
      {"(555) 123-4567 or (555)123-4567", "[REDACTED:phone] or [REDACTED:phone]"},
      {"555-234-5678, 555.234.5678, 1-800-555-0199",
       "[REDACTED:phone], [REDACTED:phone], [REDACTED:phone]"},
      // Not phone numbers: an area code that starts with 1, '+' and too few or
      // too many digits, arithmetic, a national number without '+' outside
      // North America, a date, a version, an IP address, a longer number.
      {"123-456-7890", "123-456-7890"},
      {"+1234567 and +12.5% and 1+15551234567", "+1234567 and +12.5% and 1+15551234567"},
      {"+1 555 123 4567 8901 2345", "+1 555 123 4567 8901 2345"},
      {"020 7946 0958", "020 7946 0958"},
      {"2024-01-15, 15.01.2024, 01/15/2024", "2024-01-15, 15.01.2024, 01/15/2024"},
      {"version 1.2.3.4, ip 192.168.100.200", "version 1.2.3.4, ip 192.168.100.200"},
      {"555-234-5678-9 and ID-555-234-5678", "555-234-5678-9 and ID-555-234-5678"},
  });
}

TEST_CASE("payment card: 13 to 19 digits that pass the Luhn check, whole or in groups") {
  check_personal_cases({
      {"card 4111 1111 1111 1111 exp", "card [REDACTED:payment_card] exp"},
      {"card 4111-1111-1111-1111", "card [REDACTED:payment_card]"},
      {"card=4111111111111111;", "card=[REDACTED:payment_card];"},
      {"amex 3782 822463 10005", "amex [REDACTED:payment_card]"},
      {"visa13 4222222222222", "visa13 [REDACTED:payment_card]"},
      {"mc 5555 5555 5555 4444 cvv 123", "mc [REDACTED:payment_card] cvv 123"},
      // Card then CVV in the same run of groups: the card's groups only.
      {"4111 1111 1111 1111 123", "[REDACTED:payment_card] 123"},
      // Not cards: the Luhn check fails, an order number or a millisecond
      // timestamp (first digit 1), a decimal fraction, part of a word or of a
      // longer number, mixed separators, groups no card is printed in.
      {"card 4111 1111 1111 1112", "card 4111 1111 1111 1112"},
      {"order 1234567890123456, at 1700000000000", "order 1234567890123456, at 1700000000000"},
      {"pi 3.4111111111111111", "pi 3.4111111111111111"},
      {"ID4111111111111111 4111111111111111abc", "ID4111111111111111 4111111111111111abc"},
      {"41111111111111111111111", "41111111111111111111111"},
      {"4111 1111-1111 1111", "4111 1111-1111 1111"},
      {"4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"},
  });
}

TEST_CASE("IBAN: a registry country's length and mod-97 check digits, in upper case") {
  check_personal_cases({
      {"IBAN DE89 3704 0044 0532 0130 00.", "IBAN [REDACTED:iban]."},
      {"DE89370400440532013000", "[REDACTED:iban]"},
      {"GB29 NWBK 6016 1331 9268 19", "[REDACTED:iban]"},
      {"pay NO9386011117947 today", "pay [REDACTED:iban] today"},
      {"MT84MALT011000012345MTLCAST001S", "[REDACTED:iban]"},
      // Not IBANs: a wrong check digit, lower case, a country without IBANs,
      // the wrong length for its country, groups of other sizes, part of a word.
      {"DE88 3704 0044 0532 0130 00", "DE88 3704 0044 0532 0130 00"},
      {"gb29nwbk60161331926819", "gb29nwbk60161331926819"},
      {"US89370400440532013000", "US89370400440532013000"},
      {"DE8937040044053201300", "DE8937040044053201300"},
      {"DE89 37040044 0532013000", "DE89 37040044 0532013000"},
      {"XDE89370400440532013000", "XDE89370400440532013000"},
  });
}

TEST_CASE("US SSN and UK NINO: their written shapes, in the ranges that are issued") {
  check_personal_cases({
      {"SSN 123-45-6789.", "SSN [REDACTED:us_ssn]."},
      {"ssn:078-05-1120", "ssn:[REDACTED:us_ssn]"},
      {"NINO AB123456C", "NINO [REDACTED:uk_nino]"},
      {"NINO AB 12 34 56 C.", "NINO [REDACTED:uk_nino]."},
      // Not SSNs: area 000, 666 or 9xx, group 00, serial 0000; no dashes;
      // part of a longer number.
      {"000-12-3456 666-12-3456 900-12-3456 123-00-4567 123-45-0000",
       "000-12-3456 666-12-3456 900-12-3456 123-00-4567 123-45-0000"},
      {"123456789 and 123 45 6789", "123456789 and 123 45 6789"},
      {"123-45-67890 and 1-123-45-6789", "123-45-67890 and 1-123-45-6789"},
      // Not NINOs: prefixes HMRC does not allocate (QQ, GB, D.., .O), suffix E,
      // no suffix, lower case, part of a word.
      {"QQ123456C GB123456A DA123456A AO123456A", "QQ123456C GB123456A DA123456A AO123456A"},
      {"AB123456E AB123456 ab123456c XAB123456C", "AB123456E AB123456 ab123456c XAB123456C"},
  });
}

TEST_CASE("personal data is found in one bounded pass over hostile texts") {
  // Each is a run of starts that a rescan or a backtracking pattern would
  // read again and again; a second of work here means one crept in.
  const std::vector<std::string> hostile = {
      repeat("1 ", 500000),       repeat("4111 ", 200000),    repeat("a@", 500000),
      repeat("a.", 500000),       repeat("+1 (", 250000),     repeat("DE89 ", 200000),
      repeat("AB 12 ", 200000),   repeat("@b.", 300000),      repeat("1", 1000000),
      repeat("x", 1000000) + "@", "@" + repeat("a.", 500000),
  };
  for (const std::string& text : hostile) {
    const std::string once = redact_personal_data(text, all_classes());
    CHECK(once.size() >= text.size() / 2);
  }
  // An address's local part is read back at most 64 bytes from its '@'.
  CHECK(checked_redact_personal(repeat("x", 100) + "@example.com") ==
        repeat("x", 36) + "[REDACTED:email]");
}

TEST_CASE("redact_personal_data_json redacts strings and keeps keys, numbers and depth bounded") {
  const json in = {{"alice@example.com", {"write to alice@example.com", 4111111111111111, true}},
                   {"card", "4111111111111111"}};
  CHECK(redact_personal_data_json(in, all_classes()) ==
        json{{"alice@example.com", {"write to [REDACTED:email]", 4111111111111111, true}},
             {"card", "[REDACTED:payment_card]"}});
  CHECK(redact_personal_data_json(in, PersonalDataClasses{}) == in);
  json deep = "alice@example.com";
  for (int i = 0; i < 70; ++i) deep = json::array({deep});
  json out = redact_personal_data_json(deep, all_classes());
  while (out.is_array()) out = out[0];
  CHECK(out == "[REDACTED:depth]");
}
