#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) in build-fuzz/ with clang, ASan and
# UBSan, and runs each for a bounded time on a copy of its seed corpus
# (tests/fuzz/corpus/<target>/ is never written). Prints each target's
# executions; exits non-zero when any target crashed, leaked, hung, ran out of
# memory or drew a sanitizer report, leaving the input that did it in
# build-fuzz/crashes/<target>/ and the log in build-fuzz/runs/<target>.log.
#
#   scripts/fuzz.sh [--seconds N] [TARGET...]   (default: 20 s each, all targets)
#
# Targets run JOBS at a time (default: nproc), each on one core.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
seconds=20
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds needs a positive integer" >&2; exit 2; }

# Longest input each target is given (bytes): about what its parser sees in one go.
declare -A max_len=(
  [untrusted_json_fuzz]=4096 [jsonrpc_fuzz]=4096 [catalog_file_fuzz]=8192 [schema_fuzz]=4096
  [sse_parser_fuzz]=2048 [uri_template_fuzz]=1024 [glob_fuzz]=1024 [http_request_fuzz]=8192
  [redact_fuzz]=4096 [search_memory_fuzz]=4096 [rerank_answer_fuzz]=16384
  [client_config_fuzz]=8192
)
# Longest one input may take (seconds) before the run fails as a hang: 20 by
# default; the matchers of untrusted text answer in microseconds, so a slow
# input there is a bug (an exponential or quadratic path), not a loaded machine.
declare -A max_seconds=([uri_template_fuzz]=5 [glob_fuzz]=5 [redact_fuzz]=5 [rerank_answer_fuzz]=5)
((${#targets[@]})) || targets=("${!max_len[@]}")
for t in "${targets[@]}"; do
  [[ -n ${max_len[$t]:-} ]] || { echo "fuzz.sh: no target $t (known: ${!max_len[*]})" >&2; exit 2; }
done
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort)

# shellcheck source=scripts/fuzz_tree.sh
source "$here/scripts/fuzz_tree.sh"
configure_fuzz_tree || exit 2
build="$fuzz_tree"
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# One target's run; its result line goes to runs/<target>.result.
run_target() {
  local t=$1 work="$build/runs/$1" crashes="$build/crashes/$1" log="$build/runs/$1.log"
  local status=0 runs speed result=ok
  rm -rf "$work" "$build/runs/$t.result"
  mkdir -p "$work/corpus" "$crashes"
  cp -r "$here/tests/fuzz/corpus/$t/." "$work/corpus/" 2>/dev/null || true
  # Run in the work folder: a target may write scratch files where it runs.
  (cd "$work" && "$build/tests/fuzz/$t" -max_total_time="$seconds" -max_len="${max_len[$t]}" \
    -timeout="${max_seconds[$t]:-20}" -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" \
    corpus) >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  if ((status != 0)) || grep -qE '^==[0-9]+==ERROR|runtime error:|^SUMMARY: ' "$log"; then
    result="FAILED (exit $status): see $log and $crashes/"
  fi
  printf '%-20s %12s %10s  %s\n' "$t" "${runs:-?}" "${speed:-?}" "$result" >"$build/runs/$t.result"
}

# Each target runs on one core: as many at once as there are cores (JOBS).
mkdir -p "$build/runs"
jobs=${JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait
failed=()
printf '%-20s %12s %10s  %s\n' target executions "execs/s" result
for t in "${targets[@]}"; do
  if [[ -f $build/runs/$t.result ]]; then
    cat "$build/runs/$t.result"
    grep -q ' ok$' "$build/runs/$t.result" || failed+=("$t")
  else
    printf '%-20s %12s %10s  %s\n' "$t" "?" "?" "FAILED: its run ended without a result"
    failed+=("$t")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz.sh: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
