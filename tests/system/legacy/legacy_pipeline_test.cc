// A legacy Storm pipeline moved to Tempest without changes: the files in
// examples/legacy run with the real `tempest` binary, a real ZooKeeper,
// `tempest dev-kafka --zk` and a Python multilang bolt.


#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::ReadFileOrEmpty;
using testing::TempDir;

std::string SourceDir() {
  const char* s = std::getenv("TEMPEST_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

std::string Legacy(const std::string& file) { return SourceDir() + "/examples/legacy/" + file; }

using RunResult = testing::CommandRun;

RunResult RunCommand(const TempDir& dir, std::vector<std::string> argv,
                     std::map<std::string, std::string> env = {},
                     milliseconds timeout = seconds(240)) {
  RunResult run = testing::RunCommand(argv, dir.File("run"), timeout, env);
  EXPECT_TRUE(run.finished) << argv[0] << " did not exit in time";
  return run;
}

// The counters of `tempest local`'s final "done: ..." line.
std::map<std::string, int64_t> DoneCounters(const std::string& out) {
  std::map<std::string, int64_t> counters;
  const size_t done = out.rfind("done: ");
  if (done == std::string::npos) return counters;
  const std::string line = out.substr(done, out.find('\n', done) - done);
  static const std::regex kCounter("([a-z-]+)=(-?[0-9]+)");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), kCounter);
       it != std::sregex_iterator(); ++it) {
    counters[(*it)[1].str()] = std::stoll((*it)[2].str());
  }
  return counters;
}

std::string Python() {
  return std::ifstream("/usr/bin/python3").good() ? "/usr/bin/python3" : "python3";
}

