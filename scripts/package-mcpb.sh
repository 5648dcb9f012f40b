#!/usr/bin/env bash
# Builds toolmux's Claude Desktop extension (an MCP Bundle, .mcpb) from a built
# binary, with the MCP Bundle tool pinned by packaging/mcpb/package-lock.json:
# validates packaging/mcpb/manifest.json, packs it with the binary (stripped)
# as server/toolmux, and writes beside the bundle a server.json for the MCP
# registry that names the bundle with its SHA-256 (docs/packaging.md).
#
# Usage: scripts/package-mcpb.sh [BINARY [OUTDIR]]   (default: build/toolmux, build)
# Prints the bundle's path on stdout; everything else goes to stderr.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
binary="$(realpath "${1:-$repo/build/toolmux}")"
outdir="$(realpath -m "${2:-$repo/build}")"
mcpb_dir="$repo/packaging/mcpb"

[[ -x "$binary" ]] || { echo "package-mcpb: no toolmux binary at $binary (build it first)" >&2; exit 1; }
bash "$repo/scripts/install-node-deps.sh" packaging/mcpb >&2
mcpb="$mcpb_dir/node_modules/.bin/mcpb"

# The bundle's version is the project's: the manifest must say the binary's version.
version="$("$binary" --version | awk '{print $NF}')"
manifest_version="$(node -p 'require(process.argv[1]).version' "$mcpb_dir/manifest.json")"
if [[ "$version" != "$manifest_version" ]]; then
  echo "package-mcpb: packaging/mcpb/manifest.json says version $manifest_version, toolmux --version says $version" >&2
  exit 1
fi
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) arch="$(uname -m)" ;;
esac
bundle="$outdir/toolmux-$version-linux-$arch.mcpb"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/server" "$outdir"
# The manifest without its "$schema" (a path into this repository's node_modules).
node -e 'const m = require(process.argv[1]); delete m.$schema;
  require("fs").writeFileSync(process.argv[2], JSON.stringify(m, null, 2) + "\n")' \
  "$mcpb_dir/manifest.json" "$stage/manifest.json"
strip --strip-unneeded -o "$stage/server/toolmux" "$binary"
chmod 755 "$stage/server/toolmux"

"$mcpb" validate "$stage/manifest.json" >&2
rm -f "$bundle"
"$mcpb" pack "$stage" "$bundle" >&2

# server.json for the MCP registry, with this bundle's SHA-256 (the release
# step publishes the bundle at the identifier's URL).
sha="$(sha256sum "$bundle" | cut -d' ' -f1)"
node -e 'const s = require(process.argv[1]);
  const p = s.packages.find((p) => p.registryType === "mcpb");
  p.fileSha256 = process.argv[3];
  require("fs").writeFileSync(process.argv[2], JSON.stringify(s, null, 2) + "\n")' \
  "$repo/packaging/registry/server.json" "$outdir/server.json" "$sha"
echo "package-mcpb: $bundle ($(stat -c %s "$bundle") bytes), $outdir/server.json" >&2
echo "$bundle"
