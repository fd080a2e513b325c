#ifndef TEMPEST_SPOUT_KAFKA_SPOUT_CONFIG_H_
#define TEMPEST_SPOUT_KAFKA_SPOUT_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/config.h"
#include "spout/kafka/kafka_spout_config_types.h"

namespace tempest::spout {

// The KafkaSpoutConfig data and names live in kafka_spout_config_types.h,
// shared with storm-kafka-client's parser (kafka_client_spout_config.h),
// which this file's ParseKafkaSpoutArgs hands that form to.

// Parses the Flux definition of either spout class (see spout/README.md for
// the keys). InvalidArgument names the first bad or missing property.
absl::StatusOr<KafkaSpoutConfig> ParseKafkaSpoutArgs(const api::ComponentArgs& args);

// The storm-kafka Flux component classes (beans) ParseKafkaSpoutArgs
// understands: ZkHosts, SpoutConfig, the schemes and the retry manager.
std::vector<std::string> KafkaSpoutBeanClasses();

// The warning the storm-kafka form logs once at open when its retry settings
// re-emit a failed tuple at once (storm-kafka's retryInitialDelayMs 0), saying
// how to change that; nullopt for tempest.KafkaSpout or a configured delay.
std::optional<std::string> ImmediateRetryWarning(const KafkaSpoutConfig& config);

// Fills the fallbacks from the topology config: zkServers/zkPort from
// storm.zookeeper.servers/port, maxUncommittedOffsets and the refresh period
// from their tempest.kafka.* keys. Returns the ZooKeeper connect string for
// offsets ("h1:p,h2:p").
absl::StatusOr<std::string> ResolveKafkaSpoutConfig(KafkaSpoutConfig& config,
                                                    const api::Config& topology_config);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_SPOUT_CONFIG_H_
