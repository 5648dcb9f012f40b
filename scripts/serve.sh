#!/usr/bin/env bash
# Builds and installs toolmux (/usr/local/bin/toolmux), then serves the
# built-in catalog over stdio, rooted at the
# working directory. Extra arguments go to `toolmux serve`.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/setup.sh" >&2
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
# The install step installs what is built and builds nothing first
# (CMAKE_SKIP_INSTALL_ALL_DEPENDENCY): the binary and its man page.
cmake --build "$here/build" -j"$(nproc)" --target toolmux toolmux_man >&2
# Installed where examples/claude_desktop_config.json expects it.
cmake --install "$here/build" --prefix /usr/local >&2
exec /usr/local/bin/toolmux serve "$@"
