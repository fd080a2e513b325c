#ifndef TEMPEST_COMMON_KAFKA_TOPIC_PARTITION_H_
#define TEMPEST_COMMON_KAFKA_TOPIC_PARTITION_H_

#include <string>
#include <tuple>

namespace tempest::kafka {

// One partition of one topic; ordered by (topic, partition).
struct TopicPartition {
  std::string topic;
  int partition = 0;
  friend bool operator==(const TopicPartition&, const TopicPartition&) = default;
  friend auto operator<=>(const TopicPartition& a, const TopicPartition& b) {
    return std::tie(a.topic, a.partition) <=> std::tie(b.topic, b.partition);
  }
};

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_TOPIC_PARTITION_H_
