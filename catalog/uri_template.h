// Matching a URI against an RFC 6570 URI template, to route resources/read to
// the provider whose resource template the URI fills in.
//
// Matched forms: literal text, {name} (simple expansion: one or more
// characters, none of them '/', '?' or '#'), and {+name} (reserved expansion:
// one or more of any character). A template with any other expression
// ({a,b}, {?q}, {/p}, {#f}, {.x}, {;x}, {&x}, a modifier, or an unclosed brace)
// matches nothing, and so does a template of more than 256 parts (literal
// runs and expressions) or a URI over 8 KiB. Values are returned as they
// appear in the URI (still percent-encoded). When several splits match, each
// variable takes its longest value, first to last.
//
// Cost: time and memory proportional to template parts x URI length (at most
// about 256 KiB of table), whatever the URI holds. A variable named twice must
// take the same value at both places; only such a template can make the
// search backtrack, and after 2^16 steps (about 1 ms) it answers no match.
// Pure functions, no state: callable from any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolmux {

// The variables `uri` gives `uri_template`, or nullopt when it does not match.
std::optional<std::map<std::string, std::string>> match_uri_template(std::string_view uri_template,
                                                                     std::string_view uri);

// The names of the variables of a template this file can match, in order;
// nullopt for a template it cannot.
std::optional<std::vector<std::string>> uri_template_variables(std::string_view uri_template);

}  // namespace toolmux
