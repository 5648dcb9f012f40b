// Skills: folders that hold a SKILL.md (YAML frontmatter with the skill's
// name and description, then instructions) and the files it refers to,
// served as the io.modelcontextprotocol/skills extension (SEP-2640)
// describes: each file a resource skill://<name>/<path>, listed by
// skills/list and skills/get with its SHA-256 digest and size, the folders
// read by resources/directory/read. docs/skills.md.
//
// The catalog file's "skills" names folders; each is a skill itself when it
// holds a SKILL.md, else each folder directly inside it that holds one is. A
// skill is loaded whole, once: its files' bytes are kept, so what a client
// reads is what the listing's digests describe until the next load (a reload
// of the catalog, which an edit of any skill file asks for: fingerprint()).
// Refused at load, with where and why: a SKILL.md whose frontmatter is not
// read (catalog/skill_frontmatter.h), whose name breaks the Agent
// Skills naming rules or is not its folder's name, whose description is
// missing or longer than 1024 characters; a skill or file reached through a
// symbolic link that leads outside its root (the skill's folder must stay
// inside the named folder, each file inside the skill's folder); a skill
// over its bounds (kMaxSkillFiles files, kMaxSkillBytes bytes, folders
// nested kMaxSkillDepth deep); two skills of one name. Names that start with
// "." are skipped (.git, .DS_Store).
//
// A SkillSet never changes once loaded; any thread may read it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/resource_provider.h"
#include "src/base/problem.h"

namespace toolmux {

inline constexpr std::size_t kMaxSkillFiles = 512;  // SEP-2640's limits
inline constexpr std::size_t kMaxSkillBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxSkillDepth = 16;
inline constexpr std::size_t kMaxSkills = 1024;
inline constexpr std::size_t kMaxAllSkillsBytes = std::size_t{256} << 20;

inline constexpr const char* kSkillsExtension = "io.modelcontextprotocol/skills";

struct SkillFile {
  std::string path;  // below the skill's folder, "/"-separated ("SKILL.md", "references/a.md")
  std::string uri;   // skill://<name>/<path>, each segment percent-encoded as needed
  std::string mime_type;
  std::string bytes;
  std::string digest;  // "sha256:" and 64 lowercase hex digits
};

struct Skill {
  std::string name;
  std::string description;
  nlohmann::json frontmatter;        // as read from SKILL.md
  std::vector<SkillFile> files;      // SKILL.md first, then by path
  std::vector<std::string> folders;  // below the skill's folder, "" (itself) first

  const std::string& uri() const { return files.front().uri; }
  // A skills/list entry: {uri, frontmatter, resources: [{uri, digest, size}]}.
  nlohmann::json entry() const;
};

class SkillSet {
 public:
  // The skills of `roots` (relative paths already resolved), or null with
  // every problem appended to `problems`, each at `pointer` + "/<index of
  // the root>".
  static std::shared_ptr<const SkillSet> load(const std::vector<std::filesystem::path>& roots,
                                              const std::string& pointer, Problems& problems);

  const std::vector<Skill>& skills() const { return skills_; }
  // The folders it was loaded from, as given.
  const std::vector<std::filesystem::path>& roots() const { return roots_; }
  bool empty() const { return skills_.empty(); }

  // Each skill's name and description, [{"name", "description"}], for the log.
  nlohmann::json listing() const;

  // The skill whose SKILL.md is `uri`; null for any other.
  const Skill* find(std::string_view uri) const;
  // The file at `uri`; null when no skill has it.
  const SkillFile* file(std::string_view uri) const;
  // The direct children of the folder `uri` (skill://<name> or
  // skill://<name>/<folder>, with or without a trailing "/"): files with
  // their MIME type, folders as inode/directory. nullopt when `uri` is not a
  // folder of a skill.
  std::optional<std::vector<Resource>> directory(std::string_view uri) const;

  // What the files under `roots` look like now (names, sizes, times), to
  // tell an edit: equal fingerprints, nothing changed. Walks at most
  // kMaxSkills skills of kMaxSkillFiles files each.
  static std::string fingerprint(const std::vector<std::filesystem::path>& roots);

 private:
  std::vector<Skill> skills_;
  std::vector<std::filesystem::path> roots_;
};

// resources/list and resources/read for the skills: each SKILL.md listed
// (its name and description those of its frontmatter, text/markdown), every
// file of a skill read.
std::shared_ptr<ResourceProvider> make_skill_resources(std::shared_ptr<const SkillSet> skills);

}  // namespace toolmux
