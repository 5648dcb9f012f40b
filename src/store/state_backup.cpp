#include "src/store/state_backup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <memory>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "src/base/digest.h"
#include "src/base/file_io.h"
#include "src/base/random_id.h"
#include "src/base/unique_fd.h"
#include "src/base/untrusted_json.h"
#include "src/store/db_slots.h"

namespace toolmux {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kManifestVersion = 1;
// The manifest lists at most kMaxBackupFiles files of ~200 bytes each.
constexpr std::size_t kMaxManifestBytes = std::size_t{64} << 20;
// Folders deeper than this in a data directory are not walked.
constexpr std::size_t kMaxDepth = 16;
// A copy's write batches, and the reads of a file, in pieces of this size.
constexpr std::size_t kBatchBytes = std::size_t{4} << 20;
constexpr std::size_t kReadBytes = std::size_t{1} << 20;
// Problems a failed verification names, one a line.
constexpr std::size_t kMaxProblemsNamed = 20;

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// What a database is in messages: "the journal", by its folder.
std::string store_name(const std::string& relative) {
  if (relative.starts_with("journal/")) return "the journal";
  if (relative.starts_with("results/")) return "the result store";
  if (relative == "sessions") return "the session store";
  return "the database";
}

// A folder that holds a RocksDB database (as existing_slots tells one).
bool holds_database(const fs::path& folder) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(folder / "CURRENT", ec));
}

// What a data directory holds, found without following a symbolic link.
struct StateEntries {
  std::vector<std::string> databases;  // relative paths of database folders
  std::vector<std::string> files;      // relative paths of other regular files
};

// Walks `root` with a stack (no recursion), in path order. Each folder that
// holds a database is one entry; the write freeze's file (kept out: a backup
// restored later must not freeze writes) and anything but folders and
// regular files are left out.
Result<StateEntries> state_entries(const fs::path& root) {
  StateEntries found;
  std::vector<std::pair<std::string, std::size_t>> folders = {{"", 0}};
  while (!folders.empty()) {
    auto [relative, depth] = std::move(folders.back());
    folders.pop_back();
    const fs::path folder = relative.empty() ? root : root / relative;
    if (!relative.empty() && holds_database(folder)) {
      found.databases.push_back(relative);
      continue;
    }
    std::error_code ec;
    std::vector<std::string> names;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
    if (ec) return Status::io_error("could not read " + folder.string() + ": " + ec.message());
    std::sort(names.begin(), names.end(), std::greater<>());  // popped in path order
    for (const std::string& name : names) {
      const std::string path = relative.empty() ? name : relative + "/" + name;
      if (path == "write-freeze" || path == kBackupManifest) continue;
      std::error_code type_ec;
      const fs::file_status type = fs::symlink_status(root / path, type_ec);
      if (fs::is_directory(type) && depth + 1 < kMaxDepth) {
        folders.emplace_back(path, depth + 1);
      } else if (fs::is_regular_file(type)) {
        if (found.files.size() >= kMaxBackupFiles) {
          return Status::resource_exhausted("the data directory " + root.string() +
                                            " holds more than " + std::to_string(kMaxBackupFiles) +
                                            " files");
        }
        found.files.push_back(path);
      }
    }
  }
  std::sort(found.databases.begin(), found.databases.end());
  std::sort(found.files.begin(), found.files.end());
  return found;
}

Status sync_folder(const fs::path& folder) {
  UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || ::fsync(fd.get()) != 0) {
    return Status::io_error("could not sync " + folder.string() + ": " + errno_text(errno));
  }
  return Status::ok_status();
}

// A file's size and SHA-256 as read.
struct FileDigest {
  std::uint64_t bytes = 0;
  std::string sha256;
};

