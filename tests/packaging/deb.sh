#!/usr/bin/env bash
# CTest package_deb: builds the Debian package with CPack from a configured
# and built build folder, installs it with dpkg -i, and checks what a user of
# it meets: /usr/bin/toolmux --version, the man page, the examples, the
# conffiles, and toolmux.service (systemd-analyze verify; installing neither
# enables nor starts it). Then removes it with dpkg --purge, leaving the
# machine as it was. Needs root (skips with code 77 otherwise), dpkg-dev
# (dpkg-shlibdeps), man-db and systemd (scripts/setup.sh --tests).
#
# Usage: tests/packaging/deb.sh BUILD_DIR
set -euo pipefail
build="$(realpath "${1:?usage: tests/packaging/deb.sh BUILD_DIR}")"
skip=77
fail() { echo "package_deb: FAIL: $*" >&2; exit 1; }

if ((EUID != 0)); then
  echo "SKIP: package_deb installs a package with dpkg -i and needs root (run as root)" >&2
  exit "$skip"
fi
for tool in cpack dpkg-shlibdeps systemd-analyze man; do
  command -v "$tool" >/dev/null || { echo "package_deb: $tool is missing (scripts/setup.sh --tests)" >&2; exit 1; }
done
if dpkg-query -W -f='${Status}' toolmux 2>/dev/null | grep -q 'ok installed'; then
  echo "SKIP: a toolmux package is installed already; this test would replace and remove it" >&2
  exit "$skip"
fi

version="$(sed -nE 's/^set\(CPACK_PACKAGE_VERSION "(.*)"\)$/\1/p' "$build/CPackConfig.cmake")"
[[ -n "$version" ]] || fail "no CPACK_PACKAGE_VERSION in $build/CPackConfig.cmake"
deb="$build/toolmux_${version}_$(dpkg --print-architecture).deb"

# cpack runs the install rules of the build folder, with its binary as built.
rm -f "$deb"
(cd "$build" && cpack -G DEB --config CPackConfig.cmake >cpack.log 2>&1) || { cat "$build/cpack.log" >&2; fail "cpack failed"; }
[[ -f "$deb" ]] || fail "cpack made no $deb"
echo "package_deb: $(basename "$deb"): $(stat -c %s "$deb") bytes"

# The package as dpkg sees it: dependencies from dpkg-shlibdeps, the conffiles.
depends="$(dpkg-deb -f "$deb" Depends)"
echo "package_deb: Depends: $depends"
# libpq5 and libjose0 are opened at run time (src/base/shared_library.h),
# so named by hand; libsodium, libpcre2 and RocksDB's compressors are linked
# statically, so not named at all (libstemmer and simdjson stay shared: Debian
# ships no archive of either).
for lib in libpq5 libjose0 libcpp-httplib libssl3 libc6 libstdc++6 libstemmer0d libsimdjson14; do
  [[ "$depends" == *"$lib"* ]] || fail "Depends names no $lib: $depends"
done
for lib in libsodium23 libpcre2-8-0 libsnappy1v5 libzstd1 librocksdb; do
  [[ "$depends" != *"$lib"* ]] || fail "Depends names $lib, which is linked statically: $depends"
done
conffiles="$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)"
[[ "$conffiles" == $'/etc/toolmux/catalog.json\n/etc/default/toolmux' ]] || fail "conffiles: $conffiles"

server=""
state=""
cleanup() {
  [[ -z "$server" ]] || kill -KILL "$server" 2>/dev/null || true
  [[ -z "$state" ]] || rm -rf "$state"
  dpkg --purge toolmux >/dev/null 2>&1 || true
}
trap cleanup EXIT
dpkg -i "$deb" >/dev/null || fail "dpkg -i $deb failed"

# The binary on PATH, the man page, the examples, the catalog it serves.
[[ "$(/usr/bin/toolmux --version)" == *"$version" ]] || fail "/usr/bin/toolmux --version: $(/usr/bin/toolmux --version)"
man_text="$(MANWIDTH=80 man --warnings -l /usr/share/man/man1/toolmux.1.gz 2>"$build/man.log")" || fail "man -l: $(cat "$build/man.log")"
[[ ! -s "$build/man.log" ]] || fail "man -l warns: $(cat "$build/man.log")"
grep -q "toolmux $version" <<<"$man_text" || fail "the man page does not say toolmux $version"
for command in serve check search journal audit freeze; do
  grep -q -- "$command" <<<"$man_text" || fail "the man page does not mention $command"
