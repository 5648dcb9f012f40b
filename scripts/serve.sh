#!/usr/bin/env bash
# Builds and installs toolmux (/usr/local/bin/toolmux), then serves the
# built-in catalog over stdio, rooted at the
# working directory. Extra arguments go to `toolmux serve`.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/setup.sh" >&2
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
cmake --build "$here/build" -j"$(nproc)" --target toolmux >&2
# Installed where examples/claude_desktop_config.json expects it.
cmake --install "$here/build" --prefix /usr/local >&2
exec /usr/local/bin/toolmux serve "$@"
