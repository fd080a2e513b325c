#include "study/paced_producer.h"

#include <chrono>

#include "gtest/gtest.h"

namespace tempest::study {
namespace {

TEST(PacedProducerTest, RecordsAreDueAtTheirShareOfTheRate) {
  using std::chrono::milliseconds;
  EXPECT_EQ(PacedProducer::DueAt(0, 2000), std::chrono::steady_clock::duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(PacedProducer::DueAt(2000, 2000)),
            milliseconds(1000));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(PacedProducer::DueAt(3, 2000)),
            milliseconds(1));
}

TEST(PacedProducerTest, BigKeysOverflowWhatAPartitionRetains) {
  // 20,000 records over 4 partitions: 5,000 per partition share 25 MiB.
  EXPECT_EQ(PacedProducer::BigKeyBytes(RecordLayout{20'000, 4}), 5 * 5 * 1024 * 1024 / 5000);
  EXPECT_EQ(PacedProducer::BigKeyBytes(RecordLayout{8, 4}), 900u * 1024);
  EXPECT_EQ(PacedProducer::BigKeyBytes(RecordLayout{100'000'000, 4}), 1024u);
}

}  // namespace
}  // namespace tempest::study
