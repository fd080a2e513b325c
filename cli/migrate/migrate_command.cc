// `tempest migrate check STORM_FLUX.yaml [--storm-yaml FILE] [--resources DIR]
// [--filter PROPS] [--env-filter] [--plugin LIB.so]... [--json]`: what of a
// legacy Storm pipeline runs unchanged, what needs a plugin, and which config
// keys are ignored. Exit 0 when it runs unchanged, 1 when not (or the file
// does not parse), 2 for usage errors.
//
// `tempest migrate offsets --zk HOSTS --root R --id ID --bootstrap SERVERS
// --group GROUP [--topic T]... [--execute] [--overwrite]
// [--allow-out-of-range] [--json]`: storm-kafka's ZooKeeper offsets into
// storm-kafka-client's consumer group (cli/offsets/offset_migration.h). A dry run
// unless --execute; exit 1 for a refusal, a failed commit or a read-back
// that differs from the plan, 2 for usage errors.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/migrate/migration_check.h"
#include "cli/offsets/offset_migration.h"
#include "cli/offsets/offsets_command.h"
#include "common/core/log_text.h"
#include "common/core/plugin_loader.h"
#include "common/kafka/group_offsets_admin.h"
#include "nlohmann/json.hpp"
#include "spout/kafka/kafka_spout_config.h"

