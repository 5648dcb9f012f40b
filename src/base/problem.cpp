#include "src/base/problem.h"

#include "src/base/terminal_text.h"

namespace toolmux {

void append_pointer_token(std::string& out, std::string_view token) {
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
}

std::string pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  append_pointer_token(out, token);
  return out;
}

Problems with_prefix(Problems problems, std::string_view prefix) {
  for (Problem& problem : problems) {
    problem.pointer.insert(0, prefix);
  }
  return problems;
}

std::string format_problems(const Problems& problems) {
  std::string out;
  for (const Problem& problem : problems) {
    // Pointers and messages quote the file checked: each problem stays one
    // line, with nothing a terminal would act on.
    out += "  ";
    out += terminal_text(problem.pointer);
    out += ": ";
    out += terminal_text(problem.message);
    out += '\n';
  }
  return out;
}

}  // namespace toolmux
