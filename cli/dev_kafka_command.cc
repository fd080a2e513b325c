#include <cstdio>
#include <memory>

#include "cli/cli_text.h"
#include "cli/commands.h"
#include "common/coord/zk_session.h"
#include "spout/dev_kafka_cluster.h"
#include "spout/kafka_broker_registry.h"

namespace tempest::cli {
namespace {

struct DevKafkaOptions {
  int brokers = 1;
  std::vector<std::string> topics;  // NAME:PARTITIONS
  std::string zk;                   // publish a broker registry here
};

int RunDevKafka(const DevKafkaOptions& opts) {
  BlockStopSignals();
  std::vector<spout::DevKafkaTopic> topics;
  for (const auto& spec : opts.topics) {
    auto topic = spout::ParseDevKafkaTopic(spec);
    if (!topic.ok()) return Fail(std::string(topic.status().message()), 2);
    topics.push_back(*topic);
  }
  auto cluster = spout::DevKafkaCluster::Create(opts.brokers, topics);
  if (!cluster.ok()) return Fail(std::string(cluster.status().message()));
  // With --zk, publish a Kafka-style broker registry so legacy ZkHosts
  // configurations find this cluster. Broker ids are ephemeral on our
  // session: they vanish when this command stops.
  std::unique_ptr<coord::ZkSession> zk;
  if (!opts.zk.empty()) {
    coord::ZkSession::Options zk_options;
    zk_options.connect_string = opts.zk;
    auto session = coord::ZkSession::Create(zk_options);
    if (!session.ok())
      return Fail("ZooKeeper " + opts.zk + ": " + std::string(session.status().message()));
    zk = std::move(*session);
    if (auto s = zk->WaitConnected(std::chrono::seconds(30)); !s.ok()) {
      return Fail("ZooKeeper " + opts.zk + ": " + std::string(s.message()));
    }
    std::vector<std::string> names;
    for (const auto& t : topics) names.push_back(t.name);
    if (auto s = spout::PublishRegistryOf(*zk, "/brokers", (*cluster)->bootstrap_servers(), names);
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
  if (zk != nullptr)
    std::fprintf(stderr, "tempest: broker registry published under %s/brokers\n", opts.zk.c_str());
  WaitForStopSignal();
  return 0;
}

}  // namespace

void RegisterDevKafkaCommand(CLI::App& app, CommandSet& set, GlobalOptions&) {
  auto opts = std::make_shared<DevKafkaOptions>();
  auto* sub = app.add_subcommand(
      "dev-kafka", "Run a Kafka-protocol dev cluster (librdkafka mock) in the foreground");
  sub->add_option("--brokers", opts->brokers, "number of brokers")->check(Bounded(1, 64));
  sub->add_option("--topic", opts->topics, "topic to create, NAME:PARTITIONS (repeatable)");
  sub->add_option("--zk", opts->zk, "also publish a Kafka-style broker registry in this ZooKeeper");
  set.Add(sub, [opts] { return RunDevKafka(*opts); });
}

}  // namespace tempest::cli
