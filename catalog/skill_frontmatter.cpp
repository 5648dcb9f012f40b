#include "catalog/skill_frontmatter.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/base/utf8.h"

namespace toolmux {

using nlohmann::json;

namespace {

struct Line {
  std::size_t number;     // 1-based, in the file
  std::size_t indent;     // leading spaces
  std::string_view text;  // after the indent, trailing spaces and "\r" removed
};

Status refused(const Line& line, const std::string& why) {
  return Status::invalid_argument("SKILL.md line " + std::to_string(line.number) + ": " + why);
}

bool digits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool core_float(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  const std::size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos) {
    std::string_view exponent = s.substr(e + 1);
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.remove_prefix(1);
    if (!digits(exponent)) return false;
  }
  const std::size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return digits(mantissa);
  const std::string_view whole = mantissa.substr(0, dot);
  const std::string_view fraction = mantissa.substr(dot + 1);
  if (whole.empty()) return digits(fraction);
  return digits(whole) && (fraction.empty() || digits(fraction));
}

// A plain scalar as the core schema types it; `text` has no comment left.
Result<json> plain_scalar(const Line& line, std::string_view text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return json(nullptr);
  }
  if (text == "true" || text == "True" || text == "TRUE") return json(true);
  if (text == "false" || text == "False" || text == "FALSE") return json(false);
  const char first = text[0];
  if (std::string_view("[]{}#&*!|>%@`,").find(first) != std::string_view::npos ||
      ((first == '-' || first == '?' || first == ':') && (text.size() == 1 || text[1] == ' '))) {
    return refused(line, "the value " + json(std::string(text)).dump() +
                             " uses YAML syntax a skill's frontmatter may not (quote it)");
  }
  if (text.find(": ") != std::string_view::npos || text.back() == ':') {
    return refused(line, "the value " + json(std::string(text)).dump() +
                             " holds \": \", which YAML reads as a map (quote it)");
  }
  std::string_view number = text;
  if (number[0] == '-' || number[0] == '+') number.remove_prefix(1);
  if (digits(number)) {
    std::int64_t value = 0;
    const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
    const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      return refused(line, "the number " + std::string(text) + " is too large (quote it)");
    }
    return json(value);
  }
  if (text.rfind("0x", 0) == 0 || text.rfind("0o", 0) == 0 || text == ".inf" || text == "-.inf" ||
      text == ".nan" || text == ".NaN" || text == ".Inf") {
    return refused(line, "the value " + std::string(text) +
                             " is a YAML number form toolmux does "
                             "not read (quote it)");
  }
  if (core_float(text)) {
    double value = 0;
    const auto [end, error] =
        std::from_chars(text.data() + (text[0] == '+' ? 1 : 0), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      return refused(line, "the number " + std::string(text) + " is out of range (quote it)");
    }
    return json(value);
  }
  return json(std::string(text));
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A quoted scalar that starts `text` and ends on the same line; `rest` is
// what follows its closing quote.
Result<json> quoted_scalar(const Line& line, std::string_view text, std::string_view& rest) {
  const char quote = text[0];
  std::string out;
  std::size_t i = 1;
  for (;; ++i) {
    if (i >= text.size()) {
      return refused(line, "a quoted value must end on its line");
    }
    const char c = text[i];
    if (quote == '\'') {
      if (c != '\'') {
        out += c;
      } else if (i + 1 < text.size() && text[i + 1] == '\'') {
        out += '\'';
        ++i;
      } else {
        break;
      }
      continue;
    }
    if (c == '"') break;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= text.size()) return refused(line, "a quoted value must end on its line");
    // YAML's one-character escapes that toolmux reads: the escape, then what it stands for.
    static constexpr std::string_view kEscapes("\\\\\"\"//n\nt\tr\rb\bf\f0\0", 18);
    const std::size_t at = kEscapes.find(text[i]);
    if (at != std::string_view::npos && at % 2 == 0) {
      out += kEscapes[at + 1];
      continue;
    }
    switch (text[i]) {
      case 'u': {
        unsigned code = 0;
        for (std::size_t k = 1; k <= 4; ++k) {
          const int d = i + k < text.size() ? hex_digit(text[i + k]) : -1;
          if (d < 0) return refused(line, "\\u must be followed by four hex digits");
          code = code * 16 + static_cast<unsigned>(d);
        }
        if (code >= 0xD800 && code <= 0xDFFF) {
          return refused(line, "\\u escapes of surrogates are not read; write the character");
        }
        append_utf8(out, code);
        i += 4;
        break;
      }
      default: {
        std::string why = "the escape \\";
        why += text[i];
        return refused(line, why + " is not read");
      }
    }
  }
  rest = text.substr(i + 1);
  return json(std::move(out));
}

// The value after "key:" (or "- "): a scalar, with its comment dropped.
Result<json> scalar(const Line& line, std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (!text.empty() && (text[0] == '"' || text[0] == '\'')) {
    std::string_view rest;
    Result<json> value = quoted_scalar(line, text, rest);
    if (!value.ok()) return value;
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (!rest.empty() && rest.front() != '#') {
      return refused(line, "only a comment may follow a quoted value");
    }
    return value;
  }
  if (!text.empty() && text[0] == '#') text = {};  // a comment only: an empty value
  const std::size_t comment = text.find(" #");
  if (comment != std::string_view::npos) text = text.substr(0, comment);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return plain_scalar(line, text);
}

