#!/usr/bin/env bash
# clang-tidy (.clang-tidy) over the product's sources, using the build's
# compile_commands.json. Usage: scripts/lint.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
tidy="$(command -v clang-tidy || command -v clang-tidy-14)"
cd "$here"
ls src/*.cpp catalog/*.cpp catalog/providers/*.cpp transports/*.cpp |
  xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --quiet 2>/dev/null