// Reads the open file `from` (named `from_name` in messages) to its end,
// digesting it, and writes it to `to_fd` when that is not -1.
Result<FileDigest> pump(int from, const std::string& from_name, int to_fd,
                        const std::string& to_name) {
  Sha256Stream digest;
  FileDigest out;
  std::string buffer(kReadBytes, '\0');
  for (;;) {
    const ssize_t n = ::read(from, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io_error("could not read " + from_name + ": " + errno_text(errno));
    if (n == 0) break;
    const std::string_view piece(buffer.data(), static_cast<std::size_t>(n));
    digest.update(piece);
    out.bytes += piece.size();
    for (std::size_t done = 0; to_fd >= 0 && done < piece.size();) {
      const ssize_t w = ::write(to_fd, piece.data() + done, piece.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return Status::io_error("could not write " + to_name + ": " + errno_text(errno));
      done += static_cast<std::size_t>(w);
    }
  }
  out.sha256 = digest.hex();
  return out;
}

// Opens a regular file for reading, never through a symbolic link.
Result<UniqueFd> open_regular(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    const int error = errno;
    if (error == ENOENT) return Status::not_found(path.string() + " is missing");
    if (error == ELOOP) return Status::invalid_argument(path.string() + " is a symbolic link");
    return Status::io_error("could not read " + path.string() + ": " + errno_text(error));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::invalid_argument(path.string() + " is not a regular file");
  }
  return fd;
}

// The size and SHA-256 of the file at `path`, which is synced to disk too
// (a backup's files must survive a power cut before the rename says done).
Result<FileDigest> digest_file(const fs::path& path, bool sync) {
  auto fd = open_regular(path);
  if (!fd.ok()) return fd.status();
  auto digest = pump(fd->get(), path.string(), -1, "");
  if (digest.ok() && sync && ::fsync(fd->get()) != 0) {
    return Status::io_error("could not sync " + path.string() + ": " + errno_text(errno));
  }
  return digest;
}

// Copies `from` to the new file `to` (its folder made as needed, mode 0700),
// with permissions `mode`, synced; the size and SHA-256 of what was copied.
Result<FileDigest> copy_file(const fs::path& from, const fs::path& to, mode_t mode) {
  auto source = open_regular(from);
  if (!source.ok()) return source.status();
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (ec) {
    return Status::io_error("could not create " + to.parent_path().string() + ": " + ec.message());
  }
  UniqueFd target(
      ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777));
  if (!target)
    return Status::io_error("could not create " + to.string() + ": " + errno_text(errno));
  // Exactly `mode`, whatever the umask: a login file stays 0600, and a
  // server can still write what it wrote before.
  if (::fchmod(target.get(), mode & 0777) != 0) {
    return Status::io_error("could not set the mode of " + to.string() + ": " + errno_text(errno));
  }
  auto copied = pump(source->get(), from.string(), target.get(), to.string());
  if (copied.ok() && ::fsync(target.get()) != 0) {
    return Status::io_error("could not sync " + to.string() + ": " + errno_text(errno));
  }
  return copied;
}

// ---- Databases ----

// One database of the data directory as it was when opened (read-only: the
// writer's log replayed, nothing it writes later).
struct DbSnapshot {
  std::string relative;
  std::unique_ptr<rocksdb::DB> db;
};

Result<DbSnapshot> open_snapshot(const fs::path& data_dir, const std::string& relative) {
  const fs::path folder = data_dir / relative;
  std::vector<std::string> families;
  const rocksdb::Status listed =
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), folder.string(), &families);
  if (listed.ok() && families.size() > 1) {
    return Status::io_error("could not back up " + store_name(relative) + " in " + folder.string() +
                            ": it has column families besides the default");
  }
  auto db = open_slot_read_only(folder, store_name(relative));
  if (!db.ok()) return db.status();
  return DbSnapshot{relative, std::move(*db)};
}

