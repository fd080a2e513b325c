#include "spout/kafka/offsets/partition_assignment.h"

#include <algorithm>

namespace tempest::spout {

std::vector<TopicPartition> PartitionsForTask(std::vector<TopicPartition> all, int task_index,
                                              int task_count) {
  std::vector<TopicPartition> mine;
  if (task_count <= 0 || task_index < 0 || task_index >= task_count) return mine;
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  for (size_t i = static_cast<size_t>(task_index); i < all.size();
       i += static_cast<size_t>(task_count)) {
    mine.push_back(all[i]);
  }
  return mine;
}

}  // namespace tempest::spout
