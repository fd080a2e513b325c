#include "common/api/tuple.h"

#include <memory>
#include <string>
#include <utility>

#include "common/api/fields.h"
#include "gtest/gtest.h"

namespace tempest::api {
namespace {

std::shared_ptr<const StreamSchema> WordSchema() {
  return std::make_shared<const StreamSchema>(
      StreamSchema{ComponentId("split"), DefaultStreamId(), Fields({"word", "count"})});
}

TEST(FieldsTest, IndexLookupAndSelect) {
  Fields f({"a", "b", "c"});
  EXPECT_EQ(f.size(), 3);
  EXPECT_EQ(f.IndexOf("c"), 2);
  EXPECT_FALSE(f.IndexOf("z").has_value());
  EXPECT_EQ(*f.Select({"c", "a"}), (std::vector<int>{2, 0}));
  absl::StatusOr<std::vector<int>> bad = f.Select({"a", "zz"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "field 'zz' is not in [a, b, c]");
  EXPECT_FALSE(f.HasDuplicates());
  EXPECT_TRUE(Fields({"a", "a"}).HasDuplicates());
}

TEST(TupleTest, GettersByIndexAndField) {
  Tuple t(WordSchema(), TaskId(4), {Value("storm"), Value(3)});
  ASSERT_TRUE(t.valid());
  EXPECT_EQ(t.size(), 2);
  EXPECT_EQ(t.GetString(0), "storm");
  EXPECT_EQ(t.GetInt(1), 3);
  EXPECT_EQ(t.GetByField("count").AsInt(), 3);
  EXPECT_EQ(t.Find("nope"), nullptr);
  EXPECT_TRUE(t.Contains("word"));
  EXPECT_EQ(t.source_component(), ComponentId("split"));
  EXPECT_EQ(t.source_stream().value(), "default");
  EXPECT_EQ(t.source_task(), TaskId(4));
  EXPECT_FALSE(t.IsTick());
  EXPECT_EQ(t.DebugString(), R"(split:default@4 ["storm", 3])");
}

TEST(TupleTest, UnknownFieldAborts) {
  Tuple t(WordSchema(), TaskId(1), {Value("a"), Value(1)});
  EXPECT_DEATH({ (void)t.GetByField("nope"); }, "no field 'nope'");
}

TEST(TupleTest, CopiesShareAckState) {
  TupleAnchors anchors{{RootId(11), EdgeId(5)}};
  Tuple t(WordSchema(), TaskId(1), {Value("a"), Value(1)}, anchors);
  Tuple copy = t;
  copy.XorAckVal(0xF0);
  t.XorAckVal(0x0F);
  EXPECT_EQ(t.ack_val(), 0xFFu);
  EXPECT_EQ(copy.ack_val(), 0xFFu);
  ASSERT_EQ(t.anchors().size(), 1u);
  EXPECT_EQ(t.anchors()[0].root, RootId(11));
  EXPECT_EQ(t.anchors()[0].edge, EdgeId(5));
}

TEST(TupleTest, TickTuple) {
  Tuple tick = Tuple::MakeTick(30);
  EXPECT_TRUE(tick.IsTick());
  EXPECT_EQ(tick.source_task(), TaskId(-1));
  EXPECT_EQ(tick.source_component().value(), "__system");
  EXPECT_EQ(tick.source_stream().value(), "__tick");
  EXPECT_EQ(tick.GetInt(0), 30);
}

TEST(TupleTest, OnlyTheSystemTasksTickStreamIsATick) {
  // The system task on another stream, and a component's task on the tick
  // stream's name: neither is a tick.
  auto other_stream = std::make_shared<const StreamSchema>(
      StreamSchema{ComponentId("__system"), StreamId("__metrics"), Fields({"v"})});
  auto tick_named = std::make_shared<const StreamSchema>(
      StreamSchema{ComponentId("__system"), StreamId("__tick"), Fields({"v"})});
  EXPECT_FALSE(Tuple(other_stream, TaskId(-1), {Value(1)}).IsTick());
  EXPECT_TRUE(Tuple(tick_named, TaskId(-1), {Value(1)}).IsTick());
  EXPECT_FALSE(Tuple(tick_named, TaskId(3), {Value(1)}).IsTick());
}

TEST(TupleTest, ValuesAndAnchorsAreMovedIntoTheBody) {
  TupleAnchors anchors{{RootId(7), EdgeId(9)}, {RootId(8), EdgeId(10)}};
  Values values{Value::OfBytes(std::string(100, 'p')), Value(int64_t{3})};
  Tuple t(WordSchema(), TaskId(2), std::move(values), std::move(anchors));
  ASSERT_EQ(t.size(), 2);
  EXPECT_EQ(t.GetBytes(0), std::string(100, 'p'));
  ASSERT_EQ(t.anchors().size(), 2u);
  EXPECT_EQ(t.anchors()[1].root, RootId(8));
  EXPECT_EQ(t.ack_val(), 0u);
  EXPECT_TRUE(Tuple(WordSchema(), TaskId(2), {Value(1)}).anchors().empty());
}

TEST(StrongIdTest, ComparesWithinTypeOnly) {
  EXPECT_LT(TaskId(1), TaskId(2));
  EXPECT_EQ(ComponentId("a"), ComponentId("a"));
  EXPECT_EQ(std::hash<TaskId>()(TaskId(3)), std::hash<int32_t>()(3));
  static_assert(!std::is_convertible_v<int32_t, TaskId>);
  static_assert(!std::is_convertible_v<TaskId, RootId>);
}

}  // namespace
}  // namespace tempest::api
