// `tempest dev` is safe by default (docs/security.md "tempest dev generates
// one"): it makes a ZooKeeper digest identity for the run, in a 0600 file it
// prints (zk-auth-file=, export TEMPEST_ZK_AUTH_FILE=), so every znode is
// creator-only. An anonymous ZooKeeper client (kazoo, under
// /usr/bin/python3) can then read no transport secret, write no topology and
// touch no KafkaSpout offset, while the printed file's credentials can;
// `tempest offsets show` finds the identity by itself. --insecure-zookeeper
// opts out, with a warning, and leaves the nodes open (on a --dir whose
// ZooKeeper data an earlier run's identity owns it is refused).

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tempest_dev.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kPython[] = "/usr/bin/python3";  // where kazoo is installed for everyone

// A `tempest dev` run with its own HOME (where it records its files for the
// client verbs), as a user starts it plus `extra_args`.
struct DevRun {
  TempDir dir{"tempest-dev-zk"};
  std::string home = dir.File("home");
  std::unique_ptr<os::ChildProcess> process;
  std::map<std::string, std::string> env() const { return {{"HOME", home}}; }
  std::string Value(const std::string& prefix) const {
    return WaitForLineWithPrefix(dir.File("dev.out"), prefix, seconds(1)).value_or("");
  }
  std::string Output() const {
    return ReadFileOrEmpty(dir.File("dev.out")) + ReadFileOrEmpty(dir.File("dev.err"));
  }
};

void Start(DevRun& run, const std::vector<std::string>& extra_args = {}) {
  std::filesystem::create_directories(run.home);
  auto started = StartTempestDev(run.dir, {1, extra_args, run.env()});
  ASSERT_TRUE(started.ok()) << started.status();
  run.process = *std::move(started);
}

// kazoo_probe.py's lines ("OP PATH RESULT") for `probes` as `auth`.
std::map<std::string, std::string> Probe(const DevRun& run, const std::string& auth,
                                         const std::vector<std::string>& probes) {
  std::vector<std::string> argv = {
      kPython, SourceDir() + "/tests/integration/security/kazoo_probe.py", run.Value("zookeeper="),
      auth};
  argv.insert(argv.end(), probes.begin(), probes.end());
  static int count = 0;
  CommandRun r = RunCommand(argv, run.dir.File(absl::StrCat("probe-", ++count)),
                            milliseconds(60000));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> results;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    if (words.size() == 3) results[words[0] + ":" + words[1]] = words[2];
  }
  return results;
}

