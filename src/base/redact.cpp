#include "src/base/redact.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace toolmux {
namespace {

using nlohmann::json;

constexpr std::size_t kMinSecretBytes = 8;
constexpr int kMaxJsonLevels = 64;
constexpr int kMaxPasses = 4;
// What replaces a known secret, each credential shape, and a value nested too
// deep: every text redaction writes. A secret found inside one of them is not
// registered, or redacting a redacted text would change it again.
enum Label : std::uint8_t {
  kKnown,
  kAnthropicKey,
  kAwsAccessKeyId,
  kBearerToken,
  kGithubToken,
  kGoogleApiKey,
  kJwt,
  kOpenaiKey,
  kPrivateKey,
  kSecretValue,
  kSlackToken,
  kStripeKey,
  kDepth,
  kLabelCount
};
constexpr std::array<std::string_view, kLabelCount> kLabels = {"[REDACTED]",
                                                               "[REDACTED:anthropic_key]",
                                                               "[REDACTED:aws_access_key_id]",
                                                               "[REDACTED:bearer_token]",
                                                               "[REDACTED:github_token]",
                                                               "[REDACTED:google_api_key]",
                                                               "[REDACTED:jwt]",
                                                               "[REDACTED:openai_key]",
                                                               "[REDACTED:private_key]",
                                                               "[REDACTED:secret_value]",
                                                               "[REDACTED:slack_token]",
                                                               "[REDACTED:stripe_key]",
                                                               "[REDACTED:depth]"};

// ---- known secrets ---------------------------------------------------------

// An immutable snapshot of the registered secrets, indexed so that a scan
// looks at a position only when its first byte starts some secret, and then
// only at the secrets that share its first two bytes.
struct SecretIndex {
  std::array<bool, 256> first{};
  // First two bytes -> the secrets that start with them, longest first (the
  // longest one wins where two overlap).
  std::unordered_map<std::uint16_t, std::vector<std::string>> by_prefix;
};

std::uint16_t prefix_key(unsigned char a, unsigned char b) {
  return static_cast<std::uint16_t>((a << 8) | b);
}

// The registry: written rarely (at start, on a reload), read on every log line
// and result. Readers keep a per-thread copy of the snapshot and look at one
// atomic generation number to know when it is stale, so redacting takes no lock
// and writes no shared memory.
struct SecretRegistry {
  std::mutex mutex;
  std::set<std::string, std::less<>> secrets;  // guarded by mutex
  std::shared_ptr<const SecretIndex> index;    // guarded by mutex
  std::atomic<std::uint64_t> generation{0};    // bumped after index changes
};

SecretRegistry& registry() {
  static SecretRegistry instance;
  return instance;
}

std::shared_ptr<const SecretIndex> build_index(const std::set<std::string, std::less<>>& secrets) {
  auto index = std::make_shared<SecretIndex>();
  for (const std::string& secret : secrets) {
    const auto a = static_cast<unsigned char>(secret[0]);
    const auto b = static_cast<unsigned char>(secret[1]);
    index->first[a] = true;
    index->by_prefix[prefix_key(a, b)].push_back(secret);
  }
  for (auto& [key, list] : index->by_prefix) {
    std::sort(list.begin(), list.end(),
              [](const std::string& x, const std::string& y) { return x.size() > y.size(); });
  }
  return index;
}

// This thread's view of the registered secrets; null when there are none.
const SecretIndex* current_index() {
  thread_local std::uint64_t seen = 0;
  thread_local std::shared_ptr<const SecretIndex> cached;
  SecretRegistry& r = registry();
  const std::uint64_t now = r.generation.load(std::memory_order_acquire);
  if (now != seen) {
    std::lock_guard lock(r.mutex);
    cached = r.index;
    seen = r.generation.load(std::memory_order_relaxed);
  }
  return cached.get();
}

// The length of the longest registered secret at `text[i]`, or 0.
std::size_t known_secret_at(const SecretIndex& index, std::string_view text, std::size_t i) {
  if (i + 1 >= text.size()) return 0;
  auto it = index.by_prefix.find(
      prefix_key(static_cast<unsigned char>(text[i]), static_cast<unsigned char>(text[i + 1])));
  if (it == index.by_prefix.end()) return 0;
  for (const std::string& secret : it->second) {
    if (text.compare(i, secret.size(), secret) == 0) return secret.size();
  }
  return 0;
}

// ---- credential shapes -----------------------------------------------------

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_upper(c) || is_lower(c) || is_digit(c); }
bool is_base64url(char c) { return is_alnum(c) || c == '_' || c == '-'; }
char lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

