// NimbusOptions::FromConfig: the liveness keys, their Storm defaults and
// the values it refuses.

#include "nimbus/nimbus.h"

#include "common/core/config/config_loader.h"
#include "gtest/gtest.h"

namespace tempest::nimbus {
namespace {

using std::chrono::seconds;

TEST(NimbusOptionsTest, LivenessKeysDefaultToStormsValues) {
  auto o = NimbusOptions::FromConfig(core::ConfigLoader::Defaults());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->liveness.task_timeout, seconds(30));
  EXPECT_EQ(o->liveness.task_launch, seconds(120));
  EXPECT_EQ(o->liveness.supervisor_timeout, seconds(60));
  EXPECT_EQ(o->monitor_interval, seconds(10));
  // Not even in the config at all: the same defaults.
  auto bare = NimbusOptions::FromConfig(api::Config());
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->liveness.task_timeout, seconds(30));
}

TEST(NimbusOptionsTest, LivenessKeysAreReadAndBadValuesRefused) {
  api::Config c = core::ConfigLoader::Defaults();
  c.Set(api::kNimbusTaskTimeoutSecs, 5);
  c.Set(api::kNimbusTaskLaunchSecs, 0);
  c.Set(api::kNimbusSupervisorTimeoutSecs, 7);
  c.Set(api::kNimbusMonitorFreqSecs, 2);
  auto o = NimbusOptions::FromConfig(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->liveness.task_timeout, seconds(5));
  EXPECT_EQ(o->liveness.task_launch, seconds(0));
  EXPECT_EQ(o->liveness.supervisor_timeout, seconds(7));
  EXPECT_EQ(o->monitor_interval, seconds(2));

  for (auto [key, value] : {std::pair{api::kNimbusTaskTimeoutSecs, 0},
                            std::pair{api::kNimbusTaskLaunchSecs, -1},
                            std::pair{api::kNimbusSupervisorTimeoutSecs, 0}}) {
    api::Config bad = core::ConfigLoader::Defaults();
    bad.Set(key, value);
    auto r = NimbusOptions::FromConfig(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << key << "=" << value;
    EXPECT_NE(r.status().message().find(std::string(key)), std::string::npos) << r.status();
  }
}

TEST(NimbusOptionsTest, UiHostFollowsTheLocalHostnameUnlessSet) {
  // Nothing set: loopback, as before.
  auto bare = NimbusOptions::FromConfig(core::ConfigLoader::Defaults());
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->bind_host, "127.0.0.1");
  // A nimbus told its host's address serves there, not on loopback.
  api::Config c = core::ConfigLoader::Defaults();
  c.Set(api::kStormLocalHostname, "10.1.2.3");
  auto o = NimbusOptions::FromConfig(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->bind_host, "10.1.2.3");
  EXPECT_EQ(o->advertise_host, "");  // bound to a specific address: that one
  // A wildcard bind advertises the host's name, never 0.0.0.0.
  c.Set("ui.host", "0.0.0.0");
  o = NimbusOptions::FromConfig(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->bind_host, "0.0.0.0");
  EXPECT_EQ(o->advertise_host, "10.1.2.3");
  api::Config wildcard_only = core::ConfigLoader::Defaults();
  wildcard_only.Set("ui.host", "0.0.0.0");
  o = NimbusOptions::FromConfig(wildcard_only);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->advertise_host, "") << "nothing better known: the bind address, as before";
}

}  // namespace
}  // namespace tempest::nimbus