TEST(LegacyPipelineTest, StormStyleWordCountRunsUnchanged) {
  TempDir dir;
  RunResult run = RunCommand(dir, {testing::TempestBinary(), "local", Legacy("word-count.yaml"),
                            "--resources", Legacy("multilang"), "--duration", "8"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::map<std::string, int64_t> done = DoneCounters(run.out);
  ASSERT_FALSE(done.empty()) << run.out;
  EXPECT_GT(done["spout-emitted"], 0);
  EXPECT_EQ(done["errors"], 0) << run.err;
  // LogInfoBolt logged TestWordCounter's (word, count) pairs, which passed
  // through the Python bolt: Storm's test words reached the end.
  const std::regex logged_count("count:default@[0-9]+ \\[\"(nathan|mike|jackson|golda|bertels)\", [0-9]+\\]");
  EXPECT_TRUE(std::regex_search(run.out, logged_count)) << run.out.substr(0, 4000);
}

TEST(LegacyPipelineTest, KafkaPipelineResumesFromStormKafkaOffsetsSeededByKazoo) {
  TempDir dir;
  auto zk = testing::ZkEnsemble::Start();
  ASSERT_TRUE(zk.ok()) << zk.status();
  const std::string connect = (*zk)->ConnectString();
  const std::string zk_port = connect.substr(connect.rfind(':') + 1);

  // Kafka as legacy storm-kafka saw it: brokers registered in ZooKeeper.
  os::ChildProcess::Options kafka_options;
  kafka_options.argv = {testing::TempestBinary(), "dev-kafka", "--topic", "sentences:2", "--zk",
                        connect};
  kafka_options.stdout_path = dir.File("kafka.out");
  kafka_options.stderr_path = dir.File("kafka.err");
  auto kafka = os::ChildProcess::Start(kafka_options);
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  std::optional<std::string> bootstrap =
      testing::WaitForLineWithPrefix(dir.File("kafka.out"), "bootstrap.servers=", seconds(60));
  ASSERT_TRUE(bootstrap.has_value()) << ReadFileOrEmpty(dir.File("kafka.err"));

  // 100 three-word sentences per partition.
  constexpr int kPerPartition = 100;
  for (int p = 0; p < 2; ++p) {
    std::ofstream sentences(dir.File(absl::StrCat("p", p, ".txt")));
    for (int i = 0; i < kPerPartition; ++i) sentences << "storm moves to tempest\n";
  }
  for (int p = 0; p < 2; ++p) {
    RunResult produced = RunCommand(dir, {"sh", "-c",
                                   absl::StrCat("kcat -P -b ", *bootstrap, " -t sentences -p ", p,
                                                " -X log_level=3 < ", dir.File(absl::StrCat(
                                                                          "p", p, ".txt")))});
    ASSERT_EQ(produced.exit_code, 0) << produced.err;
  }

  // The offsets a Storm cluster left behind, written by an independent client.
  RunResult seeded =
      RunCommand(dir, {Python(), Legacy("seed-offsets.py"), "--zk", connect, "--root", "/kafka-offsets",
                "--id", "sentence-counter", "--topic", "sentences", "--offsets", "0=60,1=75"});
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;

  RunResult run = RunCommand(dir,
                      {testing::TempestBinary(), "local", Legacy("kafka-pipeline.yaml"), "--config",
                       Legacy("storm.yaml"), "--resources", Legacy("multilang"), "--env-filter",
                       "--until-complete"},
                      {{"ZK", connect}, {"ZK_PORT", zk_port}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Exactly the records after the seeded offsets: (100-60) + (100-75).
  std::map<std::string, int64_t> done = DoneCounters(run.out);
  ASSERT_FALSE(done.empty()) << run.out;
  EXPECT_EQ(done["spout-emitted"], 65) << run.out;
  EXPECT_EQ(done["acked"], 65) << run.out;
  EXPECT_EQ(done["failed"], 0) << run.out;
  EXPECT_EQ(done["errors"], 0) << run.err;
  // storm.yaml's unknown key warned about once; Storm-only keys silently.
  EXPECT_NE(run.err.find("unknown config key 'acme.metrics.reporter.url'"), std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("worker.childopts"), std::string::npos);

  // The committed offsets moved to the end, in storm-kafka's layout.
  RunResult shown = RunCommand(dir, {testing::TempestBinary(), "offsets", "show", "--zk", connect,
                              "--root", "/kafka-offsets", "--id", "sentence-counter", "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json offsets = nlohmann::json::parse(shown.out, nullptr, false);
  ASSERT_FALSE(offsets.is_discarded()) << shown.out;
  const nlohmann::json& partitions = offsets.is_array() ? offsets : offsets["partitions"];
  ASSERT_EQ(partitions.size(), 2u) << shown.out;
  for (const auto& p : partitions) {
    EXPECT_EQ(p["committed_offset"], kPerPartition) << shown.out;
    EXPECT_EQ(p["topology_name"], "legacy-kafka-pipeline") << shown.out;
  }
  (*kafka)->Stop(milliseconds(5000));
}

// The value of the first `prefix` line of a `tempest dev` output file.
std::string DevValue(const std::string& out, const std::string& prefix) {
  std::istringstream lines(ReadFileOrEmpty(out));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

// Storm 1.x's storm-kafka example as its header tells a user to run it: on
// `tempest dev`, only ZkHosts filled in through --filter, no ZooKeeper named
// for offsets, so the spout keeps them in the cluster's own ZooKeeper.
TEST(LegacyPipelineTest, StormKafkaClusterExampleOnTempestDevConsumesAndCommits) {
  TempDir dir;
  os::ChildProcess::Options o;
  o.argv = {testing::TempestBinary(), "dev", "--supervisors", "1", "--slots", "1", "--dir",
            dir.File("cluster"), "-c", "ui.port=0"};
  o.stdout_path = dir.File("dev.out");
  o.stderr_path = dir.File("dev.err");
  auto dev = os::ChildProcess::Start(o);
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_TRUE(testing::WaitForLineWithPrefix(dir.File("dev.out"), "ready", seconds(180)))
      << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
  const std::string zk = DevValue(dir.File("dev.out"), "zookeeper=");
  const std::string bootstrap = DevValue(dir.File("dev.out"), "bootstrap.servers=");
  const std::map<std::string, std::string> env = {
      {"TEMPEST_NIMBUS", DevValue(dir.File("dev.out"), "nimbus=")}};
  ASSERT_FALSE(zk.empty() || bootstrap.empty()) << ReadFileOrEmpty(dir.File("dev.out"));

  constexpr int kSentences = 200;
  {
    std::ofstream sentences(dir.File("sentences.txt"));
    for (int i = 0; i < kSentences; ++i) sentences << "the cow jumped over the moon\n";
  }
  RunResult produced = RunCommand(
      dir, {"sh", "-c", absl::StrCat("kcat -P -b ", bootstrap, " -t myKafkaTopic -p 0 -X ",
                                     "log_level=3 < ", dir.File("sentences.txt"))});
  ASSERT_EQ(produced.exit_code, 0) << produced.err;
  std::ofstream(dir.File("kafka.properties")) << "kafka.zk=" << zk << "\n";
  RunResult submitted = RunCommand(
      dir, {testing::TempestBinary(), "submit", Legacy("kafka-spout-cluster.yaml"), "--filter",
            dir.File("kafka.properties"), "--resources", Legacy("multilang"), "--until-running"},
      env);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;

  // Every sentence read and its offset committed, in storm-kafka's layout,
  // in the cluster's ZooKeeper.
  nlohmann::json partitions;
  EXPECT_TRUE(testing::Eventually(seconds(120), [&] {
    RunResult shown = RunCommand(dir, {testing::TempestBinary(), "offsets", "show", "--zk", zk,
                                       "--root", "/kafkaSpout", "--id", "myId", "--json"});
    if (shown.exit_code != 0) return false;
    nlohmann::json doc = nlohmann::json::parse(shown.out, nullptr, false);
    if (doc.is_discarded()) return false;
    partitions = doc["partitions"];
    for (const auto& p : partitions) {
      if (p["committed_offset"] == kSentences) return true;
    }
    return false;
  }, milliseconds(1000))) << partitions.dump();
  ASSERT_FALSE(partitions.empty());
  EXPECT_EQ(partitions[0]["topic"], "myKafkaTopic");
  EXPECT_EQ(partitions[0]["topology_name"], "kafka-spout");

  EXPECT_EQ(RunCommand(dir, {testing::TempestBinary(), "kill", "kafka-spout", "-w", "0"}, env)
                .exit_code,
            0);
  (*dev)->Stop(seconds(60));
}

TEST(LegacyPipelineTest, MigrateCheckPassesTheExamplesAndNamesMissingClasses) {
  TempDir dir;
  for (const char* file : {"word-count.yaml", "kafka-pipeline.yaml"}) {
    RunResult check = RunCommand(dir, {testing::TempestBinary(), "migrate", "check", Legacy(file),
                                "--storm-yaml", Legacy("storm.yaml"), "--resources",
                                Legacy("multilang"), "--json"});
    EXPECT_EQ(check.exit_code, 0) << file << "\n" << check.out << check.err;
    nlohmann::json report = nlohmann::json::parse(check.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << check.out;
    EXPECT_TRUE(report["runs_unchanged"].get<bool>()) << check.out;
    int multilang = 0;
    for (const auto& c : report["classes"]) multilang += c["verdict"] == "multilang";
    EXPECT_EQ(multilang, 1) << check.out;
  }

  // A pipeline with a Java bolt of its own.
  std::ofstream(dir.File("custom.yaml")) << "name: custom\n"
                                            "spouts:\n"
                                            "  - id: words\n"
                                            "    className: org.apache.storm.testing.TestWordSpout\n"
                                            "bolts:\n"
                                            "  - id: enrich\n"
                                            "    className: com.acme.storm.EnrichBolt\n"
                                            "streams:\n"
                                            "  - from: words\n"
                                            "    to: enrich\n"
                                            "    grouping:\n"
                                            "      type: SHUFFLE\n";
  RunResult check = RunCommand(dir, {testing::TempestBinary(), "migrate", "check", dir.File("custom.yaml")});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("custom.yaml:7: bolts 'enrich': com.acme.storm.EnrichBolt"),
            std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("needs plugins"), std::string::npos) << check.out;

  std::ofstream(dir.File("broken.yaml")) << "name: [unclosed\n";
  RunResult broken = RunCommand(dir, {testing::TempestBinary(), "migrate", "check", dir.File("broken.yaml")});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.err.find("broken.yaml:"), std::string::npos) << broken.err;
}

}  // namespace
}  // namespace tempest
