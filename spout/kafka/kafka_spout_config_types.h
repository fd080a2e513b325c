#ifndef TEMPEST_SPOUT_KAFKA_KAFKA_SPOUT_CONFIG_TYPES_H_
#define TEMPEST_SPOUT_KAFKA_KAFKA_SPOUT_CONFIG_TYPES_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spout/kafka/retry_schedule.h"

namespace tempest::spout {

// The data every Flux form of the KafkaSpout is parsed into, and the names
// the parsers share: ParseKafkaSpoutArgs (kafka_spout_config.h) for
// tempest.KafkaSpout and storm-kafka, ParseKafkaClientSpoutArgs
// (kafka_client_spout_config.h) for storm-kafka-client.

// What a commit means for a partition (storm-kafka-client's names).
//   kAtLeastOnce: commit the first offset not yet acked; tuples are tracked.
//   kAtMostOnce:  commit the fetched position before emitting; untracked.
//   kNoGuarantee: commit the fetched position on the timer; untracked.
enum class ProcessingGuarantee { kAtLeastOnce, kAtMostOnce, kNoGuarantee };
std::string_view ProcessingGuaranteeName(ProcessingGuarantee g);

// What to do when the offset to fetch no longer exists (retention).
enum class OutOfRangePolicy { kEarliest, kLatest, kFail };
std::string_view OutOfRangePolicyName(OutOfRangePolicy p);

// How a record becomes a tuple.
//   kRecord: fields topic, partition, offset, key, value (tempest.KafkaSpout).
//   kRaw:    one field "bytes" (storm-kafka's default RawMultiScheme).
//   kString: one field "str" (StringScheme in SchemeAsMultiScheme).
//   kValue:  one field "value" (storm-kafka-client's OnlyValueRecordTranslator).
enum class RecordScheme { kRecord, kRaw, kString, kValue };

// Kafka's own ZooKeeper registry (storm-kafka ZkHosts).
struct BrokerZkHosts {
  std::string connect;  // brokerZkStr
  std::string path = "/brokers";
};

inline constexpr char kTempestKafkaSpoutClass[] = "tempest.KafkaSpout";
inline constexpr char kStormKafkaSpoutClass[] = "org.apache.storm.kafka.KafkaSpout";
// storm-kafka-client (Storm 2.x): offsets in a Kafka consumer group.
inline constexpr char kKafkaClientSpoutClass[] = "org.apache.storm.kafka.spout.KafkaSpout";
// Topology config keys (new keys start with tempest.).
inline constexpr char kMaxUncommittedOffsetsKey[] = "tempest.kafka.max.uncommitted.offsets";
inline constexpr char kPartitionRefreshSecsKey[] = "tempest.kafka.partition.refresh.secs";
inline constexpr int64_t kDefaultMaxUncommittedOffsets = 100'000;

// Everything a KafkaSpout needs to know, parsed from either Flux form. Plain
// data; build it with ParseKafkaSpoutArgs, then ResolveKafkaSpoutConfig at
// Open with the topology config (fallbacks for ZooKeeper and limits).
struct KafkaSpoutConfig {
  std::string bootstrap_servers;           // empty: discover through broker_zk
  std::optional<BrokerZkHosts> broker_zk;  // legacy ZkHosts
  std::vector<std::string> topics;
  std::string zk_root;
  std::string id;
  std::vector<std::string> zk_servers;  // empty: storm.zookeeper.servers
  std::optional<int64_t> zk_port;       // unset: storm.zookeeper.port
  ProcessingGuarantee guarantee = ProcessingGuarantee::kAtLeastOnce;
  int64_t start_offset_time = -2;
  bool ignore_zk_offsets = false;
  int64_t max_offset_behind = std::numeric_limits<int64_t>::max();
  int64_t state_update_interval_ms = 2000;
  // tempest.KafkaSpout backs off by default; the storm-kafka form starts from
  // StormKafkaRetryDefaults() (immediate, forever) as storm-kafka did.
  RetryOptions retry = TempestRetryDefaults();
  OutOfRangePolicy out_of_range = OutOfRangePolicy::kEarliest;
  std::string dead_letter_topic;
  std::optional<int64_t> max_uncommitted_offsets;  // unset: topology key, then default
  std::optional<int64_t> partition_refresh_secs;   // unset: topology key, then 60
  // Offset journal bounds (spout/kafka/offsets/offset_journal.h keys); 0 entries: no journal.
  int64_t journal_max_entries = 1000;
  int64_t journal_retention_secs = 7 * 24 * 3600;
  bool stop_at_end = false;
  std::string output_stream;  // empty: default stream
  RecordScheme scheme = RecordScheme::kRecord;
  std::map<std::string, std::string> kafka_properties;  // kafka.* without the prefix
  bool storm_kafka_form = false;  // parsed from org.apache.storm.kafka.KafkaSpout
  // Non-empty: the offsets live in this Kafka consumer group, as
  // storm-kafka-client keeps them (org.apache.storm.kafka.spout.KafkaSpout);
  // the group's coordinator assigns the partitions and fences commits, and
  // no ZooKeeper is used.
  std::string group_id;
  bool emit_null_tuples = false;         // storm-kafka-client setEmitNullTuples
  bool tuple_tracking_enforced = false;  // storm-kafka-client setTupleTrackingEnforced

  // Several topics get the {topic}/ level in the ZooKeeper paths.
  bool topic_level() const { return topics.size() > 1; }
  bool offsets_in_kafka() const { return !group_id.empty(); }
  std::vector<std::string> OutputFields() const;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_KAFKA_SPOUT_CONFIG_TYPES_H_
