#!/usr/bin/env bash
# Installs the pinned Node.js packages of the end-to-end tests (tests/e2e), of
# the start-up benchmark (bench/startup), of the conformance suite
# (tests/conformance) and of the Claude Desktop extension's build
# (packaging/mcpb) with `npm ci`, exactly as their
# package-lock.json files say.
#
# Idempotent: a folder is reinstalled only when its node_modules is missing or
# stale, i.e. was not installed from the current package.json and
# package-lock.json (a stamp file in node_modules records their hash after a
# successful `npm ci`).
#
# Usage: scripts/install-node-deps.sh [--force] [DIR...]   (DIRs relative to the repo)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

force=0
dirs=()
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h | --help)
      sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) dirs+=("$arg") ;;
  esac
done
((${#dirs[@]})) || dirs=(tests/e2e bench/startup tests/conformance packaging/mcpb)

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-node-deps: node and npm are needed (scripts/setup.sh --tests installs them)" >&2
  exit 1
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if ((node_major < 20)); then
  echo "install-node-deps: Node.js >= 20 is needed, found $(node --version)" >&2
  exit 1
fi

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

for dir in "${dirs[@]}"; do
  path="$repo/$dir"
  lock="$path/package-lock.json"
  if [[ ! -f "$lock" ]]; then
    echo "install-node-deps: $dir/package-lock.json is missing" >&2
    exit 1
  fi
  stamp="$path/node_modules/.toolmux-lock-sha256"
  want="$(hash_of "$path/package.json" "$lock")"
  if ((!force)) && [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "install-node-deps: $dir is up to date"
    continue
  fi
  echo "install-node-deps: npm ci in $dir"
  (cd "$path" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
done
