#include "catalog/providers/root_set.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using toolmux::Location;
using toolmux::Problems;
using toolmux::RootSet;
using toolmux::testing::TempDir;
using toolmux::testing::write_file;

namespace {

RootSet open_roots(const std::vector<fs::path>& roots) {
  Problems problems;
  std::optional<RootSet> set = RootSet::open(roots, problems);
  INFO(toolmux::format_problems(problems));
  REQUIRE(set);
  return std::move(*set);
}

Location resolve_ok(const RootSet& roots, const std::string& path) {
  toolmux::Result<Location> location = roots.resolve(path);
  INFO(location.message());
  REQUIRE(location.ok());
  return *location;
}

std::string resolve_error(const RootSet& roots, const std::string& path) {
  toolmux::Result<Location> location = roots.resolve(path);
  REQUIRE_FALSE(location.ok());
  return location.message();
}

// What opening `path` for reading says: "" when it opened.
std::string read_error(const RootSet& roots, const std::string& path) {
  toolmux::Result<Location> location = roots.resolve(path);
  if (!location.ok()) return location.message();
  return roots.open_regular_file(*location).message();
}

}  // namespace

TEST_CASE("relative paths resolve beneath the single root", "[root_set]") {
  TempDir dir;
  write_file(dir / "a/b.txt", "x");
  RootSet roots = open_roots({dir.path()});

  CHECK(resolve_ok(roots, "a/b.txt").relative == "a/b.txt");
  CHECK(resolve_ok(roots, "./a//b.txt").display == "a/b.txt");
  CHECK(resolve_ok(roots, "a/../a/b.txt").display == "a/b.txt");
  CHECK(resolve_ok(roots, ".").display == ".");
  CHECK(resolve_ok(roots, "").is_root());
  CHECK(resolve_ok(roots, "a/..").display == ".");
  CHECK(read_error(roots, "a/b.txt") == "");
}

TEST_CASE("'..' leaving the root is refused", "[root_set]") {
  TempDir dir;
  RootSet roots = open_roots({dir.path()});
  CHECK(resolve_error(roots, "../x") == "path \"../x\" is outside the allowed roots");
  CHECK(roots.resolve("../x").status().is_invalid_argument());
  CHECK(resolve_error(roots, "a/../../etc/passwd") ==
        "path \"a/../../etc/passwd\" is outside the allowed roots");
  CHECK(resolve_error(roots, "..") == "path \"..\" is outside the allowed roots");
}

TEST_CASE("absolute paths are accepted only inside a root, and shown relative", "[root_set]") {
  TempDir dir;
  write_file(dir / "sub/x.txt", "x");
  RootSet roots = open_roots({dir / "sub"});

  CHECK(resolve_error(roots, "/etc/passwd") == "path \"/etc/passwd\" is outside the allowed roots");
  const std::string sibling = (dir / "other.txt").string();
  CHECK(resolve_error(roots, sibling) == "path \"" + sibling + "\" is outside the allowed roots");
  // A root's name as a prefix of another folder's name is not inside it.
  CHECK_FALSE(roots.resolve((dir / "subway/x").string()).ok());
  // Lexical ".." in an absolute path cannot climb out either.
  CHECK_FALSE(roots.resolve((dir / "sub/../other.txt").string()).ok());

  const Location inside = resolve_ok(roots, (dir / "sub/x.txt").string());
  CHECK(inside.relative == "x.txt");
  CHECK(inside.display == "x.txt");
  CHECK(resolve_ok(roots, (dir / "sub").string()).display == ".");
  CHECK(resolve_ok(roots, (dir / "sub").string() + "/").display == ".");
  CHECK(read_error(roots, (dir / "sub/x.txt").string()) == "");
}

TEST_CASE("a root given through a symlink accepts absolute paths of either spelling",
          "[root_set]") {
  TempDir dir;
  write_file(dir / "real/x.txt", "x");
  fs::create_directory_symlink(dir / "real", dir / "alias");
  RootSet roots = open_roots({dir / "alias"});
  CHECK(roots.name(0) == "real");
  CHECK(resolve_ok(roots, (dir / "alias/x.txt").string()).display == "x.txt");
  CHECK(resolve_ok(roots, (dir / "real/x.txt").string()).display == "x.txt");
}

