#include "src/store/pg_connection.h"

#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <utility>

#include "src/base/shared_library.h"

namespace toolmux {

namespace {

// libpq's functions that toolmux calls, taken from the library when the
// first connection string is read (src/base/shared_library.h): a process on
// the embedded store never loads libpq or the twenty libraries it needs.
struct LibPq {
  decltype(&::PQclear) PQclear = nullptr;
  decltype(&::PQcmdTuples) PQcmdTuples = nullptr;
  decltype(&::PQconnectdbParams) PQconnectdbParams = nullptr;
  decltype(&::PQconninfoFree) PQconninfoFree = nullptr;
  decltype(&::PQconninfoParse) PQconninfoParse = nullptr;
  decltype(&::PQconsumeInput) PQconsumeInput = nullptr;
  decltype(&::PQerrorMessage) PQerrorMessage = nullptr;
  decltype(&::PQexecParams) PQexecParams = nullptr;
  decltype(&::PQfinish) PQfinish = nullptr;
  decltype(&::PQfname) PQfname = nullptr;
  decltype(&::PQfreemem) PQfreemem = nullptr;
  decltype(&::PQnfields) PQnfields = nullptr;
  decltype(&::PQgetisnull) PQgetisnull = nullptr;
  decltype(&::PQgetlength) PQgetlength = nullptr;
  decltype(&::PQgetvalue) PQgetvalue = nullptr;
  decltype(&::PQnotifies) PQnotifies = nullptr;
  decltype(&::PQntuples) PQntuples = nullptr;
  decltype(&::PQresultErrorField) PQresultErrorField = nullptr;
  decltype(&::PQresultStatus) PQresultStatus = nullptr;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor = nullptr;
  decltype(&::PQsocket) PQsocket = nullptr;
  decltype(&::PQstatus) PQstatus = nullptr;
  decltype(&::PQtransactionStatus) PQtransactionStatus = nullptr;
  decltype(&::PQunescapeBytea) PQunescapeBytea = nullptr;
};

const Result<LibPq>& load_libpq() {
  static const Result<LibPq> loaded = []() -> Result<LibPq> {
    auto library = SharedLibrary::open("libpq.so.5", "the PostgreSQL store", "libpq5");
    if (!library.ok()) return library.status();
    LibPq lib;
    for (const Status& bound : {library->bind(lib.PQclear, "PQclear"),
                                library->bind(lib.PQcmdTuples, "PQcmdTuples"),
                                library->bind(lib.PQconnectdbParams, "PQconnectdbParams"),
                                library->bind(lib.PQconninfoFree, "PQconninfoFree"),
                                library->bind(lib.PQconninfoParse, "PQconninfoParse"),
                                library->bind(lib.PQconsumeInput, "PQconsumeInput"),
                                library->bind(lib.PQerrorMessage, "PQerrorMessage"),
                                library->bind(lib.PQexecParams, "PQexecParams"),
                                library->bind(lib.PQfinish, "PQfinish"),
                                library->bind(lib.PQfname, "PQfname"),
                                library->bind(lib.PQfreemem, "PQfreemem"),
                                library->bind(lib.PQnfields, "PQnfields"),
                                library->bind(lib.PQgetisnull, "PQgetisnull"),
                                library->bind(lib.PQgetlength, "PQgetlength"),
                                library->bind(lib.PQgetvalue, "PQgetvalue"),
                                library->bind(lib.PQnotifies, "PQnotifies"),
                                library->bind(lib.PQntuples, "PQntuples"),
                                library->bind(lib.PQresultErrorField, "PQresultErrorField"),
                                library->bind(lib.PQresultStatus, "PQresultStatus"),
                                library->bind(lib.PQsetNoticeProcessor, "PQsetNoticeProcessor"),
                                library->bind(lib.PQsocket, "PQsocket"),
                                library->bind(lib.PQstatus, "PQstatus"),
                                library->bind(lib.PQtransactionStatus, "PQtransactionStatus"),
                                library->bind(lib.PQunescapeBytea, "PQunescapeBytea")}) {
      if (!bound.ok()) return bound;
    }
    return lib;
  }();
  return loaded;
}

// libpq, once describe_pg_target has loaded it: every other function here
// runs on a connection or a result, which only exist after that.
const LibPq& pq() { return *load_libpq(); }

// libpq's messages end with a newline (or two); a Status message does not.
std::string trimmed(const char* message) {
  std::string out = message ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// SQLSTATE classes that mean the connection, not the statement, failed:
// 08 (connection exception) and 57P01-57P03 (the server shutting down or
// starting).
bool connection_lost_state(std::string_view state) {
  return state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03";
}

}  // namespace

Result<std::string> describe_pg_target(const std::string& conninfo) {
  if (const auto& loaded = load_libpq(); !loaded.ok()) return loaded.status();
  char* error = nullptr;
  PQconninfoOption* options = pq().PQconninfoParse(conninfo.c_str(), &error);
  if (!options) {
    if (error) pq().PQfreemem(error);
    // libpq's message may quote part of the string, which may hold a password.
    return Status::invalid_argument(
        "the store's connection string does not parse: give a libpq URI "
        "(postgresql://host:port/database) or key=value pairs (host=... dbname=...)");
  }
  std::string host;
  std::string hostaddr;
  std::string port;
  std::string dbname;
  std::string user;
  for (PQconninfoOption* o = options; o->keyword; ++o) {
    if (!o->val) continue;
    const std::string_view key = o->keyword;
    if (key == "host") host = o->val;
    if (key == "hostaddr") hostaddr = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") dbname = o->val;
    if (key == "user") user = o->val;
  }
  pq().PQconninfoFree(options);
  // What libpq falls back on when the string says nothing.
  const auto env = [](const char* name, const char* fallback) {
    const char* value = std::getenv(name);
    return value && *value ? std::string(value) : fallback;
  };
  if (host.empty()) host = hostaddr.empty() ? env("PGHOST", "the default socket") : hostaddr;
  if (port.empty()) port = env("PGPORT", "5432");
  if (dbname.empty()) dbname = env("PGDATABASE", user.empty() ? "the user's own" : user.c_str());
  return "host " + host + " port " + port + " database " + dbname;
}

// ---- PgResult ----

PgResult::PgResult(PgResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}

PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (result_) pq().PQclear(result_);
    result_ = std::exchange(other.result_, nullptr);
  }
  return *this;
}

