#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "common/core/config/config_loader.h"
#include "common/net/http_auth.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "supervisor/supervisor.h"
#include "tests/support/temp_dir.h"

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

TEST(SupervisorOptionsTest, DefaultsAreStorms) {
  absl::StatusOr<SupervisorOptions> o =
      SupervisorOptions::FromConfig(core::ConfigLoader::Defaults());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->zk_connect, "localhost:2181");
  EXPECT_EQ(o->root, "/tempest");
  EXPECT_EQ(o->slot_ports, (std::vector<int>{6700, 6701, 6702, 6703}));
  EXPECT_EQ(o->heartbeat_interval, milliseconds(5000));
  EXPECT_EQ(o->monitor_interval, milliseconds(3000));
  EXPECT_EQ(o->worker_timeout, milliseconds(30000));
  EXPECT_EQ(o->worker_start_timeout, milliseconds(120000));
  EXPECT_EQ(o->worker_shutdown_wait, milliseconds(3000));
  EXPECT_EQ(o->worker_exit_grace, milliseconds(10000));
  EXPECT_EQ(o->worker_command, (std::vector<std::string>{"/proc/self/exe"}));
  EXPECT_EQ(core::ConfigLoader::Defaults().GetInt(api::kWorkerHeartbeatFrequencySecs, 0), 1);
}

TEST(SupervisorOptionsTest, MetricsEndpointIsOffUnlessAPortIsSet) {
  absl::StatusOr<SupervisorOptions> off =
      SupervisorOptions::FromConfig(core::ConfigLoader::Defaults());
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->metrics_port, 0);
  EXPECT_EQ(off->metrics_host, "127.0.0.1");
  api::Config c;
  c.Set(kSupervisorMetricsPort, 9102);
  c.Set(kSupervisorMetricsHost, "0.0.0.0");
  absl::StatusOr<SupervisorOptions> on = SupervisorOptions::FromConfig(c);
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->metrics_port, 9102);
  EXPECT_EQ(on->metrics_host, "0.0.0.0");
  for (int bad : {-1, 65536}) {
    api::Config b;
    b.Set(kSupervisorMetricsPort, bad);
    absl::Status s = SupervisorOptions::FromConfig(b).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("tempest.supervisor.metrics.port"));
  }
}

TEST(SupervisorOptionsTest, MetricsFollowTheAdvertisedHostnameUnlessTheirHostIsSet) {
  // A supervisor on another machine is scraped at the address it advertises.
  api::Config c;
  c.Set(api::kStormLocalHostname, "10.1.2.3");
  absl::StatusOr<SupervisorOptions> o = SupervisorOptions::FromConfig(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->metrics_host, "10.1.2.3");
  c.Set(kSupervisorMetricsHost, "0.0.0.0");
  o = SupervisorOptions::FromConfig(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->metrics_host, "0.0.0.0");
}

TEST(SupervisorOptionsTest, MetricsNeedTheApiTokenOnlyWhenReadsAreProtected) {
  char dir_template[] = "/tmp/tempest-metrics-token-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string token_file = std::string(dir_template) + "/token";
  ASSERT_TRUE(net::WriteTokenFile(token_file, "s3cret").ok());
  api::Config c;
  c.Set(kSupervisorMetricsPort, 9102);
  c.Set(net::kApiTokenFileKey, token_file);
  absl::StatusOr<SupervisorOptions> open = SupervisorOptions::FromConfig(c);
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_FALSE(open->metrics_auth.enabled() && open->metrics_auth.protect_reads);
  c.Set(net::kApiAuthReadsKey, true);
  absl::StatusOr<SupervisorOptions> guarded = SupervisorOptions::FromConfig(c);
  ASSERT_TRUE(guarded.ok()) << guarded.status();
  EXPECT_EQ(guarded->metrics_auth.token, "s3cret");
  EXPECT_TRUE(guarded->metrics_auth.protect_reads);
  c.Set(net::kApiTokenFileKey, std::string(dir_template) + "/missing");
  EXPECT_EQ(SupervisorOptions::FromConfig(c).status().code(), absl::StatusCode::kInvalidArgument);
  // Without a metrics port the token file is not the supervisor's concern.
  c.Set(kSupervisorMetricsPort, 0);
  EXPECT_TRUE(SupervisorOptions::FromConfig(c).ok());
  std::remove(token_file.c_str());
  ::rmdir(dir_template);
}

