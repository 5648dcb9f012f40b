#include "src/store/upstream_logins.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "src/base/file_io.h"
#include "src/store/pg_connection.h"

namespace toolmux {
namespace {

namespace fs = std::filesystem;

Status too_large(const std::string& upstream, std::size_t bytes) {
  return Status::invalid_argument("the login of upstream \"" + upstream + "\" is " +
                                  std::to_string(bytes) + " bytes, over the " +
                                  std::to_string(UpstreamLogins::kMaxLoginBytes) + " kept");
}

class LoginFiles final : public UpstreamLogins {
 public:
  explicit LoginFiles(fs::path folder) : folder_(std::move(folder)) {}

  Result<std::optional<std::string>> read(const std::string& upstream) const override {
    auto text = read_regular_file(file(upstream), kMaxLoginBytes, SymbolicLinks::refuse);
    if (text.ok()) return std::optional<std::string>(std::move(text).value());
    if (text.status().code() == Status::Code::kNotFound) return std::optional<std::string>();
    return text.status();
  }

  Status write(const std::string& upstream, const std::string& login) override {
    if (login.size() > kMaxLoginBytes) return too_large(upstream, login.size());
    std::error_code ec;
    fs::create_directories(folder_, ec);
    if (ec) return Status::io_error("cannot make " + folder_.string() + ": " + ec.message());
    // Only its owner reads what is in it, whoever made it first.
    if (::chmod(folder_.c_str(), 0700) != 0) {
      return Status::io_error("cannot make " + folder_.string() +
                              " private: " + std::strerror(errno));
    }
    AtomicWriteOptions options;
    options.exact_mode = 0600;
    return write_file_atomically(file(upstream), login, options);
  }

  Result<bool> remove(const std::string& upstream) override {
    if (::unlink(file(upstream).c_str()) == 0) return true;
    if (errno == ENOENT) return false;
    return Status::io_error("cannot remove " + file(upstream).string() + ": " +
                            std::strerror(errno));
  }

  std::string where() const override { return folder_.string(); }

 private:
  // An upstream's name is 1 to 64 of letters, digits, '_', '-' and '.'
  // (catalog/catalog_file_upstreams.cpp): never a '/', and with ".json"
  // after it never "." or "..".
  fs::path file(const std::string& upstream) const { return folder_ / (upstream + ".json"); }

  const fs::path folder_;
};

class PgLogins final : public UpstreamLogins {
 public:
  explicit PgLogins(std::shared_ptr<PgStore> store) : store_(std::move(store)) {}

  Result<std::optional<std::string>> read(const std::string& upstream) const override {
    auto lease = store_->pool().acquire();
    if (!lease.ok()) return lease.status();
    auto row = (*lease)->exec("SELECT login FROM toolmux_upstream_logins WHERE upstream = $1",
                              {PgParam::text(upstream)});
    if (!row.ok()) return row.status();
    if (row->rows() == 0) return std::optional<std::string>();
    return std::optional<std::string>(std::string(row->text(0, 0)));
  }

  Status write(const std::string& upstream, const std::string& login) override {
    if (login.size() > kMaxLoginBytes) return too_large(upstream, login.size());
    auto lease = store_->pool().acquire();
    if (!lease.ok()) return lease.status();
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    auto written = (*lease)->exec(
        "INSERT INTO toolmux_upstream_logins (upstream, login, written_ns) VALUES ($1, $2, $3) "
        "ON CONFLICT (upstream) DO UPDATE SET login = EXCLUDED.login, "
        "written_ns = EXCLUDED.written_ns",
        {PgParam::text(upstream), PgParam::text(login), PgParam::integer(now)});
    return written.ok() ? Status() : written.status();
  }

  Result<bool> remove(const std::string& upstream) override {
    auto lease = store_->pool().acquire();
    if (!lease.ok()) return lease.status();
    auto removed =
        (*lease)->exec("DELETE FROM toolmux_upstream_logins WHERE upstream = $1 RETURNING upstream",
                       {PgParam::text(upstream)});
    if (!removed.ok()) return removed.status();
    return removed->rows() > 0;
  }

  std::string where() const override { return "PostgreSQL (" + store_->pool().target() + ")"; }

 private:
  std::shared_ptr<PgStore> store_;
};

}  // namespace

std::unique_ptr<UpstreamLogins> login_files(const fs::path& data_dir) {
  return std::make_unique<LoginFiles>(data_dir / "logins");
}

std::unique_ptr<UpstreamLogins> pg_logins(std::shared_ptr<PgStore> store) {
  return std::make_unique<PgLogins>(std::move(store));
}

}  // namespace toolmux
