#include "common/api/value.h"

#include <string>
#include <utility>

#include "absl/hash/hash.h"
#include "gtest/gtest.h"

namespace tempest::api {
namespace {

TEST(ValueTest, HoldsEachType) {
  EXPECT_TRUE(Value().is_nil());
  EXPECT_TRUE(Value(nullptr).is_nil());
  EXPECT_TRUE(Value(true).AsBool());
  EXPECT_EQ(Value(42).AsInt(), 42);
  EXPECT_EQ(Value(int64_t{-7}).AsInt(), -7);
  EXPECT_EQ(Value(uint16_t{9}).type(), Value::Type::kInt);
  EXPECT_DOUBLE_EQ(Value(2.5).AsDouble(), 2.5);
  EXPECT_EQ(Value("hi").AsString(), "hi");
  EXPECT_EQ(Value(std::string_view("sv")).AsString(), "sv");
  EXPECT_EQ(Value::OfBytes(std::string("\x00\x01", 2)).AsBytes().size(), 2u);
  Value list(ValueList{1, "a", nullptr});
  ASSERT_TRUE(list.is_list());
  EXPECT_EQ(list.AsList().size(), 3u);
  EXPECT_EQ(list.AsList()[1].AsString(), "a");
  Value map(ValueMap{{"k", 1}, {"n", ValueList{true}}});
  ASSERT_TRUE(map.is_map());
  ASSERT_NE(map.Find("n"), nullptr);
  EXPECT_TRUE(map.Find("n")->AsList()[0].AsBool());
  EXPECT_EQ(map.Find("missing"), nullptr);
}

TEST(ValueTest, StringLiteralIsNotBool) {
  // A const char* must not silently become a bool.
  EXPECT_EQ(Value("true").type(), Value::Type::kString);
}

TEST(ValueTest, TryAccessorsReportMismatch) {
  Value v(5);
  EXPECT_EQ(v.TryInt(), 5);
  EXPECT_FALSE(v.TryBool().has_value());
  EXPECT_EQ(v.TryString(), nullptr);
  EXPECT_EQ(v.TryList(), nullptr);
  EXPECT_EQ(Value("s").TryBytes(), nullptr);
}

TEST(ValueTest, StrictAccessorAbortsOnMismatch) {
  EXPECT_DEATH({ (void)Value("x").AsInt(); }, "expected int, holds string");
}

TEST(ValueTest, CopyIsDeepAndMoveStealsPayload) {
  std::string payload(100, 'p');
  Value a(payload);
  const char* buffer = a.AsString().data();
  Value moved(std::move(a));
  EXPECT_EQ(moved.AsString().data(), buffer);  // no copy of the 100 bytes
  Value list(ValueList{Value(payload)});
  Value copy = list;
  copy.MutableList().push_back(1);
  EXPECT_EQ(list.AsList().size(), 1u);
  EXPECT_EQ(copy.AsList().size(), 2u);
  EXPECT_LE(sizeof(Value), 40u);
}

TEST(ValueTest, EqualityAndHash) {
  EXPECT_EQ(Value(1), Value(1));
  EXPECT_NE(Value(1), Value(1.0));  // types differ
  EXPECT_NE(Value("a"), Value::OfBytes("a"));
  EXPECT_EQ(Value(ValueMap{{"a", 1}}), Value(ValueMap{{"a", 1}}));
  EXPECT_EQ(absl::Hash<Value>()(Value("k")), absl::Hash<Value>()(Value("k")));
  EXPECT_NE(absl::Hash<Value>()(Value("k")), absl::Hash<Value>()(Value("j")));
}

TEST(ValueTest, Coercions) {
  EXPECT_EQ(*Value("42").CoerceInt(), 42);
  EXPECT_EQ(*Value(3.0).CoerceInt(), 3);
  EXPECT_FALSE(Value(3.5).CoerceInt().ok());
  EXPECT_FALSE(Value("x").CoerceInt().ok());
  EXPECT_DOUBLE_EQ(*Value(2).CoerceDouble(), 2.0);
  EXPECT_TRUE(*Value("TRUE").CoerceBool());
  EXPECT_FALSE(Value(1).CoerceBool().ok());
  EXPECT_EQ(*Value(12).CoerceString(), "12");
  EXPECT_EQ(*Value(false).CoerceString(), "false");
  EXPECT_FALSE(Value().CoerceString().ok());
  EXPECT_NE(Value().CoerceInt().status().message().find("expected an integer, got nil"),
            std::string::npos);
}

TEST(ValueTest, DebugString) {
  Value v(ValueMap{{"a", ValueList{1, 2.5, "x", nullptr, true}}});
  EXPECT_EQ(v.DebugString(), R"({"a": [1, 2.5, "x", null, true]})");
  EXPECT_EQ(Value::OfBytes("abc").DebugString(), "<3 bytes>");
}

}  // namespace
}  // namespace tempest::api
