// PostgreSQL through libpq (PostgreSQL's own C client library): a connection,
// a query's result, a transaction and a bounded pool of connections, each
// owning what it holds (RAII). Internal to src/store: libpq's types stay out of
// this header, so nothing above src/store sees them.
//
// Every query goes through PQexecParams with its values bound as parameters,
// never spliced into the SQL text. Parameters are text, except bytes (bytea),
// which are sent in binary; results come back as text, bytea decoded.
//
// Errors are Status values: unavailable when the server cannot be reached or
// the connection broke, naming host, port and database (never the password or
// the whole connection string, which may hold one); io_error with the
// server's message for any other failed statement; invalid_argument for a
// text parameter that PostgreSQL cannot hold (a NUL byte).
//
// Threads: a PgConnection, its PgResults and a PgTransaction on it belong to
// one thread at a time. PgPool is thread-safe; a PgLease is one thread's.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

// libpq's handles, declared here so that its header stays in the .cpp.
struct pg_conn;
struct pg_result;

namespace toolmux {

// Where a connection string points, for messages and logs: "host H port P
// database D". invalid_argument when libpq cannot parse the string (the
// message does not repeat the string: it may hold a password).
Result<std::string> describe_pg_target(const std::string& conninfo);

// One bound parameter: text (no NUL bytes: PostgreSQL's text cannot hold one),
// bytes (bytea, any bytes) or NULL.
class PgParam {
 public:
  static PgParam text(std::string_view value) { return {std::string(value), false}; }
  static PgParam bytes(std::string_view value) { return {std::string(value), true}; }
  static PgParam integer(std::int64_t value) { return {std::to_string(value), false}; }
  static PgParam null() { return {std::nullopt, false}; }

  const std::optional<std::string>& value() const { return value_; }
  bool binary() const { return binary_; }

 private:
  PgParam(std::optional<std::string> value, bool binary)
      : value_(std::move(value)), binary_(binary) {}
  std::optional<std::string> value_;
  bool binary_;
};

// The rows a statement returned (none for most writes). Move-only.
class PgResult {
 public:
  explicit PgResult(pg_result* result) : result_(result) {}
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&& other) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  int rows() const;
  int columns() const;
  // The name of a column of the rows ("" past the last).
  std::string_view column_name(int column) const;
  // The rows an INSERT, UPDATE or DELETE touched.
  std::uint64_t affected() const;
  bool is_null(int row, int column) const;
  // The column's text ("" for NULL).
  std::string_view text(int row, int column) const;
  // A bytea column's bytes.
  std::string bytes(int row, int column) const;
  // A numeric column (0 for NULL or text that is not a number).
  std::int64_t integer(int row, int column) const;

 private:
  pg_result* result_;
};

// A NOTIFY this connection LISTENs to received.
struct PgNotification {
  std::string channel;
  std::string payload;
};

struct PgConnectOptions {
  std::chrono::seconds connect_timeout{5};
  // Each statement is cancelled by the server after this (statement_timeout).
  std::chrono::milliseconds statement_timeout{30'000};
};

class PgConnection {
 public:
  // Connects to `conninfo` (a libpq URI or key=value string). unavailable,
  // naming host, port and database, when the server cannot be reached or
  // refuses (libpq's reason appended); invalid_argument when the string does
  // not parse. Sets client_encoding UTF8, application_name toolmux (unless the
  // string sets them), connect_timeout and statement_timeout.
  static Result<std::unique_ptr<PgConnection>> connect(const std::string& conninfo,
                                                       const PgConnectOptions& options = {});
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement with `params` bound to $1, $2, ...
  Result<PgResult> exec(std::string_view sql, const std::vector<PgParam>& params = {});

  // Whether the connection is lost (the last exec failed with unavailable,
  // or the server closed it while idle: checked without blocking).
  bool broken();
  // Whether a transaction is open on the connection and usable (BEGIN ran,
  // and no COMMIT, ROLLBACK or failed statement since).
  bool in_transaction() const;
  // The SQLSTATE of the last failed exec ("" when none): "40001" is a
  // serialization failure, "23505" a unique violation.
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  // "host H port P database D".
  const std::string& target() const { return target_; }

