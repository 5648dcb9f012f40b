#include "catalog/skills.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <system_error>
#include <utility>

#include "catalog/skill_frontmatter.h"
#include "src/base/base64.h"
#include "src/base/digest.h"
#include "src/base/file_io.h"
#include "src/base/utf8.h"

namespace toolmux {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kScheme = "skill://";
constexpr std::size_t kMaxDescription = 1024;

// The Agent Skills naming rule: 1-64 characters, lowercase letters, digits
// and hyphens, no leading, trailing or doubled hyphen.
bool valid_skill_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '-' || name.back() == '-') return false;
  if (name.find("--") != std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// One path segment in a URI: RFC 3986 unreserved characters as they are,
// every other byte as %XX.
std::string encode_segment(std::string_view segment) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : segment) {
    const auto b = static_cast<unsigned char>(c);
    if ((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
  }
  return out;
}

std::string encode_path(std::string_view path) {
  std::string out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (!out.empty() || start > 0) out += '/';
    out += encode_segment(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

std::string mime_type_of(std::string_view path, std::string_view bytes) {
  const std::size_t dot = path.rfind('.');
  const std::string_view ext = dot == std::string_view::npos ? "" : path.substr(dot + 1);
  if (ext == "md" || ext == "markdown") return "text/markdown";
  if (ext == "json") return "application/json";
  if (ext == "html" || ext == "htm") return "text/html";
  if (ext == "csv") return "text/csv";
  if (ext == "py") return "text/x-python";
  if (ext == "sh") return "text/x-shellscript";
  if (ext == "png") return "image/png";
  if (ext == "jpg" || ext == "jpeg") return "image/jpeg";
  if (ext == "pdf") return "application/pdf";
  return is_valid_utf8(bytes) ? "text/plain" : "application/octet-stream";
}

bool inside(const fs::path& path, const fs::path& folder) {
  const std::string p = path.generic_string();
  const std::string f = folder.generic_string();
  return p == f || (p.size() > f.size() && p.compare(0, f.size(), f) == 0 &&
                    (f.back() == '/' || p[f.size()] == '/'));
}

// Names in `folder`, sorted, without those that start with ".": at most
// `max` + 1 of them (more than `max`: the caller refuses the folder).
std::vector<std::string> visible_names(const fs::path& folder, std::size_t max,
                                       std::error_code& ec) {
  std::vector<std::string> names;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.empty() && name[0] != '.') names.push_back(std::move(name));
    if (names.size() > max) break;
  }
  std::sort(names.begin(), names.end());
  return names;
}

class SkillLoader {
 public:
  SkillLoader(std::string at, Problems& problems, std::size_t& all_bytes)
      : at_(std::move(at)), problems_(problems), all_bytes_(all_bytes) {}

  // The skill in `folder` (canonical), named `name` in its root.
  std::optional<Skill> load(const fs::path& folder, const std::string& name) {
    name_ = name;
    Skill skill;
    walk(folder, skill);
    if (failed_) return std::nullopt;
    auto manifest = std::find_if(skill.files.begin(), skill.files.end(),
                                 [](const SkillFile& f) { return f.path == "SKILL.md"; });
    if (manifest == skill.files.end()) {
      problem("has no SKILL.md");
      return std::nullopt;
    }
    std::rotate(skill.files.begin(), manifest, manifest + 1);
    Result<json> frontmatter = parse_skill_frontmatter(skill.files.front().bytes);
    if (!frontmatter.ok()) {
      problem(frontmatter.message());
      return std::nullopt;
    }
    const json& fm = *frontmatter;
    const auto n = fm.find("name");
    if (n == fm.end() || !n->is_string() || !valid_skill_name(n->get_ref<const std::string&>())) {
      problem(
          "SKILL.md: \"name\" must be 1-64 lowercase letters, digits and hyphens, without a "
          "leading, trailing or doubled hyphen");
      return std::nullopt;
    }
    if (*n != name) {
      problem("SKILL.md: \"name\" is " + n->dump() + ", but the skill's folder is \"" + name +
              "\" (they must be the same)");
      return std::nullopt;
    }
    const auto d = fm.find("description");
    if (d == fm.end() || !d->is_string() || d->get_ref<const std::string&>().empty() ||
        utf8_length(d->get_ref<const std::string&>()) > kMaxDescription) {
      problem("SKILL.md: \"description\" must be a string of 1-" + std::to_string(kMaxDescription) +
              " characters");
      return std::nullopt;
    }
    skill.name = name;
    skill.description = d->get<std::string>();
    skill.frontmatter = fm;
    const std::string base = std::string(kScheme) + encode_segment(name);
    for (SkillFile& f : skill.files) {
      f.uri = base + "/" + encode_path(f.path);
      f.mime_type = mime_type_of(f.path, f.bytes);
      f.digest = "sha256:" + sha256_hex(f.bytes);
    }
    return skill;
  }

 private:
  void problem(const std::string& why) {
    problems_.push_back({at_, "skill \"" + name_ + "\": " + why});
    failed_ = true;
  }

  // Every file below `root`, iteratively (a stack of folders), bounded.
  void walk(const fs::path& root, Skill& skill) {
    struct Folder {
      fs::path path;
      std::string relative;
      std::size_t depth;
    };
    std::vector<Folder> stack{{root, "", 0}};
    std::set<std::string> seen{root.generic_string()};
    std::size_t bytes = 0;
    while (!stack.empty() && !failed_) {
      Folder folder = std::move(stack.back());
      stack.pop_back();
      skill.folders.push_back(folder.relative);
      std::error_code ec;
      const std::vector<std::string> names = visible_names(folder.path, kMaxSkillFiles, ec);
      if (ec) {
        problem("cannot read " + shown(folder.relative) + ": " + ec.message());
        return;
      }
      if (names.size() > kMaxSkillFiles) {
        problem(shown(folder.relative) + " holds more than " + std::to_string(kMaxSkillFiles) +
                " names");
        return;
      }
      for (const std::string& name : names) {
        const fs::path path = folder.path / name;
        const std::string relative = folder.relative.empty() ? name : folder.relative + "/" + name;
        const fs::path real = fs::canonical(path, ec);
        if (ec) {
          problem("cannot read " + relative + ": " + ec.message());
          return;
        }
        if (!inside(real, root)) {
          problem(relative + " is a symbolic link that leads outside the skill's folder");
          return;
        }
        const fs::file_status status = fs::status(real, ec);
        if (fs::is_directory(status)) {
          if (folder.depth + 1 > kMaxSkillDepth) {
            problem(relative + ": folders nested deeper than " + std::to_string(kMaxSkillDepth));
            return;
          }
          if (seen.insert(real.generic_string()).second) {
            stack.push_back({real, relative, folder.depth + 1});
          }
          continue;
        }
        if (!fs::is_regular_file(status)) {
          problem(relative + " is not a regular file or folder");
          return;
        }
        if (skill.files.size() + 1 > kMaxSkillFiles) {
          problem("has more than " + std::to_string(kMaxSkillFiles) + " files");
          return;
        }
        const std::size_t room = std::min(kMaxSkillBytes - bytes, kMaxAllSkillsBytes - all_bytes_);
        Result<std::string> content = read_regular_file(real, room);
        if (!content.ok()) {
          problem(content.status().is_resource_exhausted()
                      ? relative + " takes it over " + std::to_string(kMaxSkillBytes) +
                            " bytes (or all skills over " + std::to_string(kMaxAllSkillsBytes) + ")"
                      : "cannot read " + relative);
          return;
        }
        bytes += content->size();
        all_bytes_ += content->size();
        skill.files.push_back(SkillFile{relative, "", "", std::move(*content), ""});
      }
    }
    std::sort(skill.files.begin(), skill.files.end(),
              [](const SkillFile& a, const SkillFile& b) { return a.path < b.path; });
    std::sort(skill.folders.begin(), skill.folders.end());
  }

  static std::string shown(const std::string& relative) {
    return relative.empty() ? "its folder" : relative;
  }

  std::string at_;
  Problems& problems_;
  std::size_t& all_bytes_;
  std::string name_;
  bool failed_ = false;
};

// "skill://<name>[/<path>]" split: the name's segment and the path ("" for
// none), or nullopt when `uri` is not a skill URI.
std::optional<std::pair<std::string_view, std::string_view>> split_uri(std::string_view uri) {
  if (uri.substr(0, kScheme.size()) != kScheme) return std::nullopt;
  uri.remove_prefix(kScheme.size());
  const std::size_t slash = uri.find('/');
  if (slash == std::string_view::npos) return std::make_pair(uri, std::string_view());
  return std::make_pair(uri.substr(0, slash), uri.substr(slash + 1));
}

class SkillResources : public ResourceProvider {
 public:
  explicit SkillResources(std::shared_ptr<const SkillSet> skills) : skills_(std::move(skills)) {}

  Outcome<std::vector<Resource>> list_resources(CallContext&) override {
    std::vector<Resource> out;
    for (const Skill& skill : skills_->skills()) {
      Resource r;
      r.uri = skill.uri();
      r.name = skill.name;
      r.description = skill.description;
      r.mime_type = "text/markdown";
      r.size = skill.files.front().bytes.size();
      out.push_back(std::move(r));
    }
    return out;
  }

  Outcome<std::vector<ResourceContents>> read_resource(const std::string& uri,
                                                       CallContext&) override {
    const SkillFile* f = skills_->file(uri);
    if (!f) return ProviderError::resource_not_found(uri);
    if (is_valid_utf8(f->bytes)) {
      return std::vector<ResourceContents>{
          ResourceContents::text_of(f->uri, f->mime_type, f->bytes)};
    }
    return std::vector<ResourceContents>{
        ResourceContents::blob_of(f->uri, f->mime_type, base64_encode(f->bytes))};
  }

 private:
  std::shared_ptr<const SkillSet> skills_;
};

}  // namespace

