#!/usr/bin/env bash
# Builds toolmux and runs the whole test suite: unit tests (Catch2), end-to-end
# tests through the official MCP SDK client, and the formatting check, all
# under CTest.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/setup.sh" --tests
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$here/build" -j"$(nproc)"
ctest --test-dir "$here/build" --output-on-failure -j"$(nproc)" --timeout 300