// Every key and value of `snapshot`, written into a new database at `to`;
// how many keys. The copy is flushed into table files and closed, with no
// info log, log or LOCK file left behind that the manifest would list.
Result<std::uint64_t> copy_database(const DbSnapshot& snapshot, const fs::path& to) {
  const auto failed = [&](const std::string& what, const rocksdb::Status& status) {
    return Status::io_error("could not back up " + store_name(snapshot.relative) + " into " +
                            to.string() + " (" + what + "): " + status.ToString());
  };
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  rocksdb::Options options = small_db_options();
  options.error_if_exists = true;
  options.info_log = silent_info_log();
  options.write_buffer_size = kBatchBytes * 4;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(options, to.string(), &raw);
  if (!status.ok()) return failed("create", status);
  std::unique_ptr<rocksdb::DB> copy(raw);
  rocksdb::WriteOptions unlogged;
  unlogged.disableWAL = true;  // flushed below, before anything is said done
  rocksdb::ReadOptions read;
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(snapshot.db->NewIterator(read));
  std::uint64_t keys = 0;
  rocksdb::WriteBatch batch;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    batch.Put(it->key(), it->value());
    ++keys;
    if (batch.GetDataSize() >= kBatchBytes) {
      status = copy->Write(unlogged, &batch);
      if (!status.ok()) return failed("write", status);
      batch.Clear();
    }
  }
  if (!it->status().ok()) {
    return Status::io_error("could not read " + store_name(snapshot.relative) + " in " +
                            snapshot.relative + ": " + it->status().ToString());
  }
  status = copy->Write(unlogged, &batch);
  if (status.ok()) status = copy->Flush(rocksdb::FlushOptions());
  if (!status.ok()) return failed("flush", status);
  status = copy->Close();
  if (!status.ok()) return failed("close", status);
  copy.reset();
  fs::remove(to / "LOCK", ec);
  return keys;
}

// Opens the backup's database read-only, checks every block's checksum,
// and counts its keys.
Result<std::uint64_t> check_database(const fs::path& folder, const std::string& relative) {
  auto db = open_slot_read_only(folder, store_name(relative));
  if (!db.ok()) return db.status();
  rocksdb::Status status = (*db)->VerifyChecksum();
  if (!status.ok()) {
    return Status::io_error(relative + " fails RocksDB's checksums: " + status.ToString());
  }
  rocksdb::ReadOptions read;
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it((*db)->NewIterator(read));
  std::uint64_t keys = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++keys;
  if (!it->status().ok()) {
    return Status::io_error(relative + " cannot be read: " + it->status().ToString());
  }
  return keys;
}

// ---- The manifest ----

std::string now_text() {
  const auto now =
      std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Whether a manifest's path stays inside the backup: relative, no empty,
// "." or ".." part, no NUL.
bool safe_relative(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string::npos) return false;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = path.find('/', start);
    const std::string_view part = std::string_view(path).substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}

// Problems found, each a line; past kMaxProblemsNamed only counted.
class Problems {
 public:
  void add(std::string problem) {
    if (lines_.size() < kMaxProblemsNamed) lines_.push_back(std::move(problem));
    ++count_;
  }
  bool any() const { return count_ > 0; }
  Status status(const fs::path& dir) const {
    std::string message = "the backup in " + dir.string() + " is damaged (" +
                          std::to_string(count_) + " problem" + (count_ == 1 ? "" : "s") +
                          "); nothing was restored:";
    for (const std::string& line : lines_) message += "\n  " + line;
    if (count_ > lines_.size()) {
      message += "\n  and " + std::to_string(count_ - lines_.size()) + " more";
    }
    return Status::invalid_argument(message);
  }

 private:
  std::vector<std::string> lines_;
  std::size_t count_ = 0;
};

// A manifest's file entry, as read.
struct ManifestFile {
  std::string path;
  std::uint64_t bytes = 0;
  std::string sha256;
  mode_t mode = 0600;
};

struct Manifest {
  std::vector<ManifestFile> files;
  std::vector<std::pair<std::string, std::uint64_t>> databases;  // path, keys
};

// Whether `value` is a whole number of at least 0 (the JSON boundary reads
// one that fits int64 as signed).
bool is_count(const json& value) {
  return value.is_number_unsigned() ||
         (value.is_number_integer() && value.get<std::int64_t>() >= 0);
}

