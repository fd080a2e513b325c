// The cluster secret file (tempest.cluster.secret.file, docs/security.md
// "Cluster secret"): nimbus refuses a missing, empty or short file with one
// line, warns about one others can read, and derives every topology's
// transport secret from it (HKDF of the secret and the topology id): two
// topologies get different secrets, the assignment that carries a secret is
// closed to a ZooKeeper client without the cluster's credentials, and the
// cluster secret itself is in no znode at all.

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/net/transport_secret.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/raw_zk_client.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kRoot[] = "/tempest-cluster";  // ClusterFixture's storm.zookeeper.root
constexpr char kAuth[] = "tempest:cluster-password";
constexpr char kClusterSecret[] = "5f0c2b9e7d1a4c3b8e6f0a2d4c6b8e0f1a3c5e7d9b1f3a5c";

std::string Topology(const std::string& name) {
  return absl::StrCat("name: ", name, R"(
config: {topology.workers: 1}
spouts:
  - id: seq
    className: tempest.SequenceSpout
    properties:
      - {name: rate, value: 50}
bolts:
  - id: pass
    className: tempest.IdentityBolt
streams:
  - from: seq
    to: pass
    grouping: {type: SHUFFLE}
)");
}

std::string WriteSecretFile(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

// Every znode's data under `path`, read with `client`'s credentials.
void CollectData(RawZkClient& client, const std::string& path, std::vector<std::string>& out) {
  auto [rc, data] = client.Get(path.empty() ? "/" : path);
  if (rc == ZOK) out.push_back(data);
  String_vector children{};
  if (zoo_get_children(client.handle(), path.empty() ? "/" : path.c_str(), 0, &children) != ZOK) {
    return;
  }
  for (int i = 0; i < children.count; ++i) {
    CollectData(client, absl::StrCat(path, "/", children.data[i]), out);
  }
  deallocate_String_vector(&children);
}

class ClusterSecretTest : public ClusterFixture {
 protected:
  std::unique_ptr<RawZkClient> Client(bool with_credentials) const {
    auto client = RawZkClient::Connect(zk_->ConnectString(), 10000, seconds(20));
    if (client != nullptr && with_credentials) {
      // Queued before the reads that follow on the same session.
      zoo_add_auth(client->handle(), "digest", kAuth, sizeof(kAuth) - 1, nullptr, nullptr);
    }
    return client;
  }
};

TEST_F(ClusterSecretTest, NimbusRefusesAnUnusableClusterSecretFileWithOneLine) {
  TempDir dir("cluster-secret-refused");
  const std::string missing = dir.File("missing");
  const std::string empty = WriteSecretFile(dir.File("empty"), "\n", 0600);
  const std::string short_one = WriteSecretFile(dir.File("short"), "abc\n", 0600);
  for (const std::string& file : {missing, empty, short_one}) {
    // Refused before nimbus looks for ZooKeeper (none is running here).
    CommandRun run = RunCommand({TempestBinary(), "nimbus", "-c", "ui.port=0", "-c",
                                 absl::StrCat(net::kClusterSecretFileKey, "=", file)},
                                dir.File("nimbus"), milliseconds(30000));
    EXPECT_TRUE(run.finished);
    EXPECT_NE(run.exit_code, 0) << file;
    const std::vector<std::string> lines =
        absl::StrSplit(run.err, '\n', absl::SkipWhitespace());
    ASSERT_EQ(lines.size(), 1u) << run.err;
    EXPECT_NE(lines[0].find(absl::StrCat(net::kClusterSecretFileKey, " ", file)),
              std::string::npos)
        << lines[0];
  }
}

TEST_F(ClusterSecretTest, TwoTopologiesGetDifferentSecretsDerivedFromTheFile) {
  // Mode 0644 on purpose: nimbus still starts, and says so.
  const std::string secret_file =
      WriteSecretFile(dir_.File("cluster.secret"), absl::StrCat(kClusterSecret, "\n"), 0644);
  ClusterSpec spec;
  spec.supervisors = 1;
  spec.extra_config = {"storm.zookeeper.auth.scheme: digest",
                       absl::StrCat("storm.zookeeper.auth.payload: \"", kAuth, "\""),
                       absl::StrCat(net::kClusterSecretFileKey, ": \"", secret_file, "\"")};
  StartCluster(spec);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_NE(ReadFileOrEmpty(cluster_->nimbus(0).log)
                .find(absl::StrCat(secret_file, " has mode 0644: other users can read the "
                                                "cluster secret; chmod 600 it")),
            std::string::npos)
      << ReadFileOrEmpty(cluster_->nimbus(0).log);

  const std::string first = Submit(Topology("secret-a"), "a.yaml");
  const std::string second = Submit(Topology("secret-b"), "b.yaml");
  ASSERT_FALSE(first.empty() || second.empty());
  auto client = Client(true);
  ASSERT_NE(client, nullptr);
  std::map<std::string, std::string> secrets;
  for (const std::string& id : {first, second}) {
    const std::string path = absl::StrCat(kRoot, "/assignments/", id);
    ASSERT_TRUE(Eventually(seconds(60), [&] { return client->Get(path).first == ZOK; })) << path;
    v1::Assignment assignment;
    ASSERT_TRUE(assignment.ParseFromString(client->Get(path).second));
    absl::StatusOr<std::string> derived = net::DeriveTransportSecret(kClusterSecret, id);
    ASSERT_TRUE(derived.ok());
    EXPECT_EQ(assignment.transport_secret(), *derived) << id;
    secrets[id] = assignment.transport_secret();

    // Nobody without the cluster's credentials reads it.
    auto anonymous = Client(false);
    ASSERT_NE(anonymous, nullptr);
    EXPECT_EQ(anonymous->Get(path).first, ZNOAUTH) << path;
  }
  EXPECT_NE(secrets[first], secrets[second]);

  // The cluster secret never reaches ZooKeeper, in any node.
  std::vector<std::string> everything;
  CollectData(*client, "", everything);
  EXPECT_GT(everything.size(), 10u);
  for (const std::string& data : everything) {
    EXPECT_EQ(data.find(kClusterSecret), std::string::npos);
  }
}

}  // namespace
}  // namespace tempest::testing
