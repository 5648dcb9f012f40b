#include "src/protocol/skill_methods.h"

#include "catalog/skills.h"
#include "src/assembly/tool_catalog.h"

namespace toolmux {

using nlohmann::json;

namespace {

void answer_error(Session& session, const json& id, int code, const std::string& message) {
  session.send_related(jsonrpc::make_error(id, code, message), id);
}

// The skills served now, or the -32601 answer when there are none.
std::shared_ptr<const SkillSet> served(const Catalog& catalog, const jsonrpc::Message& m,
                                       Session& session) {
  if (!catalog.skills) {
    answer_error(session, m.id, jsonrpc::kMethodNotFound,
                 "Method not found: " + m.method + " (this server serves no skills)");
  }
  return catalog.skills;
}

// params.uri, or the -32602 answer when it is missing or not a string.
const std::string* uri_param(const jsonrpc::Message& m, Session& session) {
  const auto uri = m.params.is_object() ? m.params.find("uri") : m.params.end();
  if (!m.params.is_object() || uri == m.params.end() || !uri->is_string()) {
    answer_error(session, m.id, jsonrpc::kInvalidParams,
                 "Invalid params: " + m.method + " needs \"uri\" (a string)");
    return nullptr;
  }
  return &uri->get_ref<const std::string&>();
}

}  // namespace

std::vector<std::pair<std::string, SkillMethod>> skill_methods(
    const std::function<std::shared_ptr<const Catalog>()>& catalog) {
  std::vector<std::pair<std::string, SkillMethod>> out;
  out.emplace_back(
      "skills/list", [catalog](const jsonrpc::Message& m, const std::shared_ptr<Session>& session) {
        const auto skills = served(*catalog(), m, *session);
        if (!skills) return;
        json entries = json::array();
        for (const Skill& skill : skills->skills()) entries.push_back(skill.entry());
        session->send_related(jsonrpc::make_result(m.id, {{"skills", std::move(entries)}}), m.id);
      });
  out.emplace_back(
      "skills/get", [catalog](const jsonrpc::Message& m, const std::shared_ptr<Session>& session) {
        const auto skills = served(*catalog(), m, *session);
        if (!skills) return;
        const std::string* uri = uri_param(m, *session);
        if (!uri) return;
        const Skill* skill = skills->find(*uri);
        if (!skill) {
          answer_error(*session, m.id, jsonrpc::kInvalidParams,
                       "Invalid params: " + json(*uri).dump() +
                           " is not the SKILL.md of a skill this server serves (skills/list lists "
                           "them)");
          return;
        }
        session->send_related(jsonrpc::make_result(m.id, {{"skill", skill->entry()}}), m.id);
      });
  out.emplace_back("resources/directory/read", [catalog](const jsonrpc::Message& m,
                                                         const std::shared_ptr<Session>& session) {
    const auto skills = served(*catalog(), m, *session);
    if (!skills) return;
    const std::string* uri = uri_param(m, *session);
    if (!uri) return;
    const auto children = skills->directory(*uri);
    if (!children) {
      answer_error(*session, m.id, jsonrpc::kInvalidParams,
                   "Invalid params: " + json(*uri).dump() +
                       " is not a folder of a skill this server serves");
      return;
    }
    json resources = json::array();
    for (const Resource& r : *children) resources.push_back(r.to_json());
    session->send_related(jsonrpc::make_result(m.id, {{"resources", std::move(resources)}}), m.id);
  });
  return out;
}

}  // namespace toolmux
