#include "src/base/personal_data.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

namespace toolmux {
namespace {

using nlohmann::json;

constexpr int kMaxJsonLevels = 64;
constexpr int kMaxPasses = 4;
constexpr std::string_view kDepthLabel = "[REDACTED:depth]";

constexpr std::size_t kClassCount = 6;
constexpr std::array<std::string_view, kClassCount> kNames = {"email", "phone",  "payment_card",
                                                              "iban",  "us_ssn", "uk_nino"};
constexpr std::array<std::string_view, kClassCount> kLabels = {
    "[REDACTED:email]", "[REDACTED:phone]",  "[REDACTED:payment_card]",
    "[REDACTED:iban]",  "[REDACTED:us_ssn]", "[REDACTED:uk_nino]"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_alpha(char c) { return is_upper(c) || (c >= 'a' && c <= 'z'); }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
int digit_value(char c) { return c - '0'; }

// What one attempt found: text[begin, end) is replaced by the label of `kind`.
struct Found {
  std::size_t begin = 0;
  std::size_t end = 0;
  PersonalData kind = PersonalData::email;
};

// Where a number or an identifier may start: at the start of the text, right
// after what the scan replaced (`fresh`: the redacted text has a label's ']'
// there), or after a byte that would make it part of something longer: not a
// letter or digit, nor '.', '-', '_', '/' or '+' ("1.4111...", "ID-123-45-6789").
bool number_starts(std::string_view text, std::size_t i, bool fresh) {
  if (fresh || i == 0) return true;
  const char c = text[i - 1];
  return !is_alnum(c) && c != '.' && c != '-' && c != '_' && c != '/' && c != '+';
}

// Where one may end: at the end of the text or before a byte that is not a
// letter, digit or '_', nor a '.', '-' or '/' that a digit follows (so that
// "123-45-6789-0" and "1.2.3.4" are not read in part).
bool number_ends(std::string_view text, std::size_t j) {
  if (j == text.size()) return true;
  const char c = text[j];
  if (is_alnum(c) || c == '_') return false;
  const bool continues =
      (c == '.' || c == '-' || c == '/') && j + 1 < text.size() && is_digit(text[j + 1]);
  return !continues;
}

// Where an identifier of letters and digits (an IBAN, a NINO) may start and end.
bool word_starts(std::string_view text, std::size_t i, bool fresh) {
  return fresh || i == 0 || !is_alnum(text[i - 1]);
}
bool word_ends(std::string_view text, std::size_t j) {
  return j == text.size() || !is_alnum(text[j]);
}

// The end of the run of digits from `i`, reading at most `max` of them.
std::size_t digits_end(std::string_view text, std::size_t i, std::size_t max) {
  std::size_t j = i;
  while (j < text.size() && j - i < max && is_digit(text[j])) ++j;
  return j;
}

// ---- email -------------------------------------------------------------------

// A byte of an address's local part: ASCII letters, digits and ._%+-, and the
// bytes of non-ASCII characters (RFC 6531).
bool is_local_byte(char c) {
  return is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// The domain after the '@' at `at`: two or more labels of ASCII letters,
// digits and '-' (1-63 bytes, no '-' at either end) joined by '.', at most
// 253 bytes, the last of 2 or more letters. Its end, or 0.
std::size_t domain_end(std::string_view text, std::size_t at) {
  constexpr std::size_t kMaxLabel = 63;
  constexpr std::size_t kMaxDomain = 253;
  std::size_t pos = at + 1;
  std::size_t labels = 0;
  bool last_is_letters = false;
  while (true) {
    const std::size_t begin = pos;
    bool letters = true;
    while (pos < text.size() && pos - begin <= kMaxLabel &&
           (is_alnum(text[pos]) || text[pos] == '-')) {
      letters = letters && is_alpha(text[pos]);
      ++pos;
    }
    const std::size_t length = pos - begin;
    if (length == 0 || length > kMaxLabel || text[begin] == '-' || text[pos - 1] == '-') {
      return 0;
    }
    ++labels;
    last_is_letters = letters && length >= 2;
    if (pos - (at + 1) > kMaxDomain) return 0;
    // Another label follows only where a '.' has a letter or digit after it
    // (a sentence's full stop is not part of the address).
    if (pos + 1 < text.size() && text[pos] == '.' && is_alnum(text[pos + 1])) {
      ++pos;
      continue;
    }
    break;
  }
  return labels >= 2 && last_is_letters ? pos : 0;
}

// An address around the '@' at `at`: its local part reaches back at most 64
// bytes and never before `floor` (the end of what the scan replaced last).
std::optional<Found> email_at(std::string_view text, std::size_t at, std::size_t floor) {
  constexpr std::size_t kMaxLocal = 64;
  std::size_t begin = at;
  while (begin > floor && at - begin < kMaxLocal && is_local_byte(text[begin - 1])) --begin;
  // Cut at 64 bytes, a character's UTF-8 continuation bytes are not its start.
  while (begin < at && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) ++begin;
  while (begin < at && text[begin] == '.') ++begin;
  if (begin == at) return std::nullopt;
  const std::size_t end = domain_end(text, at);
  if (end == 0) return std::nullopt;
  return Found{begin, end, PersonalData::email};
}

// ---- phone -------------------------------------------------------------------

bool is_phone_separator(char c) { return c == ' ' || c == '-' || c == '.'; }

// The end of an international number at `i` ('+'): a digit 1-9, then 8-15
// digits in all, in groups with one ' ', '-' or '.' between them and at most
// one group in parentheses ("+44 (0)20 7946 0958"). 0 when it is not one.
std::size_t international_end(std::string_view text, std::size_t i) {
  constexpr std::size_t kMin = 8;
  constexpr std::size_t kMax = 15;
  constexpr std::size_t kMaxParenthesized = 4;
  std::size_t j = i + 1;
  if (j >= text.size() || !is_digit(text[j]) || text[j] == '0') return 0;
  std::size_t digits = 0;
  bool parenthesized = false;
  while (j < text.size()) {
    if (is_digit(text[j])) {
      if (++digits > kMax) return 0;  // part of a longer number
      ++j;
      continue;
    }
    std::size_t k = j;
    if (is_phone_separator(text[k])) ++k;
    if (k < text.size() && text[k] == '(' && !parenthesized) {
      const std::size_t inner_end = digits_end(text, k + 1, kMaxParenthesized + 1);
      const std::size_t inner = inner_end - (k + 1);
      if (inner == 0 || inner > kMaxParenthesized || inner_end >= text.size() ||
          text[inner_end] != ')') {
        break;
      }
      std::size_t after = inner_end + 1;
      if (after < text.size() && (text[after] == ' ' || text[after] == '-')) ++after;
      if (after >= text.size() || !is_digit(text[after])) break;
      digits += inner;
      parenthesized = true;
      j = after;
      continue;
    }
    if (k > j && k < text.size() && is_digit(text[k])) {
      j = k;
      continue;
    }
    break;
  }
  return digits >= kMin ? j : 0;
}

// The end of the digits `count` long at `i`, or 0.
std::size_t exactly_digits(std::string_view text, std::size_t i, std::size_t count) {
  if (i > text.size()) return 0;
  const std::size_t end = digits_end(text, i, count + 1);
  return end - i == count ? end : 0;
}

// The end of a North American number at `i`: "(NXX) XXX-XXXX" (the space may
// be left out, the '-' may be ' ' or '.'), or "NXX-XXX-XXXX" with '-' or '.'
// both times, maybe after "1" and the same separator; N is 2-9. 0 when it is
// not one.
std::size_t north_american_end(std::string_view text, std::size_t i) {
  auto area_code = [&](std::size_t at) {
    return at < text.size() && text[at] >= '2' && text[at] <= '9' &&
           exactly_digits(text, at, 3) != 0;
  };
  if (text[i] == '(') {
    if (!area_code(i + 1) || i + 4 >= text.size() || text[i + 4] != ')') return 0;
    std::size_t j = i + 5;
    if (j < text.size() && text[j] == ' ') ++j;
    const std::size_t exchange = exactly_digits(text, j, 3);
    if (exchange == 0 || exchange >= text.size()) return 0;
    const char separator = text[exchange];
    if (separator != '-' && separator != ' ' && separator != '.') return 0;
    return exactly_digits(text, exchange + 1, 4);
  }
  std::size_t j = i;
  char separator = 0;
  if (text[i] == '1' && i + 1 < text.size() && (text[i + 1] == '-' || text[i + 1] == '.')) {
    separator = text[i + 1];
    j = i + 2;
  }
  if (!area_code(j)) return 0;
  j += 3;
  if (j >= text.size() || (text[j] != '-' && text[j] != '.') ||
      (separator != 0 && text[j] != separator)) {
    return 0;
  }
  separator = text[j];
  const std::size_t exchange = exactly_digits(text, j + 1, 3);
  if (exchange == 0 || exchange >= text.size() || text[exchange] != separator) return 0;
  return exactly_digits(text, exchange + 1, 4);
}

std::optional<Found> phone_at(std::string_view text, std::size_t i, bool fresh) {
  if (!number_starts(text, i, fresh)) return std::nullopt;
  const std::size_t end = text[i] == '+' ? international_end(text, i) : north_american_end(text, i);
  if (end == 0) return std::nullopt;
  // An extension ("x123") may follow; it stays.
  const bool extension =
      end + 1 < text.size() && (text[end] == 'x' || text[end] == 'X') && is_digit(text[end + 1]);
  if (!extension && !number_ends(text, end)) return std::nullopt;
  return Found{i, end, PersonalData::phone};
}

// ---- payment card --------------------------------------------------------------

// Whether the digits of text[begin, end) (separators skipped) pass the Luhn check.
bool passes_luhn(std::string_view text, std::size_t begin, std::size_t end) {
  int sum = 0;
  bool twice = false;
  for (std::size_t k = end; k > begin; --k) {
    const char c = text[k - 1];
    if (!is_digit(c)) continue;
    int d = digit_value(c);
    if (twice) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    twice = !twice;
  }
  return sum % 10 == 0;
}

// 13-19 digits, the first 2-6 (the card networks' ranges: not a 13-digit
// millisecond timestamp that starts with 1), that pass the Luhn check: one
// unbroken run, or groups of 4-6 digits (the last 1-6) joined by one ' ' or
// one '-', the same each time. Of a longer run of groups, the longest first
// groups that make a card number ("4111 1111 1111 1111 123": card and CVV).
std::optional<Found> payment_card_at(std::string_view text, std::size_t i, bool fresh) {
  constexpr std::size_t kMinDigits = 13;
  constexpr std::size_t kMaxDigits = 19;
  if (text[i] < '2' || text[i] > '6' || !number_starts(text, i, fresh)) return std::nullopt;
  struct Group {
    std::size_t end;
    std::size_t digits;  // in this group and those before it
    std::size_t length;
  };
  std::array<Group, kMaxDigits> groups{};
  std::size_t count = 0;
  std::size_t total = 0;
  char separator = 0;
  for (std::size_t j = i; count < groups.size();) {
    const std::size_t end = digits_end(text, j, kMaxDigits + 1);
    total += end - j;
    if (total > kMaxDigits) break;
    groups[count++] = {end, total, end - j};
    if (end + 1 < text.size() && (text[end] == ' ' || text[end] == '-') &&
        (separator == 0 || text[end] == separator) && is_digit(text[end + 1])) {
      separator = text[end];
      j = end + 1;
      continue;
    }
    break;
  }
  for (std::size_t k = count; k >= 1; --k) {
    const Group& last = groups[k - 1];
    if (last.digits < kMinDigits) break;
    const bool grouped =
        std::all_of(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(k - 1),
                    [](const Group& g) { return g.length >= 4 && g.length <= 6; });
    if (k > 1 && (!grouped || last.length > 6)) continue;
    // All of the run: it must end there. Fewer groups: a separator and
    // digits follow, which are not part of the card number.
    if (k == count && !number_ends(text, last.end)) continue;
    if (passes_luhn(text, i, last.end)) return Found{i, last.end, PersonalData::payment_card};
  }
  return std::nullopt;
}

// ---- IBAN ----------------------------------------------------------------------

struct IbanCountry {
  std::string_view code;
  std::size_t length;
};
// The countries of the SWIFT IBAN registry and the length of their IBANs.
constexpr std::array<IbanCountry, 89> kIbanCountries = {{
    {"AD", 24}, {"AE", 23}, {"AL", 28}, {"AT", 20}, {"AZ", 28}, {"BA", 20}, {"BE", 16}, {"BG", 22},
    {"BH", 22}, {"BI", 27}, {"BR", 29}, {"BY", 28}, {"CH", 21}, {"CR", 22}, {"CY", 28}, {"CZ", 24},
    {"DE", 22}, {"DJ", 27}, {"DK", 18}, {"DO", 28}, {"EE", 20}, {"EG", 29}, {"ES", 24}, {"FI", 18},
    {"FK", 18}, {"FO", 18}, {"FR", 27}, {"GB", 22}, {"GE", 22}, {"GI", 23}, {"GL", 18}, {"GR", 27},
    {"GT", 28}, {"HN", 28}, {"HR", 21}, {"HU", 28}, {"IE", 22}, {"IL", 23}, {"IQ", 23}, {"IS", 26},
    {"IT", 27}, {"JO", 30}, {"KW", 30}, {"KZ", 20}, {"LB", 28}, {"LC", 32}, {"LI", 21}, {"LT", 20},
    {"LU", 20}, {"LV", 21}, {"LY", 25}, {"MC", 27}, {"MD", 24}, {"ME", 22}, {"MK", 19}, {"MN", 20},
    {"MR", 27}, {"MT", 31}, {"MU", 30}, {"NI", 28}, {"NL", 18}, {"NO", 15}, {"OM", 23}, {"PK", 24},
    {"PL", 28}, {"PS", 29}, {"PT", 25}, {"QA", 29}, {"RO", 24}, {"RS", 22}, {"RU", 33}, {"SA", 24},
    {"SC", 31}, {"SD", 18}, {"SE", 24}, {"SI", 19}, {"SK", 24}, {"SM", 27}, {"SO", 23}, {"ST", 25},
    {"SV", 28}, {"TL", 23}, {"TN", 24}, {"TR", 26}, {"UA", 29}, {"VA", 22}, {"VG", 24}, {"XK", 20},
    {"YE", 30},
}};

std::size_t iban_length(std::string_view code) {
  const auto* it = std::find_if(kIbanCountries.begin(), kIbanCountries.end(),
                                [&](const IbanCountry& c) { return c.code == code; });
  return it == kIbanCountries.end() ? 0 : it->length;
}

// ISO 13616: the first four characters moved to the end, each letter read as
// two digits (A = 10 ... Z = 35), the number is 1 modulo 97.
bool passes_mod97(std::string_view iban) {
  int remainder = 0;
  auto add = [&remainder](char c) {
    remainder = is_digit(c) ? (remainder * 10 + digit_value(c)) % 97
                            : (remainder * 100 + (c - 'A' + 10)) % 97;
  };
  for (char c : iban.substr(4)) add(c);
  for (char c : iban.substr(0, 4)) add(c);
  return remainder == 1;
}

// An IBAN in upper case: a registry country's code, two check digits and the
// rest, as long as that country's IBANs are, in one run or in groups of four
// joined by single spaces ("DE89 3704 0044 0532 0130 00").
std::optional<Found> iban_at(std::string_view text, std::size_t i, bool fresh) {
  constexpr std::size_t kMaxLength = 34;
  if (!word_starts(text, i, fresh) || i + 4 > text.size() || !is_upper(text[i + 1]) ||
      !is_digit(text[i + 2]) || !is_digit(text[i + 3])) {
    return std::nullopt;
  }
  const std::size_t length = iban_length(text.substr(i, 2));
  if (length == 0) return std::nullopt;
  std::array<char, kMaxLength> iban{};
  std::size_t count = 0;
  std::size_t j = i;
  const bool spaced = i + 4 < text.size() && text[i + 4] == ' ';
  while (count < length && j < text.size()) {
    if (spaced && count % 4 == 0 && count != 0) {
      if (text[j] != ' ') return std::nullopt;
      ++j;
      if (j >= text.size()) return std::nullopt;
    }
    const char c = text[j];
    if (!is_upper(c) && !is_digit(c)) return std::nullopt;
    iban[count++] = c;
    ++j;
  }
  if (count != length || !word_ends(text, j)) return std::nullopt;
  if (!passes_mod97(std::string_view(iban.data(), count))) return std::nullopt;
  return Found{i, j, PersonalData::iban};
}

// ---- national identity numbers ---------------------------------------------------

// A US Social Security number as it is written, AAA-GG-SSSS, of a range the
// SSA issues: area 001-899 but 666, group 01-99, serial 0001-9999.
std::optional<Found> us_ssn_at(std::string_view text, std::size_t i, bool fresh) {
  if (!number_starts(text, i, fresh)) return std::nullopt;
  const std::size_t area_end = exactly_digits(text, i, 3);
  if (area_end == 0 || area_end >= text.size() || text[area_end] != '-') return std::nullopt;
  const std::size_t group_end = exactly_digits(text, area_end + 1, 2);
  if (group_end == 0 || group_end >= text.size() || text[group_end] != '-') return std::nullopt;
  const std::size_t serial_end = exactly_digits(text, group_end + 1, 4);
  if (serial_end == 0 || !number_ends(text, serial_end)) return std::nullopt;
  const std::string_view area = text.substr(i, 3);
  if (area == "000" || area == "666" || area[0] == '9' || text.substr(area_end + 1, 2) == "00" ||
      text.substr(group_end + 1, 4) == "0000") {
    return std::nullopt;
  }
  return Found{i, serial_end, PersonalData::us_ssn};
}

// A UK National Insurance number: two prefix letters HMRC allocates (the
// first not D, F, I, Q, U or V; the second not D, F, I, O, Q, U or V; not BG,
// GB, KN, NK, NT, TN or ZZ), six digits and the suffix A, B, C or D, in upper
// case, "AB123456C" or spaced "AB 12 34 56 C".
std::optional<Found> uk_nino_at(std::string_view text, std::size_t i, bool fresh) {
  constexpr std::string_view kNotFirst = "DFIQUV";
  constexpr std::string_view kNotSecond = "DFIOQUV";
  constexpr std::array<std::string_view, 7> kNotPrefix = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"};
  if (!word_starts(text, i, fresh) || i + 2 > text.size() || !is_upper(text[i + 1]) ||
      kNotFirst.find(text[i]) != std::string_view::npos ||
      kNotSecond.find(text[i + 1]) != std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view prefix = text.substr(i, 2);
  if (std::find(kNotPrefix.begin(), kNotPrefix.end(), prefix) != kNotPrefix.end()) {
    return std::nullopt;
  }
  std::size_t j = i + 2;
  const bool spaced = j < text.size() && text[j] == ' ';
  if (spaced) {
    for (int pair = 0; pair < 3 && j != 0; ++pair) {
      j = j < text.size() && text[j] == ' ' ? exactly_digits(text, j + 1, 2) : 0;
    }
    if (j == 0 || j >= text.size() || text[j] != ' ') return std::nullopt;
    ++j;
  } else {
    j = exactly_digits(text, j, 6);
    if (j == 0) return std::nullopt;
  }
  if (j >= text.size() || text[j] < 'A' || text[j] > 'D' || !word_ends(text, j + 1)) {
    return std::nullopt;
  }
  return Found{i, j + 1, PersonalData::uk_nino};
}

// ---- the scan --------------------------------------------------------------------

// The first class of `classes` found starting at text[i] (or, for an address,
// with its '@' there), tried in a fixed order.
std::optional<Found> found_at(std::string_view text, std::size_t i, std::size_t last_end,
                              PersonalDataClasses classes) {
  const char c = text[i];
  const bool fresh = i == last_end;
  std::optional<Found> found;
  if (c == '@') {
    if (classes.contains(PersonalData::email)) found = email_at(text, i, last_end);
  } else if (is_digit(c)) {
    if (classes.contains(PersonalData::payment_card)) found = payment_card_at(text, i, fresh);
    if (!found && classes.contains(PersonalData::us_ssn)) found = us_ssn_at(text, i, fresh);
    if (!found && classes.contains(PersonalData::phone)) found = phone_at(text, i, fresh);
  } else if (c == '+' || c == '(') {
    if (classes.contains(PersonalData::phone)) found = phone_at(text, i, fresh);
  } else if (is_upper(c)) {
    if (classes.contains(PersonalData::iban)) found = iban_at(text, i, fresh);
    if (!found && classes.contains(PersonalData::uk_nino)) found = uk_nino_at(text, i, fresh);
  }
  return found;
}

// One pass: `text` with what it found replaced, or nullopt when it found
// nothing. Linear: each attempt reads a bounded number of bytes around its
// position (an address at most 64 before its '@' and 254 after), and the
// scan moves on past what it replaced.
std::optional<std::string> redact_pass(std::string_view text, PersonalDataClasses classes) {
  std::optional<std::string> out;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::optional<Found> found = found_at(text, i, copied, classes);
    if (!found) {
      ++i;
      continue;
    }
    if (!out) {
      out.emplace();
      out->reserve(text.size());
    }
    out->append(text.substr(copied, found->begin - copied));
    out->append(kLabels[static_cast<std::size_t>(found->kind)]);
    copied = found->end;
    i = found->end;
  }
  if (out) out->append(text.substr(copied));
  return out;
}

json redact_value(const json& value, PersonalDataClasses classes, int level) {
  if (level > kMaxJsonLevels) return std::string(kDepthLabel);
  switch (value.type()) {
    case json::value_t::string:
      return redact_personal_data(value.get_ref<const std::string&>(), classes);
    case json::value_t::object: {
      json out = json::object();
      for (const auto& [key, item] : value.items())
        out[key] = redact_value(item, classes, level + 1);
      return out;
    }
    case json::value_t::array: {
      json out = json::array();
      for (const auto& item : value) out.push_back(redact_value(item, classes, level + 1));
      return out;
    }
    default:
      return value;
  }
}

}  // namespace

std::string_view personal_data_name(PersonalData kind) {
  return kNames[static_cast<std::size_t>(kind)];
}

std::optional<PersonalData> personal_data_from_name(std::string_view name) {
  const auto* it = std::find(kNames.begin(), kNames.end(), name);
  if (it == kNames.end()) return std::nullopt;
  return static_cast<PersonalData>(it - kNames.begin());
}

const std::vector<std::string_view>& personal_data_names() {
  static const std::vector<std::string_view> names(kNames.begin(), kNames.end());
  return names;
}

std::string redact_personal_data(std::string_view text, PersonalDataClasses classes) {
  if (classes.empty()) return std::string(text);
  std::optional<std::string> out = redact_pass(text, classes);
  if (!out) return std::string(text);
  // Whatever a replacement made possible (the label's ']' is a boundary
  // where the bytes it replaced may not have been) shows on another pass; a
  // few reach the point where nothing changes.
  for (int pass = 1; pass < kMaxPasses; ++pass) {
    std::optional<std::string> again = redact_pass(*out, classes);
    if (!again) break;
    out = std::move(again);
  }
  return std::move(*out);
}

json redact_personal_data_json(const json& value, PersonalDataClasses classes) {
  if (classes.empty()) return value;
  return redact_value(value, classes, 1);
}

}  // namespace toolmux
