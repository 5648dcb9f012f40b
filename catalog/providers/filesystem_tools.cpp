#include "catalog/providers/filesystem_tools.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/providers/file_walker.h"
#include "catalog/providers/glob.h"
#include "catalog/providers/root_set.h"
#include "catalog/providers/text_search.h"
#include "src/base/file_io.h"
#include "src/base/status.h"
#include "src/base/utf8.h"

namespace toolmux {

namespace {

using namespace std::chrono_literals;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

constexpr std::size_t kReadMaxFileBytes = 64 * kMiB;  // read_text_file refuses bigger files
constexpr std::size_t kReadMaxLines = 2000;           // per call
constexpr std::size_t kReadMaxBytes = 256 * kKiB;     // per call
constexpr std::size_t kListMaxEntries = 10000;
constexpr std::size_t kSearchMaxFileBytes = 8 * kMiB;
constexpr std::size_t kSearchMaxTotalBytes = 256 * kMiB;
constexpr std::size_t kProgressEveryFiles = 200;
// Longest glob (find_files pattern, search_file_contents file_pattern) or
// query, in characters: a matcher's work grows with its pattern, per name or
// line it is tried on; the schemas say so (maxLength) and the tools check it.
constexpr std::size_t kMaxPatternChars = 1024;

// ---------------------------------------------------------------- small helpers

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string marker(std::string_view text) { return "[toolmux: " + std::string(text) + "]"; }

// Well-formed UTF-8 without NUL bytes.
bool is_utf8_text(std::string_view text) {
  return text.find('\0') == std::string_view::npos && is_valid_utf8(text);
}

// Reads at most `cap` bytes; false (and `too_big`) when the file holds more.
bool read_all(int fd, std::size_t cap, std::string& out, bool& too_big, int& err) {
  out.clear();
  too_big = false;
  std::size_t used = 0;
  for (;;) {
    if (out.size() < used + 64 * kKiB)
      out.resize(std::min(std::max(2 * used, 256 * kKiB), cap + 1));
    if (used == out.size()) {
      too_big = true;
      return false;
    }
    const ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      return false;
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used > cap) {
      too_big = true;
      return false;
    }
  }
  out.resize(used);
  return true;
}

std::string type_name(mode_t mode) {
  if (S_ISREG(mode)) return "file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

// ---------------------------------------------------------------- arguments

// Arguments passed the input schema; these still cope with anything.
std::optional<std::string> string_arg(const json& args, const char* key) {
  if (!args.is_object()) return std::nullopt;
  const auto it = args.find(key);
  if (it == args.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<std::int64_t> int_arg(const json& args, const char* key) {
  if (!args.is_object()) return std::nullopt;
  const auto it = args.find(key);
  if (it == args.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (d >= -9e15 && d <= 9e15) return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

// The error for a pattern or query over kMaxPatternChars, or nullopt. The
// schema's maxLength refuses it first; this holds for any caller.
std::optional<ToolResult> too_long(const char* key, const std::optional<std::string>& value) {
  if (!value) return std::nullopt;
  const std::size_t chars = utf8_length(*value);
  if (chars <= kMaxPatternChars) return std::nullopt;
  return ToolResult::error(std::string(key) + " is " + std::to_string(chars) +
                           " characters long; at most " + std::to_string(kMaxPatternChars) +
                           " are allowed");
}

bool bool_arg(const json& args, const char* key, bool fallback) {
  if (!args.is_object()) return fallback;
  const auto it = args.find(key);
  if (it == args.end() || !it->is_boolean()) return fallback;
  return it->get<bool>();
}

// ---------------------------------------------------------------- tool bodies

class FilesystemTools {
 public:
  explicit FilesystemTools(RootSet roots) : roots_(std::move(roots)) {}

  ToolResult read_text_file(const json& args, CallContext& context) const;
  ToolResult list_directory(const json& args, CallContext& context) const;
  ToolResult find_files(const json& args, CallContext& context) const;
  ToolResult search_file_contents(const json& args, CallContext& context) const;
  ToolResult get_file_info(const json& args, CallContext& context) const;
  ToolResult write_text_file(const json& args, CallContext& context) const;

  const RootSet& roots() const { return roots_; }

 private:
  RootSet roots_;
};

ToolResult FilesystemTools::read_text_file(const json& args, CallContext& /*context*/) const {
  const std::optional<std::string> path = string_arg(args, "path");
  if (!path) return ToolResult::error("missing argument \"path\"");
  const std::optional<std::int64_t> start_arg = int_arg(args, "start_line");
  const std::optional<std::int64_t> end_arg = int_arg(args, "end_line");
  if ((start_arg && *start_arg < 1) || (end_arg && *end_arg < 1)) {
    return ToolResult::error("start_line and end_line count from 1");
  }
  if (start_arg && end_arg && *end_arg < *start_arg) {
    return ToolResult::error("end_line (" + std::to_string(*end_arg) + ") is before start_line (" +
                             std::to_string(*start_arg) + ")");
  }

  const Result<Location> location = roots_.resolve(*path);
  if (!location.ok()) return ToolResult::error(location.message());
  Result<OpenedFile> file = roots_.open_regular_file(*location);
  if (!file.ok()) return ToolResult::error(file.message());
  const std::string shown = quote_path(location->display);
  if (static_cast<std::uint64_t>(file->st.st_size) > kReadMaxFileBytes) {
    return ToolResult::error("file " + shown + " is larger than 64 MiB; it cannot be read with " +
                             "read_text_file (use search_file_contents to find lines in it)");
  }
  std::string content;
  bool too_big = false;
  int err = 0;
  if (!read_all(file->fd.get(), kReadMaxFileBytes, content, too_big, err)) {
    if (too_big) return ToolResult::error("file " + shown + " is larger than 64 MiB");
    return ToolResult::error("cannot read " + shown + ": " + std::strerror(err));
  }
  if (!is_utf8_text(content)) {
    return ToolResult::error("path " + shown + " is not a UTF-8 text file");
  }

  // Line k (1-based) is content[starts[k-1], starts[k]).
  std::vector<std::size_t> starts{0};
  for (std::size_t i = content.find('\n'); i != std::string::npos; i = content.find('\n', i + 1)) {
    starts.push_back(i + 1);
  }
  if (starts.back() != content.size()) starts.push_back(content.size());
  const std::size_t total = starts.size() - 1;

  const std::size_t first = start_arg ? static_cast<std::size_t>(*start_arg) : 1;
  if (total == 0 && first == 1) return ToolResult::text(marker(shown + " is empty"));
  if (first > total) {
    return ToolResult::error("start_line " + std::to_string(first) + " is past the end of " +
                             shown + ", which has " + plural(total, "line", "lines"));
  }
  std::size_t last = end_arg ? std::min(static_cast<std::size_t>(*end_arg), total) : total;
  last = std::min(last, first + kReadMaxLines - 1);

  std::string text;
  std::size_t shown_last = first - 1;
  bool line_cut = false;
  for (std::size_t n = first; n <= last; ++n) {
    const std::string_view line =
        std::string_view(content).substr(starts[n - 1], starts[n] - starts[n - 1]);
    if (text.size() + line.size() > kReadMaxBytes) {
      if (n == first) {
        text = std::string(utf8_prefix(line, kReadMaxBytes));
        shown_last = n;
        line_cut = true;
      }
      break;
    }
    text += line;
    shown_last = n;
  }
  if (line_cut || shown_last < total) {
    if (text.back() != '\n') text += '\n';
    std::string note;
    if (line_cut) {
      note = "line " + std::to_string(shown_last) + " is longer than 256 KiB and was cut";
    }
    if (shown_last < total) {
      note += (note.empty() ? "" : "; ") + std::string("showing lines ") + std::to_string(first) +
              "-" + std::to_string(shown_last) + " of " + std::to_string(total) +
              "; call again with start_line=" + std::to_string(shown_last + 1) + " to continue";
    }
    text += marker(note);
  }
  return ToolResult::text(std::move(text));
}

ToolResult FilesystemTools::list_directory(const json& args, CallContext& /*context*/) const {
  const std::string path = string_arg(args, "path").value_or(".");
  const Result<Location> location = roots_.resolve(path);
  if (!location.ok()) return ToolResult::error(location.message());

  struct Entry {
    std::string raw;
    std::string type;
    std::optional<std::int64_t> size;
  };
  std::vector<Entry> entries;
  std::size_t total = 0;
  if (location->is_root_list()) {
    for (const std::string& name : roots_.names()) entries.push_back({name, "directory", {}});
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.raw < b.raw; });
    total = entries.size();
  } else {
    Result<OpenedFile> dir = roots_.open_directory(*location);
    if (!dir.ok()) return ToolResult::error(dir.message());
    std::vector<std::string> names;
    int err = 0;
    if (!read_directory_names(dir->fd.get(), names, err)) {
      return ToolResult::error("cannot read folder " + quote_path(location->display) + ": " +
                               std::strerror(err));
    }
    total = names.size();
    for (std::size_t i = 0; i < names.size() && i < kListMaxEntries; ++i) {
      struct stat st {};
      Entry entry{std::move(names[i]), "other", {}};
      if (::fstatat(dir->fd.get(), entry.raw.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        entry.type = type_name(st.st_mode);
        if (S_ISREG(st.st_mode)) entry.size = static_cast<std::int64_t>(st.st_size);
      }
      entries.push_back(std::move(entry));
    }
  }

  std::string text;
  json items = json::array();
  for (const Entry& entry : entries) {
    const std::string name = printable_name(entry.raw);
    json item = {{"name", name}, {"type", entry.type}};
    if (entry.size) item["size"] = *entry.size;
    items.push_back(std::move(item));
    text += name;
    if (entry.type == "directory") text += '/';
    if (entry.type == "symlink") text += '@';
    text += '\n';
  }
  if (entries.empty()) {
    text = marker(quote_path(location->display) + " is an empty folder");
  } else if (entries.size() < total) {
    text += marker("showing the first " + std::to_string(entries.size()) + " of " +
                   std::to_string(total) + " entries");
  } else {
    text.pop_back();
  }
  ToolResult result = ToolResult::text(std::move(text));
  result.structured_content = {{"path", location->display}, {"entries", std::move(items)}};
  return result;
}

ToolResult FilesystemTools::find_files(const json& args, CallContext& context) const {
  const std::optional<std::string> pattern = string_arg(args, "pattern");
  if (!pattern) return ToolResult::error("missing argument \"pattern\"");
  if (auto error = too_long("pattern", pattern)) return *error;
  const Glob glob(*pattern);
  if (glob.empty()) return ToolResult::error("pattern is empty");
  const std::string path = string_arg(args, "path").value_or(".");
  const auto max_results = static_cast<std::size_t>(
      std::clamp<std::int64_t>(int_arg(args, "max_results").value_or(200), 1, 1000));

  const Result<Location> location = roots_.resolve(path);
  if (!location.ok()) return ToolResult::error(location.message());
  Result<std::vector<SearchStart>> starts = search_starts(roots_, *location);
  if (!starts.ok()) return ToolResult::error(starts.message());

  std::vector<std::string> found;
  bool capped = false;
  FileWalker walker(context);
  for (SearchStart& start : *starts) {
    const bool go_on = walker.walk(start.fd.get(), start.search_prefix, start.display_prefix,
                                   [&](const WalkEntry& entry) {
                                     if (!glob.matches(entry.search_path)) return true;
                                     if (found.size() == max_results) {
                                       capped = true;
                                       return false;
                                     }
                                     found.push_back(entry.display);
                                     return true;
                                   });
    if (!go_on) break;
  }
  if (walker.cancelled()) return ToolResult::error("find_files was cancelled");

  std::sort(found.begin(), found.end());
  std::string text;
  for (const std::string& item : found) text += item + "\n";
  if (found.empty()) text = "No files match " + quote_path(*pattern) + ".\n";
  if (capped) {
    text += marker("stopped at " + std::to_string(max_results) +
                   " results; there are more. Narrow the pattern or path, or raise "
                   "max_results (at most 1000)") +
            "\n";
  }
  for (const std::string& note : walker.notes()) text += marker(note) + "\n";
  text.pop_back();
  return ToolResult::text(std::move(text));
}

// A search_file_contents call's tally: its lines' (text_search.h) and the
// files it skipped.
struct SearchState {
  LineSearch lines;
  bool bytes_capped = false;
  std::size_t bytes_scanned = 0;
  std::size_t files_scanned = 0;
  std::size_t skipped_not_text = 0;
  std::size_t skipped_large = 0;
  std::size_t skipped_symlinks = 0;
  std::size_t skipped_special = 0;
};

// Searches one open regular file; false to stop the whole search.
bool search_open_file(int fd, const struct stat& st, const std::string& display,
                      const LineMatcher& matcher, CallContext& context, SearchState& state) {
  if (static_cast<std::uint64_t>(st.st_size) > kSearchMaxFileBytes) {
    ++state.skipped_large;
    return true;
  }
  if (state.bytes_scanned + static_cast<std::size_t>(st.st_size) > kSearchMaxTotalBytes) {
    state.bytes_capped = true;
    return false;
  }
  std::string content;
  bool too_big = false;
  int err = 0;
  if (!read_all(fd, kSearchMaxFileBytes, content, too_big, err)) {
    if (too_big)
      ++state.skipped_large;
    else
      ++state.skipped_special;
    return true;
  }
  state.bytes_scanned += content.size();
  ++state.files_scanned;
  if (state.files_scanned % kProgressEveryFiles == 0) {
    context.report_progress(static_cast<double>(state.files_scanned), std::nullopt,
                            "scanned " + std::to_string(state.files_scanned) + " files");
  }
  if (!is_utf8_text(content)) {
    ++state.skipped_not_text;
    return true;
  }
  return search_lines(content, display, matcher, context, state.lines);
}

ToolResult FilesystemTools::search_file_contents(const json& args, CallContext& context) const {
  const std::optional<std::string> query = string_arg(args, "query");
  if (!query) return ToolResult::error("missing argument \"query\"");
  if (query->empty()) return ToolResult::error("query is empty");
  if (auto error = too_long("query", query)) return *error;
  const std::string path = string_arg(args, "path").value_or(".");
  const bool regex = bool_arg(args, "regex", false);
  const bool case_sensitive = bool_arg(args, "case_sensitive", true);
  const std::optional<std::string> file_pattern = string_arg(args, "file_pattern");
  if (auto error = too_long("file_pattern", file_pattern)) return *error;
  if (file_pattern && file_pattern->find('/') != std::string::npos) {
    return ToolResult::error("file_pattern " + quote_path(*file_pattern) +
                             " is matched against file names and cannot contain \"/\"; "
                             "use path to pick a folder");
  }

  const Result<LineMatcher> matcher = LineMatcher::create(*query, regex, case_sensitive);
  if (!matcher.ok()) return ToolResult::error(matcher.message());
  const Result<Location> location = roots_.resolve(path);
  if (!location.ok()) return ToolResult::error(location.message());

  SearchState state;
  state.lines.max_results = static_cast<std::size_t>(
      std::clamp<std::int64_t>(int_arg(args, "max_results").value_or(100), 1, 1000));
  std::vector<std::string> walk_notes;

  std::optional<OpenedFile> target;
  if (!location->is_root_list()) {
    Result<OpenedFile> opened = roots_.open_path(*location, /*follow_final=*/true);
    if (!opened.ok()) return ToolResult::error(opened.message());
    target = std::move(opened).value();
  }
  if (target && !S_ISDIR(target->st.st_mode)) {
    // One file, named by the caller.
    Result<OpenedFile> file = roots_.open_regular_file(*location);
    if (!file.ok()) return ToolResult::error(file.message());
    search_open_file(file->fd.get(), file->st, location->display, *matcher, context, state);
  } else {
    Result<std::vector<SearchStart>> starts = search_starts(roots_, *location);
    if (!starts.ok()) return ToolResult::error(starts.message());
    FileWalker walker(context);
    for (SearchStart& start : *starts) {
      const bool go_on = walker.walk(
          start.fd.get(), start.search_prefix, start.display_prefix, [&](const WalkEntry& entry) {
            if (file_pattern && !glob_matches_name(*file_pattern, printable_name(entry.raw))) {
              return true;
            }
            if (S_ISLNK(entry.st.st_mode)) {
              ++state.skipped_symlinks;
              return true;
            }
            if (!S_ISREG(entry.st.st_mode)) {
              ++state.skipped_special;
              return true;
            }
            if (static_cast<std::uint64_t>(entry.st.st_size) > kSearchMaxFileBytes) {
              ++state.skipped_large;
              return true;
            }
            UniqueFd probe(
                ::openat(entry.dir_fd, entry.raw.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
            struct stat st {};
            if (!probe || ::fstat(probe.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
              ++state.skipped_special;
              return true;
            }
            UniqueFd fd(reopen_regular_for_reading(probe.get(), st));
            if (!fd && errno != ESTALE) {
              // No /proc: open by name, never following, and check it is the same file.
              fd.reset(::openat(entry.dir_fd, entry.raw.c_str(),
                                O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC));
              struct stat again {};
              if (fd && (::fstat(fd.get(), &again) != 0 || again.st_dev != st.st_dev ||
                         again.st_ino != st.st_ino)) {
                fd.reset();
              }
            }
            if (!fd) {
              ++state.skipped_special;
              return true;
            }
            return search_open_file(fd.get(), st, entry.display, *matcher, context, state);
          });
      if (!go_on || state.lines.cancelled) break;
    }
    if (walker.cancelled()) state.lines.cancelled = true;
    walk_notes = walker.notes();
  }
  if (state.lines.cancelled) return ToolResult::error("search_file_contents was cancelled");

  std::vector<LineHit>& hits = state.lines.hits;
  std::stable_sort(hits.begin(), hits.end(), [](const LineHit& a, const LineHit& b) {
    return a.path != b.path ? a.path < b.path : a.line < b.line;
  });
  std::string text;
  for (const LineHit& hit : hits) {
    text += hit.path + ":" + std::to_string(hit.line) + ": " + hit.text + "\n";
  }
  if (hits.empty()) text = "No matches for " + quote_path(*query) + ".\n";
  if (state.lines.capped) {
    text += marker("stopped at " + std::to_string(state.lines.max_results) +
                   " matches; there are more. Narrow the query, path or file_pattern, or raise "
                   "max_results (at most 1000)") +
            "\n";
  }
  if (state.bytes_capped) {
    text +=
        marker("stopped after reading 256 MiB of files; narrow the path or file_pattern") + "\n";
  }
  std::vector<std::string> skipped;
  if (state.skipped_not_text > 0) {
    skipped.push_back(plural(state.skipped_not_text, "file that is", "files that are") +
                      " not UTF-8 text");
  }
  if (state.skipped_large > 0) {
    skipped.push_back(plural(state.skipped_large, "file", "files") + " over 8 MiB");
  }
  if (state.skipped_symlinks > 0) {
    skipped.push_back(plural(state.skipped_symlinks, "symbolic link", "symbolic links"));
  }
  if (state.skipped_special > 0) {
    skipped.push_back(plural(state.skipped_special, "entry that is", "entries that are") +
                      " not a readable regular file");
  }
  if (!skipped.empty()) {
    std::string note = "skipped ";
    for (std::size_t i = 0; i < skipped.size(); ++i) {
      note += (i == 0 ? "" : i + 1 == skipped.size() ? " and " : ", ") + skipped[i];
    }
    text += marker(note) + "\n";
  }
  if (state.lines.window_cut_lines > 0) {
    const bool one = state.lines.window_cut_lines == 1;
    text += marker(plural(state.lines.window_cut_lines, "line is", "lines are") +
                   " longer than 16 KiB; the regex saw only " + (one ? "its" : "their") +
                   " first 16 KiB") +
            "\n";
  }
  if (state.lines.unchecked_lines > 0) {
    text += marker(plural(state.lines.unchecked_lines, "line", "lines") +
                   " could not be checked: the regex needed more than the matching limit (" +
                   std::to_string(LineMatcher::kRegexMatchLimit) +
                   " steps a line); simplify it (nested repetition such as (a+)+ is the usual "
                   "cause)") +
            "\n";
  }
  for (const std::string& note : walk_notes) text += marker(note) + "\n";
  text.pop_back();
  return ToolResult::text(std::move(text));
}

ToolResult FilesystemTools::get_file_info(const json& args, CallContext& /*context*/) const {
  const std::optional<std::string> path = string_arg(args, "path");
  if (!path) return ToolResult::error("missing argument \"path\"");
  const Result<Location> location = roots_.resolve(*path);
  if (!location.ok()) return ToolResult::error(location.message());
  if (location->is_root_list()) {
    return ToolResult::error("\".\" is the list of roots, not a file or folder; the roots are " +
                             [&] {
                               std::string list;
                               for (const std::string& name : roots_.names()) {
                                 list += (list.empty() ? "" : ", ") + quote_path(name);
                               }
                               return list;
                             }());
  }
  const Result<OpenedFile> file = roots_.open_path(*location, /*follow_final=*/false);
  if (!file.ok()) return ToolResult::error(file.message());

  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(file->st.st_mode & 07777));
  std::tm tm{};
  const std::time_t seconds = file->st.st_mtim.tv_sec;
  gmtime_r(&seconds, &tm);
  char modified[32];
  std::strftime(modified, sizeof modified, "%Y-%m-%dT%H:%M:%SZ", &tm);

  json info = {{"path", location->display}, {"type", type_name(file->st.st_mode)}};
  std::string text = "path: " + location->display + "\ntype: " + type_name(file->st.st_mode) + "\n";
  if (S_ISREG(file->st.st_mode)) {
    info["size"] = static_cast<std::int64_t>(file->st.st_size);
    text += "size: " + std::to_string(file->st.st_size) + "\n";
  }
  info["mode"] = mode;
  info["modified"] = modified;
  text += std::string("mode: ") + mode + "\nmodified: " + modified;
  ToolResult result = ToolResult::text(std::move(text));
  result.structured_content = std::move(info);
  return result;
}

ToolResult FilesystemTools::write_text_file(const json& args, CallContext& /*context*/) const {
  const std::optional<std::string> path = string_arg(args, "path");
  if (!path) return ToolResult::error("missing argument \"path\"");
  const std::optional<std::string> content = string_arg(args, "content");
  if (!content) return ToolResult::error("missing argument \"content\"");
  const bool create_directories = bool_arg(args, "create_directories", false);

  const Result<Location> location = roots_.resolve(*path);
  if (!location.ok()) return ToolResult::error(location.message());
  if (location->is_root_list() || location->is_root()) {
    return ToolResult::error("path " + quote_path(*path) + " is a root folder, not a file");
  }
  if (location->names_folder) {
    return ToolResult::error("path " + quote_path(*path) +
                             " ends in \"/\", so it names a folder, not a file to write");
  }
  const std::string shown = quote_path(location->display);
  const std::size_t slash = location->relative.rfind('/');
  const std::string parent =
      slash == std::string::npos ? std::string() : location->relative.substr(0, slash);
  const std::string name =
      slash == std::string::npos ? location->relative : location->relative.substr(slash + 1);

  const Result<OpenedFile> dir =
      roots_.open_directory_for_writing(location->root, parent, create_directories);
  if (!dir.ok()) return ToolResult::error(dir.message());
  const int dir_fd = dir->fd.get();

  struct stat existing {};
  std::optional<mode_t> keep_mode;
  if (::fstatat(dir_fd, name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(existing.st_mode)) {
      return ToolResult::error("refusing to write through the symbolic link " + shown +
                               "; write to the file it points to instead");
    }
    if (S_ISDIR(existing.st_mode)) return ToolResult::error(shown + " is a directory, not a file");
    if (!S_ISREG(existing.st_mode)) {
      return ToolResult::error(shown + " is not a regular file or directory");
    }
    keep_mode = existing.st_mode & 0777;  // not set-user-ID and the like: the content is new
  } else if (errno != ENOENT) {
    return ToolResult::error("cannot write " + shown + ": " + std::strerror(errno));
  }

  // Into a file beside it, then renamed into place: a reader sees the old
  // content or the new (src/base/file_io.h).
  AtomicWriteOptions how;
  how.exact_mode = keep_mode;
  if (Status written = write_file_atomically_at(dir_fd, name, *content, how); !written.ok()) {
    return ToolResult::error("cannot write " + shown + ": " + written.message());
  }
  return ToolResult::text("Wrote " + std::to_string(content->size()) + " bytes to " + shown + ".");
}

// ---------------------------------------------------------------- specs

json path_property(std::string description) {
  return {{"type", "string"}, {"description", std::move(description)}};
}

std::string paths_help(const RootSet& roots) {
  if (!roots.multiple()) {
    return "Paths are relative to the root folder (\".\" is the root itself); an absolute path "
           "is accepted only inside the root. Nothing outside the root can be reached, also not "
           "through \"..\" or symbolic links.";
  }
  std::string list;
  for (const std::string& name : roots.names()) list += (list.empty() ? "" : ", ") + name;
  return "There are several root folders: " + list + ". A path starts with a root's name (\"" +
         roots.name(0) +
         "/src/main.c\"), and \".\" is the list of roots; an absolute path is accepted only "
         "inside a root. Nothing outside the roots can be reached, also not through \"..\" or "
         "symbolic links.";
}

std::vector<std::pair<ToolSpec, ToolHandler>> make_tools(
    const std::shared_ptr<const FilesystemTools>& tools, bool allow_writes) {
  const std::string help = paths_help(tools->roots());
  std::vector<std::pair<ToolSpec, ToolHandler>> out;
  auto bind = [&](ToolResult (FilesystemTools::*method)(const json&, CallContext&) const) {
    return ToolHandler([tools, method](const json& args, CallContext& context) {
      return ((*tools).*method)(args, context);
    });
  };

  {
    ToolSpec spec;
    spec.name = "read_text_file";
    spec.title = "Read text file";
    spec.description =
        "Read a UTF-8 text file and return its lines exactly as stored (no line numbers added). "
        "Returns at most 2000 lines and 256 KiB per call; when more of the file follows, the "
        "text ends with a line like \"[toolmux: showing lines 1-2000 of 5000; call again with "
        "start_line=2001 to continue]\". Use start_line and end_line (1-based, inclusive) to "
        "read part of a file. Files that are not UTF-8 text (binary files, files with NUL "
        "bytes) and files over 64 MiB are refused. " +
        help;
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"path", path_property("The file to read.")},
          {"start_line",
           {{"type", "integer"},
            {"minimum", 1},
            {"description", "First line to return, counting from 1. Default 1."}}},
          {"end_line",
           {{"type", "integer"},
            {"minimum", 1},
            {"description",
             "Last line to return (inclusive). Default: the end of the file, within the "
             "per-call limits."}}}}},
        {"required", {"path"}},
        {"additionalProperties", false}};
    spec.side_effect = "read_only";
    spec.timeout = 10000ms;
    spec.runs_on_reader = false;  // a disk may block a read or a write
    spec.tags = {"filesystem"};
    out.emplace_back(std::move(spec), bind(&FilesystemTools::read_text_file));
  }
  {
    ToolSpec spec;
    spec.name = "list_directory";
    spec.title = "List directory";
    spec.description =
        "List the entries of a folder, sorted by name: one per line, \"name/\" for a folder, "
        "\"name@\" for a symbolic link (its target is not shown) and \"name\" for a file or "
        "anything else. The structured result gives each entry's type and, for files, size in "
        "bytes. At most 10000 entries are listed. " +
        help;
    spec.input_schema = {{"type", "object"},
                         {"properties",
                          {{"path",
                            {{"type", "string"},
                             {"default", "."},
                             {"description", "The folder to list. Default \".\"."}}}}},
                         {"additionalProperties", false}};
    spec.output_schema = {
        {"type", "object"},
        {"properties",
         {{"path",
           {{"type", "string"}, {"description", "The folder listed, relative to its root."}}},
          {"entries",
           {{"type", "array"},
            {"items",
             {{"type", "object"},
              {"properties",
               {{"name", {{"type", "string"}}},
                {"type", {{"type", "string"}, {"enum", {"file", "directory", "symlink", "other"}}}},
                {"size", {{"type", "integer"}, {"minimum", 0}}}}},
              {"required", {"name", "type"}},
              {"additionalProperties", false}}}}}}},
        {"required", {"path", "entries"}},
        {"additionalProperties", false}};
    spec.side_effect = "read_only";
    spec.timeout = 10000ms;
    spec.runs_on_reader = false;  // a disk may block a read or a write
    spec.tags = {"filesystem"};
    out.emplace_back(std::move(spec), bind(&FilesystemTools::list_directory));
  }
  {
    ToolSpec spec;
    spec.name = "find_files";
    spec.title = "Find files";
    spec.description =
        "Find files whose path matches a glob pattern, searching a folder and everything below "
        "it. The pattern is matched against the whole path relative to that folder: \"*\" "
        "matches within one folder name, \"?\" one character, \"[abc]\" one of a set, and "
        "\"**\" any number of folders, so \"*.py\" only matches files directly in the folder "
        "and \"**/*.py\" matches them at any depth. Returns matching files (and symbolic links, "
        "which are not followed; folders themselves are not listed), one path per line, "
        "relative to the root and sorted. Stops at max_results and says so. " +
        help;
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"pattern",
           {{"type", "string"},
            {"minLength", 1},
            {"maxLength", kMaxPatternChars},
            {"description",
             "Glob matched against paths relative to `path`, e.g. \"**/*.md\"; at most 1024 "
             "characters."}}},
          {"path",
           {{"type", "string"},
            {"default", "."},
            {"description", "The folder to search in. Default \".\"."}}},
          {"max_results",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", 1000},
            {"default", 200},
            {"description", "Most paths to return. Default 200."}}}}},
        {"required", {"pattern"}},
        {"additionalProperties", false}};
    spec.side_effect = "read_only";
    spec.timeout = 30000ms;
    spec.runs_on_reader = false;  // a disk may block a read or a write
    spec.tags = {"filesystem"};
    out.emplace_back(std::move(spec), bind(&FilesystemTools::find_files));
  }
  {
    ToolSpec spec;
    spec.name = "search_file_contents";
    spec.title = "Search file contents";
    spec.description =
        "Search the lines of text files for a string or a regular expression, in a folder and "
        "everything below it (or in one file). Returns one line per match as "
        "\"path:LINE: text\", sorted by path then line number, with paths relative to the root "
        "and the line text cut at 300 characters. regex=true takes a Perl-compatible regular "
        "expression (PCRE2, as grep -P), matched line by line. "
        "Skips, and reports how many it skipped: files that are not UTF-8 text, files over "
        "8 MiB, symbolic links. Stops at max_results matches or after reading 256 MiB, and "
        "says so. " +
        help;
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"query",
           {{"type", "string"},
            {"minLength", 1},
            {"maxLength", kMaxPatternChars},
            {"description",
             "The text to look for, or a regular expression when regex is true; at most 1024 "
             "characters."}}},
          {"path",
           {{"type", "string"},
            {"default", "."},
            {"description", "The folder (or file) to search. Default \".\"."}}},
          {"regex",
           {{"type", "boolean"},
            {"default", false},
            {"description",
             "Treat query as a Perl-compatible regular expression (PCRE2). Default false."}}},
          {"case_sensitive",
           {{"type", "boolean"},
            {"default", true},
            {"description", "Match letter case exactly (ASCII letters). Default true."}}},
          {"file_pattern",
           {{"type", "string"},
            {"maxLength", kMaxPatternChars},
            {"description",
             "Only search files whose name (not path) matches this glob, e.g. \"*.cpp\"; at "
             "most 1024 characters."}}},
          {"max_results",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", 1000},
            {"default", 100},
            {"description", "Most matching lines to return. Default 100."}}}}},
        {"required", {"query"}},
        {"additionalProperties", false}};
    spec.side_effect = "read_only";
    spec.timeout = 30000ms;
    spec.runs_on_reader = false;  // a disk may block a read or a write
    spec.tags = {"filesystem"};
    out.emplace_back(std::move(spec), bind(&FilesystemTools::search_file_contents));
  }
  {
    ToolSpec spec;
    spec.name = "get_file_info";
    spec.title = "Get file info";
    spec.description =
        "Describe one file or folder: its type (file, directory, symlink or other), size in "
        "bytes (files only), permission bits (\"0644\") and last modification time (UTC, "
        "\"2026-01-02T03:04:05Z\"). A symbolic link is described itself, not what it points "
        "to. " +
        help;
    spec.input_schema = {
        {"type", "object"},
        {"properties", {{"path", path_property("The file or folder to describe.")}}},
        {"required", {"path"}},
        {"additionalProperties", false}};
    spec.output_schema = {
        {"type", "object"},
        {"properties",
         {{"path", {{"type", "string"}}},
          {"type", {{"type", "string"}, {"enum", {"file", "directory", "symlink", "other"}}}},
          {"size", {{"type", "integer"}, {"minimum", 0}}},
          {"mode", {{"type", "string"}}},
          {"modified", {{"type", "string"}}}}},
        {"required", {"path", "type", "mode", "modified"}},
        {"additionalProperties", false}};
    spec.side_effect = "read_only";
    spec.timeout = 10000ms;
    spec.runs_on_reader = false;  // a disk may block a read or a write
    spec.tags = {"filesystem"};
    out.emplace_back(std::move(spec), bind(&FilesystemTools::get_file_info));
  }
  if (allow_writes) {
    ToolSpec spec;
    spec.name = "write_text_file";
    spec.title = "Write text file";
    spec.description =
        "Create a text file or replace its whole content. The write is atomic: the content "
        "goes to a temporary file in the same folder that then replaces the target, so "
        "readers see the old or the new file, never a mix; an existing file keeps its "
        "permission bits. The parent folder must exist unless create_directories is true. "
        "Refuses to write through a symbolic link or onto a folder or special file. " +
        help;
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"path", path_property("The file to write.")},
          {"content",
           {{"type", "string"}, {"description", "The complete new content of the file."}}},
          {"create_directories",
           {{"type", "boolean"},
            {"default", false},
            {"description", "Create missing parent folders. Default false."}}}}},
        {"required", {"path", "content"}},
        {"additionalProperties", false}};
    spec.side_effect = "local_mutation";
    spec.timeout = 10000ms;
    spec.runs_on_reader = false;  // a disk may block a read or a write
    spec.idempotent = true;
    spec.tags = {"filesystem"};
    out.emplace_back(std::move(spec), bind(&FilesystemTools::write_text_file));
  }
  return out;
}

}  // namespace

Problems register_filesystem_tools(ToolRegistry& registry, const FilesystemToolOptions& options) {
  Problems problems;
  std::optional<RootSet> roots = RootSet::open(options.roots, problems);
  if (!roots) return problems;
  const auto tools = std::make_shared<const FilesystemTools>(std::move(*roots));
  std::vector<std::pair<ToolSpec, ToolHandler>> entries = make_tools(tools, options.allow_writes);

  // Check everything first, so that nothing is registered when anything is wrong.
  for (auto& [spec, handler] : entries) {
    spec.schemas_vetted = true;  // toolmux's own: compiled at first use (tool.h)
    Problems found = check_tool_spec(spec);
    problems.insert(problems.end(), found.begin(), found.end());
    if (registry.find(spec.name) != nullptr) {
      problems.push_back(
          {"/name", "tool \"" + spec.name + "\": a tool with this name is already registered"});
    }
  }
  if (!problems.empty()) return problems;
  for (auto& [spec, handler] : entries) {
    Problems found = registry.add(std::move(spec), std::move(handler));
    problems.insert(problems.end(), found.begin(), found.end());
  }
  return problems;
}

}  // namespace toolmux