// The manifest of `dir`, its shape checked; every problem of shape at once.
Result<Manifest> read_manifest(const fs::path& dir) {
  const fs::path path = dir / kBackupManifest;
  auto text = read_regular_file(path, kMaxManifestBytes, SymbolicLinks::refuse);
  if (!text.ok()) {
    if (text.status().is_not_found()) {
      return Status::invalid_argument(dir.string() + " is not a toolmux backup: it has no " +
                                      kBackupManifest);
    }
    return Status::invalid_argument("the backup's manifest cannot be read: " + text.message());
  }
  ParsedJson parsed = parse_untrusted_json(*text);
  Problems problems;
  const json& m = parsed.value;
  if (!parsed.ok() || !m.is_object() || m.value("format", "") != "toolmux-backup") {
    problems.add(std::string(kBackupManifest) + " is not a toolmux backup manifest" +
                 (parsed.syntax_error ? " (" + *parsed.syntax_error + ")" : ""));
    return problems.status(dir);
  }
  if (!m.contains("version") || m["version"] != kManifestVersion) {
    return Status::invalid_argument(std::string(kBackupManifest) + " in " + dir.string() +
                                    " is of a version this toolmux does not know");
  }
  Manifest out;
  const json& files = m.contains("files") ? m["files"] : json();
  const json& databases = m.contains("databases") ? m["databases"] : json();
  if (!files.is_array() || !databases.is_array()) {
    problems.add(std::string(kBackupManifest) + " has no files or databases list");
    return problems.status(dir);
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    const json& f = files[i];
    const std::string where = std::string(kBackupManifest) + " /files/" + std::to_string(i);
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() ||
        !safe_relative(f["path"].get<std::string>()) || !f.contains("bytes") ||
        !is_count(f["bytes"]) || !f.contains("sha256") || !f["sha256"].is_string() ||
        !f.contains("mode") || !is_count(f["mode"])) {
      problems.add(where + " is not a file entry (path inside the backup, bytes, sha256, mode)");
      continue;
    }
    out.files.push_back({f["path"].get<std::string>(), f["bytes"].get<std::uint64_t>(),
                         f["sha256"].get<std::string>(),
                         static_cast<mode_t>(f["mode"].get<std::uint64_t>() & 0777)});
  }
  for (std::size_t i = 0; i < databases.size(); ++i) {
    const json& d = databases[i];
    if (!d.is_object() || !d.contains("path") || !d["path"].is_string() ||
        !safe_relative(d["path"].get<std::string>()) || !d.contains("keys") ||
        !is_count(d["keys"])) {
      problems.add(std::string(kBackupManifest) + " /databases/" + std::to_string(i) +
                   " is not a database entry (path inside the backup, keys)");
      continue;
    }
    out.databases.emplace_back(d["path"].get<std::string>(), d["keys"].get<std::uint64_t>());
  }
  if (out.files.size() > kMaxBackupFiles) {
    problems.add(std::string(kBackupManifest) + " lists more than " +
                 std::to_string(kMaxBackupFiles) + " files");
  }
  if (problems.any()) return problems.status(dir);
  return out;
}

std::uint64_t bytes_under(const std::vector<ManifestFile>& files, const std::string& folder) {
  std::uint64_t bytes = 0;
  for (const ManifestFile& f : files) {
    if (f.path.starts_with(folder + "/")) bytes += f.bytes;
  }
  return bytes;
}

BackupSummary summary_of(const Manifest& manifest, std::uint64_t manifest_bytes) {
  BackupSummary summary;
  summary.bytes = manifest_bytes;
  for (const auto& [path, keys] : manifest.databases) {
    summary.items.push_back({path, true, keys, bytes_under(manifest.files, path)});
  }
  for (const ManifestFile& f : manifest.files) {
    summary.bytes += f.bytes;
    const bool in_database =
        std::any_of(manifest.databases.begin(), manifest.databases.end(),
                    [&](const auto& d) { return f.path.starts_with(d.first + "/"); });
    if (!in_database) summary.items.push_back({f.path, false, 0, f.bytes});
  }
  return summary;
}