json Skill::entry() const {
  json resources = json::array();
  for (const SkillFile& f : files) {
    resources.push_back({{"uri", f.uri}, {"digest", f.digest}, {"size", f.bytes.size()}});
  }
  return {{"uri", uri()}, {"frontmatter", frontmatter}, {"resources", std::move(resources)}};
}

std::shared_ptr<const SkillSet> SkillSet::load(const std::vector<fs::path>& roots,
                                               const std::string& pointer, Problems& problems) {
  auto set = std::make_shared<SkillSet>();
  set->roots_ = roots;
  const std::size_t before = problems.size();
  std::size_t all_bytes = 0;
  std::set<std::string> names;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const std::string at = pointer + "/" + std::to_string(i);
    std::error_code ec;
    const fs::path root = fs::canonical(roots[i], ec);
    if (ec || !fs::is_directory(root, ec)) {
      problems.push_back({at, "the skills folder " + roots[i].string() + " is not a folder" +
                                  (ec ? " (" + ec.message() + ")" : std::string())});
      continue;
    }
    // The folder named, or the folders in it.
    std::vector<std::pair<fs::path, std::string>> candidates;
    if (fs::exists(root / "SKILL.md", ec)) {
      candidates.emplace_back(root, root.filename().string());
    } else {
      const std::vector<std::string> folders = visible_names(root, kMaxSkills, ec);
      if (folders.size() > kMaxSkills) {
        problems.push_back({at, "the skills folder " + roots[i].string() + " holds more than " +
                                    std::to_string(kMaxSkills) + " names"});
        continue;
      }
      for (const std::string& name : folders) {
        if (fs::is_directory(root / name, ec) && fs::exists(root / name / "SKILL.md", ec)) {
          candidates.emplace_back(root / name, name);
        }
      }
    }
    for (const auto& [folder, name] : candidates) {
      if (set->skills_.size() >= kMaxSkills) {
        problems.push_back({at, "more than " + std::to_string(kMaxSkills) + " skills"});
        break;
      }
      const fs::path real = fs::canonical(folder, ec);
      if (ec || !inside(real, root)) {
        problems.push_back({at, "skill \"" + name +
                                    "\": its folder is a symbolic link that leads outside " +
                                    roots[i].string()});
        continue;
      }
      SkillLoader loader(at, problems, all_bytes);
      std::optional<Skill> skill = loader.load(real, name);
      if (!skill) continue;
      if (!names.insert(skill->name).second) {
        problems.push_back({at, "skill \"" + name +
                                    "\" is served already (two skills of one "
                                    "name)"});
        continue;
      }
      set->skills_.push_back(std::move(*skill));
    }
  }
  if (problems.size() != before) return nullptr;
  return set;
}

