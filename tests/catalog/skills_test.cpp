// Skills (catalog/skills.h): SKILL.md frontmatter read as a YAML
// reader reads it, or refused naming the line; skill folders loaded with
// their digests, and refused when they escape their root or break a rule.
#include "catalog/skills.h"

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "catalog/skill_frontmatter.h"
#include "src/base/digest.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(TOOLMUX_TEST_DATA) / ".." / ".." / "examples" / "skills";

json frontmatter(const std::string& text) {
  Result<json> read = parse_skill_frontmatter(text);
  INFO(read.message());
  REQUIRE(read.ok());
  return *read;
}

std::string refusal(const std::string& text) {
  Result<json> read = parse_skill_frontmatter(text);
  REQUIRE_FALSE(read.ok());
  return read.message();
}

std::string skill_md(const std::string& name, const std::string& more = "") {
  return "---\nname: " + name + "\ndescription: Does " + name + ".\n" + more + "---\n# " + name +
         "\n";
}

}  // namespace

TEST_CASE("frontmatter: scalars typed as YAML's core schema types them") {
  const json fm = frontmatter(
      "\xEF\xBB\xBF---\r\nname: pdf-processing\r\ndescription: Extract text, fill forms # why\n"
      "version: 2\nratio: 1.5\nbeta: true\nowner: ~\nquoted: \"a: b \\\"c\\\" \\u00e9\"\n"
      "tab: \"a\\tb\\\\\"\nsingle: 'it''s'\n# a comment\n\nmetadata:\n  author: someone\n  count: "
      "3\n"
      "allowed-tools:\n- Read\n- 'Bash(git:*)'\n---\nbody: not read\n");
  CHECK(fm == json::parse(R"j({"name":"pdf-processing","description":"Extract text, fill forms",
    "version":2,"ratio":1.5,"beta":true,"owner":null,"quoted":"a: b \"c\" \u00e9",
    "tab":"a\tb\\","single":"it's","metadata":{"author":"someone","count":3},
    "allowed-tools":["Read","Bash(git:*)"]})j"));
  CHECK(frontmatter("---\nempty:\nlist:\n  - 1\n  - x\n---\n") ==
        json::parse(R"({"empty":null,"list":[1,"x"]})"));
}

TEST_CASE("frontmatter: what is not read is refused, naming the line") {
  CHECK(refusal("# no frontmatter\n") ==
        "SKILL.md must begin with YAML frontmatter: a first line \"---\"");
  CHECK(refusal("---\nname: a\n") == "SKILL.md: the frontmatter has no closing \"---\" line");
  CHECK(refusal("---\nname: a\nname: b\n---\n") ==
        "SKILL.md line 3: the key \"name\" is given twice");
  CHECK(refusal("---\ndescription: >\n  folded\n---\n") ==
        "SKILL.md line 2: the value \">\" uses YAML syntax a skill's frontmatter may not (quote "
        "it)");
  CHECK(refusal("---\ntags: [a, b]\n---\n").rfind("SKILL.md line 2: the value \"[a, b]\"", 0) == 0);
  CHECK(refusal("---\ndescription: one\n  two\n---\n") ==
        "SKILL.md line 3: a value continued on the next line is not read (quote it, on one "
        "line)");
  CHECK(refusal("---\nmetadata:\n  a:\n    b: c\n---\n") ==
        "SKILL.md line 4: nesting deeper than one level below a key is not read");
  CHECK(refusal("---\ndescription: a: b\n---\n") ==
        "SKILL.md line 2: the value \"a: b\" holds \": \", which YAML reads as a map (quote it)");
  CHECK(refusal("---\nq: \"open\n---\n") == "SKILL.md line 2: a quoted value must end on its line");
}

TEST_CASE("a folder of skills: each skill's files with digests, SKILL.md first") {
  Problems problems;
  auto set = SkillSet::load({kExamples}, "/skills", problems);
  INFO(format_problems(problems));
  REQUIRE(set);
  REQUIRE(set->skills().size() == 1);
  const Skill& skill = set->skills()[0];
  CHECK(skill.name == "release-notes");
  CHECK(skill.uri() == "skill://release-notes/SKILL.md");
  const json entry = skill.entry();
  CHECK(entry["frontmatter"]["metadata"] == json{{"author", "toolmux"}, {"version", "1.0"}});
  REQUIRE(entry["resources"].size() == 2);
  const std::string manifest = read_file(kExamples / "release-notes" / "SKILL.md");
  CHECK(entry["resources"][0] == json{{"uri", "skill://release-notes/SKILL.md"},
                                      {"digest", "sha256:" + sha256_hex(manifest)},
                                      {"size", manifest.size()}});
  CHECK(entry["resources"][1]["uri"] == "skill://release-notes/references/STYLE.md");

  auto top = set->directory("skill://release-notes");
  REQUIRE(top);
  REQUIRE(top->size() == 2);
  CHECK((*top)[0].uri == "skill://release-notes/references");
  CHECK((*top)[0].mime_type == "inode/directory");
  CHECK((*top)[1].uri == "skill://release-notes/SKILL.md");
  CHECK((*top)[1].mime_type == "text/markdown");
  auto below = set->directory("skill://release-notes/references/");
  REQUIRE(below);
  REQUIRE(below->size() == 1);
  CHECK((*below)[0].name == "STYLE.md");
  CHECK_FALSE(set->directory("skill://release-notes/SKILL.md"));
  CHECK_FALSE(set->directory("skill://other"));

  auto resources = make_skill_resources(set);
  TestContext context;
  auto read = resources->read_resource("skill://release-notes/references/STYLE.md", context);
  REQUIRE(read.ok());
  CHECK(read.value()[0].text == read_file(kExamples / "release-notes/references/STYLE.md"));
  auto listed = resources->list_resources(context);
  REQUIRE(listed.ok());
  REQUIRE(listed.value().size() == 1);
  CHECK(listed.value()[0].name == "release-notes");
  CHECK(listed.value()[0].description == skill.description);
  CHECK_FALSE(resources->read_resource("skill://release-notes/nothing.md", context).ok());
}

