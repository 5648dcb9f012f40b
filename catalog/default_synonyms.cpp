#include "catalog/default_synonyms.h"

#include <array>
#include <string_view>

namespace toolmux {
namespace {

struct Entry {
  std::string_view word;
  std::string_view also;  // words, separated by ", "; a word may be two ("pull request")
};

// Each entry: a word a user writes -> the words tool definitions tend to use
// for the same thing. One direction only: "remove" also matches "delete", and
// "delete" has its own entry. Inflected forms need no entry of their own (a
// query word is looked up by its stem), except where stemming leaves them
// apart ("prs", "msgs", "dbs").
constexpr auto kEntries = std::to_array<Entry>({
    // Create.
    {"add", "create, insert"},
    {"new", "create"},
    {"make", "create"},
    {"open", "create, new"},
    {"start", "create, begin, run"},
    {"begin", "start, create"},
    {"generate", "create"},
    {"insert", "add, create"},
    {"register", "create, add"},
    {"post", "create, send"},
    {"mkdir", "create directory"},
    {"touch", "create file"},
    // Delete.
    {"remove", "delete"},
    {"rm", "delete, remove"},
    {"del", "delete"},
    {"erase", "delete"},
    {"drop", "delete"},
    {"destroy", "delete"},
    {"discard", "delete"},
    {"purge", "delete"},
    {"wipe", "delete"},
    {"rmdir", "delete directory"},
    {"delete", "remove"},
    {"unset", "delete, remove"},
    // Read.
    {"fetch", "get"},
    {"retrieve", "get, fetch"},
    {"read", "get"},
    {"show", "get, list"},
    {"view", "get, show"},
    {"display", "show, get"},
    {"describe", "get"},
    {"inspect", "get, describe"},
    {"cat", "read"},
    {"ls", "list"},
    {"enumerate", "list"},
    {"download", "get, fetch"},
    // Search.
    {"find", "search"},
    {"lookup", "search, get"},
    {"query", "search"},
    {"locate", "search, find"},
    {"grep", "search"},
    // Update.
    {"modify", "update"},
    {"change", "update, set"},
    {"edit", "update"},
    {"alter", "update"},
    {"patch", "update"},
    {"update", "edit, modify"},
    {"rename", "move, update"},
    {"mv", "move"},
    {"cp", "copy"},
    {"clone", "copy"},
    {"duplicate", "copy"},
    {"save", "write"},
    {"store", "save, write"},
    // Run and stop.
    {"run", "execute"},
    {"execute", "run"},
    {"exec", "execute, run"},
    {"invoke", "call, run"},
    {"trigger", "run, dispatch"},
    {"launch", "start, run"},
    {"stop", "terminate, cancel"},
    {"kill", "terminate, stop"},
    {"terminate", "stop"},
    {"abort", "cancel, stop"},
    {"cancel", "stop"},
    {"end", "terminate, stop"},
    {"hang", "end, terminate"},
    {"halt", "stop"},
    {"pause", "suspend"},
    {"suspend", "pause"},
    {"reload", "refresh"},
    {"refresh", "reload"},
    {"undo", "revert"},
    {"rollback", "revert, undo"},
    {"revert", "rollback, undo"},
    {"activate", "enable"},
    {"deactivate", "disable"},
    {"send", "post, create"},
    {"reply", "comment, respond"},
    // Messages and people.
    {"msg", "message"},
    {"msgs", "messages"},
    {"sms", "message"},
    {"text", "message"},
    {"dm", "direct message"},
    {"chat", "message, conversation"},
    {"mail", "email"},
    {"email", "mail"},
    {"notify", "notification"},
    {"notif", "notification"},
    {"people", "users, members"},
    {"person", "user"},
    {"usr", "user"},
    {"member", "user"},
    {"org", "organization"},
    // Code hosting.
    {"pr", "pull request"},
    {"prs", "pull requests"},
    {"mr", "merge request, pull request"},
    {"repo", "repository"},
    {"gh", "github"},
    {"bug", "issue"},
    {"ticket", "issue"},
    {"ci", "check, status, workflow"},
    {"ver", "version"},
    {"rev", "revision"},
    {"pkg", "package"},
    {"dep", "dependency"},
    {"lib", "library"},
    // Infrastructure.
    {"k8s", "kubernetes"},
    {"kube", "kubernetes"},
    {"kubectl", "kubernetes"},
    {"ns", "namespace"},
    {"svc", "service"},
    {"db", "database"},
    {"dbs", "databases"},
    {"mongo", "mongodb"},
    {"postgres", "postgresql"},
    {"pg", "postgresql"},
    {"env", "environment"},
    {"var", "variable"},
    {"config", "configuration, settings"},
    {"cfg", "configuration, config"},
    {"conf", "configuration, config"},
    {"settings", "configuration, config"},
    {"preferences", "settings"},
    {"auth", "authentication, authorization"},
    {"login", "authentication, auth"},
    {"creds", "credentials"},
    {"password", "secret, credential"},
    {"passwd", "password"},
    {"pw", "password"},
    {"secret", "credential"},
    {"perm", "permission"},
    {"cert", "certificate"},
    {"app", "application"},
    {"info", "information, details"},
    {"stats", "statistics"},
    {"perf", "performance"},
    {"mem", "memory"},
    {"tz", "timezone"},
    {"tmp", "temporary"},
    // Files.
    {"dir", "directory"},
    {"folder", "directory"},
    {"doc", "document, documentation, page"},
    {"txt", "text"},
    {"desc", "description"},
    {"img", "image"},
    {"pic", "image"},
    {"picture", "image"},
    {"photo", "image"},
    {"func", "function"},
    {"fn", "function"},
    {"param", "parameter"},
    {"arg", "argument"},
    {"num", "number"},
    {"addr", "address"},
    {"link", "url"},
    {"url", "link"},
    // The web and browsers.
    {"visit", "navigate"},
    {"browse", "navigate"},
    {"goto", "navigate"},
    {"tap", "click"},
});

}  // namespace

const SynonymMap& default_synonyms() {
  static const SynonymMap map = [] {
    SynonymMap m;
    for (const Entry& entry : kEntries) {
      auto& also = m[std::string(entry.word)];
      std::string_view rest = entry.also;
      while (!rest.empty()) {
        const std::size_t comma = rest.find(", ");
        also.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
      }
    }
    return m;
  }();
  return map;
}

}  // namespace toolmux
