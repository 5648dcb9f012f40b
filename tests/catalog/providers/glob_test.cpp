#include "catalog/providers/glob.h"

#include <catch2/catch.hpp>
#include <string>

using toolmux::Glob;
using toolmux::glob_matches;
using toolmux::glob_matches_name;

TEST_CASE("a name matches '*', '?' and literal characters", "[glob]") {
  CHECK(glob_matches_name("*.txt", "notes.txt"));
  CHECK(glob_matches_name("*.txt", ".txt"));
  CHECK_FALSE(glob_matches_name("*.txt", "notes.txt.bak"));
  CHECK(glob_matches_name("?ain.cpp", "main.cpp"));
  CHECK_FALSE(glob_matches_name("?ain.cpp", "ain.cpp"));
  CHECK(glob_matches_name("a*b*c", "aXbYbc"));
  CHECK_FALSE(glob_matches_name("a*b*c", "aXbYb"));
  // Case is significant.
  CHECK_FALSE(glob_matches_name("*.txt", "x.TXT"));
}

TEST_CASE("classes, negation, ranges and escapes", "[glob]") {
  CHECK(glob_matches_name("[a-b]?.txt", "a1.txt"));
  CHECK_FALSE(glob_matches_name("[a-b]?.txt", "c3.txt"));
  CHECK(glob_matches_name("[!a-b]*.txt", "c3.txt"));
  CHECK(glob_matches_name("[^a-b]*.txt", "c3.txt"));
  CHECK_FALSE(glob_matches_name("[!a-b]*.txt", "a1.txt"));
  CHECK(glob_matches_name("strings.[ch]", "strings.h"));
  CHECK(glob_matches_name("star\\*.txt", "star*.txt"));
  CHECK_FALSE(glob_matches_name("star\\*.txt", "starX.txt"));
  // ']' first in a class is a member; a '[' without ']' is an ordinary character.
  CHECK(glob_matches_name("[]]", "]"));
  CHECK(glob_matches_name("a[b", "a[b"));
  CHECK_FALSE(glob_matches_name("a[b", "ab"));
}

TEST_CASE("characters are UTF-8, and a stray byte is a character of its own", "[glob]") {
  CHECK(glob_matches_name("caf?", "caf\xC3\xA9"));              // '?' takes the two-byte é
  CHECK(glob_matches_name("[\xC3\xA0-\xC3\xBF]", "\xC3\xA9"));  // [à-ÿ] holds é
  CHECK(glob_matches_name("?", "\xFF"));
  CHECK_FALSE(glob_matches_name("?", "\xC3\xA9\xFF"));
}

TEST_CASE("a path matches segment by segment, '**' for any number of folders", "[glob]") {
  CHECK(glob_matches("**/*.cpp", "src/util/strings.cpp"));
  CHECK(glob_matches("**/*.cpp", "main.cpp"));  // none included
  CHECK_FALSE(glob_matches("*.md", "docs/guide.md"));
  CHECK(glob_matches("a/**/deep.md", "a/b/c/deep.md"));
  CHECK(glob_matches("a/**/deep.md", "a/deep.md"));
  CHECK_FALSE(glob_matches("a/**/deep.md", "x/a/deep.md"));
  CHECK(glob_matches("src/*/strings.[ch]", "src/util/strings.h"));
  // Empty and "." segments are ignored on both sides.
  CHECK(glob_matches("./src//*.cpp", "src/./main.cpp"));
  CHECK(glob_matches("**", "any/thing/at/all"));
  // An empty pattern matches only the empty path.
  CHECK(Glob("").empty());
  CHECK(Glob("./").empty());
  CHECK(glob_matches("", ""));
  CHECK_FALSE(glob_matches("", "a"));
  CHECK(Glob("**/*.md").matches("docs/a/b/c/deep.md"));
}

TEST_CASE(
    "the glob matcher takes a pattern of 200000 \"**\" segments without overflowing the stack",
    "[glob][filesystem_tools][find_files]") {
  // Found by tests/fuzz/glob_fuzz: the matcher recursed once per segment.
  // find_files now refuses such a pattern (over 1024 characters), so the
  // matcher is called directly.
  std::string pattern;
  for (int i = 0; i < 200000; ++i) pattern += "**/";
  CHECK(toolmux::glob_matches(pattern + "*.txt", "a/b/notes.txt"));
  CHECK_FALSE(toolmux::glob_matches(pattern + "*.txt", "a/other.md"));
  CHECK(toolmux::glob_matches(pattern + "a/" + pattern + "b/*", "a/b/notes.txt"));
}
