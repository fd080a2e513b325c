#ifndef TEMPEST_STUDY_PIPELINE_TOPOLOGY_H_
#define TEMPEST_STUDY_PIPELINE_TOPOLOGY_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "study/scenario.h"

namespace tempest::study {

// Where every pipeline's spout commits its offsets in ZooKeeper.
inline constexpr const char* kStudyOffsetsRoot = "/study-offsets";

// The Flux topology of one pipeline: KafkaSpout -> transform -> sink, plus an
// effectively-once sink when `dedup_sink_log` is set.
struct PipelineSpec {
  std::string name;        // topology name and spout id
  std::string guarantee;   // at-least-once | at-most-once | no-guarantee
  std::string topic;
  std::string bootstrap_servers;
  std::vector<std::string> zk_servers;  // for the spout's offsets
  std::string zk_root;
  // The spout's own digest credentials ("user:password"; empty: none), set in
  // the topology's storm.zookeeper.auth.* so that its offset nodes are
  // creator-only (zk-acl-revoked).
  std::string zk_auth_payload;
  std::string sink_log;
  std::string dedup_sink_log;  // empty: no effectively-once sink
  std::string fault_switch_file;
  double fail_fraction = 0;
  int64_t delay_micros = 0;
  // The transform's tasks (0: one per executor). rebalance gives it
  // kRebalancedExecutors tasks on one executor, so that it can be split.
  int transform_tasks = 0;
  // The spout's id (its offsets' node under zk_root); empty: `name`. An
  // upgrade's copy keeps the original's, so its offsets stay in place.
  std::string spout_id;
  uint64_t seed = 1;
  // storm.zookeeper.session.timeout of the topology, so that the spout's
  // own ZooKeeper session times out like the world's daemons (0: not set).
  int zk_session_timeout_ms = 0;
};

// The Flux YAML `tempest submit` runs for `spec`. Pure; any thread.
std::string PipelineTopologyYaml(const PipelineSpec& spec);

// What the pipelines of one scenario share.
struct PipelineSite {
  std::string topic;
  std::string bootstrap_servers;
  std::vector<std::string> zk_servers;
  std::filesystem::path dir;  // the scenario's directory; each guarantee gets dir/<guarantee>/
  std::string fault_switch_file;
  uint64_t seed = 1;
  std::string spout_credentials;  // for scenarios whose spouts authenticate
  int zk_session_timeout_ms = 0;  // PipelineSpec::zk_session_timeout_ms
};

// The pipeline of `guarantee` in `scenario`: its topology name
// ("study-<scenario>-alo"), its sink logs under site.dir/<guarantee>/ (the
// at-least-once one also feeds an effectively-once sink), and the transform's
// fault settings for bolt-failures and slow-bolt; under zk-acl-revoked the
// spout authenticates with site.spout_credentials; under rebalance the
// transform has kRebalancedExecutors tasks. Pure; any thread.
PipelineSpec PipelineFor(const Scenario& scenario, const std::string& guarantee,
                         const PipelineSite& site);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_PIPELINE_TOPOLOGY_H_
