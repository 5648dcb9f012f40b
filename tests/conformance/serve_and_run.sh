#!/usr/bin/env bash
# The conformance suite as the test command runs it: starts the example
# server (examples/conformance-server) on a free port with a fresh data
# directory and a catalog of its own (no tools, discovery off: its
# test_trigger_tool_change reloads it; the skills of examples/skills), runs tests/conformance/run.sh against
# it (both revisions), then stops it with SIGTERM and checks that it exits 0.
#
# With --aggregate, the server on that port is toolmux (TOOLMUX_BINARY
# serve --http) instead, with a catalog whose one stdio upstream is the
# example (prefix "", discovery off), itself started as above: the suite then
# runs through toolmux's relay to the example, against the expected failures
# of the "aggregated" setup (CONFORMANCE_SETUP).
#
# Usage: tests/conformance/serve_and_run.sh [--aggregate TOOLMUX_BINARY] SERVER_BINARY [SCENARIO...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage="usage: serve_and_run.sh [--aggregate TOOLMUX_BINARY] SERVER_BINARY [SCENARIO...]"
toolmux=""
if [[ "${1:-}" == --aggregate ]]; then
  toolmux="${2:?$usage}"
  shift 2
fi
server="${1:?$usage}"
shift

work="$(mktemp -d)"
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The example's own catalog: its tools are native; discovery off keeps them
# all in tools/list, however many they are.
# Its skills are the examples' (docs/skills.md).
cat >"$work/example.json" <<JSON
{"tools": [], "discovery": {"mode": "off"}, "skills": ["$here/../../examples/skills"]}
JSON
if [[ -n "$toolmux" ]]; then
  export CONFORMANCE_SETUP=aggregated
  # JSON strings: the paths come from CMake and mktemp, without quotes or backslashes.
  cat >"$work/catalog.json" <<JSON
{
  "tools": [],
  "upstreams": {
    "conformance": {
      "command": "$server",
      "args": ["serve", "--data-dir", "$work/upstream-data", "--catalog", "$work/example.json"],
      "prefix": ""
    }
  },
  "discovery": {"mode": "off"}
}
JSON
  "$toolmux" serve --http 127.0.0.1:0 --data-dir "$work/data" --catalog "$work/catalog.json" \
    2>"$work/server.log" &
else
  export CONFORMANCE_SETUP=direct
  "$server" serve --http 127.0.0.1:0 --data-dir "$work/data" --catalog "$work/example.json" \
    2>"$work/server.log" &
fi
pid=$!
url=""
for _ in $(seq 100); do
  url="$(grep -o '"url":"[^"]*"' "$work/server.log" | head -1 | cut -d'"' -f4 || true)"
  [[ -n "$url" ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -z "$url" ]]; then
  echo "serve_and_run: the server did not start; its log:" >&2
  cat "$work/server.log" >&2
  exit 1
fi

status=0
"$here/run.sh" "$url" "$@" || status=$?

kill -TERM "$pid"
server_status=0
wait "$pid" || server_status=$?
pid=""
if ((server_status != 0)); then
  echo "serve_and_run: the server exited with $server_status after SIGTERM; its log:" >&2
  tail -20 "$work/server.log" >&2
  status=1
fi
exit "$status"