done
# Every option `toolmux --help` lists is in the page (in roff, each - is \-).
roff="$(zcat /usr/share/man/man1/toolmux.1.gz)"
for option in $(/usr/bin/toolmux --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
  grep -qF -- "${option//-/\\-}" <<<"$roff" || fail "the man page does not describe $option (toolmux --help does)"
done
for example in catalog.json upstreams.json claude_desktop_config.json; do
  [[ -f /usr/share/doc/toolmux/examples/$example ]] || fail "no /usr/share/doc/toolmux/examples/$example"
done
/usr/bin/toolmux check /etc/toolmux/catalog.json >/dev/null || fail "/etc/toolmux/catalog.json does not pass toolmux check"

# The unit: verified by systemd's own checker, installed but neither enabled nor started.
unit=/usr/lib/systemd/system/toolmux.service
[[ -f "$unit" ]] || fail "no $unit"
verify="$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$unit" 2>&1)" || fail "systemd-analyze verify: $verify"
[[ -z "$verify" ]] || fail "systemd-analyze verify warns: $verify"
# systemd's own measure of the sandbox, 0 (locked down) to 10 (its --threshold counts
# tenths: 20 is 2.0); 1.3 when written.
exposure="$(systemd-analyze security --offline=true --threshold=20 "$unit" 2>&1)" ||
  fail "systemd-analyze security: exposure above 2.0: $(tail -1 <<<"$exposure")"
echo "package_deb: $(tail -1 <<<"$exposure")"
[[ ! -e /etc/systemd/system/multi-user.target.wants/toolmux.service ]] || fail "installing enabled toolmux.service"

# The unit's ExecStart as systemd would run it (no systemd here: its variables put in
# by hand, port 0, /var/lib/toolmux in a temporary folder): it serves the installed
# catalog over HTTP, answers /health, and exits 0 on SIGTERM.
state="$(mktemp -d)"
mkdir "$state/data" "$state/files"  # StateDirectory= makes them
exec_start="$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/\\$//; s/^ExecStart=//' | tr '\n' ' ')"
exec_start="${exec_start//'${TOOLMUX_HTTP}'/127.0.0.1:0}"
exec_start="${exec_start//\/var\/lib\/toolmux/$state}"
exec_start="${exec_start//'$TOOLMUX_ROOTS'/$state/files}"
exec_start="${exec_start//'$TOOLMUX_OPTIONS'/}"
read -ra argv <<<"$exec_start"
[[ "${argv[0]}" == /usr/bin/toolmux && "$exec_start" != *'$'* ]] || fail "ExecStart: $exec_start"
"${argv[@]}" 2>"$state/log" &
server=$!
for _ in $(seq 100); do
  grep -q '"event":"serving"' "$state/log" && break
  kill -0 "$server" 2>/dev/null || fail "${argv[*]} exited: $(cat "$state/log")"
  sleep 0.1
done
port="$(sed -nE 's/.*"event":"serving".*"url":"http:\/\/127\.0\.0\.1:([0-9]+)\/mcp".*/\1/p' "$state/log")"
[[ -n "$port" ]] || fail "no serving line with the URL: $(cat "$state/log")"
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
health="$(cat <&3)"
exec 3<&-
[[ "$health" == "HTTP/1.1 200"* && "$health" == *'{"status":"ok"}'* ]] || fail "GET /health: $health"
kill -TERM "$server"
wait "$server" || fail "toolmux exited with $? on SIGTERM: $(cat "$state/log")"
server=""
echo "package_deb: ExecStart serves http://127.0.0.1:$port/mcp with /etc/toolmux/catalog.json"

dpkg --purge toolmux >/dev/null || fail "dpkg --purge toolmux failed"
[[ ! -e /usr/bin/toolmux && ! -e /etc/toolmux/catalog.json && ! -e "$unit" ]] || fail "files left after dpkg --purge"
rm -rf "$state"
trap - EXIT
echo "package_deb: ok"