// deploy/tempest.yaml is documentation that must keep loading, with its
// secret files (under /etc/tempest there) created as deploy/README.md says.
TEST(SupervisorOptionsTest, TheExampleClusterConfigLoadsWithoutWarnings) {
  const char* source = std::getenv("TEMPEST_SOURCE_DIR");
  ASSERT_NE(source, nullptr) << "run through ctest (TEMPEST_SOURCE_DIR)";
  testing::TempDir etc("tempest-etc");
  std::ifstream in(std::string(source) + "/deploy/tempest.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  ASSERT_NE(text.find("\"/etc/tempest/zk.auth\""), std::string::npos);
  std::ofstream(etc.File("tempest.yaml"))
      << absl::StrReplaceAll(text, {{"\"/etc/tempest/", "\"" + etc.path() + "/"}});
  ASSERT_TRUE(net::WriteTokenFile(etc.File("zk.auth"), "tempest:a-long-random-password").ok());
  ASSERT_TRUE(net::WriteTokenFile(etc.File("api.token"), "0123456789abcdef").ok());
  ASSERT_TRUE(
      net::WriteTokenFile(etc.File("cluster.secret"), "0123456789abcdef0123456789abcdef").ok());
  absl::StatusOr<core::LoadedConfig> loaded =
      core::ConfigLoader::LoadFile(etc.File("tempest.yaml"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->warnings, ::testing::IsEmpty());
  absl::StatusOr<SupervisorOptions> o = SupervisorOptions::FromConfig(loaded->config);
  ASSERT_TRUE(o.ok()) << o.status();
  // The documented set-up starts with digest ACLs.
  EXPECT_EQ(o->zk.auth.Identity(), "digest:tempest");
  EXPECT_EQ(o->zk_connect, "zk1.example.com:2181,zk2.example.com:2181,zk3.example.com:2181");
  EXPECT_EQ(o->local_dir, "/var/lib/tempest");
  EXPECT_EQ(o->slot_ports, (std::vector<int>{6700, 6701, 6702, 6703}));
  EXPECT_EQ(o->worker_user, "nobody");
}

TEST(SupervisorOptionsTest, WorkerUserDefaultsToNobodyAndIsReadFromTheConfig) {
  absl::StatusOr<SupervisorOptions> by_default = SupervisorOptions::FromConfig(api::Config());
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  EXPECT_EQ(by_default->worker_user, kDefaultWorkerUser);
  api::Config config;
  config.Set(kSupervisorWorkerUser, std::string("tempest-worker"));
  absl::StatusOr<SupervisorOptions> set = SupervisorOptions::FromConfig(config);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->worker_user, "tempest-worker");
}

TEST(SupervisorOptionsTest, SlotUidsAreOnByDefaultAndParsedStrictly) {
  absl::StatusOr<SupervisorOptions> by_default = SupervisorOptions::FromConfig(api::Config());
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  EXPECT_EQ(by_default->slot_uid_base, std::optional<int64_t>(kDefaultSlotUidBase));

  api::Config off;
  off.Set(kSupervisorWorkerSlotUids, false);
  EXPECT_EQ(SupervisorOptions::FromConfig(off).value().slot_uid_base, std::nullopt);
  api::Config base;
  base.Set(kSupervisorWorkerSlotUidBase, int64_t{3000000});
  EXPECT_EQ(SlotUidBaseFrom(base).value(), std::optional<int64_t>(3000000));

  for (const api::Value& bad : {api::Value(std::string("maybe")), api::Value(int64_t{1})}) {
    api::Config c;
    c.Set(kSupervisorWorkerSlotUids, bad);
    EXPECT_TRUE(absl::IsInvalidArgument(SupervisorOptions::FromConfig(c).status()));
  }
  for (int64_t bad : {int64_t{0}, int64_t{1000}, int64_t{2147450000}}) {
    api::Config c;
    c.Set(kSupervisorWorkerSlotUidBase, bad);
    absl::StatusOr<SupervisorOptions> o = SupervisorOptions::FromConfig(c);
    EXPECT_TRUE(absl::IsInvalidArgument(o.status())) << bad;
    EXPECT_NE(o.status().message().find("tempest.supervisor.worker.slot.uid.base"),
              std::string::npos);
  }
}

TEST(SupervisorOptionsTest, SlotAccountIsTheBasePlusThePortInTheAccountsGroup) {
  const os::UnixUser nobody{"nobody", 65534, 65534};
  const os::UnixUser slot = SlotAccount(nobody, int64_t{1900000000}, 6701);
  EXPECT_EQ(slot.uid, 1900006701u);
  EXPECT_EQ(slot.gid, 65534u);
  EXPECT_EQ(slot.name, "nobody+6701");
  EXPECT_EQ(SlotAccount(nobody, std::nullopt, 6701).uid, 65534u);
}

}  // namespace
}  // namespace tempest::supervisor
