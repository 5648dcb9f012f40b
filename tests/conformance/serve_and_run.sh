#!/usr/bin/env bash
# The conformance suite as the test command runs it: starts the example
# server (examples/conformance-server) on a free port with a fresh data
# directory, runs tests/conformance/run.sh against it, then stops it with
# SIGTERM and checks that it exits 0.
#
# Usage: tests/conformance/serve_and_run.sh SERVER_BINARY [SCENARIO...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server="${1:?usage: serve_and_run.sh SERVER_BINARY [SCENARIO...]}"
shift

work="$(mktemp -d)"
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$server" serve --http 127.0.0.1:0 --data-dir "$work/data" 2>"$work/server.log" &
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
