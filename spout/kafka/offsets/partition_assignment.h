#ifndef TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_
#define TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_

#include <vector>

#include "common/kafka/topic_partition.h"

namespace tempest::spout {

using kafka::TopicPartition;

// storm-kafka's rule: sort all partitions by (topic, partition); spout task
// with index i of T tasks takes list positions i, i+T, i+2T, ... Tasks beyond
// the partition count get nothing. Pure function; any thread.
std::vector<TopicPartition> PartitionsForTask(std::vector<TopicPartition> all, int task_index,
                                              int task_count);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_PARTITION_ASSIGNMENT_H_
