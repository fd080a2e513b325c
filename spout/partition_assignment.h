#ifndef TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_
#define TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_

#include <string>
#include <tuple>
#include <vector>

namespace tempest::spout {

struct TopicPartition {
  std::string topic;
  int partition = 0;
  friend bool operator==(const TopicPartition&, const TopicPartition&) = default;
  friend auto operator<=>(const TopicPartition& a, const TopicPartition& b) {
    return std::tie(a.topic, a.partition) <=> std::tie(b.topic, b.partition);
  }
};

// storm-kafka's rule: sort all partitions by (topic, partition); spout task
// with index i of T tasks takes list positions i, i+T, i+2T, ... Tasks beyond
// the partition count get nothing. Pure function; any thread.
std::vector<TopicPartition> PartitionsForTask(std::vector<TopicPartition> all, int task_index,
                                              int task_count);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_
