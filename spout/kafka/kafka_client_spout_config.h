#ifndef TEMPEST_SPOUT_KAFKA_CLIENT_SPOUT_CONFIG_H_
#define TEMPEST_SPOUT_KAFKA_CLIENT_SPOUT_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "spout/kafka/kafka_spout_config_types.h"

namespace tempest::spout {

// Storm 2.x's storm-kafka-client spout as Flux writes it:
//   KafkaSpout(ref KafkaSpoutConfig(ref KafkaSpoutConfig$Builder(bootstrap, topics)))
// with the builder's properties and configMethods (setProp, setGroupId,
// setFirstPollOffsetStrategy, setProcessingGuarantee, setOffsetCommitPeriodMs,
// setMaxUncommittedOffsets, setRetry(KafkaSpoutRetryExponentialBackoff),
// setRecordTranslator, setEmitNullTuples, setTupleTrackingEnforced, ...),
// read into the one KafkaSpoutConfig with storm-kafka-client's defaults
// (spout/README.md lists them). The offsets live in the consumer group
// (`group.id`, default: the spout's component id). InvalidArgument names the
// first setting that cannot be honoured.
absl::StatusOr<KafkaSpoutConfig> ParseKafkaClientSpoutArgs(const api::ComponentArgs& args);

// The storm-kafka-client Flux component classes (beans) that parse
// understands, so `migrate check` does not ask for plugins for them.
std::vector<std::string> KafkaClientBeanClasses();

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_CLIENT_SPOUT_CONFIG_H_
