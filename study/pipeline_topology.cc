#include "study/pipeline_topology.h"

#include "absl/strings/str_cat.h"
#include "devcluster/dev_cluster.h"

namespace tempest::study {
namespace {

using devcluster::YamlQuoted;

std::string ShortName(const std::string& guarantee) {
  if (guarantee == "at-least-once") return "alo";
  if (guarantee == "at-most-once") return "amo";
  return "none";
}

std::string SpoutGuarantee(const std::string& guarantee) {
  if (guarantee == "at-least-once") return "AT_LEAST_ONCE";
  if (guarantee == "at-most-once") return "AT_MOST_ONCE";
  return "NO_GUARANTEE";
}

// The topology's name and config: short timeouts, and the spout's ZooKeeper
// session and credentials when the scenario sets them.
std::string ConfigYaml(const PipelineSpec& spec) {
  std::string yaml = absl::StrCat(
      "# Written by `tempest study`: one guarantee's pipeline of one scenario.\n"
      "name: ",
      spec.name, "\n",
      "config:\n"
      "  topology.workers: 2\n"
      "  topology.acker.executors: 1\n"
      "  topology.message.timeout.secs: 4\n"
      "  topology.max.spout.pending: 1000\n"
      "  topology.tick.tuple.freq.secs: 1\n");
  if (spec.zk_session_timeout_ms > 0) {
    absl::StrAppend(&yaml, "  storm.zookeeper.session.timeout: ", spec.zk_session_timeout_ms,
                    "\n");
  }
  if (!spec.zk_auth_payload.empty()) {
    absl::StrAppend(&yaml, "  storm.zookeeper.auth.scheme: digest\n",
                    "  storm.zookeeper.auth.payload: ", YamlQuoted(spec.zk_auth_payload), "\n");
  }
  return yaml;
}

// The KafkaSpout reading the scenario's topic under the pipeline's guarantee.
std::string SpoutYaml(const PipelineSpec& spec) {
  const std::string& spout_id = spec.spout_id.empty() ? spec.name : spec.spout_id;
  std::string zk_servers;
  for (const std::string& s : spec.zk_servers) {
    absl::StrAppend(&zk_servers, zk_servers.empty() ? "" : ", ", YamlQuoted(s));
  }
  return absl::StrCat(
      "spouts:\n"
      "  - id: kafka\n"
      "    className: tempest.KafkaSpout\n"
      "    parallelism: 1\n"
      "    properties:\n"
      "      - {name: bootstrap.servers, value: ",
      YamlQuoted(spec.bootstrap_servers), "}\n",
      "      - {name: topics, value: ", YamlQuoted(spec.topic), "}\n",
      "      - {name: zkServers, value: [", zk_servers, "]}\n",
      "      - {name: zkRoot, value: ", YamlQuoted(spec.zk_root), "}\n",
      "      - {name: id, value: ", YamlQuoted(spout_id), "}\n",
      "      - {name: processingGuarantee, value: ", SpoutGuarantee(spec.guarantee), "}\n",
      "      - {name: startOffsetTime, value: -2}\n"
      "      - {name: stateUpdateIntervalMs, value: 500}\n");
}

// The transform (its fault settings and switch file), the sink and, for
// at-least-once, the deduplicating sink.
std::string BoltsYaml(const PipelineSpec& spec) {
  std::string yaml = absl::StrCat(
      "bolts:\n"
      "  - id: transform\n"
      "    className: tempest.IdentityBolt\n"
      "    parallelism: 1\n",
      spec.transform_tasks > 0 ? absl::StrCat("    numTasks: ", spec.transform_tasks, "\n") : "",
      "    properties:\n"
      "      - {name: fields, value: [topic, partition, offset, key, value]}\n"
      "      - {name: failFraction, value: ",
      spec.fail_fraction, "}\n", "      - {name: delayMicros, value: ", spec.delay_micros, "}\n",
      "      - {name: seed, value: ", spec.seed, "}\n",
      "      - {name: faultSwitchFile, value: ", YamlQuoted(spec.fault_switch_file), "}\n",
      "  - id: sink\n"
      "    className: tempest.VerifierBolt\n"
      "    parallelism: 1\n"
      "    properties:\n"
      "      - {name: field, value: value}\n"
      "      - {name: logPath, value: ",
      YamlQuoted(spec.sink_log), "}\n");
  if (!spec.dedup_sink_log.empty()) {
    absl::StrAppend(&yaml,
                    "  - id: dedup-sink\n"
                    "    className: tempest.VerifierBolt\n"
                    "    parallelism: 1\n"
                    "    properties:\n"
                    "      - {name: field, value: value}\n"
                    "      - {name: dedup, value: true}\n"
                    "      - {name: logPath, value: ", YamlQuoted(spec.dedup_sink_log), "}\n");
  }
  return yaml;
}

std::string StreamsYaml(const PipelineSpec& spec) {
  std::string yaml =
      "streams:\n"
      "  - {from: kafka, to: transform, grouping: {type: SHUFFLE}}\n"
      "  - {from: transform, to: sink, grouping: {type: SHUFFLE}}\n";
  if (!spec.dedup_sink_log.empty()) {
    absl::StrAppend(&yaml, "  - {from: transform, to: dedup-sink, grouping: {type: SHUFFLE}}\n");
  }
  return yaml;
}

}  // namespace

PipelineSpec PipelineFor(const Scenario& scenario, const std::string& guarantee,
                         const PipelineSite& site) {
  PipelineSpec spec;
  spec.name = absl::StrCat("study-", scenario.name, "-", ShortName(guarantee));
  spec.guarantee = guarantee;
  spec.topic = site.topic;
  spec.bootstrap_servers = site.bootstrap_servers;
  spec.zk_servers = site.zk_servers;
  spec.zk_root = kStudyOffsetsRoot;
  spec.sink_log = (site.dir / guarantee / "sink.log").string();
  if (guarantee == "at-least-once") {
    spec.dedup_sink_log = (site.dir / guarantee / "dedup-sink.log").string();
  }
  spec.fault_switch_file = site.fault_switch_file;
  spec.seed = site.seed;
  spec.zk_session_timeout_ms = site.zk_session_timeout_ms;
  if (scenario.fault == FaultKind::kBoltFailures) spec.fail_fraction = scenario.fail_fraction;
  if (scenario.fault == FaultKind::kSlowBolt) spec.delay_micros = scenario.delay_ms * 1000;
  if (scenario.fault == FaultKind::kZkAclRevoked) spec.zk_auth_payload = site.spout_credentials;
  if (scenario.fault == FaultKind::kRebalance) spec.transform_tasks = kRebalancedExecutors;
  return spec;
}

std::string PipelineTopologyYaml(const PipelineSpec& spec) {
  return absl::StrCat(ConfigYaml(spec), SpoutYaml(spec), BoltsYaml(spec), StreamsYaml(spec));
}

}  // namespace tempest::study
