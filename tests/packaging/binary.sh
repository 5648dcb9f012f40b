#!/usr/bin/env bash
# What `cmake --install` installs, as built (docs/packaging.md, "The binary"):
# a stripped toolmux of at most 16 MB whose debug information is in
# toolmux.debug beside it, found through its .gnu_debuglink; and the shared
# libraries it needs at every start, without those it opens only when a
# configuration needs them (libpq, libjose) or links statically.
# Usage: binary.sh BUILD_DIR
set -euo pipefail
build="$1"
bin="$build/toolmux"
fail() { echo "binary: $*" >&2; exit 1; }

size=$(stat -c %s "$bin")
echo "binary: toolmux $size bytes, toolmux.debug $(stat -c %s "$bin.debug") bytes"
(( size <= 16000000 )) || fail "toolmux is $size bytes, over 16,000,000"
sections="$(readelf -S --wide "$bin")"
[[ "$sections" != *".debug_info"* ]] || fail "toolmux still holds its debug information"
[[ "$(readelf --string-dump=.gnu_debuglink "$bin")" == *"toolmux.debug"* ]] ||
  fail "toolmux has no .gnu_debuglink to toolmux.debug"
[[ "$(readelf -S --wide "$bin.debug")" == *".debug_info"* ]] || fail "toolmux.debug has no .debug_info"

needed="$(readelf -d "$bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')"
echo "binary: needs $(echo "$needed" | tr '\n' ' ')"
for lib in libpq libjose libjansson librocksdb libsnappy liblz4 libzstd libbz2 libsodium libpcre2; do
  ! grep -q "^$lib" <<<"$needed" || fail "toolmux links $lib at start-up"
done
loaded=$(ldd "$bin" | wc -l)
echo "binary: ldd lists $loaded libraries"
# 16: the 14 of before, simdjson (Debian ships it shared only), which reads
# every message (src/base/plain_message.cpp), and protobuf-lite, which
# encodes the OTLP export (src/telemetry).
(( loaded <= 16 )) || fail "ldd lists $loaded libraries, more than 16"
echo "binary: ok"
