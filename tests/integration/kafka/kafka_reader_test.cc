// KafkaReader against a real Kafka-protocol endpoint (DevKafka over TCP).
#include "common/kafka/kafka_reader.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"

namespace tempest::kafka {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::DevKafka;

std::vector<DevKafka::Record> Numbered(int from, int to) {
  std::vector<DevKafka::Record> out;
  for (int i = from; i < to; ++i) out.push_back({absl::StrCat("key-", i), absl::StrCat(i)});
  return out;
}

class KafkaReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = DevKafka::Start(1, {{"events", 3}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    KafkaReaderOptions options;
    options.bootstrap_servers = kafka_->bootstrap_servers();
    auto reader = KafkaReader::Create(options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    reader_ = std::move(*reader);
  }

  // Polls until `want` records arrived (or 30 s); returns their offsets and
  // values, and collects events.
  std::vector<std::pair<int64_t, std::string>> Read(size_t want,
                                                    std::vector<PartitionEvent>* events) {
    std::vector<std::pair<int64_t, std::string>> got;
    testing::Eventually(seconds(30), [&] {
      auto seen = reader_->Poll(1000, milliseconds(100), [&](const KafkaRecord& r) {
        got.emplace_back(r.offset, std::string(r.value));
      });
      if (events != nullptr) events->insert(events->end(), seen.begin(), seen.end());
      return got.size() >= want;
    }, milliseconds(1));
    return got;
  }

  std::unique_ptr<DevKafka> kafka_;
  std::unique_ptr<KafkaReader> reader_;
};

TEST_F(KafkaReaderTest, ReadsFromTheGivenOffsetInOrder) {
  ASSERT_TRUE(kafka_->Produce("events", 1, Numbered(0, 500)).ok());
  ASSERT_TRUE(reader_->Start({"events", 1}, 200).ok());
  auto got = Read(300, nullptr);
  ASSERT_EQ(got.size(), 300u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, static_cast<int64_t>(200 + i));
    EXPECT_EQ(got[i].second, absl::StrCat(200 + i));
  }
}

TEST_F(KafkaReaderTest, ReportsEndOfPartition) {
  ASSERT_TRUE(kafka_->Produce("events", 0, Numbered(0, 10)).ok());
  ASSERT_TRUE(reader_->Start({"events", 0}, 0).ok());
  std::vector<PartitionEvent> events;
  bool saw_end = testing::Eventually(seconds(30), [&] {
    auto seen = reader_->Poll(1000, milliseconds(100), [](const KafkaRecord&) {});
    for (const auto& e : seen) {
      if (e.kind == PartitionEvent::Kind::kEndOfPartition && e.offset == 10) return true;
    }
    return false;
  });
  EXPECT_TRUE(saw_end);
}

TEST_F(KafkaReaderTest, AnOffsetBeyondTheLogIsReportedOutOfRange) {
  ASSERT_TRUE(kafka_->Produce("events", 2, Numbered(0, 5)).ok());
  ASSERT_TRUE(reader_->Start({"events", 2}, 1000).ok());
  bool out_of_range = testing::Eventually(seconds(30), [&] {
    for (const auto& e : reader_->Poll(100, milliseconds(100), [](const KafkaRecord&) {})) {
      if (e.kind == PartitionEvent::Kind::kOutOfRange) {
        EXPECT_EQ(e.partition, (TopicPartition{"events", 2}));
        return true;
      }
    }
    return false;
  });
  EXPECT_TRUE(out_of_range);
}

TEST_F(KafkaReaderTest, MetadataWatermarksAndStartOffsets) {
  ASSERT_TRUE(kafka_->Produce("events", 0, Numbered(0, 42)).ok());
  auto parts = reader_->Partitions({"events"}, seconds(10));
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(*parts, (std::vector<TopicPartition>{{"events", 0}, {"events", 1}, {"events", 2}}));
  auto marks = reader_->Watermarks({"events", 0}, seconds(10));
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(marks->second, 42);
  EXPECT_EQ(reader_->OffsetForTime({"events", 0}, -2, seconds(10)).value_or(-9), 0);
  EXPECT_EQ(reader_->OffsetForTime({"events", 0}, -1, seconds(10)).value_or(-9), 42);
  auto leader = reader_->Leader({"events", 0}, seconds(10));
  EXPECT_EQ(leader.first, "127.0.0.1");
  EXPECT_GT(leader.second, 0);
}

TEST_F(KafkaReaderTest, RestartRepositionsAndStopDropsRecords) {
  ASSERT_TRUE(kafka_->Produce("events", 1, Numbered(0, 100)).ok());
  ASSERT_TRUE(reader_->Start({"events", 1}, 90).ok());
  auto first = Read(10, nullptr);
  ASSERT_EQ(first.front().first, 90);
  ASSERT_TRUE(reader_->Start({"events", 1}, 5).ok());
  std::vector<std::pair<int64_t, std::string>> again;
  testing::Eventually(seconds(30), [&] {
    reader_->Poll(1000, milliseconds(100), [&](const KafkaRecord& r) {
      again.emplace_back(r.offset, std::string(r.value));
    });
    return again.size() >= 95;
  });
  ASSERT_GE(again.size(), 95u);
  EXPECT_EQ(again.front().first, 5);
  ASSERT_TRUE(reader_->Stop({"events", 1}).ok());
  EXPECT_FALSE(reader_->IsStarted({"events", 1}));
}

}  // namespace
}  // namespace tempest::kafka