// A fresh name beside `path`: ".NAME.WHAT-RANDOM".
fs::path beside(const fs::path& path, const std::string& what) {
  return path.parent_path() / ("." + path.filename().string() + "." + what + "-" + random_id(9));
}

// A path as given, made absolute and without "." or "..", and without a
// trailing slash (whose filename() would be empty).
fs::path plain(const fs::path& path) {
  fs::path out = fs::absolute(path).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  return out;
}

bool inside(const fs::path& inner, const fs::path& outer) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(inner, ec);
  const fs::path b = fs::weakly_canonical(outer, ec);
  const auto [end, rest] = std::mismatch(b.begin(), b.end(), a.begin(), a.end());
  return end == b.end();
}

// Removes a folder this command made, whatever it holds, on a failure.
class MadeFolder {
 public:
  explicit MadeFolder(fs::path path) : path_(std::move(path)) {}
  ~MadeFolder() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  MadeFolder(const MadeFolder&) = delete;
  MadeFolder& operator=(const MadeFolder&) = delete;
  void keep() { path_.clear(); }

 private:
  fs::path path_;
};

Status make_private_folder(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (::mkdir(path.c_str(), 0700) != 0) {
    return Status::io_error("could not create " + path.string() + ": " + errno_text(errno));
  }
  return Status::ok_status();
}

// Syncs every folder under `root` and `root` itself, so that the files'
// names are on disk too.
Status sync_tree(const fs::path& root) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      if (Status s = sync_folder(it->path()); !s.ok()) return s;
    }
  }
  if (ec) return Status::io_error("could not read " + root.string() + ": " + ec.message());
  return sync_folder(root);
}

Status check_backup_target(const fs::path& dir, const fs::path& data_dir) {
  std::error_code ec;
  const fs::file_status type = fs::symlink_status(dir, ec);
  if (fs::is_symlink(type)) {
    return Status::invalid_argument(dir.string() +
                                    " is a symbolic link: give the folder the backup goes into "
                                    "itself, new or empty");
  }
  if (fs::exists(type) && !fs::is_directory(type)) {
    return Status::invalid_argument(dir.string() + " exists and is not a folder");
  }
  if (fs::is_directory(type) && !fs::is_empty(dir, ec)) {
    return Status::invalid_argument(dir.string() +
                                    " exists and is not empty: a backup goes into a new or "
                                    "empty folder");
  }
  if (inside(dir, data_dir)) {
    return Status::invalid_argument(dir.string() + " is inside the data directory " +
                                    data_dir.string() + ": put the backup elsewhere");
  }
  return Status::ok_status();
}

}  // namespace