TEST_CASE("symlinks pointing out of the root are refused by the kernel", "[root_set]") {
  TempDir dir;
  write_file(dir / "outside/secret.txt", "secret");
  fs::create_directory(dir / "root");
  fs::create_directory(dir / "root/deep");
  fs::create_symlink(dir / "outside/secret.txt", dir / "root/abs-link");
  fs::create_symlink("../outside/secret.txt", dir / "root/rel-link");
  fs::create_symlink("../../outside", dir / "root/deep/dir-link");
  fs::create_symlink("/etc", dir / "root/etc");
  RootSet roots = open_roots({dir / "root"});

  CHECK(read_error(roots, "abs-link") == "path \"abs-link\" points outside the allowed roots");
  CHECK(read_error(roots, "rel-link") == "path \"rel-link\" points outside the allowed roots");
  CHECK(read_error(roots, "deep/dir-link/secret.txt") ==
        "path \"deep/dir-link/secret.txt\" points outside the allowed roots");
  CHECK(read_error(roots, "etc/passwd") == "path \"etc/passwd\" points outside the allowed roots");

  const Location link = resolve_ok(roots, "abs-link");
  const toolmux::Result<toolmux::OpenedFile> dir_link =
      roots.open_directory(resolve_ok(roots, "deep/dir-link"));
  CHECK_FALSE(dir_link.ok());
  CHECK(dir_link.message() == "path \"deep/dir-link\" points outside the allowed roots");
  CHECK(dir_link.status().is_invalid_argument());
  // The link itself (not followed) can be looked at: it is inside.
  toolmux::Result<toolmux::OpenedFile> itself = roots.open_path(link, false);
  REQUIRE(itself.ok());
  CHECK(S_ISLNK(itself->st.st_mode));
  // No message names the host path.
  CHECK(read_error(roots, "rel-link").find(dir.path().string()) == std::string::npos);
}

TEST_CASE("symlinks that stay inside the root are followed", "[root_set]") {
  TempDir dir;
  write_file(dir / "a/file.txt", "hello");
  fs::create_directory(dir / "b");
  fs::create_symlink("../a/file.txt", dir / "b/rel");
  fs::create_symlink(dir / "a", dir / "b/abs-dir");  // absolute target: refused by RESOLVE_BENEATH
  fs::create_directory_symlink("../a", dir / "b/dir");
  RootSet roots = open_roots({dir.path()});

  CHECK(read_error(roots, "b/rel") == "");
  CHECK(read_error(roots, "b/dir/file.txt") == "");
  // An absolute target is refused even when it names a place inside the root
  // (RESOLVE_BENEATH follows no absolute link), and the message says why.
  CHECK(read_error(roots, "b/abs-dir/file.txt") ==
        "path \"b/abs-dir/file.txt\" goes through a symbolic link with an absolute target (or "
        "one that leaves the root and comes back); such links are not followed");
}

TEST_CASE("special files are refused without being opened", "[root_set]") {
  TempDir dir;
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
  fs::create_directory(dir / "folder");
  RootSet roots = open_roots({dir.path()});
  // A FIFO opened for reading would block until a writer came: this returns at once.
  CHECK(read_error(roots, "fifo") == "\"fifo\" is not a regular file or directory");
  CHECK(read_error(roots, "folder") == "\"folder\" is a directory, not a file");
  const toolmux::Result<toolmux::OpenedFile> fifo = roots.open_directory(resolve_ok(roots, "fifo"));
  CHECK_FALSE(fifo.ok());
  CHECK(fifo.message() == "\"fifo\" is not a regular file or directory");
}

TEST_CASE("missing files and NUL bytes get clear errors", "[root_set]") {
  TempDir dir;
  write_file(dir / "file.txt", "x");
  RootSet roots = open_roots({dir.path()});
  CHECK(read_error(roots, "x.txt") == "\"x.txt\" does not exist");
  CHECK(roots.open_regular_file(resolve_ok(roots, "x.txt")).status().is_not_found());
  CHECK(read_error(roots, "file.txt/x") ==
        "\"file.txt/x\" does not exist (a part of the path is not a folder)");
  CHECK(resolve_error(roots, std::string("a\0b", 3)) == "path \"a\\u0000b\" contains a NUL byte");
}

