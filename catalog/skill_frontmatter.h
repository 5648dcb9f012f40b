// The YAML frontmatter of a skill's SKILL.md (the Agent Skills format): the
// block between a first line "---" and the next line "---", read as a JSON
// object the way a YAML 1.2 reader (core schema) reads it, for the subset
// skills use:
//
//   name: pdf-processing              a plain scalar: null (null, ~, empty),
//   description: "Quoted, or not"     true/false, an integer, a float, or a
//   license: 'single quotes'          string; or a quoted string
//   metadata:                         a map of scalars, indented below its key
//     author: someone
//   allowed-tools:                    a list of scalars, "- " below its key
//     - Read
//
// Blank lines and comment lines ("# ...") are skipped, as is a " #" comment
// after a plain scalar. Anything else (flow collections "[...]" and "{...}",
// block scalars "|" and ">", anchors, tags, a plain scalar continued on the
// next line, nesting deeper than one level, a key given twice) is refused
// with the line it is on: a reader that guessed could report a frontmatter
// that differs from what a YAML reader makes of the file. Iterative, bounded
// by the text's size; nothing here throws.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "src/base/status.h"

namespace toolmux {

// SKILL.md files larger than this are refused before they are read.
inline constexpr std::size_t kMaxSkillFrontmatterBytes = std::size_t{64} * 1024;

// The frontmatter of `text` (a SKILL.md) as a JSON object, or
// invalid_argument naming what is wrong and on which line.
Result<nlohmann::json> parse_skill_frontmatter(std::string_view text);

}  // namespace toolmux
