#!/usr/bin/env bash
# Builds toolmux and its tests under a sanitizer in a build tree of its own and
# runs them; any sanitizer report fails the run.
#
#   scripts/sanitize.sh address [--subset]   # AddressSanitizer + UBSan, build-asan/
#   scripts/sanitize.sh thread  [--subset]   # ThreadSanitizer, build-tsan/
#
# Without --subset: every unit test (CTest, without the format, lint and
# conformance entries) and the end-to-end suite (tests/e2e) with TOOLMUX_BIN and
# TOOLMUX_EXAMPLE_BIN set to the sanitized binaries. With --subset: a few test
# executables chosen for what the sanitizer finds there (the CTest entries
# sanitize_asan and sanitize_tsan run this). address --subset builds them in
# build-fuzz/ instead, with clang, on the objects the fuzz targets use
# (scripts/fuzz_tree.sh): one ASan + UBSan build for both.
#
# Reports go to files in <build tree>/sanitizer-logs rather than to stderr, so a
# report from a toolmux started by an end-to-end test (whose stderr the test
# may not look at) is still seen: the run fails if any report file exists.
# Environment: JOBS (parallel compile jobs, default nproc).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

kind=${1:-}
subset=0
[[ ${2:-} == --subset ]] && subset=1
case $kind in
  address)
    dir="$here/build-asan"
    flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    subset_tests=(untrusted_json_test json_schema_test argument_check_test uri_template_test)
    ;;
  thread)
    dir="$here/build-tsan"
    flags="-fsanitize=thread"
    subset_tests=(elastic_threads_test call_admission_test session_manager_test session_store_test connection_gate_test pg_connection_test stdio_transport_test)
    ;;
  *)
    echo "usage: $0 address|thread [--subset]" >&2
    exit 2
    ;;
esac
jobs=${JOBS:-$(nproc)}

# One report or more in $1 fails the run; prints them and the verdict, and
# exits with $2 (non-zero when a test failed) or 1 when there were reports.
finish() {
  local logs=$1 status=$2 reports
  shopt -s nullglob
  reports=("$logs"/report*)
  if ((${#reports[@]})); then
    for r in "${reports[@]}"; do
      echo "== sanitizer report $r" >&2
      cat "$r" >&2
    done
    echo "sanitize: ${#reports[@]} sanitizer report(s) in $logs" >&2
    status=1
  fi
  if ((status)); then
    echo "sanitize $kind: FAILED" >&2
  else
    echo "sanitize $kind: passed"
  fi
  exit "$status"
}

if [[ $kind == address ]] && ((subset)); then
  # shellcheck source=scripts/fuzz_tree.sh
  source "$here/scripts/fuzz_tree.sh"
  configure_fuzz_tree || exit 2
  logs="$fuzz_tree/sanitizer-logs"  # where the tests' compiled-in options send reports
  rm -rf "$logs"
  mkdir -p "$logs"
  cmake --build "$fuzz_tree" -j"$jobs" --target "${subset_tests[@]}"
  status=0
  # 64 MB of stack: clang's ASan gives valijson's schema parser frames of about
  # 30 KB, and a schema 255 levels deep (which toolmux accepts, and
  # json_schema_test compiles) recurses three frames a level.
  ulimit -s 65536
  for t in "${subset_tests[@]}"; do
    echo "== $t"
    "$fuzz_tree/tests/fuzz/$t" || status=1
  done
  finish "$logs" "$status"
fi

logs="$dir/sanitizer-logs"
supp="$here/tests/sanitizers"
mkdir -p "$dir"
# The sanitizer options (report to a file in $logs, stop at the first report,
# suppressions) are compiled into every executable: see default_options.cpp.
g++ -c -O1 -o "$dir/sanitizer_default_options.o" "$supp/default_options.cpp" \
  -DTOOLMUX_SANITIZER_DIR="\"$supp\"" -DTOOLMUX_SANITIZER_LOGS="\"$logs\""

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 -g1 (line tables): reports keep file and line, and compiling takes far
# less than with -O2 -g.
cmake -S "$here" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=g++ \
  "${launcher[@]}" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags $dir/sanitizer_default_options.o" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DTOOLMUX_BUILD_BENCHMARKS=OFF >/dev/null
rm -rf "$logs"
mkdir -p "$logs"

status=0
if ((subset)); then
  cmake --build "$dir" -j"$jobs" --target "${subset_tests[@]}"
  for t in "${subset_tests[@]}"; do
    echo "== $t"
    "$dir/tests/$t" || status=1
  done
else
  cmake --build "$dir" -j"$jobs"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 900 \
    -E '^(clang_format|clang_tidy|conformance|conformance_aggregated|e2e|fuzz_smoke|sanitize_asan|sanitize_tsan)$' || status=1
  # Sanitized binaries are slower: fewer files at once, longer per-test limit.
  (cd "$here/tests/e2e" &&
    TOOLMUX_BIN="$dir/toolmux" \
    TOOLMUX_EXAMPLE_BIN="$dir/examples/conformance-server/toolmux-conformance-server" \
    TOOLMUX_E2E_SANITIZER="$kind" \
    node --test --test-concurrency=2 --test-timeout=180000) || status=1
fi

finish "$logs" "$status"
