#!/usr/bin/env bash
# clang-tidy (.clang-tidy) over the product's sources, using the build's
# compile_commands.json.
#
#   scripts/lint.sh [BUILD_DIR]                 # the translation units whose inputs changed
#                                               # since the commit .ci/lint-clean names
#   scripts/lint.sh [BUILD_DIR] --all           # every translation unit (about 15 minutes
#                                               # on 2 cores)
#   scripts/lint.sh [BUILD_DIR] --all --record  # the same, and when it passes on a clean
#                                               # tree, writes HEAD to .ci/lint-clean
#
# A translation unit's inputs are its .cpp and every file its compile read (the
# build's dependency files, <build>/CMakeFiles/*.dir/**/*.cpp.o.d). clang-tidy
# judges each translation unit from its inputs alone, so one whose inputs are as
# they were at a commit where every unit passed passes still. Every unit is
# linted when that cannot be told: no .ci/lint-clean, a commit git does not have
# (a shallow clone), no git, or a change to .clang-tidy, this script or a
# CMakeLists.txt (compile flags). A system header's change (a Debian upgrade) is
# not seen: --all is the full run.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$here/build"
all=0
record=0
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    --record) record=1 ;;
    -*) echo "lint.sh: unknown option $arg" >&2; exit 2 ;;
    *) build="$(cd "$arg" && pwd)" ;;
  esac
done
((record && !all)) && { echo "lint.sh: --record needs --all" >&2; exit 2; }
tidy="$(command -v clang-tidy || command -v clang-tidy-14)"
cd "$here"
mapfile -t units < <(find src catalog transports -name "*.cpp" | sort)

# Why every unit is linted, or empty when only the changed ones are.
why_all=""
((all)) && why_all="--all"
if [[ -z $why_all ]]; then
  base="$(cat .ci/lint-clean 2>/dev/null || true)"
  if [[ -z $base ]]; then
    why_all="no .ci/lint-clean"
  elif ! git rev-parse -q --verify "$base^{commit}" >/dev/null 2>&1; then
    why_all="git does not have $base (.ci/lint-clean)"
  else
    # Changed since base: committed, staged, unstaged and untracked files.
    mapfile -t changed < <({ git diff --name-only "$base" -- && git ls-files --others --exclude-standard; } | sort -u)
    for f in "${changed[@]}"; do
      case "$f" in
        .clang-tidy | scripts/lint.sh | CMakeLists.txt | */CMakeLists.txt) why_all="$f changed" ;;
      esac
    done
  fi
fi

if [[ -n $why_all ]]; then
  targets=("${units[@]}")
  echo "lint.sh: every translation unit (${#targets[@]}): $why_all"
else
  patterns="$(mktemp)"
  trap 'rm -f "$patterns"' EXIT
  for f in "${changed[@]}"; do printf '%s\n' "$here/$f"; done >"$patterns"
  targets=()
  for unit in "${units[@]}"; do
    # The dependency file CMake's build wrote for this unit (one target builds it).
    depfile=""
    for d in "$build"/CMakeFiles/*.dir/"$unit".o.d; do
      [[ -f $d ]] && depfile="$d" && break
    done
    if [[ -z $depfile ]]; then
      targets+=("$unit")  # not built: its inputs are unknown
    elif [[ -s $patterns ]] && grep -qF -f "$patterns" "$depfile"; then
      targets+=("$unit")
    fi
  done
  echo "lint.sh: ${#targets[@]} of ${#units[@]} translation units read a file changed since $(git rev-parse --short "$base") (.ci/lint-clean)"
fi

# The compile commands without the precompiled headers (CMakeLists.txt,
# TOOLMUX_PRECOMPILED_HEADERS): clang cannot read GCC's .gch beside the header
# the build force-includes, and each unit is judged as it is written, by the
# headers it includes itself.
commands="$(mktemp -d)"
trap 'rm -rf "$commands" ${patterns:+"$patterns"}' EXIT
sed -E 's# -Winvalid-pch##g; s# -include [^ ]*/cmake_pch\.hxx##g' "$build/compile_commands.json" \
  >"$commands/compile_commands.json"
if ((${#targets[@]})); then
  printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -n 1 "$tidy" -p "$commands" --quiet 2>/dev/null
fi

if ((record)); then
  if [[ -n $(git status --porcelain) ]]; then
    echo "lint.sh: not recorded: the tree has uncommitted changes" >&2
    exit 1
  fi
  git rev-parse HEAD >.ci/lint-clean
  echo "lint.sh: .ci/lint-clean is now $(git rev-parse --short HEAD): commit it"
fi
