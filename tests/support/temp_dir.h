// A temporary folder and file helpers for tests that touch the filesystem.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace toolmux::testing {

namespace fs = std::filesystem;

// The whole content of `path` ("" when it cannot be read).
inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Writes `content` to `path`, creating its folders; `executable` adds owner rwx.
inline void write_file(const fs::path& path, const std::string& content, bool executable = false) {
  fs::create_directories(path.parent_path());
  {
    std::ofstream out(path, std::ios::binary);
    out << content;
  }
  if (executable) fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
}

// A fresh folder under the system temp folder (canonical path), removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "toolmux-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(pattern);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(const fs::path& relative) const { return path_ / relative; }
  // Writes `text` to the file `name` in the folder and returns its path.
  fs::path write(const std::string& name, const std::string& text) const {
    fs::path file = path_ / name;
    write_file(file, text);
    return file;
  }

 private:
  fs::path path_;
};

}  // namespace toolmux::testing
