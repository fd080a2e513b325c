// Secrets stay with the daemons: on a cluster with ZooKeeper digest
// credentials, a multilang child records everything it is handed (the
// handshake conf, its environment) and none of the cluster's password, its
// topology's password, an API token, the transport secret or the
// supervisor's own environment is in it, while the topology's own
// topology.environment is. The worker process's environment and command
// line hold none of them either, and the topology runs (beats, errors) on
// its own ZooKeeper identity.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/coord/cluster_paths.h"
#include "common/coord/topology_identity.h"
#include "common/coord/zk_session.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kClusterPayload[] = "tempest:cluster-pw-7c1e90";
constexpr char kTopologyPayload[] = "seen-topology:topology-pw-5d2b41";
constexpr char kDatabasePassword[] = "db-pw-93af07";
constexpr char kPlantedSecret[] = "planted-supervisor-secret-4e18";
constexpr char kPlantedToken[] = "planted-api-token-b3c5";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ClusterSecretsTest : public ClusterFixture {
 protected:
  void TearDown() override {
    ClusterFixture::TearDown();
    ::unsetenv("TEMPEST_TEST_SECRET");
    ::unsetenv("TEMPEST_TOKEN");
  }

  // storm.py and a bolt that writes what it was handed (conf, environment,
  // whether it can read the cluster's config file) to RECORD_DIR, a
  // variable only topology.environment sets, and reports one error with its
  // first tuple.
  std::string RecorderResources() {
    const std::string resources = dir_.File("recorder");
    std::filesystem::create_directories(resources);
    std::filesystem::copy_file(SourceDir() + "/examples/legacy/multilang/storm.py",
                               resources + "/storm.py",
                               std::filesystem::copy_options::overwrite_existing);
    std::ofstream(resources + "/recorder.py") << R"(import json
import os
import storm


class Recorder(storm.BasicBolt):
    def initialize(self, conf, context):
        try:
            open(os.environ["CLUSTER_CONFIG"]).read()
            readable = True
        except (OSError, KeyError):
            readable = False
        out = os.path.join(os.environ["RECORD_DIR"], "seen-%d.json" % os.getpid())
        with open(out + ".tmp", "w") as f:
            json.dump({"conf": conf, "env": dict(os.environ), "uid": os.getuid(),
                       "config_readable": readable}, f)
        os.rename(out + ".tmp", out)
        self.reported = False

    def process(self, tup):
        if not self.reported:
            storm.reportError("recorder wrote what it was handed")
            self.reported = True


Recorder().run()
)";
    return resources;
  }

  std::unique_ptr<coord::ZkSession> ClusterSession() {
    coord::ZkSession::Options o;
    o.connect_string = zk_->ConnectString();
    o.create_chroot = false;
    o.config.auth.scheme = "digest";
    o.config.auth.payload = kClusterPayload;
    auto s = coord::ZkSession::Create(o);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return nullptr;
    EXPECT_TRUE((*s)->WaitConnected(seconds(20)).ok());
    return std::move(*s);
  }
};

