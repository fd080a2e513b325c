#include "common/api/config.h"

#include "gtest/gtest.h"

namespace tempest::api {
namespace {

TEST(ConfigTest, TypedGettersWithDefaults) {
  Config c;
  c.Set(kTopologyWorkers, 3);
  c.Set(kTopologyDebug, "true");
  c.Set(kTopologyMaxSpoutPending, nullptr);
  c.Set("x.double", "2.5");
  EXPECT_EQ(c.GetInt(kTopologyWorkers, 1), 3);
  EXPECT_EQ(c.GetInt("absent", 7), 7);
  EXPECT_TRUE(c.GetBool(kTopologyDebug, false));
  EXPECT_TRUE(c.Has(kTopologyMaxSpoutPending));
  EXPECT_FALSE(c.GetOptionalInt(kTopologyMaxSpoutPending).has_value());
  EXPECT_DOUBLE_EQ(c.GetDouble("x.double", 0), 2.5);
  EXPECT_EQ(c.GetString(kTopologyWorkers, ""), "3");
  EXPECT_TRUE(c.Get("absent").is_nil());
}

TEST(ConfigTest, MergeOverwrites) {
  Config a, b;
  a.Set("k", 1);
  a.Set("keep", 2);
  b.Set("k", 10);
  a.Merge(b);
  EXPECT_EQ(a.GetInt("k", 0), 10);
  EXPECT_EQ(a.GetInt("keep", 0), 2);
  EXPECT_TRUE(a.Erase("keep"));
  EXPECT_FALSE(a.Has("keep"));
}

}  // namespace
}  // namespace tempest::api
