#include <chrono>
#include <vector>

#include "gtest/gtest.h"
#include "supervisor/supervisor.h"

namespace tempest::supervisor {
namespace {

using std::chrono::milliseconds;

TEST(SupervisorOptionsTest, ComeFromStormKeys) {
  api::Config c;
  c.Set(api::kStormZookeeperServers, api::ValueList{"zk1", "zk2:2182"});
  c.Set(api::kStormZookeeperPort, 2191);
  c.Set(api::kStormLocalDir, "/var/lib/tempest");
  c.Set(api::kStormLocalHostname, "node7");
  c.Set(api::kSupervisorSlotsPorts, api::ValueList{6801, 6800});
  c.Set(api::kSupervisorWorkerTimeoutSecs, 12);
  c.Set(api::kSupervisorWorkerShutdownSleepSecs, 0);
  absl::StatusOr<SupervisorOptions> o = SupervisorOptions::FromConfig(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->zk_connect, "zk1:2191,zk2:2182");
  EXPECT_EQ(o->local_dir, "/var/lib/tempest");
  EXPECT_EQ(o->hostname, "node7");
  EXPECT_EQ(o->slot_ports, (std::vector<int>{6800, 6801}));
  EXPECT_EQ(o->worker_timeout, milliseconds(12000));
  EXPECT_EQ(o->worker_shutdown_wait, milliseconds(0));
  EXPECT_EQ(o->worker_start_timeout, milliseconds(120000));  // Storm's default
  EXPECT_EQ(o->local_dir, "/var/lib/tempest");

  api::Config bad_ports;
  bad_ports.Set(api::kSupervisorSlotsPorts, api::ValueList{6700, "x"});
  EXPECT_EQ(SupervisorOptions::FromConfig(bad_ports).status().code(),
            absl::StatusCode::kInvalidArgument);
  api::Config bad_timeout;
  bad_timeout.Set(api::kSupervisorWorkerTimeoutSecs, -1);
  EXPECT_EQ(SupervisorOptions::FromConfig(bad_timeout).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SupervisorOptions::FromConfig(api::Config()).value().local_dir, "tempest-local");
}

}  // namespace
}  // namespace tempest::supervisor
