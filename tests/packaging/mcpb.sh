#!/usr/bin/env bash
# CTest package_mcpb: builds the Claude Desktop extension from a built binary
# (scripts/package-mcpb.sh, into a temporary folder) and checks it as a client
# runs it (tests/e2e/mcpb_bundle.mjs). Needs node and npm (the MCP Bundle tool
# comes from the npm registry, pinned by packaging/mcpb/package-lock.json).
#
# Usage: tests/packaging/mcpb.sh BINARY
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
binary="${1:?usage: tests/packaging/mcpb.sh BINARY}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bundle="$("$repo/scripts/package-mcpb.sh" "$binary" "$out")"
MCPB_BUNDLE="$bundle" MCPB_SERVER_JSON="$out/server.json" \
  node --test --test-timeout=60000 "$repo/tests/e2e/mcpb_bundle.mjs"