json SkillSet::listing() const {
  json out = json::array();
  for (const Skill& skill : skills_) {
    out.push_back({{"name", skill.name}, {"description", skill.description}});
  }
  return out;
}

const Skill* SkillSet::find(std::string_view uri) const {
  for (const Skill& skill : skills_) {
    if (skill.uri() == uri) return &skill;
  }
  return nullptr;
}

const SkillFile* SkillSet::file(std::string_view uri) const {
  const auto parts = split_uri(uri);
  if (!parts) return nullptr;
  for (const Skill& skill : skills_) {
    if (encode_segment(skill.name) != parts->first) continue;
    for (const SkillFile& f : skill.files) {
      if (f.uri == uri) return &f;
    }
  }
  return nullptr;
}

std::optional<std::vector<Resource>> SkillSet::directory(std::string_view uri) const {
  auto parts = split_uri(uri);
  if (!parts) return std::nullopt;
  std::string_view folder = parts->second;
  if (!folder.empty() && folder.back() == '/') folder.remove_suffix(1);
  for (const Skill& skill : skills_) {
    if (encode_segment(skill.name) != parts->first) continue;
    const std::string base = std::string(kScheme) + encode_segment(skill.name);
    // Folders are kept as read; compare them encoded, as URIs carry them.
    auto encoded = [](const std::string& path) {
      return path.empty() ? std::string() : encode_path(path);
    };
    const auto known = std::find_if(skill.folders.begin(), skill.folders.end(),
                                    [&](const std::string& f) { return encoded(f) == folder; });
    if (known == skill.folders.end()) return std::nullopt;
    const std::string& raw = *known;
    auto child_of = [&raw](const std::string& path) -> std::optional<std::string> {
      if (!raw.empty() && (path.size() <= raw.size() + 1 || path.compare(0, raw.size(), raw) != 0 ||
                           path[raw.size()] != '/')) {
        return std::nullopt;
      }
      std::string rest = raw.empty() ? path : path.substr(raw.size() + 1);
      if (rest.empty() || rest.find('/') != std::string::npos) return std::nullopt;
      return rest;
    };
    std::vector<Resource> out;
    for (const std::string& f : skill.folders) {
      if (auto name = child_of(f)) {
        Resource r;
        r.uri = base + "/" + encode_path(f);
        r.name = *name;
        r.mime_type = "inode/directory";
        out.push_back(std::move(r));
      }
    }
    for (const SkillFile& f : skill.files) {
      if (auto name = child_of(f.path)) {
        Resource r;
        r.uri = f.uri;
        r.name = *name;
        r.mime_type = f.mime_type;
        r.size = f.bytes.size();
        out.push_back(std::move(r));
      }
    }
    return out;
  }
  return std::nullopt;
}