TEST_F(ClusterSecretsTest, AMultilangChildIsHandedNoCredentialTokenOrSecret) {
  // The supervisors inherit these from the test; nothing of them may reach
  // a worker or its children.
  ::setenv("TEMPEST_TEST_SECRET", kPlantedSecret, 1);
  ::setenv("TEMPEST_TOKEN", kPlantedToken, 1);
  ClusterSpec spec;
  spec.supervisors = 1;
  spec.extra_config = {"storm.zookeeper.auth.scheme: digest",
                       absl::StrCat("storm.zookeeper.auth.payload: \"", kClusterPayload, "\"")};
  StartCluster(spec);
  ASSERT_FALSE(HasFatalFailure());
  // The cluster's config as an operator keeps it: root only. The worker
  // reads it before it leaves root.
  std::filesystem::permissions(ConfigPath(), std::filesystem::perms::owner_read |
                                                 std::filesystem::perms::owner_write);

  const std::string record_dir = dir_.File("records");
  std::filesystem::create_directories(record_dir);
  std::filesystem::permissions(record_dir, std::filesystem::perms::all);
  const std::string yaml = absl::StrCat(R"(name: secrets-seen
config:
  topology.workers: 1
  topology.environment:
    RECORD_DIR: ")", record_dir, R"("
    CLUSTER_CONFIG: ")", ConfigPath(), R"("
    TOPOLOGY_MARKER: "from-topology-environment"
  storm.zookeeper.topology.auth.scheme: digest
  storm.zookeeper.topology.auth.payload: ")", kTopologyPayload, R"("
  my.database.password: ")", kDatabasePassword, R"("
spouts:
  - id: numbers
    className: tempest.SequenceSpout
    properties:
      - name: count
        value: -1
      - name: rate
        value: 50
bolts:
  - id: recorder
    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
    constructorArgs:
      - ["/usr/bin/python3", "recorder.py"]
      - []
streams:
  - from: numbers
    to: recorder
    grouping:
      type: SHUFFLE
)");
  std::ofstream(dir_.File("secrets.yaml")) << yaml;
  CommandRun submit = Tempest(
      {"submit", dir_.File("secrets.yaml"), "--resources", RecorderResources(), "--until-running"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::string id = submit.out.substr(0, submit.out.find('\n'));

  std::string recorded;
  ASSERT_TRUE(Eventually(seconds(90), [&] {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(record_dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("seen-", 0) == 0 && name.size() > 5 && name.find(".tmp") == std::string::npos) {
        recorded = ReadAll(entry.path().string());
      }
    }
    return !recorded.empty();
  }, milliseconds(250))) << "the recorder bolt wrote nothing";
  const json seen = json::parse(recorded, nullptr, false);
  ASSERT_TRUE(seen.is_object()) << recorded;

  // The transport secret of its own topology, in every spelling.
  auto zk = ClusterSession();
  ASSERT_NE(zk, nullptr);
  const coord::ClusterPaths paths("/tempest-cluster");
  auto assigned = zk->Get(paths.Assignment(id));
  ASSERT_TRUE(assigned.ok()) << assigned.status();
  v1::Assignment assignment;
  ASSERT_TRUE(assignment.ParseFromString(assigned->data));
  const std::string secret = assignment.transport_secret();
  ASSERT_EQ(secret.size(), 32u);
  auto identity = coord::ReadTopologyIdentity(*zk, paths, "secrets-seen");
  ASSERT_TRUE(identity.ok() && identity->has_value()) << identity.status();
  EXPECT_EQ((*identity)->payload, kTopologyPayload) << "the topology's own identity is kept";

  const std::vector<std::string> forbidden = {
      "cluster-pw-7c1e90", "topology-pw-5d2b41", kDatabasePassword, kPlantedSecret,
      kPlantedToken, absl::BytesToHexString(secret), absl::Base64Escape(secret),
      absl::WebSafeBase64Escape(secret)};
  for (const std::string& f : forbidden) {
    EXPECT_EQ(recorded.find(f), std::string::npos) << "the child was handed " << f;
  }
  const json& env = seen["env"];
  const json& conf = seen["conf"];
  for (const char* name : {"TEMPEST_TEST_SECRET", "TEMPEST_TOKEN"}) {
    EXPECT_FALSE(env.contains(name)) << name << " reached the child";
  }
  for (const char* key : {"storm.zookeeper.auth.scheme", "storm.zookeeper.auth.payload",
                          "storm.zookeeper.topology.auth.payload", "my.database.password"}) {
    EXPECT_FALSE(conf.contains(key)) << key << " is in the handshake conf";
  }
  // What the topology gives its children does arrive, and the rest of the
  // conf too (the handshake still carries the topology's settings).
  EXPECT_EQ(env.value("TOPOLOGY_MARKER", ""), "from-topology-environment") << env.dump();
  EXPECT_EQ(env.value("RECORD_DIR", ""), record_dir);
  EXPECT_TRUE(env.contains("PATH"));
  EXPECT_EQ(conf.value("topology.workers", 0), 1) << conf.dump();
  if (::geteuid() == 0) {
    EXPECT_NE(seen.value("uid", 0), 0) << "the child runs unprivileged";
    EXPECT_NE(env.value("HOME", ""), "/root") << env.dump();
    EXPECT_FALSE(seen.value("config_readable", true)) << "the cluster's config file is root's";
  }

  // The worker process itself: no planted variable, no credential on its
  // command line.
  std::vector<WorkerSlot> workers = WorkersOf(id);
  ASSERT_FALSE(workers.empty());
  for (const WorkerSlot& w : workers) {
    const std::string environ = ReadAll(absl::StrCat("/proc/", w.pid, "/environ"));
    const std::string cmdline = ReadAll(absl::StrCat("/proc/", w.pid, "/cmdline"));
    for (const std::string& f : forbidden) {
      EXPECT_EQ(environ.find(f), std::string::npos) << "worker environment holds " << f;
      EXPECT_EQ(cmdline.find(f), std::string::npos) << "worker command line holds " << f;
    }
  }

  // The topology runs on its own identity: beats reach nimbus, the child's
  // error reaches the REST API through errors/.
  json bolt;
  ASSERT_TRUE(Eventually(seconds(60), [&] {
    const json t = RestGet("/api/v1/topology/" + id);
    for (const json& b : t.value("bolts", json::array())) {
      if (b.value("boltId", "") == "recorder") bolt = b;
    }
    return bolt.is_object() && !bolt.value("lastError", "").empty() &&
           bolt.value("executed", int64_t{0}) > 0;
  }, milliseconds(500))) << bolt.dump();
  EXPECT_NE(bolt["lastError"].get<std::string>().find("recorder wrote"), std::string::npos);
  std::string worker_log;
  for (const WorkerSlot& w : workers) {
    worker_log += ReadFileOrEmpty(
        absl::StrCat(LocalDir(w.supervisor), "/supervisor/workers/", w.port, "/worker.log"));
  }
  ASSERT_FALSE(worker_log.empty()) << "no worker log found";
  EXPECT_EQ(worker_log.find("no topology identity on stdin"), std::string::npos) << worker_log;
}

}  // namespace
}  // namespace tempest::testing