// Where a credential may start: at the start of the text or after a byte that
// cannot be part of a token. Keeps "task-..." from looking like "sk-..." and
// keeps a failed attempt from being retried at every byte of the same run.
bool starts_token(std::string_view text, std::size_t i) {
  return i == 0 || !is_base64url(text[i - 1]);
}

bool has_prefix(std::string_view text, std::size_t i, std::string_view prefix) {
  return text.size() - i >= prefix.size() && text.compare(i, prefix.size(), prefix) == 0;
}

bool has_prefix_ignoring_case(std::string_view text, std::size_t i, std::string_view prefix) {
  if (text.size() - i < prefix.size()) return false;
  for (std::size_t k = 0; k < prefix.size(); ++k) {
    if (lower(text[i + k]) != prefix[k]) return false;
  }
  return true;
}

// The end of the run of bytes from `i` that `accept` takes.
template <typename Accept>
std::size_t run_end(std::string_view text, std::size_t i, Accept accept) {
  while (i < text.size() && accept(text[i])) ++i;
  return i;
}

// A credential found by the scan: text[begin, end) is replaced by kLabels[label].
struct Found {
  std::size_t begin = 0;
  std::size_t end = 0;
  Label label = kKnown;
};

// AKIA/ASIA + 16 upper-case letters or digits (an AWS access key id), and
// AIza + 35 base64url characters (a Google API key), each a whole token.
std::optional<Found> aws_or_google_at(std::string_view text, std::size_t i) {
  if (!starts_token(text, i)) return std::nullopt;
  if (has_prefix(text, i, "AKIA") || has_prefix(text, i, "ASIA")) {
    const std::size_t end = run_end(text, i + 4, [](char c) { return is_upper(c) || is_digit(c); });
    if (end - i == 20 && (end == text.size() || !is_base64url(text[end]))) {
      return Found{i, end, kAwsAccessKeyId};
    }
  }
  if (has_prefix(text, i, "AIza")) {
    const std::size_t end = run_end(text, i + 4, is_base64url);
    if (end - i == 39) return Found{i, end, kGoogleApiKey};
  }
  return std::nullopt;
}

// ghp_/gho_/ghu_/ghs_/ghr_ + at least 36 letters or digits; github_pat_ + at
// least 22 letters, digits or '_'.
std::optional<Found> github_at(std::string_view text, std::size_t i) {
  if (!starts_token(text, i)) return std::nullopt;
  if (has_prefix(text, i, "github_pat_")) {
    const std::size_t end = run_end(text, i + 11, [](char c) { return is_alnum(c) || c == '_'; });
    if (end - (i + 11) >= 22) return Found{i, end, kGithubToken};
    return std::nullopt;
  }
  if (text.size() - i < 4 || text[i + 1] != 'h' || text[i + 3] != '_') return std::nullopt;
  const char kind = text[i + 2];
  if (kind != 'p' && kind != 'o' && kind != 'u' && kind != 's' && kind != 'r') return std::nullopt;
  const std::size_t end = run_end(text, i + 4, is_alnum);
  if (end - (i + 4) >= 36 && (end == text.size() || text[end] != '_')) {
    return Found{i, end, kGithubToken};
  }
  return std::nullopt;
}

// xoxb-/xoxp-/xoxa-/xoxr-/xoxs- + at least 10 letters, digits or '-'.
std::optional<Found> slack_at(std::string_view text, std::size_t i) {
  if (!starts_token(text, i) || !has_prefix(text, i, "xox") || text.size() - i < 5 ||
      text[i + 4] != '-') {
    return std::nullopt;
  }
  const char kind = text[i + 3];
  if (kind != 'b' && kind != 'p' && kind != 'a' && kind != 'r' && kind != 's') return std::nullopt;
  const std::size_t end = run_end(text, i + 5, [](char c) { return is_alnum(c) || c == '-'; });
  if (end - (i + 5) >= 10) return Found{i, end, kSlackToken};
  return std::nullopt;
}

