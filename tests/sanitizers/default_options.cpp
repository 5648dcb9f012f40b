// Linked into every executable of a sanitizer build: scripts/sanitize.sh
// compiles it with TOOLMUX_SANITIZER_DIR (this folder) and
// TOOLMUX_SANITIZER_LOGS (the build tree's report folder) and puts it in the
// link flags. The sanitizer runtimes read these options before main, ahead of
// any *SAN_OPTIONS in the environment. They are compiled in because the
// end-to-end tests start toolmux with a clean environment: the first report
// stops the process, and it goes to a file in the report folder, which the
// script fails on, rather than to a stderr no test may be reading.
#if !defined(TOOLMUX_SANITIZER_DIR) || !defined(TOOLMUX_SANITIZER_LOGS)
#error "TOOLMUX_SANITIZER_DIR and TOOLMUX_SANITIZER_LOGS must be defined"
#endif

#define TOOLMUX_COMMON_OPTIONS \
  "halt_on_error=1:exitcode=66:print_stacktrace=1:log_path=" TOOLMUX_SANITIZER_LOGS "/report"

// NOLINTBEGIN(bugprone-reserved-identifier): the names the runtimes look up.
extern "C" {
__attribute__((used)) const char* __asan_default_options() {
  return TOOLMUX_COMMON_OPTIONS ":detect_leaks=1:strict_string_checks=1";
}
__attribute__((used)) const char* __lsan_default_options() {
  return "suppressions=" TOOLMUX_SANITIZER_DIR "/lsan.supp:print_suppressions=0";
}
__attribute__((used)) const char* __ubsan_default_options() { return TOOLMUX_COMMON_OPTIONS; }
__attribute__((used)) const char* __tsan_default_options() {
  return TOOLMUX_COMMON_OPTIONS ":second_deadlock_stack=1:suppressions=" TOOLMUX_SANITIZER_DIR
                                "/tsan.supp";
}
}
// NOLINTEND(bugprone-reserved-identifier)