PgResult::~PgResult() {
  if (result_) pq().PQclear(result_);
}

int PgResult::rows() const { return result_ ? pq().PQntuples(result_) : 0; }

int PgResult::columns() const { return result_ ? pq().PQnfields(result_) : 0; }

std::string_view PgResult::column_name(int column) const {
  const char* name = result_ ? pq().PQfname(result_, column) : nullptr;
  return name ? std::string_view(name) : std::string_view();
}

std::uint64_t PgResult::affected() const {
  if (!result_) return 0;
  const char* text = pq().PQcmdTuples(result_);
  std::uint64_t n = 0;
  std::from_chars(text, text + std::char_traits<char>::length(text), n);
  return n;
}

bool PgResult::is_null(int row, int column) const {
  return pq().PQgetisnull(result_, row, column) != 0;
}

std::string_view PgResult::text(int row, int column) const {
  return {pq().PQgetvalue(result_, row, column),
          static_cast<std::size_t>(pq().PQgetlength(result_, row, column))};
}

std::string PgResult::bytes(int row, int column) const {
  if (is_null(row, column)) return {};
  std::size_t length = 0;
  unsigned char* raw = pq().PQunescapeBytea(
      reinterpret_cast<const unsigned char*>(pq().PQgetvalue(result_, row, column)), &length);
  if (!raw) return {};
  std::string out(reinterpret_cast<const char*>(raw), length);
  pq().PQfreemem(raw);
  return out;
}

std::int64_t PgResult::integer(int row, int column) const {
  const std::string_view t = text(row, column);
  std::int64_t n = 0;
  std::from_chars(t.data(), t.data() + t.size(), n);
  return n;
}

// ---- PgConnection ----

