#!/usr/bin/env bash
# clang-tidy (.clang-tidy) over the product's sources, using the build's
# compile_commands.json. Usage: scripts/lint.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
tidy="$(command -v clang-tidy || command -v clang-tidy-14)"
cd "$here"
find src catalog transports -name "*.cpp" | sort |
  xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --quiet 2>/dev/null