TEST(DevZkAuthTest, DefaultDevClusterKeepsItsZooKeeperPrivate) {
  DevRun run;
  Start(run);
  ASSERT_FALSE(HasFatalFailure());
  const std::string zk = run.Value("zookeeper=");
  const std::string auth_file = run.Value("zk-auth-file=");
  ASSERT_FALSE(auth_file.empty()) << run.Output();
  struct stat st {};
  ASSERT_EQ(::stat(auth_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(absl::StartsWith(ReadFileOrEmpty(auth_file), "tempest-dev:"));
  EXPECT_TRUE(absl::StrContains(ReadFileOrEmpty(run.dir.File("dev.out")),
                                "\nexport TEMPEST_ZK_AUTH_FILE=" + auth_file + "\n"));

  // A KafkaSpout that commits its offsets in the cluster's own ZooKeeper.
  const std::string bootstrap = run.Value("bootstrap.servers=");
  CommandRun produce = RunCommand({"/bin/sh", "-c",
                                   "kcat -P -b " + bootstrap + " -t sentences < " + SourceDir() +
                                       "/examples/data/sentences.txt"},
                                  run.dir.File("kcat"), milliseconds(60000));
  ASSERT_EQ(produce.exit_code, 0) << produce.err;
  std::map<std::string, std::string> env = run.env();
  env.insert({{"TEMPEST_NIMBUS", run.Value("nimbus=")}, {"BOOTSTRAP", bootstrap}, {"ZK", zk}});
  CommandRun submit = RunCommand({TempestBinary(), "submit",
                                  SourceDir() + "/examples/kafka-transform.yaml", "--env-filter"},
                                 run.dir.File("submit"), milliseconds(60000), env);
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  std::string id = submit.out;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();

  // `tempest offsets show` against the dev ZooKeeper: no flag, no export;
  // it finds the identity the way client verbs find the API token.
  json partitions;
  ASSERT_TRUE(Eventually(
      seconds(180),
      [&] {
        CommandRun shown = RunCommand({TempestBinary(), "offsets", "show", "--zk", zk, "--root",
                                       "/kafkaspout", "--id", "kafka-transform", "--json"},
                                      run.dir.File("offsets"), milliseconds(30000), run.env());
        json doc = json::parse(shown.out, nullptr, false);
        if (shown.exit_code != 0 || doc.is_discarded()) return false;
        partitions = doc["partitions"];
        for (const json& p : partitions) {
          if (p.value("committed_offset", json()).is_number()) return true;
        }
        return false;
      },
      milliseconds(1000)))
      << partitions.dump() << "\n" << run.Output();
  std::string offset_node;
  for (const json& p : partitions) {
    if (p.value("committed_offset", json()).is_number()) offset_node = p["path"].get<std::string>();
  }

  const std::string assignment = "/tempest/assignments/" + id;
  std::map<std::string, std::string> anonymous =
      Probe(run, "-", {"get:" + assignment, "children:/tempest/storms", "create:/tempest/storms",
                       "get:" + offset_node, "set:" + offset_node});
  EXPECT_EQ(anonymous["get:" + assignment], "NoAuthError");  // the transport secret
  EXPECT_EQ(anonymous["children:/tempest/storms"], "NoAuthError");
  EXPECT_EQ(anonymous["create:/tempest/storms"], "NoAuthError");  // no topology planted
  EXPECT_EQ(anonymous["get:" + offset_node], "NoAuthError");
  EXPECT_EQ(anonymous["set:" + offset_node], "NoAuthError");  // no rewind

  std::map<std::string, std::string> with_file =
      Probe(run, "@" + auth_file,
            {"get:" + assignment, "children:/tempest/storms", "get:" + offset_node});
  EXPECT_EQ(with_file["get:" + assignment], "ok");
  EXPECT_EQ(with_file["children:/tempest/storms"], "ok");
  EXPECT_EQ(with_file["get:" + offset_node], "ok");

  run.process->Stop(seconds(60));
  // The record under HOME goes with the cluster.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(run.home + "/.tempest/dev", ec)) {
    ADD_FAILURE() << "left behind: " << e.path();
  }
}

TEST(DevZkAuthTest, InsecureZooKeeperWarnsAndLeavesNodesOpen) {
  DevRun run;
  Start(run, {"--insecure-zookeeper"});
  ASSERT_FALSE(HasFatalFailure());
  const std::string err = ReadFileOrEmpty(run.dir.File("dev.err"));
  EXPECT_TRUE(absl::StrContains(err, "tempest: warning: --insecure-zookeeper: every znode")) << err;
  EXPECT_FALSE(absl::StrContains(ReadFileOrEmpty(run.dir.File("dev.out")), "zk-auth-file="));
  EXPECT_FALSE(absl::StrContains(ReadFileOrEmpty(run.dir.File("dev.out")), "TEMPEST_ZK_AUTH_FILE"));

  std::map<std::string, std::string> anonymous =
      Probe(run, "-", {"children:/tempest/storms", "create:/tempest"});
  EXPECT_EQ(anonymous["children:/tempest/storms"], "ok");
  EXPECT_EQ(anonymous["create:/tempest"], "ok");
  run.process->Stop(seconds(60));
}

TEST(DevZkAuthTest, InsecureZooKeeperIsRefusedOnADirAnIdentityOwns) {
  TempDir dir("tempest-dev-zk-reused");
  std::filesystem::create_directories(dir.File("cluster"));
  std::ofstream(dir.File("cluster/zk-auth")) << "tempest-dev:0123456789abcdef\n";
  CommandRun run = RunCommand({TempestBinary(), "dev", "--dir", dir.File("cluster"),
                               "--insecure-zookeeper", "-c", "ui.port=0"},
                              dir.File("dev"), milliseconds(60000));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, absl::StrCat("tempest: --insecure-zookeeper: the ZooKeeper data in ",
                                  dir.File("cluster"), " belongs to the identity in ",
                                  dir.File("cluster/zk-auth"), "; use another --dir\n"));
}

}  // namespace
}  // namespace tempest::testing