TEST_CASE("a skill that leads outside its root, or breaks a rule, is refused") {
  TempDir dir;
  const fs::path root = dir / "skills";
  write_file(dir / "outside" / "escape" / "SKILL.md", skill_md("escape"));
  fs::create_directories(root);
  Problems problems;
  SECTION("the skill's folder is a link out of the root") {
    fs::create_directory_symlink(dir / "outside" / "escape", root / "escape");
    CHECK_FALSE(SkillSet::load({root}, "/skills", problems));
    CHECK(has_problem(problems, "/skills/0",
                      "skill \"escape\": its folder is a symbolic link that leads outside"));
  }
  SECTION("a file of the skill is a link out of it") {
    write_file(root / "good" / "SKILL.md", skill_md("good"));
    fs::create_symlink(dir / "outside" / "escape" / "SKILL.md", root / "good" / "secret.md");
    CHECK_FALSE(SkillSet::load({root}, "/skills", problems));
    CHECK(has_problem(problems, "/skills/0",
                      "skill \"good\": secret.md is a symbolic link that leads outside the "
                      "skill's folder"));
  }
  SECTION("a link that stays inside is followed") {
    write_file(root / "good" / "SKILL.md", skill_md("good"));
    write_file(root / "good" / "a.md", "A");
    fs::create_symlink("a.md", root / "good" / "b.md");
    auto set = SkillSet::load({root}, "/skills", problems);
    REQUIRE(set);
    CHECK(set->skills()[0].files.size() == 3);
  }
  SECTION("the name is not the folder's, or breaks the naming rules") {
    write_file(root / "folder" / "SKILL.md", skill_md("other"));
    write_file(root / "Bad--Name" / "SKILL.md", skill_md("Bad--Name"));
    CHECK_FALSE(SkillSet::load({root}, "/skills", problems));
    CHECK(has_problem(problems, "/skills/0",
                      "skill \"folder\": SKILL.md: \"name\" is \"other\", but the skill's folder "
                      "is \"folder\""));
    CHECK(has_problem(problems, "/skills/0",
                      "skill \"Bad--Name\": SKILL.md: \"name\" must be 1-64 lowercase letters"));
  }
  SECTION("no description") {
    write_file(root / "terse" / "SKILL.md", "---\nname: terse\n---\n");
    CHECK_FALSE(SkillSet::load({root}, "/skills", problems));
    CHECK(has_problem(problems, "/skills/0", "\"description\" must be a string of 1-1024"));
  }
  SECTION("too many files") {
    write_file(root / "big" / "SKILL.md", skill_md("big"));
    for (std::size_t i = 0; i < kMaxSkillFiles; ++i) {
      write_file(root / "big" / ("f" + std::to_string(i)), "x");
    }
    CHECK_FALSE(SkillSet::load({root}, "/skills", problems));
    CHECK(has_problem(problems, "/skills/0", "more than 512"));
  }
  SECTION("a folder that is not there") {
    CHECK_FALSE(SkillSet::load({dir / "missing"}, "/skills", problems));
    CHECK(has_problem(problems, "/skills/0", "is not a folder"));
  }
}

TEST_CASE("the fingerprint changes when a skill's file is edited, added or removed") {
  TempDir dir;
  write_file(dir / "s" / "one" / "SKILL.md", skill_md("one"));
  const std::string before = SkillSet::fingerprint({dir / "s"});
  CHECK(SkillSet::fingerprint({dir / "s"}) == before);
  write_file(dir / "s" / "one" / "SKILL.md", skill_md("one", "license: MIT\n"));
  const std::string edited = SkillSet::fingerprint({dir / "s"});
  CHECK(edited != before);
  write_file(dir / "s" / "one" / "extra" / "notes.md", "n");
  CHECK(SkillSet::fingerprint({dir / "s"}) != edited);
}
