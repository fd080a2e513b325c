// The KafkaSpout's per-partition record window: waiting vs retained records,
// lookups by offset with and without gaps, release order and trimming.
#include "spout/kafka/record_window.h"

#include <gtest/gtest.h>

#include <string>

namespace tempest::spout {
namespace {

void Fetch(RecordWindow& w, int64_t offset) {
  RecordWindow::Record& r = w.Append(offset);
  r.value = std::to_string(offset);
  r.has_value = true;
}

TEST(RecordWindowTest, WaitingRecordsComeOutInOffsetOrder) {
  RecordWindow w;
  EXPECT_FALSE(w.HasWaiting());
  for (int64_t o = 5; o < 8; ++o) Fetch(w, o);
  EXPECT_EQ(w.waiting_count(), 3u);
  for (int64_t o = 5; o < 8; ++o) {
    ASSERT_TRUE(w.HasWaiting());
    EXPECT_EQ(w.FrontWaiting().offset, o);
    EXPECT_EQ(w.FrontWaiting().value, std::to_string(o));
    w.PopWaiting(true);
  }
  EXPECT_FALSE(w.HasWaiting());
  EXPECT_EQ(w.retained_count(), 3u);
}

TEST(RecordWindowTest, OnlyEmittedRecordsAreRetainedAndFound) {
  RecordWindow w;
  for (int64_t o = 0; o < 4; ++o) Fetch(w, o);
  w.PopWaiting(true);
  w.PopWaiting(true);
  ASSERT_NE(w.Find(0), nullptr);
  EXPECT_EQ(w.Find(1)->value, "1");
  EXPECT_EQ(w.Find(2), nullptr);  // fetched, not yet emitted
  EXPECT_EQ(w.Find(9), nullptr);
  EXPECT_FALSE(w.Release(2));
}

TEST(RecordWindowTest, ReleaseOutOfOrderKeepsTheRestFindable) {
  RecordWindow w;
  for (int64_t o = 10; o < 15; ++o) Fetch(w, o);
  for (int i = 0; i < 5; ++i) w.PopWaiting(true);
  EXPECT_TRUE(w.Release(12));
  EXPECT_FALSE(w.Release(12));  // already released
  EXPECT_EQ(w.Find(12), nullptr);
  EXPECT_EQ(w.retained_count(), 4u);
  EXPECT_TRUE(w.Release(10));  // front trimmed; 11 is next
  EXPECT_EQ(w.Find(11)->value, "11");
  EXPECT_EQ(w.Find(13)->value, "13");
  EXPECT_TRUE(w.Release(11));  // trims past the released 12
  EXPECT_EQ(w.retained_count(), 2u);
  EXPECT_EQ(w.Find(14)->value, "14");
  EXPECT_TRUE(w.Release(13));
  EXPECT_TRUE(w.Release(14));
  EXPECT_EQ(w.retained_count(), 0u);
  EXPECT_EQ(w.Find(14), nullptr);
  // Appending continues after a fully released window.
  Fetch(w, 15);
  w.PopWaiting(true);
  EXPECT_EQ(w.Find(15)->value, "15");
}

TEST(RecordWindowTest, GapsInOffsetsAreFoundBySearch) {
  RecordWindow w;
  for (int64_t o : {100, 101, 105, 106, 200, 1000}) Fetch(w, o);
  for (int i = 0; i < 6; ++i) w.PopWaiting(true);
  for (int64_t o : {100, 101, 105, 106, 200, 1000}) {
    ASSERT_NE(w.Find(o), nullptr) << o;
    EXPECT_EQ(w.Find(o)->offset, o);
  }
  for (int64_t o : {99, 102, 104, 107, 199, 201, 999, 1001}) EXPECT_EQ(w.Find(o), nullptr) << o;
  EXPECT_TRUE(w.Release(100));
  EXPECT_TRUE(w.Release(105));
  EXPECT_EQ(w.Find(101)->offset, 101);
  EXPECT_EQ(w.Find(106)->offset, 106);
  EXPECT_EQ(w.Find(1000)->offset, 1000);
}

TEST(RecordWindowTest, UnretainedEmitsAreDroppedAtOnce) {
  RecordWindow w;
  for (int64_t o = 0; o < 3; ++o) Fetch(w, o);
  w.FrontWaiting().value.clear();  // payload moved out by the emitter
  w.PopWaiting(false);
  EXPECT_EQ(w.retained_count(), 0u);
  EXPECT_EQ(w.Find(0), nullptr);
  EXPECT_EQ(w.FrontWaiting().offset, 1);
  EXPECT_EQ(w.waiting_count(), 2u);
}

TEST(RecordWindowTest, ClearWaitingKeepsRetainedRecords) {
  RecordWindow w;
  for (int64_t o = 0; o < 4; ++o) Fetch(w, o);
  w.PopWaiting(true);
  w.ClearWaiting();
  EXPECT_FALSE(w.HasWaiting());
  EXPECT_EQ(w.Find(0)->value, "0");
  w.Clear();
  EXPECT_EQ(w.Find(0), nullptr);
  EXPECT_EQ(w.retained_count(), 0u);
}

TEST(RecordWindowTest, GrowsAndWrapsWithoutLosingRecords) {
  RecordWindow w;
  int64_t next = 0;
  int64_t acked = 0;
  // Several bursts: the ring grows and wraps around, and
  // every retained record stays findable by offset throughout.
  for (int burst = 0; burst < 4; ++burst) {
    const int64_t n = 1000 * (burst + 1);
    for (int64_t i = 0; i < n; ++i) Fetch(w, next++);
    while (w.HasWaiting()) w.PopWaiting(true);
    // Ack all but the first record of the burst, from the back.
    const int64_t first = acked;
    for (int64_t o = next - 1; o > first; --o) ASSERT_TRUE(w.Release(o)) << o;
    EXPECT_EQ(w.retained_count(), 1u);
    ASSERT_NE(w.Find(first), nullptr);
    EXPECT_EQ(w.Find(first)->value, std::to_string(first));
    ASSERT_TRUE(w.Release(first));
    EXPECT_EQ(w.retained_count(), 0u);
    acked = next;
  }
  // Interleaved: fetch 3, emit 2, ack the oldest, over many wraps.
  int64_t oldest = next;
  for (int round = 0; round < 5000; ++round) {
    for (int i = 0; i < 3; ++i) Fetch(w, next++);
    w.PopWaiting(true);
    w.PopWaiting(true);
    ASSERT_TRUE(w.Release(oldest)) << oldest;
    ++oldest;
  }
  EXPECT_EQ(w.retained_count(), 5000u);
  EXPECT_EQ(w.waiting_count(), 5000u);
  for (int64_t o = oldest; o < oldest + 5000; ++o) {
    ASSERT_NE(w.Find(o), nullptr) << o;
    EXPECT_EQ(w.Find(o)->value, std::to_string(o));
  }
  EXPECT_EQ(w.FrontWaiting().offset, oldest + 5000);
}

}  // namespace
}  // namespace tempest::spout
