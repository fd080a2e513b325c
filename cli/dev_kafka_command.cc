#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/zk_client_auth.h"
#include "common/coord/zk_session.h"
#include "common/core/status_macros.h"
#include "common/kafka/dev_kafka_cluster.h"
#include "common/kafka/kafka_broker_registry.h"

namespace tempest::cli {
namespace {

// Writes `nodes` into ZooKeeper, creating parents and overwriting existing
// nodes; ephemeral ones live on `session`. Synchronous, on the caller's
// thread (with the session's deadlines).
absl::Status WriteRegistryNodes(coord::ZkSession& session,
                                const std::vector<kafka::RegistryNode>& nodes) {
  for (const kafka::RegistryNode& node : nodes) {
    coord::ZkCreateOptions options;
    options.mode = node.ephemeral ? coord::ZkCreateMode::kEphemeral
                                  : coord::ZkCreateMode::kPersistent;
    options.create_parents = true;
    // Kafka keeps its registry readable by every client (broker addresses
    // and partition counts are no secret), and legacy ZkHosts spouts read it
    // on their topology's own identity: writable only by this registry.
    options.acl = session.acl_policy().authenticated ? coord::CreatorAllWorldReadAcl()
                                                     : coord::OpenAcl();
    auto created = session.Create(node.path, node.data, options);
    if (created.ok()) continue;
    if (created.status().code() != absl::StatusCode::kAlreadyExists) return created.status();
    if (auto set = session.Set(node.path, node.data); !set.ok()) return set.status();
  }
  return absl::OkStatus();
}

// Publishes the broker registry of the cluster at `bootstrap_servers` for
// `topics` under `root`.
absl::Status PublishRegistryOf(coord::ZkSession& session, const std::string& root,
                               const std::string& bootstrap_servers,
                               const std::vector<std::string>& topics) {
  ASSIGN_OR_RETURN(const kafka::BrokerLayout layout,
                   kafka::ReadBrokerLayout(bootstrap_servers, topics));
  return WriteRegistryNodes(session, kafka::BrokerRegistryNodes(root, layout));
}

// Republishes the registry whenever the cluster's topics or partition counts
// change (a producer auto-creating a topic, as kcat does), every 2 s, until a
// stop signal: legacy ZkHosts spouts discover partitions from the registry.
void KeepRegistryCurrent(coord::ZkSession& session, const std::string& bootstrap_servers) {
  std::map<std::string, size_t> published;
  while (WaitStopSignalFor(std::chrono::seconds(2)) == 0) {
    absl::StatusOr<kafka::BrokerLayout> layout = kafka::ReadBrokerLayout(bootstrap_servers, {});
    if (!layout.ok()) continue;
    std::map<std::string, size_t> now;
    for (const kafka::RegistryTopic& t : layout->topics) now[t.name] = t.partitions.size();
    if (now == published) continue;
    const std::vector<kafka::RegistryNode> nodes = kafka::BrokerRegistryNodes("/brokers", *layout);
    if (absl::Status s = WriteRegistryNodes(session, nodes); !s.ok()) {
      std::fprintf(stderr, "tempest: updating the broker registry: %s\n",
                   std::string(s.message()).c_str());
      continue;
    }
    published = std::move(now);
  }
}

struct DevKafkaOptions {
  int brokers = 1;
  std::vector<std::string> topics;  // NAME:PARTITIONS
  std::string zk;                   // publish a broker registry here
};

int RunDevKafka(const DevKafkaOptions& opts, const GlobalOptions& globals) {
  BlockStopSignals();
  std::vector<kafka::DevKafkaTopic> topics;
  for (const auto& spec : opts.topics) {
    auto topic = kafka::ParseDevKafkaTopic(spec);
    if (!topic.ok()) return Fail(std::string(topic.status().message()), 2);
    topics.push_back(*topic);
  }
  auto cluster = kafka::DevKafkaCluster::Create(opts.brokers, topics);
  if (!cluster.ok()) return Fail(std::string(cluster.status().message()));
  // With --zk, publish a Kafka-style broker registry so legacy ZkHosts
  // configurations find this cluster. Broker ids are ephemeral on our
  // session: they vanish when this command stops.
  std::unique_ptr<coord::ZkSession> zk;
  if (!opts.zk.empty()) {
    coord::ZkSession::Options zk_options;
    zk_options.connect_string = opts.zk;
    // A ZooKeeper with digest ACLs (a `tempest dev` cluster's) gets the
    // registry under its identity, so no anonymous client can redirect the
    // spouts' broker lookups.
    absl::StatusOr<api::Config> config = LoadDaemonConfig(globals);
    if (!config.ok()) return Fail(std::string(config.status().message()), 2);
    absl::StatusOr<coord::ZkAuthConfig> auth = ResolveClientZkAuth(*config, opts.zk);
    if (!auth.ok()) return Fail(std::string(auth.status().message()), 2);
    zk_options.config.auth = *std::move(auth);
    auto session = coord::ZkSession::Create(zk_options);
    if (!session.ok())
      return Fail("ZooKeeper " + opts.zk + ": " + std::string(session.status().message()));
    zk = std::move(*session);
    if (auto s = zk->WaitConnected(std::chrono::seconds(30)); !s.ok()) {
      return Fail("ZooKeeper " + opts.zk + ": " + std::string(s.message()));
    }
    std::vector<std::string> names;
    for (const auto& t : topics) names.push_back(t.name);
    if (auto s = PublishRegistryOf(*zk, "/brokers", (*cluster)->bootstrap_servers(), names);
        !s.ok()) {
      return Fail("publishing the broker registry: " + std::string(s.message()));
    }
  }
  std::printf("bootstrap.servers=%s\n", (*cluster)->bootstrap_servers().c_str());
  std::fflush(stdout);
  std::fprintf(stderr,
               "tempest: dev Kafka with %d broker(s); keeps ~5 MiB or 100k messages per "
               "partition (oldest dropped); Ctrl-C stops it\n",
               opts.brokers);
  if (zk == nullptr) {
    WaitForStopSignal();
    return 0;
  }
  std::fprintf(stderr,
               "tempest: broker registry published under %s/brokers (topics created later are "
               "added within 2 s)\n",
               opts.zk.c_str());
  KeepRegistryCurrent(*zk, (*cluster)->bootstrap_servers());
  return 0;
}

}  // namespace

void RegisterDevKafkaCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto opts = std::make_shared<DevKafkaOptions>();
  auto* sub = app.add_subcommand(
      "dev-kafka", "Run a Kafka-protocol dev cluster (librdkafka mock) in the foreground");
  sub->add_option("--brokers", opts->brokers, "number of brokers")->check(Bounded(1, 64));
  sub->add_option("--topic", opts->topics, "topic to create, NAME:PARTITIONS (repeatable)");
  sub->add_option("--zk", opts->zk, "also publish a Kafka-style broker registry in this ZooKeeper");
  SubcommandConfigOptions config(sub, globals);
  set.Add(sub, [opts, config, &globals] {
    config.Apply();
    return RunDevKafka(*opts, globals);
  });
}

}  // namespace tempest::cli
