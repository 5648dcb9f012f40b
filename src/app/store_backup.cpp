#include "src/app/store_backup.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "src/base/terminal_text.h"
#include "src/store/lazy_result_store.h"
#include "src/store/pg_schema.h"
#include "src/store/state_backup.h"

namespace toolmux {

namespace {

namespace fs = std::filesystem;

// A size as people read it: "812 bytes", "24.1 KiB", "1.3 MiB".
std::string size_text(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  char out[32];
  std::snprintf(out, sizeof out, "%.1f %s", value, units[unit]);
  return out;
}

// A path in a message: no character a terminal would act on.
std::string shown(const fs::path& path) { return terminal_text(path.string()); }

// The databases, one a line with its keys and size, then the other files
// counted, and the total.
void print_summary(std::ostream& out, const BackupSummary& summary) {
  std::size_t width = 0;
  std::size_t files = 0;
  std::uint64_t file_bytes = 0;
  for (const BackupItem& item : summary.items) {
    if (item.database) width = std::max(width, item.path.size());
  }
  for (const BackupItem& item : summary.items) {
    if (!item.database) {
      ++files;
      file_bytes += item.bytes;
      continue;
    }
    out << "  " << terminal_text(item.path) << std::string(width - item.path.size() + 2, ' ')
        << item.keys << (item.keys == 1 ? " key, " : " keys, ") << size_text(item.bytes) << "\n";
  }
  out << "  " << files << (files == 1 ? " other file, " : " other files, ") << size_text(file_bytes)
      << "\n"
      << size_text(summary.bytes) << " in all, the manifest " << kBackupManifest << " included.\n";
}

// A failure: its message may name several problems, one a line.
int failed(std::ostream& err, const Status& status) {
  const std::string& message = status.message();
  err << "toolmux: ";
  for (std::size_t start = 0;;) {
    const std::size_t end = message.find('\n', start);
    err << terminal_text(std::string_view(message).substr(start, end - start)) << "\n";
    if (end == std::string::npos) return 1;
    start = end + 1;
  }
}

// `word` as one word of a POSIX shell command: as it is when it holds only
// characters no shell acts on, else in single quotes; then terminal-safe.
std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                              "0123456789_/.,:=@%+-") == std::string::npos) {
    return terminal_text(word);
  }
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return terminal_text(quoted + "'");
}

// Where a PostgreSQL store's connection string comes from, as the
// procedure names it (never the string itself: it may hold a password).
std::string connection_source(const CommandLine& cl) {
  if (!cl.serve.store_url_file.empty()) {
    return "\"$(head -n 1 " + shell_word(cl.serve.store_url_file.string()) + ")\"";
  }
  return "\"$TOOLMUX_POSTGRES_URL\"";
}

// The procedure of docs/shared-store.md ("Backup and restore"), printed
// instead of pretending to copy a database toolmux does not own.
int postgres_procedure(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  const std::string url = connection_source(cl);
  const std::string dump = shell_word((cl.store.dir / "toolmux.dump").string());
  if (cl.store.action == StoreCommand::Action::backup) {
    err << "toolmux: store backup does not copy a PostgreSQL store: back it up with pg_dump, "
           "as follows (docs/shared-store.md, Backup and restore)\n";
    out << "mkdir -p " << shell_word(cl.store.dir.string()) << "\n"
        << "pg_dump --format=custom --table='toolmux_*' --file=" << dump << " " << url << "\n"
        << "# pg_dump reads one snapshot: the dump holds every write committed before it\n"
        << "# started, while the instances keep serving.\n";
  } else {
    err << "toolmux: store restore does not write a PostgreSQL store: restore it with "
           "pg_restore, as follows (docs/shared-store.md, Backup and restore)\n";
    out << "# 1. Stop every toolmux instance on the database.\n"
        << "# 2. What the dump cannot hold: the audit table's trigger function.\n"
        << "psql --quiet --set=ON_ERROR_STOP=1 --dbname=" << url << " <<'SQL'\n"
        << pg_restore_prerequisites() << "SQL\n"
        << "pg_restore --clean --if-exists --single-transaction --dbname=" << url << " " << dump
        << "\n"
        << "# 3. Start the instances again.\n";
  }
  return 1;
}

}  // namespace

int run_store(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  if (cl.serve.store == StoreKind::postgresql) return postgres_procedure(cl, out, err);
  const fs::path data_dir = cl.serve.data_dir.empty() ? default_data_dir() : cl.serve.data_dir;
  const fs::path dir = cl.store.dir;
  if (cl.store.action == StoreCommand::Action::backup) {
    auto summary = back_up_state(data_dir, dir);
    if (!summary.ok()) return failed(err, summary.status());
    out << "Backed up " << shown(data_dir) << " into " << shown(dir) << ":\n";
    print_summary(out, *summary);
    return 0;
  }
  auto summary = restore_state(dir, data_dir, cl.store.force);
  if (!summary.ok()) return failed(err, summary.status());
  out << "Restored " << shown(dir) << " into " << shown(data_dir) << " (verified first):\n";
  print_summary(out, *summary);
  return 0;
}

}  // namespace toolmux