// sk-ant-... (Anthropic), sk-proj-/sk-svcacct-/sk-admin-... and sk- + at
// least 32 base64url characters with a letter and a digit among them
// (OpenAI-style), sk_live_/sk_test_/rk_live_/rk_test_ + at least 16 letters or
// digits (Stripe).
std::optional<Found> sk_at(std::string_view text, std::size_t i) {
  // Every one of them has 'k' second: most words that start with s or r end here.
  if (i + 1 >= text.size() || text[i + 1] != 'k' || !starts_token(text, i)) return std::nullopt;
  for (std::string_view stripe : {"sk_live_", "sk_test_", "rk_live_", "rk_test_"}) {
    if (has_prefix(text, i, stripe)) {
      const std::size_t end = run_end(text, i + stripe.size(), is_alnum);
      if (end - (i + stripe.size()) >= 16) return Found{i, end, kStripeKey};
      return std::nullopt;
    }
  }
  if (!has_prefix(text, i, "sk-")) return std::nullopt;
  const std::size_t end = run_end(text, i + 3, is_base64url);
  const std::string_view body = text.substr(i + 3, end - (i + 3));
  if (body.substr(0, 4) == "ant-") {
    if (body.size() >= 24) return Found{i, end, kAnthropicKey};
    return std::nullopt;
  }
  for (std::string_view kind : {"proj-", "svcacct-", "admin-"}) {
    if (body.substr(0, kind.size()) == kind) {
      if (body.size() >= kind.size() + 20) return Found{i, end, kOpenaiKey};
      return std::nullopt;
    }
  }
  const bool letter =
      std::any_of(body.begin(), body.end(), [](char c) { return is_upper(c) || is_lower(c); });
  const bool digit = std::any_of(body.begin(), body.end(), is_digit);
  if (body.size() >= 32 && letter && digit) return Found{i, end, kOpenaiKey};
  return std::nullopt;
}

// A JWT: eyJ... "." ey... "." signature (base64url, maybe empty), the first
// two parts at least 10 characters each.
std::optional<Found> jwt_at(std::string_view text, std::size_t i) {
  if (!starts_token(text, i) || !has_prefix(text, i, "eyJ")) return std::nullopt;
  const std::size_t header_end = run_end(text, i, is_base64url);
  if (header_end - i < 10 || header_end >= text.size() || text[header_end] != '.') {
    return std::nullopt;
  }
  const std::size_t payload = header_end + 1;
  if (!has_prefix(text, payload, "ey")) return std::nullopt;
  const std::size_t payload_end = run_end(text, payload, is_base64url);
  if (payload_end - payload < 10 || payload_end >= text.size() || text[payload_end] != '.') {
    return std::nullopt;
  }
  return Found{i, run_end(text, payload_end + 1, is_base64url), kJwt};
}

// "Bearer <token>", any case, the token at least 12 characters of base64 and
// the token68 punctuation, with a digit, both cases, or punctuation in it (so
// that "bearer authentication" is prose, not a token). "Bearer " stays.
std::optional<Found> bearer_at(std::string_view text, std::size_t i) {
  if (!(i == 0 || !is_alnum(text[i - 1])) || !has_prefix_ignoring_case(text, i, "bearer")) {
    return std::nullopt;
  }
  std::size_t start = i + 6;
  const std::size_t spaces_end = run_end(text, start, [](char c) { return c == ' '; });
  if (spaces_end == start || spaces_end - start > 4) return std::nullopt;
  start = spaces_end;
  auto token_char = [](char c) {
    return is_alnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' ||
           c == '-';
  };
  const std::size_t end = run_end(text, start, token_char);
  if (end - start < 12) return std::nullopt;
  const std::string_view token = text.substr(start, end - start);
  const bool digit = std::any_of(token.begin(), token.end(), is_digit);
  const bool upper = std::any_of(token.begin(), token.end(), is_upper);
  const bool low = std::any_of(token.begin(), token.end(), is_lower);
  const bool punctuation =
      std::any_of(token.begin(), token.end(), [](char c) { return !is_alnum(c); });
  if (!digit && !(upper && low) && !punctuation) return std::nullopt;
  return Found{start, end, kBearerToken};
}

// A PEM private key block: "-----BEGIN <label>-----" whose label holds
// "PRIVATE KEY", through the end of its "-----END ...-----" line, or to the
// end of the text when it has none (a key cut short is still a key).
std::optional<Found> private_key_at(std::string_view text, std::size_t i) {
  constexpr std::string_view kBegin = "-----BEGIN ";
  constexpr std::string_view kDashes = "-----";
  constexpr std::size_t kMaxLabel = 64;
  if (!has_prefix(text, i, kBegin)) return std::nullopt;
  const std::size_t label = i + kBegin.size();
  const std::size_t label_end =
      run_end(text, label, [](char c) { return is_upper(c) || is_digit(c) || c == ' '; });
  if (label_end - label > kMaxLabel || !has_prefix(text, label_end, kDashes)) return std::nullopt;
  if (text.substr(label, label_end - label).find("PRIVATE KEY") == std::string_view::npos) {
    return std::nullopt;
  }
  const std::size_t end_line = text.find("-----END ", label_end + kDashes.size());
  if (end_line == std::string_view::npos) return Found{i, text.size(), kPrivateKey};
  const std::size_t end_label = end_line + 9;
  const std::size_t end_label_end =
      run_end(text, end_label, [](char c) { return is_upper(c) || is_digit(c) || c == ' '; });
  std::size_t end = end_label_end;
  if (end - end_label <= kMaxLabel && has_prefix(text, end, kDashes)) end += kDashes.size();
  return Found{i, end, kPrivateKey};
}

