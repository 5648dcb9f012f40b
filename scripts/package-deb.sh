#!/usr/bin/env bash
# Builds the Debian package: installs what the build needs (scripts/setup.sh,
# and dpkg-dev and file for dpkg-shlibdeps), builds toolmux and its man page in
# build/, and runs CPack (docs/packaging.md). Prints the package's path on
# stdout; everything else goes to stderr. As root, on Debian.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/setup.sh" >&2
missing=()
for p in dpkg-dev file binutils; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
cmake --build "$here/build" -j"$(nproc)" --target toolmux toolmux_man >&2
(cd "$here/build" && cpack -G DEB >&2)
version="$(sed -nE 's/^set\(CPACK_PACKAGE_VERSION "(.*)"\)$/\1/p' "$here/build/CPackConfig.cmake")"
echo "$here/build/toolmux_${version}_$(dpkg --print-architecture).deb"
