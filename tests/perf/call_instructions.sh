#!/usr/bin/env bash
# The instructions one pipelined stdio tools/call costs, counted by valgrind's
# callgrind (a count the machine's load does not move), against the figure
# recorded in tests/perf/call_instructions.expected: more than 10 % over it
# fails. Raising the figure is a deliberate, reviewed change of that file,
# with the reason in its commit.
#
#   tests/perf/call_instructions.sh SERVER [--update | --allocations]
#
# SERVER is the conformance example (build/examples/conformance-server/
# toolmux-conformance-server), whose test_simple_text is a native tool: the
# whole call path and nothing else. It reads initialize and then N1 and, in a
# second run, N2 tools/call lines at once from its stdin (every call pipelined)
# and answers them; the count per call is the difference of the two runs'
# totals over N2 - N1, so start-up and shutdown cancel out. --update writes the
# measured figure to the file. --allocations counts, the same way, the heap
# allocations and bytes one call costs (valgrind's memcheck, `total heap
# usage`) and checks nothing: a figure for bench/README.md, not for the suite.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server="${1:?usage: call_instructions.sh SERVER [--update | --allocations]}"
update=0
allocations=0
[[ ${2:-} == --update ]] && update=1
[[ ${2:-} == --allocations ]] && allocations=1
expected_file="$here/call_instructions.expected"
command -v valgrind >/dev/null || { echo "call_instructions: valgrind is not installed (scripts/setup.sh --tests installs it)" >&2; exit 1; }

n1=500
n2=2500
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The client's side: initialize, initialized, then N calls, as one stream.
messages() {
  local n=$1 i
  printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"call-instructions","version":"0"}}}'
  printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  for ((i = 1; i <= n; i++)); do
    printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}\n' "$i"
  done
}

# Total instructions of one run answering N calls; checks every answer.
run() {
  local n=$1 out="$work/callgrind.$1" answers
  messages "$n" >"$work/in.$n"
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$server" serve --data-dir "$work/data.$n" <"$work/in.$n" >"$work/answers.$n" 2>"$work/stderr.$n" || {
    echo "call_instructions: the server failed answering $n calls:" >&2
    tail -20 "$work/stderr.$n" >&2
    exit 1
  }
  answers=$(grep -c '"This is a simple text response for testing."' "$work/answers.$n" || true)
  if ((answers != n)); then
    echo "call_instructions: $answers of $n calls were answered with the tool's text" >&2
    exit 1
  fi
  sed -n 's/^summary: //p' "$out"
}

# Heap allocations and bytes allocated of one run answering N calls.
heap() {
  local n=$1
  messages "$n" >"$work/in.$n"
  valgrind --tool=memcheck --leak-check=no "$server" serve --data-dir "$work/heap.$n" \
    <"$work/in.$n" >"$work/answers.$n" 2>"$work/memcheck.$n"
  sed -n 's/.*total heap usage: \([0-9,]*\) allocs, [0-9,]* frees, \([0-9,]*\) bytes allocated.*/\1 \2/p' \
    "$work/memcheck.$n" | tr -d ,
}

if ((allocations)); then
  read -r a1 b1 < <(heap $n1)
  read -r a2 b2 < <(heap $n2)
  echo "heap allocations per pipelined tools/call: $(((a2 - a1) / (n2 - n1))), bytes $(((b2 - b1) / (n2 - n1)))"
  exit 0
fi

t1=$(run $n1)
t2=$(run $n2)
per_call=$(((t2 - t1) / (n2 - n1)))
echo "instructions per pipelined tools/call: $per_call (runs of $n1 and $n2 calls: $t1 and $t2)"

if ((update)); then
  { grep '^#' "$expected_file" 2>/dev/null || true; printf '%s\n' "$per_call"; } >"$work/expected"
  cp "$work/expected" "$expected_file"
  echo "wrote $per_call to $expected_file"
  exit 0
fi
expected=$(grep -v '^#' "$expected_file" | head -1)
limit=$((expected * 110 / 100))
echo "recorded: $expected; limit (+10 %): $limit"
if ((per_call > limit)); then
  echo "call_instructions: a call costs $per_call instructions, more than 10 % over the recorded $expected." >&2
  echo "Find what made it dearer (callgrind_annotate on a run of this script's input)," >&2
  echo "or, when the cost is meant, raise the figure with --update in a commit that says why." >&2
  exit 1
fi
if ((per_call < expected * 90 / 100)); then
  echo "note: more than 10 % under the recorded figure: lower it with --update, so that the guard stays tight"
fi
