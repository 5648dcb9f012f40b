// Personal data in text: e-mail addresses, phone numbers, payment card
// numbers, IBANs and two national identity numbers, each a named class that
// an operator turns on for a tool or an upstream (the catalog file's
// "redactPersonalData"; docs/guarded-mutations.md#redaction says exactly
// what each class catches and what it does not). None is on by default.
//
// Found by a scan written by hand, never a regular expression: each attempt
// reads a bounded number of bytes, so the scan is linear in the text.
// Each occurrence is replaced by "[REDACTED:<class>]", e.g.
// "[REDACTED:email]". Pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolmux {

enum class PersonalData : std::uint8_t {
  email,         // local@domain.tld
  phone,         // +<8-15 digits>, or a North American number
  payment_card,  // 13-19 digits that pass the Luhn check
  iban,          // an IBAN of a registry country, its length and mod-97 check digits
  us_ssn,        // a US Social Security number, AAA-GG-SSSS
  uk_nino,       // a UK National Insurance number, AB123456C
};

// The class's name as the catalog file and the label write it ("payment_card").
std::string_view personal_data_name(PersonalData kind);
// The class named `name` (exactly, case included); nullopt for any other text.
std::optional<PersonalData> personal_data_from_name(std::string_view name);
// Every class's name, in the enum's order: what a problem lists as known.
const std::vector<std::string_view>& personal_data_names();

// A set of classes; empty (the default) redacts nothing.
class PersonalDataClasses {
 public:
  bool empty() const { return bits_ == 0; }
  bool contains(PersonalData kind) const { return (bits_ & bit(kind)) != 0; }
  void insert(PersonalData kind) { bits_ = static_cast<std::uint8_t>(bits_ | bit(kind)); }
  friend bool operator==(PersonalDataClasses, PersonalDataClasses) = default;

 private:
  static std::uint8_t bit(PersonalData kind) {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(kind));
  }
  std::uint8_t bits_ = 0;
};

// `text` with every occurrence of a class in `classes` replaced by its label;
// `text` itself when `classes` is empty or nothing was found. Redacting the
// result again changes nothing more.
std::string redact_personal_data(std::string_view text, PersonalDataClasses classes);

// A copy of `value` with every string redacted so (member names are kept);
// numbers, booleans and null as they were. What lies deeper than 64 levels is
// replaced by "[REDACTED:depth]", as redact_json does (src/base/redact.h).
nlohmann::json redact_personal_data_json(const nlohmann::json& value, PersonalDataClasses classes);

}  // namespace toolmux