  // The connection's socket, to wait on with poll() for notifications.
  int socket() const;
  // Reads what the server sent meanwhile, without blocking, and gives the
  // notifications received (oldest first; none is given twice). unavailable
  // when the connection is lost.
  Result<std::vector<PgNotification>> take_notifications();

 private:
  PgConnection(pg_conn* conn, std::string target) : conn_(conn), target_(std::move(target)) {}
  pg_conn* conn_;
  std::string target_;
  std::string last_sqlstate_;
};

// A transaction on a connection: BEGIN when made, ROLLBACK when it goes out of
// scope without commit() (an early return or an exception). Move-only.
class PgTransaction {
 public:
  // BEGIN, or BEGIN ISOLATION LEVEL SERIALIZABLE.
  static Result<PgTransaction> begin(PgConnection& connection, bool serializable = false);
  PgTransaction(PgTransaction&& other) noexcept;
  PgTransaction& operator=(PgTransaction&&) = delete;
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  ~PgTransaction();

  Result<PgResult> exec(std::string_view sql, const std::vector<PgParam>& params = {}) {
    return connection_->exec(sql, params);
  }
  // COMMIT. After it (whatever its outcome) the destructor does nothing.
  Status commit();

 private:
  explicit PgTransaction(PgConnection& connection) : connection_(&connection) {}
  PgConnection* connection_;
  bool open_ = true;
};

struct PgPoolOptions {
  std::string conninfo;
  PgConnectOptions connect;
  std::size_t max_connections = 8;
  // How long acquire() waits for a connection when all are in use.
  std::chrono::milliseconds acquire_timeout{5'000};
  // After a failed connect, acquire() answers at once for this long, doubled
  // after each further failure up to backoff_max; reset by a success.
  std::chrono::milliseconds backoff_min{100};
  std::chrono::milliseconds backoff_max{5'000};
};

class PgPool;

// A connection taken from a pool, given back when the lease goes out of scope
// (or discarded there, when it broke). Move-only.
class PgLease {
 public:
  PgLease(PgLease&& other) noexcept;
  PgLease& operator=(PgLease&& other) noexcept;
  PgLease(const PgLease&) = delete;
  PgLease& operator=(const PgLease&) = delete;
  ~PgLease();

  PgConnection& operator*() const { return *connection_; }
  PgConnection* operator->() const { return connection_.get(); }

 private:
  friend class PgPool;
  PgLease(PgPool* pool, std::unique_ptr<PgConnection> connection)
      : pool_(pool), connection_(std::move(connection)) {}
  PgPool* pool_;
  std::unique_ptr<PgConnection> connection_;
};

// At most max_connections connections to one database, opened on demand and
// kept for reuse. Thread-safe. Outlives its leases.
class PgPool {
 public:
  // Checks that the connection string parses (invalid_argument otherwise);
  // connects to nothing yet.
  static Result<std::unique_ptr<PgPool>> make(PgPoolOptions options);
  ~PgPool();
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  // A connection: an idle one, else a new one while fewer than
  // max_connections are open. unavailable "the store is busy" when none frees
  // up within acquire_timeout; unavailable "the store is unreachable
  // (retrying)" at once during the back-off after a failed connect; the
  // connect's own unavailable when it fails.
  Result<PgLease> acquire();

  // "host H port P database D".
  const std::string& target() const { return target_; }
  // Connections open now (idle or leased).
  std::size_t open_connections() const;

 private:
  friend class PgLease;
  PgPool(PgPoolOptions options, std::string target)
      : options_(std::move(options)), target_(std::move(target)) {}
  void give_back(std::unique_ptr<PgConnection> connection);

  const PgPoolOptions options_;
  const std::string target_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<PgConnection>> idle_;
  std::size_t open_ = 0;  // idle, leased, or being connected
  std::optional<std::chrono::steady_clock::time_point> retry_at_;
  std::chrono::milliseconds backoff_{0};
  std::string last_failure_;
};

}  // namespace toolmux
