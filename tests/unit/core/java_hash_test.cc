#include "common/core/grouping/java_hash.h"

#include <limits>

#include "common/core/java_random.h"
#include "gtest/gtest.h"

namespace tempest::core {
namespace {

using api::Value;

TEST(JavaHashTest, StringHashCodeMatchesJava) {
  EXPECT_EQ(JavaStringHashCode("hello"), 99162322);
  EXPECT_EQ(JavaStringHashCode(""), 0);
  EXPECT_EQ(JavaStringHashCode("abc"), 96354);
  EXPECT_EQ(JavaStringHashCode("storm"), 109770985);
  EXPECT_EQ(JavaStringHashCode("Aa"), JavaStringHashCode("BB"));  // the classic collision
  EXPECT_EQ(JavaStringHashCode("polygenelubricants"), std::numeric_limits<int32_t>::min());
}

TEST(JavaHashTest, StringHashUsesUtf16CodeUnits) {
  EXPECT_EQ(JavaStringHashCode("\xC3\xA9"), 233);  // U+00E9
  // U+1F600 is a surrogate pair in Java: D83D DE00.
  EXPECT_EQ(JavaStringHashCode("\xF0\x9F\x98\x80"), 1772899);
  // A lone invalid byte hashes as U+FFFD.
  EXPECT_EQ(JavaStringHashCode("\xFF"), 0xFFFD);
}

TEST(JavaHashTest, BoxedPrimitiveHashCodes) {
  EXPECT_EQ(JavaLongHashCode(1), 1);
  EXPECT_EQ(JavaLongHashCode(-1), 0);
  EXPECT_EQ(JavaLongHashCode(int64_t{1} << 32), 1);
  EXPECT_EQ(JavaIntegerHashCode(-1), -1);
  EXPECT_EQ(JavaBooleanHashCode(true), 1231);
  EXPECT_EQ(JavaBooleanHashCode(false), 1237);
  EXPECT_EQ(JavaDoubleHashCode(1.0), 1072693248);
  EXPECT_EQ(JavaDoubleHashCode(0.0), 0);
  EXPECT_EQ(JavaHashCode(Value()), 0);
  EXPECT_EQ(JavaHashCode(Value(7)), 7);
}

TEST(JavaHashTest, CollectionsAndBytes) {
  // List.of("a", "b").hashCode() == 4066.
  EXPECT_EQ(JavaHashCode(Value(api::ValueList{"a", "b"})), 4066);
  // Arrays.hashCode(new byte[]{1, -1}) == (31 + 1) * 31 - 1.
  EXPECT_EQ(JavaBytesHashCode(std::string("\x01\xFF", 2)), 991);
  // Map.of("a", 1).hashCode() == "a".hashCode() ^ 1.
  EXPECT_EQ(JavaHashCode(Value(api::ValueMap{{"a", 1}})), 97 ^ 1);
}

TEST(JavaHashTest, DeepHashCodeAndFloorMod) {
  api::Values v{Value("hello"), Value(1)};
  std::vector<int> first{0};
  EXPECT_EQ(JavaDeepHashCode(v, first), 99162353);
  EXPECT_EQ(JavaDeepHashCode(std::span<const Value>(v)), -1220934352);
  EXPECT_EQ(FloorMod(-1, 4), 3);
  EXPECT_EQ(FloorMod(99162353, 4), 1);
  EXPECT_EQ(FloorMod(31 + std::numeric_limits<int32_t>::min(), 3), 2);
}

TEST(JavaRandomTest, MatchesJavaUtilRandom) {
  // new Random(0).nextInt() and new Random(42).nextInt(), well-known values.
  EXPECT_EQ(JavaRandom(0).Next(32), -1155484576);
  EXPECT_EQ(JavaRandom(42).Next(32), -1170105035);
  JavaRandom r(7);
  for (int i = 0; i < 1000; ++i) {
    int32_t x = r.NextInt(10);
    ASSERT_GE(x, 0);
    ASSERT_LT(x, 10);
  }
}

}  // namespace
}  // namespace tempest::core
