#!/usr/bin/env bash
# Installs what toolmux needs to build (and, with --tests, to run its test
# suite) on Debian, as root. Does nothing for what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make libcpp-httplib-dev nlohmann-json3-dev librocksdb-dev libstemmer-dev libsqlite3-dev libpcre2-dev libcli11-dev libsodium-dev libsimdjson-dev libpq-dev libjose-dev pkg-config catch2 libprotobuf-dev protobuf-compiler)
if [[ ${1:-} == --tests ]]; then
  packages+=(clang-format clang-tidy)
  # The fuzz build (scripts/fuzz.sh): clang with the libFuzzer, ASan and UBSan
  # runtimes; it links libstdc++, so libc++ is not needed.
  packages+=(clang libclang-rt-14-dev)
  # `script` (a pseudo-terminal for serve's first-run guidance, tests/e2e/import.test.mjs);
  # essential in Debian, listed so that a trimmed image gets it too.
  packages+=(bsdutils)
  # valgrind's callgrind counts what a call costs (tests/perf/call_instructions.sh).
  packages+=(valgrind)
  command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
  # The packages' tests (tests/packaging): cpack's dependencies from
  # dpkg-shlibdeps (dpkg-dev; it runs file and objdump), the man page read with
  # man, the unit checked with systemd-analyze.
  packages+=(dpkg-dev file binutils man-db systemd)
  # The status page's end-to-end test renders it in headless Chromium.
  packages+=(chromium)
  # The shared store's tests: a PostgreSQL server started in a temporary folder
  # (tests/support/postgres.sh) and HAProxy in front of several instances.
  packages+=(postgresql-15 haproxy)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# valijson is header-only and toolmux uses only its nlohmann adapter, but
# Debian's libvalijson-dev depends on the development packages of every other
# adapter (Qt 5, Poco, yaml-cpp, jsoncpp, picojson, rapidjson): take just its
# headers from Debian's package, into /usr/local/include.
if [[ ! -f /usr/include/valijson/validator.hpp && ! -f /usr/local/include/valijson/validator.hpp ]]; then
  echo "setup: installing valijson's headers from libvalijson-dev (without its dependencies)" >&2
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt's download user writes into it
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && { apt-get download -qq libvalijson-dev 2>/dev/null ||
    { apt-get update -qq && apt-get download -qq libvalijson-dev; }; })
  dpkg-deb -x "$tmp"/libvalijson-dev_*.deb "$tmp/root"
  mkdir -p /usr/local/include
  cp -r "$tmp/root/usr/include/valijson" /usr/local/include/
fi

if [[ ${1:-} == --tests ]]; then
  bash scripts/install-node-deps.sh
fi