TEST_CASE("several roots are named by their folders and listed by '.'", "[root_set]") {
  TempDir dir;
  write_file(dir / "one/proj/a.txt", "1");
  write_file(dir / "two/proj/b.txt", "2");
  write_file(dir / "docs/c.txt", "3");
  RootSet roots = open_roots({dir / "one/proj", dir / "two/proj", dir / "docs"});

  CHECK(roots.names() == std::vector<std::string>{"proj", "proj-2", "docs"});
  const Location list = resolve_ok(roots, ".");
  CHECK(list.is_root_list());
  CHECK(list.display == ".");
  const Location b = resolve_ok(roots, "proj-2/b.txt");
  CHECK(b.root == 1);
  CHECK(b.relative == "b.txt");
  CHECK(b.display == "proj-2/b.txt");
  CHECK(resolve_ok(roots, "docs").display == "docs");
  CHECK(resolve_ok(roots, (dir / "docs/c.txt").string()).display == "docs/c.txt");
  CHECK(read_error(roots, "proj-2/b.txt") == "");
  CHECK(read_error(roots, "proj/b.txt") == "\"proj/b.txt\" does not exist");
  CHECK(resolve_error(roots, "nope/x") ==
        "path \"nope/x\" does not start with the name of a root; with several roots, paths "
        "start with one of: \"proj\", \"proj-2\", \"docs\"");
  CHECK(resolve_error(roots, "docs/../../x") ==
        "path \"docs/../../x\" is outside the allowed roots");
  CHECK_FALSE(roots.open_regular_file(list).ok());
}

TEST_CASE("roots that do not exist or are not folders are problems", "[root_set]") {
  TempDir dir;
  write_file(dir / "file.txt", "x");
  Problems problems;
  CHECK_FALSE(RootSet::open({dir / "missing", dir / "file.txt", dir.path()}, problems));
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].pointer == "/roots/0");
  CHECK(problems[0].message.find("does not exist") != std::string::npos);
  CHECK(problems[1].pointer == "/roots/1");
  CHECK(problems[1].message.find("is not a directory") != std::string::npos);
  problems.clear();
  CHECK_FALSE(RootSet::open({}, problems));
  CHECK(problems.size() == 1);
}

TEST_CASE("without openat2 the real-path check still keeps paths inside", "[root_set]") {
  struct Fallback {
    Fallback() { RootSet::force_openat2_fallback_for_testing(true); }
    ~Fallback() { RootSet::force_openat2_fallback_for_testing(false); }
  } fallback;
  TempDir dir;
  write_file(dir / "outside/secret.txt", "secret");
  write_file(dir / "root/a/file.txt", "hello");
  fs::create_symlink(dir / "outside/secret.txt", dir / "root/abs-link");
  fs::create_symlink("../outside", dir / "root/dir-link");
  fs::create_symlink("a/file.txt", dir / "root/inside-link");
  REQUIRE(::mkfifo((dir / "root/fifo").c_str(), 0644) == 0);
  RootSet roots = open_roots({dir / "root"});

  CHECK(read_error(roots, "a/file.txt") == "");
  CHECK(read_error(roots, "inside-link") == "");
  CHECK(read_error(roots, "abs-link") == "path \"abs-link\" points outside the allowed roots");
  CHECK(read_error(roots, "dir-link/secret.txt") ==
        "path \"dir-link/secret.txt\" points outside the allowed roots");
  CHECK(read_error(roots, "fifo") == "\"fifo\" is not a regular file or directory");
  CHECK(roots.open_directory(resolve_ok(roots, "a")).ok());
  CHECK(roots.open_path(resolve_ok(roots, "abs-link"), false).ok());
}

TEST_CASE("folders for writing are opened beneath the root and made on request", "[root_set]") {
  TempDir dir;
  fs::create_directory(dir / "root");
  fs::create_symlink(dir / "outside", dir / "root/out");
  fs::create_directory(dir / "outside");
  RootSet roots = open_roots({dir / "root"});
  const toolmux::Result<toolmux::OpenedFile> missing =
      roots.open_directory_for_writing(0, "x/y", false);
  CHECK_FALSE(missing.ok());
  CHECK(missing.message() ==
        "folder \"x/y\" does not exist (set create_directories to true to create it)");
  CHECK(missing.status().is_not_found());
  CHECK(roots.open_directory_for_writing(0, "x/y", true).ok());
  CHECK(fs::is_directory(dir / "root/x/y"));
  const toolmux::Result<toolmux::OpenedFile> out =
      roots.open_directory_for_writing(0, "out/z", true);
  CHECK_FALSE(out.ok());
  CHECK(out.message() == "path \"out/z\" points outside the allowed roots");
  CHECK_FALSE(fs::exists(dir / "outside/z"));
}

TEST_CASE("names and quotes are safe to show", "[root_set]") {
  CHECK(toolmux::quote_path("a \"b\"\\c") == "\"a \\\"b\\\"\\\\c\"");
  CHECK(toolmux::quote_path("x\ny\xff") == "\"x\\u000ay\\xff\"");
  CHECK(toolmux::quote_path("caf\xC3\xA9") == "\"caf\xC3\xA9\"");
  CHECK(toolmux::printable_name("a\nb\xC3") ==
        "a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD");
}