Result<std::unique_ptr<PgConnection>> PgConnection::connect(const std::string& conninfo,
                                                            const PgConnectOptions& options) {
  Result<std::string> target = describe_pg_target(conninfo);
  if (!target.ok()) return target.status();
  const std::string timeout =
      std::to_string(std::max<std::int64_t>(options.connect_timeout.count(), 2));
  // Keywords before dbname are defaults the string may override; dbname is
  // expanded into the string's own keywords (expand_dbname = 1).
  const char* keywords[] = {"connect_timeout", "application_name", "client_encoding", "dbname",
                            nullptr};
  const char* values[] = {timeout.c_str(), "toolmux", "UTF8", conninfo.c_str(), nullptr};
  PGconn* conn = pq().PQconnectdbParams(keywords, values, 1);
  if (!conn) return Status::unavailable("cannot reach the store at " + *target + ": out of memory");
  if (pq().PQstatus(conn) != CONNECTION_OK) {
    std::string why = trimmed(pq().PQerrorMessage(conn));
    pq().PQfinish(conn);
    return Status::unavailable("cannot reach the store at " + *target + ": " + why);
  }
  // The server's notices (NOTICE: relation ... already exists, skipping) are
  // not for toolmux's output; errors come back through results.
  pq().PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  std::unique_ptr<PgConnection> connection(new PgConnection(conn, std::move(*target)));
  auto set = connection->exec("SELECT set_config('statement_timeout', $1, false)",
                              {PgParam::text(std::to_string(options.statement_timeout.count()))});
  if (!set.ok()) return set.status();
  return connection;
}

PgConnection::~PgConnection() { pq().PQfinish(conn_); }

Result<PgResult> PgConnection::exec(std::string_view sql, const std::vector<PgParam>& params) {
  last_sqlstate_.clear();
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  values.reserve(params.size());
  lengths.reserve(params.size());
  formats.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const PgParam& p = params[i];
    if (!p.value()) {
      values.push_back(nullptr);
      lengths.push_back(0);
      formats.push_back(0);
      continue;
    }
    // A text parameter is read up to its first NUL: refuse rather than cut.
    if (!p.binary() && p.value()->find('\0') != std::string::npos) {
      return Status::invalid_argument("parameter $" + std::to_string(i + 1) +
                                      " holds a NUL byte, which PostgreSQL's text cannot hold");
    }
    values.push_back(p.value()->data());
    lengths.push_back(static_cast<int>(p.value()->size()));
    formats.push_back(p.binary() ? 1 : 0);
  }
  const std::string statement(sql);
  PGresult* raw = pq().PQexecParams(conn_, statement.c_str(), static_cast<int>(params.size()),
                                    nullptr, values.data(), lengths.data(), formats.data(), 0);
  PgResult result(raw);
  const ExecStatusType status = raw ? pq().PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  if (raw) {
    const char* state = pq().PQresultErrorField(raw, PG_DIAG_SQLSTATE);
    last_sqlstate_ = state ? state : "";
  }
  if (pq().PQstatus(conn_) != CONNECTION_OK || connection_lost_state(last_sqlstate_)) {
    return Status::unavailable("lost the connection to the store at " + target_ + ": " +
                               trimmed(pq().PQerrorMessage(conn_)));
  }
  const char* message = raw ? pq().PQresultErrorField(raw, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  return Status::io_error("the store at " + target_ + " failed: " +
                          (message ? std::string(message) : trimmed(pq().PQerrorMessage(conn_))));
}

bool PgConnection::broken() {
  if (pq().PQstatus(conn_) != CONNECTION_OK) return true;
  // Reads what the server sent meanwhile without blocking (libpq's socket is
  // non-blocking): a server that went away has closed it, which marks the
  // connection bad. A server shutting down sends an error first; the end of
  // the stream comes on a further read.
  for (int i = 0; i < 3; ++i) {
    if (pq().PQconsumeInput(conn_) == 0) return true;
  }
  return pq().PQstatus(conn_) != CONNECTION_OK || connection_lost_state(last_sqlstate_);
}

bool PgConnection::in_transaction() const {
  return pq().PQtransactionStatus(conn_) == PQTRANS_INTRANS;
}

int PgConnection::socket() const { return pq().PQsocket(conn_); }

