#ifndef TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_
#define TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kafka/topic_partition.h"

namespace tempest::spout {

using kafka::TopicPartition;

// "topic/partition", as logs and errors name a partition.
inline std::string Describe(const TopicPartition& tp) {
  return absl::StrCat(tp.topic, "/", tp.partition);
}

// storm-kafka's rule: sort all partitions by (topic, partition); spout task
// with index i of T tasks takes list positions i, i+T, i+2T, ... Tasks beyond
// the partition count get nothing. Pure function; any thread.
std::vector<TopicPartition> PartitionsForTask(std::vector<TopicPartition> all, int task_index,
                                              int task_count);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_