Result<BackupSummary> back_up_state(const fs::path& data_dir_given, const fs::path& dir_given) {
  const fs::path data_dir = plain(data_dir_given);
  const fs::path dir = plain(dir_given);
  std::error_code ec;
  if (!fs::is_directory(data_dir, ec)) {
    return Status::not_found("no data directory " + data_dir.string() + " to back up");
  }
  if (Status s = check_backup_target(dir, data_dir); !s.ok()) return s;
  auto entries = state_entries(data_dir);
  if (!entries.ok()) return entries.status();
  // Every database is opened before any is copied: the backup holds what
  // each held when it started.
  std::vector<DbSnapshot> snapshots;
  for (const std::string& relative : entries->databases) {
    auto snapshot = open_snapshot(data_dir, relative);
    if (!snapshot.ok()) return snapshot.status();
    snapshots.push_back(std::move(*snapshot));
  }
  const fs::path work = beside(dir, "backup");
  if (Status s = make_private_folder(work); !s.ok()) return s;
  MadeFolder cleanup(work);

  json databases = json::array();
  json files = json::array();
  const auto list_file = [&](const std::string& path, const FileDigest& d, mode_t mode) {
    files.push_back({{"path", path}, {"bytes", d.bytes}, {"sha256", d.sha256}, {"mode", mode}});
  };
  for (const DbSnapshot& snapshot : snapshots) {
    auto keys = copy_database(snapshot, work / snapshot.relative);
    if (!keys.ok()) return keys.status();
    databases.push_back({{"path", snapshot.relative}, {"keys", *keys}});
    std::vector<std::string> names;
    for (fs::directory_iterator it(work / snapshot.relative, ec), end; !ec && it != end;
         it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      const std::string path = snapshot.relative + "/" + name;
      auto digest = digest_file(work / path, true);
      if (!digest.ok()) return digest.status();
      list_file(path, *digest, 0600);
    }
  }
  snapshots.clear();
  for (const std::string& path : entries->files) {
    struct stat st {};
    if (::lstat((data_dir / path).c_str(), &st) != 0) continue;  // gone meanwhile
    auto copied = copy_file(data_dir / path, work / path, st.st_mode & 0777);
    if (!copied.ok() && copied.status().is_not_found()) continue;  // gone meanwhile
    if (!copied.ok()) return copied.status();
    list_file(path, *copied, st.st_mode & 0777);
  }
  if (files.size() > kMaxBackupFiles) {
    return Status::resource_exhausted("the backup would hold more than " +
                                      std::to_string(kMaxBackupFiles) + " files");
  }
  const json manifest = {{"format", "toolmux-backup"},
                         {"version", kManifestVersion},
                         {"toolmux", TOOLMUX_VERSION},
                         {"created", now_text()},
                         {"data_dir", data_dir.string()},
                         {"databases", databases},
                         {"files", files}};
  const std::string manifest_text =
      manifest.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  AtomicWriteOptions how;
  how.mode = 0600;
  if (Status s = write_file_atomically(work / kBackupManifest, manifest_text, how); !s.ok()) {
    return s;
  }
  if (Status s = sync_tree(work); !s.ok()) return s;
  // An empty folder at `dir` is replaced by the rename; one that filled
  // meanwhile is not (ENOTEMPTY).
  if (::rename(work.c_str(), dir.c_str()) != 0) {
    return Status::io_error("could not rename " + work.string() + " to " + dir.string() + ": " +
                            errno_text(errno));
  }
  cleanup.keep();
  if (Status s = sync_folder(dir.parent_path()); !s.ok()) return s;

  auto read_back = read_manifest(dir);
  if (!read_back.ok()) return read_back.status();
  return summary_of(*read_back, manifest_text.size());
}

Result<BackupSummary> verify_backup(const fs::path& dir_given) {
  const fs::path dir = plain(dir_given);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status::invalid_argument("no backup in " + dir.string() + ": it is not a folder");
  }
  auto manifest = read_manifest(dir);
  if (!manifest.ok()) return manifest.status();
  Problems problems;
  for (const ManifestFile& f : manifest->files) {
    auto digest = digest_file(dir / f.path, false);
    if (!digest.ok()) {
      problems.add(digest.status().is_not_found() ? f.path + " is missing" : digest.message());
    } else if (digest->bytes != f.bytes) {
      problems.add(f.path + " has " + std::to_string(digest->bytes) + " bytes, not the " +
                   std::to_string(f.bytes) + " the manifest lists");
    } else if (digest->sha256 != f.sha256) {
      problems.add(f.path + " is not what was backed up: its SHA-256 differs from the manifest's");
    }
  }
  // A database is opened only when its files are whole.
  if (!problems.any()) {
    for (const auto& [path, keys] : manifest->databases) {
      auto counted = check_database(dir / path, path);
      if (!counted.ok()) {
        problems.add(counted.message());
      } else if (*counted != keys) {
        problems.add(path + " holds " + std::to_string(*counted) + " keys, not the " +
                     std::to_string(keys) + " the manifest lists");
      }
    }
  }
  if (problems.any()) return problems.status(dir);
  const auto manifest_bytes = fs::file_size(dir / kBackupManifest, ec);
  return summary_of(*manifest, ec ? 0 : manifest_bytes);
}

