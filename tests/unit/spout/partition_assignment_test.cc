#include "spout/kafka/offsets/partition_assignment.h"

#include <gtest/gtest.h>

#include <map>

namespace tempest::spout {
namespace {

std::vector<TopicPartition> Topic(const std::string& name, int n) {
  std::vector<TopicPartition> out;
  for (int p = n - 1; p >= 0; --p) out.push_back({name, p});  // unsorted on purpose
  return out;
}

TEST(PartitionAssignmentTest, TaskIndexTakesEveryTthPosition) {
  auto all = Topic("events", 8);
  EXPECT_EQ(PartitionsForTask(all, 0, 3),
            (std::vector<TopicPartition>{{"events", 0}, {"events", 3}, {"events", 6}}));
  EXPECT_EQ(PartitionsForTask(all, 2, 3),
            (std::vector<TopicPartition>{{"events", 2}, {"events", 5}}));
}

TEST(PartitionAssignmentTest, EveryPartitionHasExactlyOneTask) {
  auto all = Topic("a", 5);
  auto b = Topic("b", 7);
  all.insert(all.end(), b.begin(), b.end());
  for (int tasks = 1; tasks <= 15; ++tasks) {
    std::map<TopicPartition, int> owners;
    for (int i = 0; i < tasks; ++i) {
      for (const auto& tp : PartitionsForTask(all, i, tasks)) owners[tp]++;
    }
    ASSERT_EQ(owners.size(), 12u) << tasks;
    for (const auto& [tp, n] : owners) ASSERT_EQ(n, 1) << tp.topic << tp.partition;
  }
}

TEST(PartitionAssignmentTest, ExtraTasksGetNothingAndBadInputIsEmpty) {
  auto all = Topic("t", 2);
  EXPECT_TRUE(PartitionsForTask(all, 3, 4).empty());
  EXPECT_TRUE(PartitionsForTask(all, 0, 0).empty());
  EXPECT_TRUE(PartitionsForTask(all, -1, 2).empty());
  EXPECT_TRUE(PartitionsForTask(all, 2, 2).empty());
}

}  // namespace
}  // namespace tempest::spout
