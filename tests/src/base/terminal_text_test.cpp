#include "src/base/terminal_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using toolmux::terminal_json;
using toolmux::terminal_text;
using toolmux::Unprintable;

TEST_CASE("terminal_text escapes what a terminal acts on and keeps the rest", "[terminal_text]") {
  // ESC [2J clears the screen; a newline starts a line that looks like toolmux's.
  CHECK(terminal_text("evil\x1b[2J\nok: forged") == "evil\\u001b[2J\\nok: forged");
  CHECK(terminal_text("a\tb\rc\x7f") == "a\\tb\\rc\\u007f");
  // C1: U+009B is CSI, U+0085 a newline; then the line and paragraph separators.
  CHECK(terminal_text("\xc2\x9b"
                      "2J\xc2\x85|\xe2\x80\xa8|\xe2\x80\xa9") ==
        "\\u009b2J\\u0085|\\u2028|\\u2029");
  // The bidirectional controls that reorder what is shown ("Trojan Source").
  CHECK(terminal_text("\xe2\x80\xae"
                      "cod.exe\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8f\xd8\x9c") ==
        "\\u202ecod.exe\\u2066\\u2069\\u200f\\u061c");
  CHECK(terminal_text("café ✓ 日本 \"quoted\" \\") == "café ✓ 日本 \"quoted\" \\");
  CHECK(terminal_text("bad \xff byte") == "bad \xEF\xBF\xBD byte");
  CHECK(terminal_text("") == "");
}

TEST_CASE("terminal_text with spaces, for table cells", "[terminal_text]") {
  CHECK(terminal_text("a\x1b[2J\nb\xc2\x9b\xe2\x80\xae"
                      "c",
                      Unprintable::space) == "a [2J b  c");
}

TEST_CASE("terminal_json keeps JSON valid with the same value", "[terminal_text]") {
  const std::string name = "x\x1b[2J\n\x7f\xc2\x9b\xe2\x80\xa8\xe2\x80\xae";
  const nlohmann::json value = {{"mcpServers", {{name, {{"args", {name, "plain"}}}}}}};
  for (const int indent : {-1, 2}) {
    const std::string shown = terminal_json(value.dump(indent));
    CHECK(shown.find('\x1b') == std::string::npos);
    CHECK(shown.find('\x7f') == std::string::npos);
    CHECK(shown.find("\xc2\x9b") == std::string::npos);
    CHECK(shown.find("\xe2\x80") == std::string::npos);
    CHECK(nlohmann::json::parse(shown) == value);
  }
  CHECK(terminal_json("{\n  \"a\": 1\n}") == "{\n  \"a\": 1\n}");
}