std::string SkillSet::fingerprint(const std::vector<fs::path>& roots) {
  std::string out;
  std::size_t entries = 0;
  const std::size_t limit = kMaxSkills * kMaxSkillFiles;
  for (const fs::path& root : roots) {
    std::error_code ec;
    std::vector<std::pair<fs::path, std::size_t>> stack{{root, 0}};
    while (!stack.empty() && entries < limit) {
      auto [folder, depth] = std::move(stack.back());
      stack.pop_back();
      for (const std::string& name : visible_names(folder, kMaxSkillFiles, ec)) {
        const fs::path path = folder / name;
        struct stat info {};
        if (::stat(path.c_str(), &info) != 0) continue;
        out += path.generic_string() + ":" + std::to_string(info.st_size) + ":" +
               std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec) +
               "\n";
        if (++entries >= limit) break;
        // Two levels more than a skill may nest: the root's skill folders.
        if (S_ISDIR(info.st_mode) && depth < kMaxSkillDepth + 2)
          stack.emplace_back(path, depth + 1);
      }
      ec.clear();
    }
  }
  return sha256_hex(out);
}

std::shared_ptr<ResourceProvider> make_skill_resources(std::shared_ptr<const SkillSet> skills) {
  return std::make_shared<SkillResources>(std::move(skills));
}

}  // namespace toolmux
