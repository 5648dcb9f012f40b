// RocksDbWrite: a guard held around every write to RocksDB that may run
// beside another thread's write, so that ThreadSanitizer builds do not report
// RocksDB's own group commit as a race. Internal to src/store.
//
// RocksDB commits concurrent writes as a group: the first writer to arrive
// copies the batches of those queued behind it into the log and memtable, a
// hand-over ordered by atomics inside librocksdb. Debian's library is not
// built for ThreadSanitizer, so TSan sees the copies (memcpy, reached through
// libstdc++'s std::string, with no RocksDB frame on the stack for a
// suppression to name) but not the ordering, and reports two writers racing
// on a batch's buffer. So under TSan, RocksDbWrite, held around such a write,
// stops checking the thread's memory accesses (not its locks) until the write
// returns; in other builds it is an empty object.
// ResultStore needs none: it writes under its own mutex, one writer at a time.
// SessionStore and JournalStore (whose audit records are appended beside
// synced journal writes) hold it.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define TOOLMUX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TOOLMUX_TSAN 1
#endif
#endif

#ifdef TOOLMUX_TSAN
// ThreadSanitizer's dynamic annotations (libtsan exports them; no header declares them).
extern "C" {
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
}
#endif

namespace toolmux {

#ifdef TOOLMUX_TSAN
struct RocksDbWrite {
  RocksDbWrite() {
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  }
  ~RocksDbWrite() {
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  }
  RocksDbWrite(const RocksDbWrite&) = delete;
  RocksDbWrite& operator=(const RocksDbWrite&) = delete;
};
#else
struct RocksDbWrite {
  RocksDbWrite() {}  // user-provided: a guard held only for its scope is not "unused"
};
#endif

}  // namespace toolmux
