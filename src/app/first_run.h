// What `toolmux serve` prints on stderr, once, when its stdin is a terminal:
// a person started it by hand, and an MCP client is what belongs on stdin.
// It says how to connect a client (the configuration snippets of Claude
// Desktop, Cursor and VS Code, with this program's absolute path) and that
// toolmux now waits for MCP messages on stdin. Never on stdout, MCP's channel.
#pragma once

#include <string>
#include <vector>

#include "src/assembly/serve_options.h"

namespace toolmux {

// The arguments a client's entry gives toolmux to serve as `options` do: serve,
// with --catalog, --root and --data-dir made absolute, and --allow-writes and
// --read-only when set.
std::vector<std::string> client_serve_args(const ServeOptions& options);

// The guidance text, for `toolmux_path` serving with `args`.
std::string first_run_guidance(const std::string& toolmux_path,
                               const std::vector<std::string>& args);

}  // namespace toolmux
