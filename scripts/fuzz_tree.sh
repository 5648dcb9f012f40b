# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: configures build-fuzz/,
# the one clang build with AddressSanitizer and UBSan (TOOLMUX_FUZZ=ON) that
# holds the libFuzzer targets and the unit tests sanitize.sh address --subset
# runs, so that both use the same objects. Sets fuzz_tree to its path.
fuzz_tree="$here/build-fuzz"
configure_fuzz_tree() {
  local clangxx launcher=()
  clangxx="$(command -v clang++ || command -v clang++-14 || true)"
  [[ -n $clangxx ]] || { echo "clang++ not found (scripts/setup.sh --tests installs it)" >&2; return 2; }
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$here" -B "$fuzz_tree" -DTOOLMUX_FUZZ=ON -DBUILD_TESTING=OFF -DCMAKE_CXX_COMPILER="$clangxx" \
    -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" "${launcher[@]}" >/dev/null
}