Result<std::vector<PgNotification>> PgConnection::take_notifications() {
  if (pq().PQconsumeInput(conn_) == 0 || pq().PQstatus(conn_) != CONNECTION_OK) {
    return Status::unavailable("lost the connection to the store at " + target_ + ": " +
                               trimmed(pq().PQerrorMessage(conn_)));
  }
  std::vector<PgNotification> out;
  while (PGnotify* notify = pq().PQnotifies(conn_)) {
    out.push_back({notify->relname ? notify->relname : "", notify->extra ? notify->extra : ""});
    pq().PQfreemem(notify);
  }
  return out;
}

// ---- PgTransaction ----

Result<PgTransaction> PgTransaction::begin(PgConnection& connection, bool serializable) {
  auto begun = connection.exec(serializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN");
  if (!begun.ok()) return begun.status();
  return PgTransaction(connection);
}

PgTransaction::PgTransaction(PgTransaction&& other) noexcept
    : connection_(other.connection_), open_(std::exchange(other.open_, false)) {}

PgTransaction::~PgTransaction() {
  if (open_) (void)connection_->exec("ROLLBACK");
}

Status PgTransaction::commit() {
  open_ = false;
  // A failed COMMIT ends the transaction too: nothing is left to roll back.
  auto done = connection_->exec("COMMIT");
  return done.ok() ? Status() : done.status();
}

// ---- PgPool and PgLease ----

PgLease::PgLease(PgLease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), connection_(std::move(other.connection_)) {}

PgLease& PgLease::operator=(PgLease&& other) noexcept {
  if (this != &other) {
    if (pool_ && connection_) pool_->give_back(std::move(connection_));
    pool_ = std::exchange(other.pool_, nullptr);
    connection_ = std::move(other.connection_);
  }
  return *this;
}

PgLease::~PgLease() {
  if (pool_ && connection_) pool_->give_back(std::move(connection_));
}

Result<std::unique_ptr<PgPool>> PgPool::make(PgPoolOptions options) {
  Result<std::string> target = describe_pg_target(options.conninfo);
  if (!target.ok()) return target.status();
  if (options.max_connections == 0) {
    return Status::invalid_argument("the store's pool needs at least one connection");
  }
  return std::unique_ptr<PgPool>(new PgPool(std::move(options), std::move(*target)));
}

PgPool::~PgPool() = default;

std::size_t PgPool::open_connections() const {
  std::lock_guard lock(mutex_);
  return open_;
}

void PgPool::give_back(std::unique_ptr<PgConnection> connection) {
  const bool keep = !connection->broken();
  {
    std::lock_guard lock(mutex_);
    if (keep) {
      idle_.push_back(std::move(connection));
    } else {
      --open_;
    }
  }
  if (!keep) connection.reset();  // closed outside the lock
  freed_.notify_one();
}

Result<PgLease> PgPool::acquire() {
  std::unique_lock lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + options_.acquire_timeout;
  for (;;) {
    while (!idle_.empty()) {
      std::unique_ptr<PgConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      if (!connection->broken()) return PgLease(this, std::move(connection));
      --open_;  // the server closed it while it was idle
      lock.unlock();
      connection.reset();
      lock.lock();
    }
    if (retry_at_ && std::chrono::steady_clock::now() < *retry_at_) {
      return Status::unavailable("the store is unreachable (retrying): " + last_failure_);
    }
    if (open_ < options_.max_connections) break;
    if (freed_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= options_.max_connections) {
      return Status::unavailable("the store is busy: all " +
                                 std::to_string(options_.max_connections) +
                                 " connections to it are in use");
    }
  }
  ++open_;  // reserved while connecting, outside the lock
  lock.unlock();
  auto connected = PgConnection::connect(options_.conninfo, options_.connect);
  lock.lock();
  if (!connected.ok()) {
    --open_;
    backoff_ =
        backoff_.count() == 0 ? options_.backoff_min : std::min(backoff_ * 2, options_.backoff_max);
    retry_at_ = std::chrono::steady_clock::now() + backoff_;
    last_failure_ = connected.message();
    lock.unlock();
    freed_.notify_one();
    return connected.status();
  }
  backoff_ = std::chrono::milliseconds(0);
  retry_at_.reset();
  return PgLease(this, std::move(*connected));
}

}  // namespace toolmux