namespace tempest::cli {
namespace {

struct MigrateCheckArgs {
  std::string topology;
  std::string storm_yaml;
  std::string resources;
  std::string filter;
  bool env_filter = false;
  std::vector<std::string> plugins;
  bool json = false;
};

// Spout and bolt classes that run a multilang child process.
const std::vector<std::string> kMultilangClasses = {
    "org.apache.storm.flux.wrappers.bolts.FluxShellBolt",
    "org.apache.storm.flux.wrappers.spouts.FluxShellSpout",
    "tempest.ShellBolt",
    "tempest.ShellSpout",
};

const char* VerdictName(ClassFinding::Verdict v) {
  switch (v) {
    case ClassFinding::Verdict::kNative:
      return "native";
    case ClassFinding::Verdict::kMultilang:
      return "multilang";
    case ClassFinding::Verdict::kNeedsPlugin:
      return "needs-plugin";
  }
  return "?";
}

const char* EffectName(ConfigFinding::Effect e) {
  switch (e) {
    case ConfigFinding::Effect::kApplied:
      return "applied";
    case ConfigFinding::Effect::kNoEffect:
      return "ignored-storm-only";
    case ConfigFinding::Effect::kUnknown:
      return "ignored-unknown";
  }
  return "?";
}

nlohmann::json ToJson(const MigrationReport& report) {
  nlohmann::json classes = nlohmann::json::array();
  for (const ClassFinding& f : report.classes) {
    classes.push_back({{"section", f.section},
                       {"id", f.id},
                       {"className", f.class_name},
                       {"file", f.location.file},
                       {"line", f.location.line},
                       {"verdict", VerdictName(f.verdict)},
                       {"note", f.note}});
  }
  nlohmann::json config = nlohmann::json::array();
  for (const ConfigFinding& f : report.config) {
    config.push_back({{"key", f.key},
                      {"file", f.location.file},
                      {"line", f.location.line},
                      {"effect", EffectName(f.effect)}});
  }
  return {{"topology", report.topology_name},
          {"runs_unchanged", report.RunsUnchanged()},
          {"needs_plugins", report.NeedsPlugins()},
          {"classes", classes},
          {"config", config},
          {"problems", report.problems},
          {"warnings", report.warnings}};
}

int RunMigrateCheck(const MigrateCheckArgs& args) {
  api::ComponentRegistry registry;
  if (absl::Status s = RegisterBuiltins(registry); !s.ok()) return Fail(std::string(s.message()));
  core::PluginLoader plugins(registry);
  for (const std::string& lib : args.plugins) {
    absl::StatusOr<std::vector<std::string>> loaded = plugins.Load(lib);
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
  }

  MigrationCheckOptions options;
  options.flux_path = args.topology;
  options.flux.filter_file = args.filter;
  options.flux.env_filter = args.env_filter;
  options.flux.read_includes = true;  // the user's own files, read with the user's rights
  const std::filesystem::path topology = std::filesystem::absolute(args.topology);
  options.flux.resource_dirs.push_back(args.resources.empty()
                                           ? topology.parent_path().string()
                                           : std::filesystem::absolute(args.resources).string());
  options.storm_yaml = args.storm_yaml;
  options.registry = &registry;
  options.known_bean_classes = spout::KafkaSpoutBeanClasses();
  options.multilang_classes = kMultilangClasses;

  absl::StatusOr<MigrationReport> report = CheckMigration(options);
  if (!report.ok()) return Fail(std::string(report.status().message()));
  if (args.json) {
    std::printf("%s\n", ToJson(*report).dump().c_str());
  } else {
    std::fputs(FormatMigrationReport(*report).c_str(), stdout);
  }
  std::fflush(stdout);
  return report->RunsUnchanged() ? 0 : 1;
}

struct MigrateOffsetsArgs {
  std::string zk;
  std::string root;
  std::string id;
  std::string bootstrap;
  std::string group;
  std::vector<std::string> topics;
  bool execute = false;
  bool overwrite = false;
  bool allow_out_of_range = false;
  bool json = false;
};

std::string OrDash(const std::optional<int64_t>& v) {
  return v.has_value() ? std::to_string(*v) : std::string("-");
}

nlohmann::json OrNull(const std::optional<int64_t>& v) {
  return v.has_value() ? nlohmann::json(*v) : nlohmann::json();
}

// One key style (snake_case) throughout, as `tempest offsets show --json`.
nlohmann::json PlanJson(const OffsetMigrationPlan& plan, const MigrateOffsetsArgs& args,
                        bool written, const std::vector<std::string>& problems) {
  nlohmann::json members = nlohmann::json::array();
  for (const auto& m : plan.members.members) {
    members.push_back(
        {{"member_id", m.member_id}, {"client_id", m.client_id}, {"client_host", m.client_host}});
  }
  nlohmann::json partitions = nlohmann::json::array();
  for (const OffsetMigrationRow& r : plan.rows) {
    nlohmann::json j = {{"topic", r.topic},
                        {"partition", r.partition},
                        {"zk_path", r.zk_path.empty() ? nlohmann::json() : nlohmann::json(r.zk_path)},
                        {"zk_offset", OrNull(r.zk_offset)},
                        {"zk_topology_id", r.zk_topology_id.empty()
                                               ? nlohmann::json()
                                               : nlohmann::json(r.zk_topology_id)},
                        {"group_offset", OrNull(r.group_offset)},
                        {"group_metadata", r.group_offset ? nlohmann::json(r.group_metadata)
                                                          : nlohmann::json()},
                        {"log_start_offset", OrNull(r.log_start_offset)},
                        {"log_end_offset", OrNull(r.log_end_offset)},
                        {"write_offset", OrNull(r.write)},
                        {"action", MigrationActionName(r.action)},
                        {"owner", r.owner.empty() ? nlohmann::json() : nlohmann::json(r.owner)},
                        {"note", r.note}};
    if (written) {
      j["read_back_offset"] = OrNull(r.read_back);
      j["read_back_metadata"] = r.read_back ? nlohmann::json(r.read_back_metadata) : nlohmann::json();
    }
    partitions.push_back(std::move(j));
  }
  return {{"zk_root", args.root},
          {"id", args.id},
          {"group", args.group},
          {"execute", args.execute},
          {"metadata", plan.metadata},
          {"group_members",
           {{"listed", plan.members.listed},
            {"state", plan.members.listed ? nlohmann::json(plan.members.state) : nlohmann::json()},
            {"in_use", plan.members.InUse()},
            {"members", members}}},
          {"partitions", partitions},
          {"writes", plan.Writes()},
          {"refusals", plan.refusals},
          {"written", written},
          {"verified", written && problems.empty()},
          {"problems", problems}};
}

void PrintPlan(const OffsetMigrationPlan& plan, const MigrateOffsetsArgs& args,
               bool written) {
  std::printf("storm-kafka offsets under %s/%s -> consumer group %s\n",
              args.root == "/" ? "" : args.root.c_str(), args.id.c_str(), args.group.c_str());
  std::vector<std::vector<std::string>> rows;
  for (const OffsetMigrationRow& r : plan.rows) {
    std::vector<std::string> row = {r.topic,
                                    std::to_string(r.partition),
                                    OrDash(r.zk_offset),
                                    r.group_offset ? std::to_string(*r.group_offset) : "none",
                                    OrDash(r.log_start_offset),
                                    OrDash(r.log_end_offset),
                                    OrDash(r.write),
                                    MigrationActionName(r.action)};
    if (written) row.push_back(r.write ? OrDash(r.read_back) : "-");
    row.push_back(r.note);
    rows.push_back(std::move(row));
  }
  std::vector<std::string> header = {"TOPIC",   "PARTITION", "ZK-OFFSET", "GROUP-OFFSET",
                                     "LOG-START", "LOG-END", "WRITE",     "ACTION"};
  if (written) header.push_back("READ-BACK");
  header.push_back("NOTE");
  std::fputs(FormatTable(header, rows).c_str(), stdout);
  std::printf("commit metadata: %s\n", plan.metadata.c_str());
}

// What to migrate, from the command line.
OffsetMigrationRequest MigrationRequestOf(const MigrateOffsetsArgs& args) {
  OffsetMigrationRequest request;
  request.zk_root = args.root;
  request.spout_id = args.id;
  request.bootstrap_servers = args.bootstrap;
  request.group = args.group;
  request.topics = args.topics;
  request.overwrite = args.overwrite;
  request.allow_out_of_range = args.allow_out_of_range;
  return request;
}

int RunMigrateOffsets(const MigrateOffsetsArgs& args, const GlobalOptions& globals) {
  kafka::GroupOffsetsAdminOptions kafka_options;
  kafka_options.bootstrap_servers = args.bootstrap;
  kafka_options.client_id = "tempest-migrate-offsets";
  auto admin = kafka::GroupOffsetsAdmin::Create(kafka_options);
  if (!admin.ok()) return Fail(std::string(admin.status().message()));
  auto zk = ConnectOffsetsZookeeper(args.zk, globals);
  if (!zk.ok()) return Fail(std::string(zk.status().message()));

  auto plan = PlanOffsetMigration(**zk, **admin, MigrationRequestOf(args));
  if (!plan.ok()) return Fail(std::string(plan.status().message()));

  const auto report = [&](bool written, const std::vector<std::string>& problems) {
    if (args.json) {
      std::printf("%s\n", PlanJson(*plan, args, written, problems).dump().c_str());
    } else {
      PrintPlan(*plan, args, written);
    }
    std::fflush(stdout);
  };
  if (!plan->refusals.empty()) {
    report(false, {});
    for (const std::string& line : plan->refusals) Fail(line);
    return Fail(absl::StrCat("refused: nothing written (",
                             core::Counted(static_cast<int64_t>(plan->refusals.size()), "reason"),
                             ")"));
  }
  if (!args.execute) {
    report(false, {});
    if (!args.json) {
      std::printf("dry run: nothing written; add --execute to commit %s to %s\n",
                  core::Counted(plan->Writes(), "offset").c_str(), args.group.c_str());
    }
    return 0;
  }
  auto problems = ExecuteOffsetMigration(**zk, **admin, *plan);
  if (!problems.ok()) {
    report(false, {});
    return Fail(std::string(problems.status().message()));
  }
  report(true, *problems);
  for (const std::string& line : *problems) Fail(line);
  if (!problems->empty()) {
    return Fail(absl::StrCat("the consumer group does not hold the plan for ",
                             core::Counted(static_cast<int64_t>(problems->size()), "partition")));
  }
  if (!args.json && plan->Writes() == 0) {
    std::printf("nothing to write: consumer group %s already holds the plan (read back: as "
                "planned)\n",
                args.group.c_str());
  } else if (!args.json) {
    std::printf("committed %s to consumer group %s and read them back: as planned\n",
                core::Counted(plan->Writes(), "offset").c_str(), args.group.c_str());
  }
  return 0;
}

}  // namespace

void RegisterMigrateCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto args = std::make_shared<MigrateCheckArgs>();
  auto* migrate = app.add_subcommand(
      "migrate", "Check a legacy Storm pipeline before moving it, and move its Kafka offsets");
  migrate->require_subcommand(1);
  auto* check = migrate->add_subcommand(
      "check",
      "Report what of a Storm Flux file runs unchanged, what needs a plugin and which config "
      "keys are ignored; exit 0 only when it runs unchanged");
  check->add_option("topology", args->topology, "the Storm Flux YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  check->add_option("--storm-yaml", args->storm_yaml, "the pipeline's storm.yaml")
      ->check(CLI::ExistingFile);
  check->add_option("--resources", args->resources,
                    "where multilang scripts live (default: the Flux file's folder)");
  check->add_option("--filter", args->filter, "properties file for ${key} substitution");
  check->add_flag("--env-filter", args->env_filter, "substitute ${ENV-NAME} from the environment");
  check->add_option("--plugin", args->plugins, "C++ plugin library whose classes count as present");
  check->add_flag("--json", args->json, "print one JSON document");
  set.Add(check, [args] { return RunMigrateCheck(*args); });

  auto o = std::make_shared<MigrateOffsetsArgs>();
  auto* offsets = migrate->add_subcommand(
      "offsets",
      "Copy storm-kafka's ZooKeeper offsets into storm-kafka-client's consumer group (a dry run "
      "unless --execute; refuses while either spout runs)");
  offsets->add_option("--zk", o->zk, "ZooKeeper connect string holding storm-kafka's offsets")
      ->required();
  offsets->add_option("--root", o->root, "the storm-kafka spout's zkRoot, e.g. /kafkaspout")
      ->required();
  offsets->add_option("--id", o->id, "the storm-kafka spout's id (SpoutConfig id)")->required();
  offsets->add_option("--bootstrap", o->bootstrap, "Kafka bootstrap servers")->required();
  offsets->add_option("--group", o->group,
                      "the consumer group (group.id) of the storm-kafka-client spout")
      ->required();
  offsets->add_option("--topic", o->topics,
                      "only this topic, and list its partitions without a stored offset too "
                      "(repeatable; default: every topic with stored offsets)");
  offsets->add_flag("--execute", o->execute,
                    "commit the plan and read it back (default: a dry run that writes nothing)");
  offsets->add_flag("--overwrite", o->overwrite,
                    "replace the group's commit where it differs from ZooKeeper's offset");
  offsets->add_flag("--allow-out-of-range", o->allow_out_of_range,
                    "write the nearest end of Kafka's log for a stored offset outside it");
  offsets->add_flag("--json", o->json, "one JSON document on stdout");
  set.Add(offsets, [o, &globals] { return RunMigrateOffsets(*o, globals); });
}

}  // namespace tempest::cli