namespace {

// The database of `data_dir` a live process holds, if any ("" when none).
std::string held_database(const fs::path& data_dir) {
  auto entries = state_entries(data_dir);
  if (!entries.ok()) return "";
  for (const std::string& relative : entries->databases) {
    if (slot_held(data_dir / relative)) return (data_dir / relative).string();
  }
  return "";
}

Status refuse_held(const std::string& held, const fs::path& data_dir) {
  return Status::invalid_argument("a running toolmux holds " + held + ": stop the servers on " +
                                  data_dir.string() + " before restoring into it");
}

}  // namespace

Result<BackupSummary> restore_state(const fs::path& dir_given, const fs::path& data_dir_given,
                                    bool force) {
  const fs::path dir = plain(dir_given);
  std::error_code ec;
  fs::path data_dir = plain(data_dir_given);
  if (fs::is_symlink(fs::symlink_status(data_dir, ec))) {
    data_dir = fs::canonical(data_dir, ec);
    if (ec) {
      return Status::io_error("could not follow " + data_dir_given.string() + ": " + ec.message());
    }
  }
  if (inside(dir, data_dir) || inside(data_dir, dir)) {
    return Status::invalid_argument("the backup " + dir.string() + " and the data directory " +
                                    data_dir.string() + " overlap: restore into another folder");
  }
  auto summary = verify_backup(dir);
  if (!summary.ok()) return summary.status();
  auto manifest = read_manifest(dir);
  if (!manifest.ok()) return manifest.status();

  const fs::file_status type = fs::status(data_dir, ec);
  const bool exists = fs::exists(type);
  if (exists && !fs::is_directory(type)) {
    return Status::invalid_argument(data_dir.string() + " exists and is not a folder");
  }
  if (exists) {
    if (const std::string held = held_database(data_dir); !held.empty()) {
      return refuse_held(held, data_dir);
    }
    if (!fs::is_empty(data_dir, ec) && !force) {
      return Status::invalid_argument(
          "the data directory " + data_dir.string() +
          " is not empty: --force replaces what it holds with the backup");
    }
  }

  const fs::path work = beside(data_dir, "restore");
  if (Status s = make_private_folder(work); !s.ok()) return s;
  MadeFolder cleanup(work);
  Problems changed;
  for (const ManifestFile& f : manifest->files) {
    auto copied = copy_file(dir / f.path, work / f.path, f.mode);
    if (!copied.ok()) return copied.status();
    // Read again as copied: what changed since it was verified is not restored.
    if (copied->sha256 != f.sha256) {
      changed.add(f.path +
                  " changed while it was restored: its SHA-256 differs from the "
                  "manifest's");
    }
  }
  if (changed.any()) return changed.status(dir);
  if (Status s = sync_tree(work); !s.ok()) return s;

  if (!exists) {
    if (::rename(work.c_str(), data_dir.c_str()) != 0) {
      return Status::io_error("could not rename " + work.string() + " to " + data_dir.string() +
                              ": " + errno_text(errno));
    }
  } else {
    const fs::path replaced = beside(data_dir, "replaced");
    if (::rename(data_dir.c_str(), replaced.c_str()) != 0) {
      return Status::io_error("could not move " + data_dir.string() +
                              " aside: " + errno_text(errno));
    }
    // A server that started since the check holds a database in the folder
    // moved aside: it goes back, untouched.
    if (const std::string held = held_database(replaced); !held.empty()) {
      const bool back = ::rename(replaced.c_str(), data_dir.c_str()) == 0;
      if (!back) {
        return Status::io_error("a toolmux started on " + data_dir.string() +
                                " during the restore; its state is now in " + replaced.string() +
                                " (it could not be moved back: " + errno_text(errno) + ")");
      }
      return refuse_held(data_dir.string(), data_dir);
    }
    if (::rename(work.c_str(), data_dir.c_str()) != 0) {
      const int error = errno;
      (void)::rename(replaced.c_str(), data_dir.c_str());
      return Status::io_error("could not rename " + work.string() + " to " + data_dir.string() +
                              ": " + errno_text(error));
    }
    fs::remove_all(replaced, ec);
  }
  cleanup.keep();
  if (Status s = sync_folder(data_dir.parent_path()); !s.ok()) return s;
  return summary;
}

}  // namespace toolmux
