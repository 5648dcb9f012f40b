#include "catalog/catalog_file_sections.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <system_error>

#include "catalog/catalog_file_reader.h"

namespace toolmux::catalog_file {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxCaptureBytes = 1u << 30;
const std::vector<std::string_view> kToolFields = {
    "$comment",     "name",       "title",     "description",        "inputSchema",
    "outputSchema", "sideEffect", "timeoutMs", "idempotent",         "tags",
    "version",      "command",    "spotlight", "redactPersonalData", "taskSupport"};
const std::vector<std::string_view> kCommandFields = {
    "$comment", "argv", "cwd", "envAllow", "env", "maxOutputBytes", "maxStderrBytes"};

std::optional<CommandSpec> read_command(const json& value, const std::string& base,
                                        const fs::path& folder, const json& input_schema,
                                        Problems& problems) {
  std::size_t before = problems.size();
  ObjectReader reader(value, base, problems);
  reader.reject_unknown(kCommandFields);
  reader.string("$comment", false);
  CommandSpec command;
  if (auto argv = reader.strings("argv", true)) command.argv = std::move(*argv);
  if (auto cwd = reader.string("cwd", false)) {
    fs::path given(*cwd);
    if (given.empty()) {
      reader.add(reader.pointer("cwd"), "the working directory is empty (leave cwd out instead)");
      reader.mark("cwd");
    } else {
      fs::path resolved = (given.is_absolute() ? given : folder / given).lexically_normal();
      std::error_code ec;
      auto status = fs::status(resolved, ec);
      if (!fs::exists(status)) {
        reader.add(reader.pointer("cwd"), "the working directory \"" + *cwd +
                                              "\" does not exist (resolved to " +
                                              resolved.string() + ")");
        reader.mark("cwd");
      } else if (!fs::is_directory(status)) {
        reader.add(reader.pointer("cwd"), "the working directory \"" + *cwd +
                                              "\" is not a directory (resolved to " +
                                              resolved.string() + ")");
        reader.mark("cwd");
      }
      command.cwd = resolved;
    }
  }
  if (auto allow = reader.strings("envAllow", false)) command.env_allow = std::move(*allow);
  if (const json* env = reader.object("env", false)) {
    for (const auto& [name, item] : env->items()) {
      if (!item.is_string()) {
        reader.add(reader.pointer("env") + "/" + pointer_token(name),
                   "expected a string, got " + type_name(item));
        continue;
      }
      command.env[name] = item.get<std::string>();
    }
  }
  if (auto cap = reader.integer("maxOutputBytes", false, 1, kMaxCaptureBytes)) {
    command.max_output_bytes = static_cast<std::size_t>(*cap);
  }
  if (auto cap = reader.integer("maxStderrBytes", false, 0, kMaxCaptureBytes)) {
    command.max_stderr_bytes = static_cast<std::size_t>(*cap);
  }
  Problems checked = without_reported(check_command_spec(command, input_schema), reader.reported());
  for (auto& problem : with_prefix(std::move(checked), base))
    problems.push_back(std::move(problem));
  if (problems.size() != before) return std::nullopt;
  return command;
}

}  // namespace

std::optional<CommandTool> read_tool(const json& value, const std::string& base,
                                     const fs::path& folder, Problems& problems) {
  std::size_t before = problems.size();
  ObjectReader reader(value, base, problems);
  reader.reject_unknown(kToolFields);
  reader.string("$comment", false);
  CommandTool tool;
  ToolSpec& spec = tool.spec;
  spec.returns_by_deadline = true;  // its process is killed at the deadline
  spec.runs_on_reader = false;      // it waits for its process
  if (auto name = reader.string("name", true)) spec.name = std::move(*name);
  if (auto title = reader.string("title", false)) spec.title = std::move(*title);
  if (auto description = reader.string("description", true)) {
    spec.description = std::move(*description);
  }
  if (const json* schema = reader.field("inputSchema", true)) spec.input_schema = *schema;
  if (const json* schema = reader.field("outputSchema", false)) {
    if (schema->is_null()) {
      reader.add(reader.pointer("outputSchema"),
                 "expected an object, got null (leave outputSchema out instead)");
      reader.mark("outputSchema");
    } else {
      spec.output_schema = *schema;
    }
  }
  if (auto effect = reader.string("sideEffect", true)) spec.side_effect = std::move(*effect);
  if (auto timeout =
          reader.integer("timeoutMs", true, 1,
                         static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))) {
    spec.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*timeout));
  }
  if (auto idempotent = reader.boolean("idempotent")) spec.idempotent = *idempotent;
  // Its calls become tasks (docs/tasks.md) when the client negotiated them.
  if (auto support = reader.string("taskSupport", false)) {
    if (*support == "optional") {
      spec.task_support = TaskSupport::optional;
    } else if (*support == "required") {
      spec.task_support = TaskSupport::required;
    } else if (*support != "forbidden") {
      reader.add(
          reader.pointer("taskSupport"),
          "expected \"forbidden\", \"optional\" or \"required\", got " + json(*support).dump());
    }
  }
  // Off by default: a command's output is what the operator chose to run.
  if (auto spotlight = reader.boolean("spotlight")) spec.untrusted_output = *spotlight;
  // Off by default: the operator names the classes a tool's results may hold.
  if (auto classes = read_personal_data_classes(reader, "redactPersonalData")) {
    spec.redact_personal_data = *classes;
  }
  if (auto tags = reader.strings("tags", false)) spec.tags = std::move(*tags);
  if (auto version = reader.string("version", false)) spec.version = std::move(*version);

  Problems checked = without_reported(check_tool_spec(spec), reader.reported());
  for (auto& problem : with_prefix(std::move(checked), base))
    problems.push_back(std::move(problem));

  if (const json* command = reader.object("command", true)) {
    if (auto parsed =
            read_command(*command, base + "/command", folder, spec.input_schema, problems)) {
      tool.command = std::move(*parsed);
    }
  }
  if (problems.size() != before) return std::nullopt;
  return tool;
}

}  // namespace toolmux::catalog_file
