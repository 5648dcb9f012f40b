#include "src/app/doctor.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>

#include "src/base/process_runner.h"
#include "tests/support/fifo.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/tcp.h"
#include "tests/support/temp_dir.h"

using toolmux::ServeOptions;
using toolmux::testing::FifoGuard;
using toolmux::testing::TempDir;
using Listener = toolmux::testing::TcpListener;

namespace {

const std::string kData = TOOLMUX_TEST_DATA "/doctor/";

std::string run(const ServeOptions& options, int& code) {
  std::ostringstream out;
  code = toolmux::run_doctor(options, {}, out);
  return out.str();
}

}  // namespace

TEST_CASE("doctor: a broken setup, one problem line per thing to fix", "[doctor]") {
  TempDir dir;
  ::setenv("TOOLMUX_DOCTOR_TEST_SET", "s3cret-value-never-shown", 1);
  ::unsetenv("TOOLMUX_DOCTOR_TEST_UNSET");
  const Listener taken;
  ServeOptions options;
  options.catalog_file = kData + "broken_setup.json";
  options.data_dir = dir.write("not-a-folder", "x");
  options.http = true;
  options.http_host = "127.0.0.1";
  options.http_port = taken.port();
  int code = 0;
  const std::string out = run(options, code);
  INFO(out);
  CHECK(code == 1);
  const std::string port = std::to_string(taken.port());
  const std::string catalog = options.catalog_file.string();
  const std::string folder = options.catalog_file.parent_path().lexically_normal().string();
  const std::string sh = toolmux::find_program("sh", std::getenv("PATH"), {}).value_or("?");
  CHECK(out ==
        "problem: catalog " + catalog + " has 1 problem; fix each at its place (toolmux check " +
            catalog +
            " lists them too):\n"
            "    /upstreams/missing/env/API_KEY/fromEnv: toolmux's environment has no variable "
            "\"TOOLMUX_DOCTOR_TEST_UNSET\"\n"
            "problem: upstream \"missing\": command \"toolmux-doctor-no-such-program\" is not "
            "found in PATH; install it, or give its absolute path at /upstreams/missing/command\n"
            "problem: upstream \"not-executable\": command " +
            folder +
            "/not_executable.sh is not an executable file; make it one (chmod +x) or fix "
            "/upstreams/not-executable/command\n"
            "ok: upstream \"shell\": command \"sh\" is " +
            sh +
            "\n"
            "problem: variable TOOLMUX_DOCTOR_TEST_UNSET is not set "
            "(/upstreams/missing/env/API_KEY); set it in the environment toolmux runs in (a "
            "client's configuration: the toolmux entry's \"env\")\n"
            "ok: variable TOOLMUX_DOCTOR_TEST_SET is set (/upstreams/shell/env/TOKEN)\n"
            "problem: data directory " +
            options.data_dir.string() +
            " is not a directory; remove it or give --data-dir another folder\n"
            "problem: HTTP 127.0.0.1:" +
            port +
            " is in use by another process; stop it or choose another port\n"
            "6 problems to fix.\n");
  CHECK(out.find("s3cret") == std::string::npos);
  ::unsetenv("TOOLMUX_DOCTOR_TEST_SET");
}

TEST_CASE("doctor: a good setup passes every check", "[doctor]") {
  TempDir dir;
  ::setenv("TOOLMUX_DOCTOR_TEST_SET", "s3cret-value-never-shown", 1);
  ServeOptions options;
  options.catalog_file = kData + "good_setup.json";
  options.data_dir = dir / "state" / "toolmux";
  options.http = true;
  options.http_port = 0;
  int code = 1;
  const std::string out = run(options, code);
  INFO(out);
  CHECK(code == 0);
  CHECK_THAT(out, Catch::StartsWith("ok: catalog " + options.catalog_file.string() +
                                    " is valid: 0 command tools, 1 upstream MCP server\n"));
  CHECK_THAT(out, Catch::Contains("ok: data directory " + options.data_dir.string() +
                                  " does not exist yet; serve creates it (in " +
                                  dir.path().string() + ")\n"));
  CHECK_THAT(out, Catch::EndsWith("ok: HTTP 127.0.0.1:0: port 0, serve picks a free port\n"
                                  "All checks passed.\n"));
  CHECK(out.find("s3cret") == std::string::npos);
  ::unsetenv("TOOLMUX_DOCTOR_TEST_SET");

  // The folder exists: written to and left as it was.
  std::filesystem::create_directories(options.data_dir);
  options.catalog_file.clear();
  options.http = false;
  const std::string again = run(options, code);
  CHECK(code == 0);
  CHECK(again ==
        "ok: no catalog file given (--catalog FILE): the built-in tools only\n"
        "ok: data directory " +
            options.data_dir.string() +
            " is writable (several servers may share it)\n"
            "All checks passed.\n");
  CHECK(std::filesystem::is_empty(options.data_dir));
}

TEST_CASE("doctor: what it prints is redacted as the log is", "[doctor]") {
  TempDir dir;
  ::setenv("TOOLMUX_DOCTOR_TEST_KEY", "doctor-test-key-Zq81wX", 1);
  ServeOptions options;
  options.catalog_file = kData + "secret_in_command.json";
  options.data_dir = dir / "state";
  int code = 0;
  const std::string out = run(options, code);
  INFO(out);
  CHECK(code == 1);
  CHECK_THAT(out, Catch::Contains(
                      "problem: upstream \"pasted\": command \"toolmux-doctor-github-mcp "
                      "--token=[REDACTED:secret_value] --key [REDACTED]\" is not found in PATH"));
  CHECK(out.find("ghp_") == std::string::npos);
  CHECK(out.find("doctor-test-key") == std::string::npos);
  ::unsetenv("TOOLMUX_DOCTOR_TEST_KEY");
}

