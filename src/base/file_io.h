// Whole files: reading one that a person or a configuration named, and
// writing one so that a reader sees the old content or the new, never part.
//
// read_regular_file never blocks on what is not a file. It opens with
// O_NONBLOCK (a FIFO with no writer opens at once instead of waiting for
// one), takes the type from fstat of the descriptor it opened (so nothing can
// be swapped in between a check and the open), refuses anything but a
// regular file unread, and reads at most max_bytes + 1 bytes, whatever the
// size said (the file may grow while it is read).
//
// write_file_atomically never writes through a name that someone else made:
// the content goes into a file with no name (O_TMPFILE) that is linked under
// a fresh random name once it is whole and on disk, or, where the file
// system has no O_TMPFILE, into a file made under a fresh random name with
// O_CREAT | O_EXCL | O_NOFOLLOW (a name that exists, a planted symbolic link
// included, is never opened: another name is drawn). That file is then
// renamed over the target, which replaces the target's name, never a file a
// symbolic link there points to. Every function may be called from any
// thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace toolmux {

// What a file of type `mode` (st_mode) is, in words: "a directory", "a FIFO
// (named pipe)", "a socket", "a character device", "a block device", "a
// symbolic link", "a regular file".
std::string file_type_words(mode_t mode);

enum class SymbolicLinks { follow, refuse };

// The whole regular file at `path`, of at most `max_bytes`. A symbolic link
// is followed to the file it names unless `links` is refuse. Failures, each
// message naming the path:
//   not_found: nothing is there ("cannot read P: No such file or directory");
//   invalid_argument: it is not a regular file ("cannot read P: it is a FIFO
//     (named pipe), not a regular file"), or a refused symbolic link;
//   resource_exhausted: it is larger ("cannot read P: the file is larger
//     than N bytes");
//   io_error: the system's reason for anything else.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                                      SymbolicLinks links = SymbolicLinks::follow);

struct AtomicWriteOptions {
  // The permissions of a new file, less the umask (as open(2) takes them).
  mode_t mode = 0666;
  // When set: exactly these, whatever the umask (to keep the replaced file's).
  std::optional<mode_t> exact_mode;
  // False: a file already at the name is kept and the write fails ("File
  // exists"); the first of two writers wins.
  bool replace = true;
};

// Writes `bytes` as the file `name` in the folder open as `dir_fd` (a
// descriptor opened with O_DIRECTORY, O_PATH will do), whole and synced to
// disk, or not at all: no temporary file is left behind either way. On
// failure the message is the reason alone (the system's, e.g. "No space left
// on device"), for the caller to say what it was writing.
Status write_file_atomically_at(int dir_fd, const std::string& name, std::string_view bytes,
                                const AtomicWriteOptions& options = {});

// The same for `path`, in the folder it names (the working directory for a
// bare name), which must exist; a failure's message is "cannot write P: why".
Status write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                             const AtomicWriteOptions& options = {});

}  // namespace toolmux
