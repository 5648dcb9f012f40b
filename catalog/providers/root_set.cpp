#include "catalog/providers/root_set.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "src/base/utf8.h"

namespace toolmux {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- text helpers

namespace {

// The length of the well-formed character at text[i], or 0 when none starts there.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const Utf8Char c = decode_utf8(text, i);
  return c.valid ? c.length : 0;
}

}  // namespace

std::string quote_path(std::string_view whole) {
  static constexpr char kHex[] = "0123456789abcdef";
  // A path from a caller may be megabytes long: quote its start.
  const std::string clipped = clip_for_message(whole);
  const std::string_view text = clipped;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  out += '"';
  return out + clipped_size_note(whole);
}

std::string printable_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    const std::size_t length = utf8_sequence_length(name, i);
    if (length == 0 || c < 0x20 || c == 0x7F) {
      out += kUtf8Replacement;
      i += length == 0 ? 1 : length;
    } else {
      out.append(name.substr(i, length));
      i += length;
    }
  }
  return out;
}

// ---------------------------------------------------------------- descriptors

namespace {

std::atomic<bool> g_force_fallback{false};
std::atomic<bool> g_openat2_missing{false};

std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The real path of an open descriptor, via /proc; nullopt when unknown.
std::optional<std::string> real_path_of(int fd) {
  std::string buffer(4096, '\0');
  for (;;) {
    const ssize_t n = ::readlink(proc_fd_path(fd).c_str(), buffer.data(), buffer.size());
    if (n < 0) return std::nullopt;
    if (static_cast<std::size_t>(n) < buffer.size()) {
      buffer.resize(static_cast<std::size_t>(n));
      return buffer;
    }
    if (buffer.size() >= (1u << 20)) return std::nullopt;
    buffer.resize(buffer.size() * 2);
  }
}

bool is_inside(const std::string& path, const std::string& base) {
  if (base == "/") return !path.empty() && path[0] == '/';
  return path == base || (path.size() > base.size() && path.compare(0, base.size(), base) == 0 &&
                          path[base.size()] == '/');
}

// Splits on '/', dropping empty and "." segments and applying ".." lexically.
// False when ".." would climb above the start.
bool normalise_segments(std::string_view path, std::vector<std::string>& segments,
                        bool clamp_at_top) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (segment == "..") {
      if (!segments.empty()) {
        segments.pop_back();
      } else if (!clamp_at_top) {
        return false;
      }
    } else if (!segment.empty() && segment != ".") {
      segments.emplace_back(segment);
    }
    start = end + 1;
  }
  return true;
}

std::string join(const std::vector<std::string>& segments, std::size_t from = 0) {
  std::string out;
  for (std::size_t i = from; i < segments.size(); ++i) {
    if (!out.empty()) out += '/';
    out += segments[i];
  }
  return out;
}

std::string strip_trailing_slash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