// "<key>=<value>" where the key names a secret (password, passwd, secret,
// token, api_key, access_key, private_key, ignoring case and '_', '-', '.',
// as the key or its end: "DB_PASSWORD=", "--api-key=", "client_secret=").
// The value runs to whitespace, a quote or '&' (or to the closing quote of a
// quoted value on the same line) and is replaced; the key stays.
std::optional<Found> assignment_at(std::string_view text, std::size_t i) {
  constexpr std::size_t kMaxKey = 64;
  constexpr std::size_t kMaxQuoted = 4096;
  auto key_char = [](char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; };
  std::size_t key_begin = i;
  while (key_begin > 0 && i - key_begin < kMaxKey && key_char(text[key_begin - 1])) --key_begin;
  if (key_begin == i) return std::nullopt;
  std::string key;
  for (std::size_t k = key_begin; k < i; ++k) {
    if (is_alnum(text[k])) key += lower(text[k]);
  }
  static constexpr std::array<std::string_view, 7> kNames = {
      "password", "passwd", "secret", "token", "apikey", "accesskey", "privatekey"};
  const bool names_secret = std::any_of(kNames.begin(), kNames.end(), [&](std::string_view name) {
    return key.size() >= name.size() &&
           key.compare(key.size() - name.size(), name.size(), name) == 0;
  });
  if (!names_secret) return std::nullopt;
  std::size_t begin = i + 1;
  if (begin >= text.size()) return std::nullopt;
  std::size_t end = 0;
  const char first = text[begin];
  if (first == '"' || first == '\'') {
    // To the closing quote; a value left open is hidden to the end of its
    // line (at most kMaxQuoted bytes), so that no later attempt reads it again.
    ++begin;
    end = begin;
    while (end < text.size() && end - begin < kMaxQuoted && text[end] != first &&
           text[end] != '\n') {
      ++end;
    }
  } else {
    end = run_end(text, begin, [](char c) {
      return c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '"' && c != '\'' && c != '&';
    });
  }
  // Nothing to hide, a comparison ("token==x"), or hidden already.
  if (end == begin || text[begin] == '=' || has_prefix(text, begin, "[REDACTED")) {
    return std::nullopt;
  }
  return Found{begin, end, kSecretValue};
}

// The shape that may start at a byte, by that byte (null: none starts there).
using ShapeAt = std::optional<Found> (*)(std::string_view text, std::size_t i);
constexpr std::array<ShapeAt, 256> shapes_by_first_byte() {
  constexpr std::pair<char, ShapeAt> kFirst[] = {{'A', aws_or_google_at},
                                                 {'g', github_at},
                                                 {'x', slack_at},
                                                 {'s', sk_at},
                                                 {'r', sk_at},
                                                 {'e', jwt_at},
                                                 {'B', bearer_at},
                                                 {'b', bearer_at},
                                                 {'-', private_key_at},
                                                 {'=', assignment_at}};
  std::array<ShapeAt, 256> table{};
  for (const auto& [byte, shape] : kFirst) table[static_cast<unsigned char>(byte)] = shape;
  return table;
}
constexpr std::array<ShapeAt, 256> kShapesByFirstByte = shapes_by_first_byte();

std::optional<Found> shape_at(std::string_view text, std::size_t i) {
  const ShapeAt shape = kShapesByFirstByte[static_cast<unsigned char>(text[i])];
  return shape ? shape(text, i) : std::nullopt;
}

