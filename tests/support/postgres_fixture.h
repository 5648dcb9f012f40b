// A real PostgreSQL server for tests (tests/support/postgres.sh): one per test
// binary, started on first use in a folder under /tmp and stopped at exit,
// and a fresh, empty database per test case. When PostgreSQL is not installed
// the test fails with postgres.sh's message (scripts/setup.sh --tests
// installs it). Tests that use it link toolmux_store (src/store/pg_connection.h).
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

#include "src/store/pg_connection.h"
#include "src/store/pg_store.h"

#ifndef TOOLMUX_TEST_DATA
#error "TOOLMUX_TEST_DATA names tests/data (tests/CMakeLists.txt)"
#endif

namespace toolmux::testing {

// Runs `command` with sh; its output (stdout and stderr), or throws with it
// when the command fails.
inline std::string run_or_throw(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (status != 0) throw std::runtime_error(command + " failed: " + output);
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

// One server, in a folder of its own; stopped and removed when destroyed.
class PostgresServer {
 public:
  PostgresServer() {
    std::string pattern = "/tmp/tmpg-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    parent_ = pattern;
    ::chmod(parent_.c_str(), 0755);  // the server runs as nobody under root
    dir_ = parent_ / "pg";
    conninfo_ = run_or_throw(script() + " start " + dir_.string());
  }
  ~PostgresServer() {
    try {
      run_or_throw(script() + " stop " + dir_.string());
    } catch (const std::exception&) {
    }
    std::error_code ec;
    std::filesystem::remove_all(parent_, ec);
  }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // A new, empty database; its connection string.
  std::string create_database() {
    return run_or_throw(script() + " createdb " + dir_.string() + " t" +
                        std::to_string(++databases_));
  }
  // The connection string of database `name` (which may not exist).
  std::string conninfo(const std::string& name) const {
    return run_or_throw(script() + " conninfo " + dir_.string() + " " + name);
  }
  // Stops the server (immediately) and starts it again.
  void pause() { run_or_throw(script() + " pause " + dir_.string()); }
  void resume() { run_or_throw(script() + " resume " + dir_.string()); }
  const std::filesystem::path& dir() const { return dir_; }

  static std::string script() {
    return "bash " + (std::filesystem::path(TOOLMUX_TEST_DATA) / ".." / "support" / "postgres.sh")
                         .lexically_normal()
                         .string();
  }

 private:
  std::filesystem::path parent_;
  std::filesystem::path dir_;
  std::string conninfo_;
  int databases_ = 0;
};

// The test binary's server, started on first use, stopped at exit.
inline PostgresServer& postgres_server() {
  static PostgresServer server;
  return server;
}

// A fresh database on the test binary's server: its connection string.
inline std::string fresh_postgres_database() { return postgres_server().create_database(); }

// A connection to `conninfo`; throws (failing the test) with the reason.
inline std::unique_ptr<PgConnection> connect_postgres(const std::string& conninfo) {
  auto connection = PgConnection::connect(conninfo);
  if (!connection.ok()) throw std::runtime_error(connection.message());
  return std::move(*connection);
}

// The store on `conninfo` as an instance opens it (connected, its schema
// migrated: PgStore::open); throws (failing the test) with the reason.
inline std::shared_ptr<PgStore> open_postgres_store(const std::string& conninfo) {
  PgStoreOptions options;
  options.conninfo = conninfo;
  auto store = PgStore::open(options);
  if (!store.ok()) throw std::runtime_error(store.message());
  return std::move(*store);
}

}  // namespace toolmux::testing
