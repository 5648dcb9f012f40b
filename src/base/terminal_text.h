// Text from a file or a peer made safe to print on a terminal: nothing in it
// can move the cursor, clear the screen, start a line of its own or reorder
// what follows. A terminal acts on the C0 controls (ESC starts its escape
// sequences; a newline or carriage return starts a line that can pass for
// toolmux's own), on DEL and on the C1 controls (U+0080..U+009F; U+009B is
// CSI, U+0085 a newline). U+2028 and U+2029 break lines in editors and
// viewers, and the bidirectional controls (U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069) reorder the characters after them, so that
// what is shown is not what is there ("Trojan Source"). Pure functions: any
// bytes may be given; text that is not valid UTF-8 is made valid first, each
// bad byte U+FFFD (lossy_utf8).
#pragma once

#include <string>
#include <string_view>

namespace toolmux {

// What becomes of each character named above.
enum class Unprintable {
  // Its JSON escape: \n, \r, \t, else \u followed by four lowercase hex
  // digits (\u001b, \u202e). The reader sees what was there; and inside a
  // JSON string the escape stands for the same character.
  escape,
  // One space: for table cells, whose widths count characters.
  space,
};

// `text` as valid UTF-8 with each character above replaced as `how` says;
// every other character is kept.
std::string terminal_text(std::string_view text, Unprintable how = Unprintable::escape);

// JSON as nlohmann's dump writes it (one line, or indented on several), each
// line passed through terminal_text: still JSON, with the same value. Outside
// its strings a dump holds none of those characters but the newlines between
// its lines, and it writes the C0 controls inside a string as escapes
// already; what is left (DEL, C1, U+2028, the bidirectional controls) becomes
// the JSON escape of the same character.
std::string terminal_json(std::string_view json_text);

}  // namespace toolmux