// Calls `on_found` for each secret and credential in `text`, left to right,
// none overlapping; stops when it returns false. Linear in the text: each
// attempt reads a bounded look-behind and a run that a later attempt cannot
// start inside (starts_token), and the scan resumes after what it found.
//
// Right after a replacement, a shape is looked for as if the text started
// there: the redacted text has a label's ']' before that point, not the bytes
// that were replaced, and both must agree (so that redacting twice changes
// nothing more, and a key right after a secret is not missed).
template <typename OnFound>
void scan(std::string_view text, OnFound on_found) {
  const SecretIndex* index = current_index();
  std::size_t last_end = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (index && index->first[c]) {
      if (const std::size_t length = known_secret_at(*index, text, i); length != 0) {
        if (!on_found(Found{i, i + length, kKnown})) return;
        i += length;
        last_end = i;
        continue;
      }
    }
    if (kShapesByFirstByte[c]) {
      std::optional<Found> found;
      if (i != 0 && i == last_end) {
        found = shape_at(text.substr(i), 0);
        if (found) {
          found->begin += i;
          found->end += i;
        }
      } else {
        found = shape_at(text, i);
      }
      if (found) {
        // A private key's block wins over a token run that reached into its
        // first line (its body would be left otherwise): the run stops there.
        if (found->label != kPrivateKey) {
          const std::string_view run = text.substr(found->begin, found->end - found->begin);
          for (std::size_t pem = run.find("-----BEGIN"); pem != std::string_view::npos;
               pem = run.find("-----BEGIN", pem + 1)) {
            if (private_key_at(text, found->begin + pem)) {
              found->end = found->begin + pem;
              break;
            }
          }
        }
        if (found->end == found->begin) {
          ++i;
          continue;
        }
        if (!on_found(*found)) return;
        i = std::max(found->end, i + 1);
        last_end = found->end;
        continue;
      }
    }
    ++i;
  }
}

// ---- keys that name secrets ------------------------------------------------

bool key_names_secret(std::string_view key) {
  std::string k;
  for (char c : key) {
    if (c != '_' && c != '-' && c != '.') k += lower(c);
  }
  static constexpr std::array<std::string_view, 7> kEndings = {
      "password", "passwd", "passphrase", "secret", "apikey", "privatekey", "secretkey"};
  static constexpr std::array<std::string_view, 15> kWhole = {
      "authorization", "proxyauthorization", "cookie",        "setcookie",       "token",
      "accesstoken",   "refreshtoken",       "idtoken",       "authtoken",       "sessiontoken",
      "bearertoken",   "apitoken",           "securitytoken", "secretaccesskey", "credentials"};
  if (std::find(kWhole.begin(), kWhole.end(), k) != kWhole.end()) return true;
  return std::any_of(kEndings.begin(), kEndings.end(), [&](std::string_view end) {
    return k.size() >= end.size() && k.compare(k.size() - end.size(), end.size(), end) == 0;
  });
}

json redact_value(const json& value, int level) {
  if (level > kMaxJsonLevels) return std::string(kLabels[kDepth]);
  switch (value.type()) {
    case json::value_t::string: {
      const auto& text = value.get_ref<const std::string&>();
      return needs_redaction(text) ? json(redact(text)) : value;
    }
    case json::value_t::object: {
      json out = json::object();
      for (const auto& [key, item] : value.items()) {
        out[key] = key_names_secret(key) ? json(std::string(kLabels[kKnown]))
                                         : redact_value(item, level + 1);
      }
      return out;
    }
    case json::value_t::array: {
      json out = json::array();
      for (const auto& item : value) out.push_back(redact_value(item, level + 1));
      return out;
    }
    default:
      return value;
  }
}

}  // namespace

void register_secret(std::string_view secret) {
  if (secret.size() < kMinSecretBytes) return;
  for (std::string_view label : kLabels) {
    if (label.find(secret) != std::string_view::npos) return;
  }
  SecretRegistry& r = registry();
  std::lock_guard lock(r.mutex);
  if (!r.secrets.emplace(secret).second) return;
  r.index = build_index(r.secrets);
  r.generation.fetch_add(1, std::memory_order_release);
}

bool needs_redaction(std::string_view text) {
  bool found = false;
  scan(text, [&found](const Found&) {
    found = true;
    return false;
  });
  return found;
}

namespace {

// One pass of the scan; nullopt when it found nothing.
std::optional<std::string> redact_pass(std::string_view text) {
  std::optional<std::string> out;
  std::size_t copied = 0;
  scan(text, [&](const Found& found) {
    if (!out) {
      out.emplace();
      out->reserve(text.size());
    }
    out->append(text.substr(copied, found.begin - copied));
    out->append(kLabels[found.label]);
    copied = found.end;
    return true;
  });
  if (out) out->append(text.substr(copied));
  return out;
}

}  // namespace

std::string redact(std::string_view text) {
  std::optional<std::string> out = redact_pass(text);
  if (!out) return std::string(text);
  // A credential whose end a replaced one hid ("AKIA...-----BEGIN ...": the
  // key id is whole once the block after it is a label) shows on another
  // pass; a few passes reach the point where nothing changes.
  for (int pass = 1; pass < kMaxPasses; ++pass) {
    std::optional<std::string> again = redact_pass(*out);
    if (!again) break;
    out = std::move(again);
  }
  return std::move(*out);
}

json redact_json(const json& value) { return redact_value(value, 1); }

}  // namespace toolmux
