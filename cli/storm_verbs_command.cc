// Storm's CLI verbs beyond the ones Tempest implements in their own files:
// `localconfvalue` (answered from the local config), `remoteconfvalue`
// (from nimbus's REST API), and one line each for
// the verbs that have no counterpart here, saying why and what to use.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/nimbus_client.h"
#include "common/api/config.h"

namespace tempest::cli {
namespace {

struct StormVerb {
  const char* name;
  const char* why;  // why it has no counterpart here, and what to use instead
};

constexpr StormVerb kStormOnlyVerbs[] = {
    {"jar", "Tempest runs Flux files, not jars: use 'tempest submit TOPOLOGY.yaml' with the "
            "built-in components, and components in other languages through multilang "
            "(their scripts shipped with --resources DIR)"},
    {"sql", "Storm SQL is not part of Tempest: write the pipeline as a Flux file and "
            "'tempest submit' it"},
    {"drpc", "Tempest has no DRPC server: feed requests through a Kafka topic and a "
             "KafkaSpout, answer through a KafkaBolt"},
    {"drpc-client", "Tempest has no DRPC server: produce requests to a Kafka topic instead"},
    {"pacemaker", "Tempest keeps heartbeats in ZooKeeper and has no pacemaker; nothing to run"},
    {"logviewer", "each worker logs to {storm.local.dir}/supervisor/workers/PORT/worker.log on "
                  "its supervisor (under tempest dev: DIR/supervisor-N/supervisor/workers/PORT/"
                  "worker.log); nimbus's web UI and 'tempest get-errors' show each topology's "
                  "errors"},
    {"ui", "the web UI is served by nimbus itself at http://NIMBUS:ui.port/; nothing to run"},
    {"shell", "multilang components are declared in the Flux file (FluxShellBolt / "
              "FluxShellSpout); ship their scripts with 'tempest submit --resources DIR'"},
    {"upload-credentials", "Tempest has no credential push; nimbus's REST API takes a "
                           "bearer token (--token-file)"},
    {"classpath", "Tempest has no JVM classpath; components are built in, or run in other "
                  "languages through multilang"},
    {"server_classpath", "Tempest has no JVM classpath; the daemons are one binary, 'tempest'"},
    {"admin", "use 'tempest offsets' for KafkaSpout offsets and nimbus's REST API "
              "(/api/v1/...) for cluster state"},
    {"kill_workers", "stop the supervisor instead ('tempest supervisor' stops its workers on "
                     "SIGTERM); to restart one topology's workers, 'tempest rebalance' it"},
    {"set_log_level", "the daemons and workers log at INFO with no runtime level control; "
                      "daemons log to their stderr, workers to "
                      "{storm.local.dir}/supervisor/workers/PORT/worker.log (client verbs take "
                      "--verbose)"},
    {"heartbeats", "worker heartbeats live in ZooKeeper; 'tempest list' and GET "
                   "/api/v1/topology/ID show each topology's workers and executors"},
    {"blobstore", "Tempest has no blobstore: topology files travel with 'tempest submit "
                  "--resources DIR' and are fetched by every worker"},
    {"upload_credentials", "Tempest has no credential push; nimbus's REST API takes a "
                           "bearer token (--token-file)"},
    {"node-health-check", "supervisors have no health-check scripts; watch GET "
                          "/api/v1/supervisor/summary"},
};

// Storm's `localconfvalue KEY`: the value the daemons would see, printed as
// "KEY: VALUE" (as Storm does); "KEY: null" when it is not set.
int RunLocalConfValue(const std::string& key, const GlobalOptions& globals) {
  absl::StatusOr<api::Config> config = LoadDaemonConfig(globals);
  if (!config.ok()) return Fail(std::string(config.status().message()));
  const api::Value* value = config->Find(key);
  if (value == nullptr) {
    std::printf("%s: null\n", key.c_str());
    return 0;
  }
  const std::string* text = value->TryString();
  std::printf("%s: %s\n", key.c_str(), text != nullptr ? text->c_str() : value->DebugString().c_str());
  return 0;
}

// Storm's `remoteconfvalue KEY`: the value in nimbus's own config, from
// GET /api/v1/cluster/configuration, printed as "KEY: VALUE" ("KEY: null"
// when nimbus has no such key; credentials come back "<redacted>").
int RunRemoteConfValue(const std::string& key, const GlobalOptions& globals) {
  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  absl::StatusOr<nlohmann::json> config = client->Get("/api/v1/cluster/configuration");
  if (!config.ok()) return Fail(std::string(config.status().message()));
  auto it = config->find(key);
  if (it == config->end() || it->is_null()) {
    std::printf("%s: null\n", key.c_str());
  } else {
    std::printf("%s: %s\n", key.c_str(), it->is_string() ? it->get<std::string>().c_str()
                                                           : it->dump().c_str());
  }
  return 0;
}

}  // namespace

void RegisterStormVerbs(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto key = std::make_shared<std::string>();
  CLI::App* local = app.add_subcommand(
      "localconfvalue", "Print one key of the local config (Storm's defaults, --config, -c)");
  local->add_option("key", *key, "config key, e.g. storm.zookeeper.servers")->required();
  auto config_options = std::make_shared<SubcommandConfigOptions>(local, globals);
  set.Add(local, [key, config_options, &globals] {
    config_options->Apply();
    return RunLocalConfValue(*key, globals);
  });

  auto remote_key = std::make_shared<std::string>();
  CLI::App* remote = app.add_subcommand(
      "remoteconfvalue", "Print one key of nimbus's config (Storm's remoteconfvalue)");
  remote->add_option("key", *remote_key, "config key, e.g. storm.zookeeper.servers")->required();
  set.Add(remote, [remote_key, &globals] { return RunRemoteConfValue(*remote_key, globals); });

  for (const StormVerb& verb : kStormOnlyVerbs) {
    CLI::App* sub = app.add_subcommand(verb.name, std::string("Storm's '") + verb.name +
                                                      "': no counterpart here (says why)");
    // Whatever follows (`blobstore list`, `jar app.jar Main`) belongs to the
    // Storm verb; it must not fall through to the top level as an error.
    sub->fallthrough(false);
    sub->prefix_command();
    sub->group("Storm verbs without a counterpart");
    const std::string line = std::string("'") + verb.name + "' is a Storm command with no "
                             "counterpart in Tempest: " + verb.why;
    set.Add(sub, [line] { return Fail(line, 2); });
  }
}

}  // namespace tempest::cli
