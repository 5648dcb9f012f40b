// A problem found while checking a tool spec, a schema or a catalog file.
//
// Checks collect every problem they find instead of stopping at the first, so
// that an operator sees them all at once. `pointer` is a JSON pointer (RFC 6901)
// into the document that was checked; the code that embeds that document in a
// larger one prefixes it (see with_prefix).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace toolmux {

struct Problem {
  std::string pointer;  // e.g. "/tools/3/inputSchema/properties/path"; "" is the whole document
  std::string message;  // one sentence, names what is wrong
};

using Problems = std::vector<Problem>;

// Escapes one reference token for use in a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string pointer_token(std::string_view token);
// The same, appended to `out`.
void append_pointer_token(std::string& out, std::string_view token);

// Returns `problems` with `prefix` put in front of every pointer.
Problems with_prefix(Problems problems, std::string_view prefix);

// "  /tools/0/name: the name is empty\n" for each problem, in order, each
// line as terminal_text shows it (src/base/terminal_text.h): a control
// character quoted from the file is an escape, never one a terminal acts on.
std::string format_problems(const Problems& problems);

}  // namespace toolmux