TEST_CASE("doctor: names from a hostile catalog reach the terminal escaped", "[doctor]") {
  TempDir dir;
  ServeOptions options;
  options.catalog_file = kData + "hostile_names.json";
  options.data_dir = dir / "data";
  int code = 0;
  const std::string out = run(options, code);
  INFO(out);
  CHECK(code == 1);
  CHECK(out.find('\x1b') == std::string::npos);
  // The name would forge the last line, the command and the variable an "ok:" line each.
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.rfind("ok: program", 0) == std::string::npos);
    CHECK(line.rfind("ok: variable", 0) == std::string::npos);
    CHECK(line.rfind("All checks passed.", 0) == std::string::npos);
  }
  CHECK_THAT(out, Catch::Contains("problem: upstream \"evil\\u001b[2J\\r\\nAll checks passed.\": "
                                  "command \"toolmux-doctor-no-such\\u001b[31m\\nok: program\" "
                                  "is not found in PATH"));
  CHECK_THAT(out, Catch::Contains("problem: variable TOOLMUX_DOCTOR_TEST_UNSET\\u001b[2J\\nok: "
                                  "variable is not set"));
}

TEST_CASE("doctor: a fromFile naming a FIFO is a problem at once, never waited on", "[doctor]") {
  TempDir dir;
  ServeOptions options;
  options.catalog_file =
      dir.write("catalog.json", toolmux::testing::read_file(kData + "fifo_secret.json"));
  options.data_dir = dir / "data";
  const FifoGuard fifo(dir / "secret.fifo");
  const auto started = std::chrono::steady_clock::now();
  int code = 0;
  const std::string out = run(options, code);
  INFO(out);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
  CHECK_FALSE(fifo.fired());
  CHECK(code == 1);
  const std::string why =
      "cannot read " + fifo.path().string() + ": it is a FIFO (named pipe), not a regular file";
  CHECK_THAT(out, Catch::Contains("    /upstreams/shell/env/TOKEN/fromFile: " + why + "\n"));
  CHECK_THAT(out, Catch::Contains("problem: " + why +
                                  " (/upstreams/shell/env/TOKEN); make it a regular file that "
                                  "toolmux's user can read\n"));
}

TEST_CASE("doctor: a free HTTP port, and an address the machine does not have", "[doctor]") {
  int port = 0;
  {
    const Listener probe;
    port = probe.port();
  }
  ServeOptions options;
  options.data_dir = TempDir().path();  // gone: its parent, the temp folder, is writable
  options.http = true;
  options.http_host = "127.0.0.1";
  options.http_port = port;
  auto checks = toolmux::doctor_checks(options);
  REQUIRE(checks.size() == 3);
  CHECK(checks[2].ok);
  CHECK(checks[2].text == "HTTP 127.0.0.1:" + std::to_string(port) + " is free");

  options.http_host = "192.0.2.1";  // TEST-NET-1: on no interface
  checks = toolmux::doctor_checks(options);
  CHECK_FALSE(checks[2].ok);
  CHECK(checks[2].text == "HTTP 192.0.2.1:" + std::to_string(port) +
                              ": no interface of this machine has that address; give one it has, "
                              "such as 127.0.0.1");
}

TEST_CASE("doctor: with --store postgresql, whether the store is reachable, without changing it",
          "[doctor]") {
  TempDir dir;
  ServeOptions options;
  options.data_dir = dir.path();
  options.store = toolmux::StoreKind::postgresql;
  const std::string url = toolmux::testing::fresh_postgres_database();
  const std::string where = "host " + toolmux::testing::postgres_server().dir().string() +
                            " port 5432 database " + url.substr(url.rfind('=') + 1);
  ::setenv("TOOLMUX_POSTGRES_URL", url.c_str(), 1);
  int code = 0;
  std::string out = run(options, code);
  INFO(out);
  CHECK(code == 0);
  CHECK(out.find("\nok: store: PostgreSQL at " + where +
                 " is reachable; serve makes its tables on first start\n") != std::string::npos);
  // Nothing was made.
  auto db = toolmux::testing::connect_postgres(url);
  auto tables = db->exec("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'toolmux%'");
  REQUIRE(tables.ok());
  CHECK(tables->integer(0, 0) == 0);

  ::setenv("TOOLMUX_POSTGRES_URL",
           "host=/tmp/toolmux-doctor-no-server port=5432 dbname=gone password=s3cret", 1);
  out = run(options, code);
  CHECK(code == 1);
  CHECK(out.find("\nproblem: store: cannot reach the store at host "
                 "/tmp/toolmux-doctor-no-server port 5432 database gone: ") != std::string::npos);
  CHECK(out.find("; start the server, or fix the connection string\n") != std::string::npos);
  CHECK(out.find("s3cret") == std::string::npos);

  ::unsetenv("TOOLMUX_POSTGRES_URL");
  out = run(options, code);
  CHECK(out.find("\nproblem: store: --store postgresql needs a connection string: set "
                 "TOOLMUX_POSTGRES_URL or give --store-url-file FILE\n") != std::string::npos);
}