// "key: value" or "key:": the key, and the value text after the colon.
Result<std::pair<std::string, std::string_view>> key_of(const Line& line) {
  const std::string_view text = line.text;
  std::size_t colon = text.find(": ");
  if (colon == std::string_view::npos && !text.empty() && text.back() == ':') {
    colon = text.size() - 1;
  }
  if (colon == std::string_view::npos || colon == 0) {
    return refused(line, "expected \"key: value\"");
  }
  const std::string_view key = text.substr(0, colon);
  if (std::string_view("\"'[]{}#&*!|>%@`,?-").find(key[0]) != std::string_view::npos ||
      key.back() == ' ') {
    return refused(line, "the key " + json(std::string(key)).dump() + " is not a plain name");
  }
  return std::pair<std::string, std::string_view>(std::string(key), text.substr(colon + 1));
}

bool sequence_item(std::string_view text) { return text == "-" || text.rfind("- ", 0) == 0; }

}  // namespace

Result<json> parse_skill_frontmatter(std::string_view text) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a BOM
  std::vector<Line> lines;
  bool opened = false;
  bool closed = false;
  std::size_t number = 0;
  std::size_t read = 0;
  while (read < text.size() && !closed) {
    std::size_t end = text.find('\n', read);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(read, end - read);
    read = end + 1;
    ++number;
    if (read > kMaxSkillFrontmatterBytes + 8) {
      return Status::invalid_argument("SKILL.md: the frontmatter is larger than " +
                                      std::to_string(kMaxSkillFrontmatterBytes) + " bytes");
    }
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string_view trimmed = raw;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) {
      trimmed.remove_suffix(1);
    }
    if (!opened) {
      if (trimmed != "---") {
        return Status::invalid_argument(
            "SKILL.md must begin with YAML frontmatter: a first line \"---\"");
      }
      opened = true;
      continue;
    }
    if (trimmed == "---") {
      closed = true;
      continue;
    }
    std::size_t indent = 0;
    while (indent < trimmed.size() && trimmed[indent] == ' ') ++indent;
    Line line{number, indent, trimmed.substr(indent)};
    if (!line.text.empty() && line.text[0] == '\t') {
      return refused(line, "indent with spaces, not tabs");
    }
    if (line.text.empty() || line.text[0] == '#') continue;
    lines.push_back(line);
  }
  if (!closed) {
    return Status::invalid_argument("SKILL.md: the frontmatter has no closing \"---\" line");
  }

  json out = json::object();
  for (std::size_t i = 0; i < lines.size();) {
    const Line& line = lines[i++];
    if (line.indent != 0) return refused(line, "indented, but no \"key:\" above opens a block");
    auto key = key_of(line);
    if (!key.ok()) return key.status();
    const auto& [name, value_text] = *key;
    if (out.contains(name)) return refused(line, "the key \"" + name + "\" is given twice");
    std::string_view rest = value_text;
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const bool opens_block = rest.empty() || rest[0] == '#';
    if (!opens_block) {
      auto value = scalar(line, rest);
      if (!value.ok()) return value.status();
      out[name] = std::move(*value);
      if (i < lines.size() && lines[i].indent > 0) {
        return refused(lines[i],
                       "a value continued on the next line is not read (quote it, on "
                       "one line)");
      }
      continue;
    }
    // A block below "key:": its lines are indented, all alike, or a list
    // may start at the key's own indent.
    std::size_t end = i;
    const bool is_list = i < lines.size() && sequence_item(lines[i].text);
    const std::size_t block_indent = i < lines.size() ? lines[i].indent : 0;
    while (end < lines.size() && (lines[end].indent > 0 || (is_list && block_indent == 0 &&
                                                            sequence_item(lines[end].text)))) {
      ++end;
    }
    if (end == i) {
      out[name] = nullptr;
      continue;
    }
    json block = is_list ? json::array() : json::object();
    for (; i < end; ++i) {
      const Line& item = lines[i];
      if (item.indent != block_indent) {
        return refused(item, "nesting deeper than one level below a key is not read");
      }
      if (is_list) {
        if (!sequence_item(item.text)) return refused(item, "expected a list item \"- value\"");
        auto value = scalar(item, item.text.substr(1));
        if (!value.ok()) return value.status();
        block.push_back(std::move(*value));
        continue;
      }
      if (sequence_item(item.text)) return refused(item, "a list item in a map");
      auto member = key_of(item);
      if (!member.ok()) return member.status();
      if (block.contains(member->first)) {
        return refused(item, "the key \"" + member->first + "\" is given twice");
      }
      std::string_view member_rest = member->second;
      while (!member_rest.empty() && member_rest.front() == ' ') member_rest.remove_prefix(1);
      auto value = scalar(item, member_rest);
      if (!value.ok()) return value.status();
      block[member->first] = std::move(*value);
    }
    out[name] = std::move(block);
  }
  return out;
}

}  // namespace toolmux