int reopen_regular_for_reading(int path_fd, const struct stat& expected) {
  const int fd =
      ::open(proc_fd_path(path_fd).c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !same_file(st, expected)) {
    ::close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

void RootSet::force_openat2_fallback_for_testing(bool on) { g_force_fallback.store(on); }

// ---------------------------------------------------------------- RootSet

std::optional<RootSet> RootSet::open(const std::vector<fs::path>& roots, Problems& problems) {
  const std::size_t problems_before = problems.size();
  if (roots.empty()) {
    problems.push_back({"/roots", "no filesystem root was given"});
    return std::nullopt;
  }
  RootSet set;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const std::string pointer = "/roots/" + std::to_string(i);
    const fs::path& given = roots[i];
    std::error_code ec;
    if (given.empty()) {
      problems.push_back({pointer, "filesystem root is an empty path"});
      continue;
    }
    const fs::path canonical = fs::canonical(given, ec);
    if (ec) {
      problems.push_back({pointer, "filesystem root " + quote_path(given.string()) +
                                       " does not exist or cannot be reached: " + ec.message()});
      continue;
    }
    if (!fs::is_directory(canonical, ec)) {
      problems.push_back(
          {pointer, "filesystem root " + quote_path(given.string()) + " is not a directory"});
      continue;
    }
    const int fd = ::open(canonical.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      problems.push_back({pointer, "filesystem root " + quote_path(given.string()) +
                                       " cannot be opened: " + std::strerror(errno)});
      continue;
    }
    Root root;
    root.fd.reset(fd);
    root.canonical = strip_trailing_slash(canonical.string());
    fs::path absolute = fs::absolute(given, ec);
    root.given = strip_trailing_slash((ec ? canonical : absolute.lexically_normal()).string());

    std::string base = canonical.filename().string();
    if (base.empty()) base = "root";
    base = printable_name(base);
    std::string name = base;
    for (int n = 2;; ++n) {
      bool taken = false;
      for (const Root& other : set.roots_) taken = taken || other.name == name;
      if (!taken) break;
      name = base + "-" + std::to_string(n);
    }
    root.name = std::move(name);
    set.roots_.push_back(std::move(root));
  }
  if (problems.size() != problems_before) return std::nullopt;
  return std::optional<RootSet>(std::move(set));
}

std::vector<std::string> RootSet::names() const {
  std::vector<std::string> out;
  for (const Root& root : roots_) out.push_back(root.name);
  return out;
}

std::string RootSet::display(std::size_t root, std::string_view relative) const {
  if (!multiple()) return relative.empty() ? std::string(".") : std::string(relative);
  std::string out = roots_[root].name;
  if (!relative.empty()) {
    out += '/';
    out += relative;
  }
  return out;
}

Result<Location> RootSet::resolve(std::string_view path) const {
  Result<Location> location = resolve_segments(path);
  if (location.ok()) location->names_folder = path.size() > 1 && path.back() == '/';
  return location;
}

Result<Location> RootSet::resolve_segments(std::string_view path) const {
  if (path.find('\0') != std::string_view::npos) {
    return Status::invalid_argument("path " + quote_path(path) + " contains a NUL byte");
  }
  const std::string outside = "path " + quote_path(path) + " is outside the allowed roots";
  std::vector<std::string> segments;

  if (!path.empty() && path[0] == '/') {
    normalise_segments(path, segments, /*clamp_at_top=*/true);
    const std::string absolute = "/" + join(segments);
    std::size_t best = Location::kRootList;
    std::size_t best_length = 0;
    std::string best_rest;
    for (std::size_t i = 0; i < roots_.size(); ++i) {
      for (const fs::path* base : {&roots_[i].canonical, &roots_[i].given}) {
        const std::string b = base->string();
        if (!is_inside(absolute, b)) continue;
        if (best != Location::kRootList && b.size() <= best_length) continue;
        best = i;
        best_length = b.size();
        best_rest = absolute.size() > b.size() ? absolute.substr(b == "/" ? 1 : b.size() + 1) : "";
      }
    }
    if (best == Location::kRootList) return Status::invalid_argument(outside);
    return Location{best, best_rest, display(best, best_rest)};
  }

  if (!normalise_segments(path, segments, /*clamp_at_top=*/false)) {
    return Status::invalid_argument(outside);
  }
  if (!multiple()) {
    std::string relative = join(segments);
    return Location{0, relative, display(0, relative)};
  }
  if (segments.empty()) return Location{Location::kRootList, "", "."};
  for (std::size_t i = 0; i < roots_.size(); ++i) {
    if (roots_[i].name != segments[0]) continue;
    std::string relative = join(segments, 1);
    return Location{i, relative, display(i, relative)};
  }
  std::string list;
  for (const Root& root : roots_) list += (list.empty() ? "" : ", ") + quote_path(root.name);
  return Status::not_found("path " + quote_path(path) +
                           " does not start with the name of a root; with several roots, paths "
                           "start with one of: " +
                           list);
}

int RootSet::open_beneath(std::size_t root, const std::string& relative, int flags) const {
  const char* path = relative.empty() ? "." : relative.c_str();
  const int root_fd = roots_[root].fd.get();
  flags |= O_CLOEXEC;

  if (!g_force_fallback.load() && !g_openat2_missing.load()) {
    struct open_how how {};
    how.flags = static_cast<std::uint64_t>(flags);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (int attempt = 0; attempt < 16; ++attempt) {
      const long fd = ::syscall(SYS_openat2, root_fd, path, &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      if (errno == EAGAIN) continue;  // a rename raced with RESOLVE_BENEATH; try again
      if (errno != ENOSYS) return -1;
      g_openat2_missing.store(true);
      break;
    }
    if (!g_openat2_missing.load()) return -1;  // EAGAIN every time
  }
  return open_by_real_path(root, relative, flags);
}

int RootSet::open_by_real_path(std::size_t root, const std::string& relative, int flags) const {
  const char* path = relative.empty() ? "." : relative.c_str();
  const int root_fd = roots_[root].fd.get();
  flags |= O_CLOEXEC;
  // Open with O_PATH (harmless, whatever it is), check where it really is,
  // then reopen that very file as asked.
  const int path_flags = O_PATH | O_CLOEXEC | (flags & (O_NOFOLLOW | O_DIRECTORY));
  UniqueFd probe(::openat(root_fd, path, path_flags));
  if (!probe) return -1;
  const std::optional<std::string> real = real_path_of(probe.get());
  if (!real) {
    errno = EACCES;  // cannot prove containment: refuse
    return -1;
  }
  std::string checked = *real;
  if ((flags & O_NOFOLLOW) != 0) {
    // The link itself: its parent folder must be inside.
    struct stat st {};
    if (::fstat(probe.get(), &st) == 0 && S_ISLNK(st.st_mode)) {
      checked = fs::path(*real).parent_path().string();
    }
  }
  if (!is_inside(checked, roots_[root].canonical.string())) {
    errno = EXDEV;
    return -1;
  }
  if ((flags & O_PATH) != 0) return probe.release();
  return ::open(proc_fd_path(probe.get()).c_str(), flags & ~O_NOFOLLOW);
}

Status RootSet::open_error(const Location& location, int err, bool follow_final) const {
  const std::string shown = quote_path(location.display);
  if (err == EXDEV && !location.is_root_list()) {
    // RESOLVE_BENEATH refuses every absolute symlink target and every ".."
    // above the root, even when the path ends up inside again. Say so rather
    // than claim it leads out. (The probe is O_PATH: nothing is opened.)
    UniqueFd probe(open_by_real_path(location.root, location.relative,
                                     O_PATH | (follow_final ? 0 : O_NOFOLLOW)));
    if (probe) {
      return Status::invalid_argument(
          "path " + shown +
          " goes through a symbolic link with an absolute target (or one that leaves the "
          "root and comes back); such links are not followed");
    }
  }
  switch (err) {
    case ENOENT:
      return Status::not_found(shown + " does not exist");
    case ENOTDIR:
      return Status::not_found(shown + " does not exist (a part of the path is not a folder)");
    case EXDEV:
      return Status::invalid_argument("path " + shown + " points outside the allowed roots");
    case ELOOP:
      return Status::invalid_argument("path " + shown + " has too many levels of symbolic links");
    case EACCES:
    case EPERM:
      return Status::io_error("permission denied for " + shown);
    case ENAMETOOLONG:
      return Status::invalid_argument("path " + shown + " is too long");
    default:
      return Status::io_error("cannot open " + shown + ": " + std::strerror(err));
  }
}

Result<OpenedFile> RootSet::open_path(const Location& location, bool follow_final) const {
  if (location.is_root_list()) {
    return Status::invalid_argument("\".\" is the list of roots, not a file or folder");
  }
  OpenedFile opened;
  opened.fd.reset(
      open_beneath(location.root, location.relative, O_PATH | (follow_final ? 0 : O_NOFOLLOW)));
  if (!opened.fd) return open_error(location, errno, follow_final);
  if (::fstat(opened.fd.get(), &opened.st) != 0) return open_error(location, errno);
  if (location.names_folder && !S_ISDIR(opened.st.st_mode)) {
    return Status::invalid_argument(quote_path(location.display + "/") +
                                    " is not a folder (a path that ends in \"/\" names a folder)");
  }
  return opened;
}

Result<OpenedFile> RootSet::open_regular_file(const Location& location) const {
  if (location.is_root_list()) {
    return Status::invalid_argument("\".\" is the list of roots, not a file");
  }
  Result<OpenedFile> probe = open_path(location, /*follow_final=*/true);
  if (!probe.ok()) return probe.status();
  if (S_ISDIR(probe->st.st_mode)) {
    return Status::invalid_argument(quote_path(location.display) + " is a directory, not a file");
  }
  if (!S_ISREG(probe->st.st_mode)) {
    return Status::invalid_argument(quote_path(location.display) +
                                    " is not a regular file or directory");
  }
  OpenedFile opened;
  opened.fd.reset(reopen_regular_for_reading(probe->fd.get(), probe->st));
  if (!opened.fd && errno != ESTALE) {
    // No /proc: open the same path again and check it is the same file.
    opened.fd.reset(
        open_beneath(location.root, location.relative, O_RDONLY | O_NONBLOCK | O_NOCTTY));
    if (!opened.fd) return open_error(location, errno);
  }
  if (!opened.fd || ::fstat(opened.fd.get(), &opened.st) != 0 || !S_ISREG(opened.st.st_mode) ||
      !same_file(opened.st, probe->st)) {
    return Status::io_error(quote_path(location.display) +
                            " changed while it was being opened; try again");
  }
  return opened;
}

Result<OpenedFile> RootSet::open_directory(const Location& location) const {
  if (location.is_root_list()) {
    return Status::invalid_argument("\".\" is the list of roots, not a folder that can be opened");
  }
  Result<OpenedFile> probe = open_path(location, /*follow_final=*/true);
  if (!probe.ok()) return probe.status();
  if (!S_ISDIR(probe->st.st_mode)) {
    return Status::invalid_argument(quote_path(location.display) +
                                    (S_ISREG(probe->st.st_mode)
                                         ? " is a file, not a directory"
                                         : " is not a regular file or directory"));
  }
  OpenedFile opened;
  opened.fd.reset(open_beneath(location.root, location.relative, O_RDONLY | O_DIRECTORY));
  if (!opened.fd) return open_error(location, errno);
  if (::fstat(opened.fd.get(), &opened.st) != 0 || !same_file(opened.st, probe->st)) {
    return Status::io_error(quote_path(location.display) +
                            " changed while it was being opened; try again");
  }
  return opened;
}

Result<OpenedFile> RootSet::open_directory_for_writing(std::size_t root, std::string_view relative,
                                                       bool create_missing) const {
  auto fail = [&](const std::string& prefix, int err) -> Status {
    const Location at{root, prefix, display(root, prefix)};
    if (err == ENOENT) {
      return Status::not_found("folder " + quote_path(at.display) +
                               " does not exist (set create_directories to true to create it)");
    }
    if (err == ENOTDIR)
      return Status::invalid_argument(quote_path(at.display) + " is not a folder");
    return open_error(at, err);
  };

  OpenedFile opened;
  opened.fd.reset(open_beneath(root, std::string(relative), O_RDONLY | O_DIRECTORY));
  if (!opened.fd) {
    const int err = errno;
    if (err != ENOENT || !create_missing) return fail(std::string(relative), err);
    // Walk down from the root, making each missing folder.
    std::vector<std::string> segments;
    normalise_segments(relative, segments, /*clamp_at_top=*/false);
    UniqueFd parent(open_beneath(root, "", O_RDONLY | O_DIRECTORY));
    if (!parent) return fail("", errno);
    std::string prefix;
    for (const std::string& segment : segments) {
      prefix += (prefix.empty() ? "" : "/") + segment;
      UniqueFd next(open_beneath(root, prefix, O_RDONLY | O_DIRECTORY));
      if (!next && errno == ENOENT) {
        if (::mkdirat(parent.get(), segment.c_str(), 0777) != 0 && errno != EEXIST) {
          return fail(prefix, errno);
        }
        next.reset(open_beneath(root, prefix, O_RDONLY | O_DIRECTORY));
      }
      if (!next) return fail(prefix, errno);
      parent = std::move(next);
    }
    opened.fd = std::move(parent);
  }
  if (::fstat(opened.fd.get(), &opened.st) != 0) return fail(std::string(relative), errno);
  return opened;
}

}  // namespace toolmux
