// ShellBolt and ShellSpout against real Python children (python3 from PATH):
// the example split bolt and sentence spout, bolts that misbehave on purpose
// (tests/integration/multilang/scripts/faulty_bolt.py, storm_like_bolt.py) and
// a spout that records the commands it gets (recording_spout.py).

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "bolts/builtin_bolts.h"
#include "common/api/component_registry.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "spout/builtin_spouts.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace tempest {
namespace {

using std::chrono::milliseconds;
using worker::LocalCluster;
using worker::testing::TopologyBuilder;

constexpr milliseconds kWait(60000);

const char* const kSentences[] = {
    "the cow jumped over the moon", "an apple a day keeps the doctor away",
    "four score and seven years ago", "snow white and the seven dwarfs",
    "i am at two with nature"};

std::string SourceDir() {
  const char* s = std::getenv("TEMPEST_SOURCE_DIR");
  return s != nullptr ? s : ".";
}
// python3 from PATH, else Debian's.
std::string Python3() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "", ':')) {
    const std::string candidate = std::string(dir) + "/python3";
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return "python3";
  }
  return "/usr/bin/python3";
}
std::string ExampleScript(const std::string& name) {
  return SourceDir() + "/examples/legacy/multilang/" + name;
}
std::string TestScript(const std::string& name) {
  return SourceDir() + "/tests/integration/multilang/scripts/" + name;
}

api::Value StringList(std::vector<std::string> items) {
  api::ValueList list;
  for (std::string& s : items) list.emplace_back(std::move(s));
  return api::Value(std::move(list));
}

// What the reliable spout and the counting bolt share with the test.
struct Shared {
  std::mutex mu;
  std::set<int64_t> acked;
  int64_t failed = 0;
  std::map<std::string, int64_t> counts;
  int64_t words = 0;

  size_t NumAcked() {
    std::lock_guard<std::mutex> lock(mu);
    return acked.size();
  }
  int64_t NumWords() {
    std::lock_guard<std::mutex> lock(mu);
    return words;
  }
};

// Emits sentences 0..count-1 with their number as message id and replays
// every failed id until it is acked.
class ReliableSentenceSpout final : public api::Spout {
 public:
  ReliableSentenceSpout(std::shared_ptr<Shared> shared, int64_t count)
      : shared_(std::move(shared)), count_(count) {}
  absl::Status Open(const api::Config&, const api::TopologyContext&,
                    api::SpoutOutputCollector& collector) override {
    collector_ = &collector;
    return absl::OkStatus();
  }
  void NextTuple() override {
    int64_t id;
    if (!replay_.empty()) {
      id = *replay_.begin();
      replay_.erase(replay_.begin());
    } else if (next_ < count_) {
      id = next_++;
    } else {
      return;
    }
    collector_->Emit({api::Value(kSentences[id % 5])}, api::MessageId(id));
  }
  void Ack(const api::MessageId& id) override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->acked.insert(id.AsInt());
  }
  void Fail(const api::MessageId& id) override {
    replay_.insert(id.AsInt());
    std::lock_guard<std::mutex> lock(shared_->mu);
    ++shared_->failed;
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer& d) const override {
    d.Declare(api::Fields({"sentence"}));
  }

 private:
  std::shared_ptr<Shared> shared_;
  const int64_t count_;
  int64_t next_ = 0;
  std::set<int64_t> replay_;
  api::SpoutOutputCollector* collector_ = nullptr;
};

// Counts words and acks. With `fail_every` > 0 it fails every n-th delivery
// instead (without counting it).
class CountBolt final : public api::Bolt {
 public:
  CountBolt(std::shared_ptr<Shared> shared, int fail_every)
      : shared_(std::move(shared)), fail_every_(fail_every) {}
  absl::Status Prepare(const api::Config&, const api::TopologyContext&,
                       api::OutputCollector& collector) override {
    collector_ = &collector;
    return absl::OkStatus();
  }
  void Execute(const api::Tuple& input) override {
    if (input.IsTick()) return;
    if (fail_every_ > 0 && deliveries_++ % fail_every_ == 0) {
      collector_->Fail(input);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      ++shared_->counts[input.GetString(0)];
      ++shared_->words;
    }
    collector_->Ack(input);
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer&) const override {}

 private:
  std::shared_ptr<Shared> shared_;
  const int fail_every_;
  int64_t deliveries_ = 0;
  api::OutputCollector* collector_ = nullptr;
};

std::map<std::string, int64_t> ExpectedCounts(int64_t sentences) {
  std::map<std::string, int64_t> counts;
  for (int64_t i = 0; i < sentences; ++i) {
    for (absl::string_view w : absl::StrSplit(kSentences[i % 5], ' ', absl::SkipEmpty())) {
      ++counts[std::string(w)];
    }
  }
  return counts;
}

struct Rig {
  api::ComponentRegistry registry;
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  testing::TempDir dir{"tempest-multilang"};
  std::unique_ptr<LocalCluster> cluster;

  Rig() {
    EXPECT_TRUE(bolts::RegisterBuiltinBolts(registry).ok());
    EXPECT_TRUE(spout::RegisterBuiltinSpouts(registry).ok());
  }
  void AddSpout(int64_t count) {
    auto shared_copy = shared;
    ASSERT_TRUE(registry
                    .RegisterSpout("test.Sentences",
                                   [shared_copy, count](const api::ComponentArgs&)
                                       -> absl::StatusOr<std::unique_ptr<api::Spout>> {
                                     return std::make_unique<ReliableSentenceSpout>(shared_copy,
                                                                                    count);
                                   })
                    .ok());
  }
  void AddCounter(int fail_every) {
    auto shared_copy = shared;
    ASSERT_TRUE(registry
                    .RegisterBolt("test.Count",
                                  [shared_copy, fail_every](const api::ComponentArgs&)
                                      -> absl::StatusOr<std::unique_ptr<api::Bolt>> {
                                    return std::make_unique<CountBolt>(shared_copy, fail_every);
                                  })
                    .ok());
  }
  void Start(core::TopologyDef def) {
    def.config.Set("tempest.resources.dir", api::Value(dir.path()));
    worker::LocalClusterOptions options;
    options.registry = &registry;
    options.executor.max_park = milliseconds(5);
    auto created = LocalCluster::Create(std::move(def), options);
    ASSERT_TRUE(created.ok()) << created.status();
    cluster = *std::move(created);
    absl::Status started = cluster->Start();
    ASSERT_TRUE(started.ok()) << started;
  }
  ~Rig() {
    if (cluster != nullptr) {
      EXPECT_TRUE(cluster->Kill(milliseconds(2000)).ok());
    }
  }
  std::string Errors() const {
    std::string all;
    for (const std::string& e : cluster->RecentErrors()) all += e + "\n";
    return all;
  }
  std::vector<int> Pids() const {
    std::ifstream in(dir.File("pids.txt"));
    std::vector<int> pids;
    for (int pid; in >> pid;) pids.push_back(pid);
    return pids;
  }
};

// sentences -> shell split (Python) -> count, fields-grouped on word.
core::TopologyDef SplitTopology(const std::vector<std::string>& command, int64_t max_pending) {
  TopologyBuilder b("multilang");
  b.SetSpout("sentences", "test.Sentences");
  b.SetBolt("split", "org.apache.storm.flux.wrappers.bolts.FluxShellBolt", 2)
      .ShuffleGrouping("sentences");
  b.SetBolt("count", "test.Count", 2).FieldsGrouping("split", {"word"});
  b.Config(api::kTopologyMaxSpoutPending, api::Value(max_pending));
  core::TopologyDef def = b.Build();
  for (core::ComponentDef& c : def.bolts) {
    if (c.id.value() != "split") continue;
    c.args.constructor_args = {StringList(command), StringList({"word"})};
  }
  return def;
}

TEST(ShellBoltTest, WordCountThroughPythonSplitBoltIsCompleteAndExact) {
  Rig run;
  constexpr int64_t kCount = 500;
  run.AddSpout(kCount);
  run.AddCounter(0);
  run.Start(SplitTopology({Python3(), ExampleScript("splitsentence.py")}, 100));
  ASSERT_NE(run.cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(kWait, [&] { return run.shared->NumAcked() == kCount; }))
      << run.shared->NumAcked() << " acked; errors:\n" << run.Errors();
  std::lock_guard<std::mutex> lock(run.shared->mu);
  EXPECT_EQ(run.shared->failed, 0);
  EXPECT_EQ(run.shared->counts, ExpectedCounts(kCount));
  EXPECT_EQ(*run.shared->acked.begin(), 0);
  EXPECT_EQ(*run.shared->acked.rbegin(), kCount - 1);
}

TEST(ShellBoltTest, ChildKilledMidStreamIsRestartedAndNothingIsLost) {
  Rig run;
  constexpr int64_t kCount = 3000;
  run.AddSpout(kCount);
  run.AddCounter(0);
  core::TopologyDef def =
      SplitTopology({Python3(), TestScript("faulty_bolt.py"), "kill", "0"}, 200);
  def.bolts[0].parallelism = 1;
  run.Start(std::move(def));
  ASSERT_NE(run.cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(kWait, [&] { return run.shared->NumWords() >= 300; }));
  ASSERT_EQ(run.Pids().size(), 1u);
  ASSERT_EQ(::kill(run.Pids()[0], SIGKILL), 0);
  ASSERT_TRUE(testing::Eventually(kWait, [&] { return run.shared->NumAcked() == kCount; }))
      << run.shared->NumAcked() << " acked; errors:\n" << run.Errors();
  EXPECT_EQ(run.Pids().size(), 2u) << "the child was restarted once";
  EXPECT_NE(run.Errors().find("killed by signal 9"), std::string::npos) << run.Errors();
  std::lock_guard<std::mutex> lock(run.shared->mu);
  for (int64_t id = 0; id < kCount; ++id) EXPECT_TRUE(run.shared->acked.contains(id)) << id;
  // Words counted before the kill whose sentences failed are counted again.
  EXPECT_GE(run.shared->words, ExpectedCounts(kCount).size());
}

struct FaultCase {
  std::string mode;
  std::string expected_error;
};

class ShellBoltFaultTest : public ::testing::TestWithParam<FaultCase> {};

TEST_P(ShellBoltFaultTest, ReportsOneClearErrorRestartsAndLosesNothing) {
  const FaultCase& fault = GetParam();
  Rig run;
  constexpr int64_t kCount = 400;
  run.AddSpout(kCount);
  run.AddCounter(0);
  core::TopologyDef def =
      SplitTopology({Python3(), TestScript("faulty_bolt.py"), fault.mode, "50"}, 100);
  def.bolts[0].parallelism = 1;
  def.config.Set("topology.subprocess.timeout.secs", api::Value(2));
  run.Start(std::move(def));
  ASSERT_NE(run.cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(kWait, [&] { return run.shared->NumAcked() == kCount; }))
      << run.shared->NumAcked() << " acked; errors:\n" << run.Errors();
  const std::string errors = run.Errors();
  EXPECT_NE(errors.find(fault.expected_error), std::string::npos) << errors;
  EXPECT_NE(errors.find("restarting it"), std::string::npos) << errors;
  EXPECT_EQ(run.Pids().size(), 2u) << errors;
  std::lock_guard<std::mutex> lock(run.shared->mu);
  for (int64_t id = 0; id < kCount; ++id) EXPECT_TRUE(run.shared->acked.contains(id)) << id;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, ShellBoltFaultTest,
    ::testing::Values(FaultCase{"malformed", "malformed JSON from the child"},
                      FaultCase{"binary", "malformed JSON from the child"},
                      FaultCase{"huge", "exceeds 16777216 bytes"},
                      FaultCase{"hang", "subprocess heartbeat timeout"}),
    [](const ::testing::TestParamInfo<FaultCase>& info) { return info.param.mode; });

TEST(ShellBoltTest, ProtocolNonsenseIsReportedWithoutRestartOrCrash) {
  Rig run;
  constexpr int64_t kCount = 200;
  run.AddSpout(kCount);
  run.AddCounter(0);
  core::TopologyDef def =
      SplitTopology({Python3(), TestScript("faulty_bolt.py"), "nonsense", "10"}, 50);
  def.bolts[0].parallelism = 1;
  run.Start(std::move(def));
  ASSERT_NE(run.cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(kWait, [&] { return run.shared->NumAcked() == kCount; }))
      << run.shared->NumAcked() << " acked; errors:\n" << run.Errors();
  const std::string errors = run.Errors();
  EXPECT_NE(errors.find("unknown command"), std::string::npos) << errors;
  EXPECT_NE(errors.find("ack of an unknown tuple id"), std::string::npos) << errors;
  EXPECT_NE(errors.find("on undeclared stream 'nowhere'"), std::string::npos) << errors;
  EXPECT_NE(errors.find("with 3 value(s)"), std::string::npos) << errors;
  EXPECT_EQ(errors.find("restarting it"), std::string::npos) << errors;
  EXPECT_EQ(run.Pids().size(), 1u);
}

// Python spout -> a bolt failing every 7th delivery: the spout replays what
// failed until all 300 sentences are acked.
TEST(ShellSpoutTest, PythonSpoutReplaysFailedTuplesUntilAllAreAcked) {
  Rig run;
  constexpr int64_t kCount = 300;
  run.AddCounter(7);
  TopologyBuilder b("multilang-spout");
  b.SetSpout("sentences", "org.apache.storm.flux.wrappers.spouts.FluxShellSpout");
  b.SetBolt("count", "test.Count").ShuffleGrouping("sentences");
  b.Config(api::kTopologyMaxSpoutPending, api::Value(50));
  core::TopologyDef def = b.Build();
  def.spouts[0].args.constructor_args = {
      StringList({Python3(), ExampleScript("sentence_spout.py"), std::to_string(kCount)}),
      StringList({"sentence"})};
  run.Start(std::move(def));
  ASSERT_NE(run.cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(kWait, [&] {
    const worker::LocalClusterStats stats = run.cluster->Stats();
    return stats.acked == kCount && stats.pending == 0;
  })) << run.cluster->Stats().acked << " acked; errors:\n" << run.Errors();
  const worker::LocalClusterStats stats = run.cluster->Stats();
  EXPECT_GT(stats.failed, 0);
  // Every delivery was either failed or counted; replays made up the failures.
  EXPECT_EQ(run.shared->NumWords(), kCount);
  EXPECT_EQ(stats.spout_emitted, kCount + stats.failed);
  EXPECT_EQ(stats.errors, 0) << run.Errors();
}

}  // namespace
}  // namespace tempest

namespace tempest {
namespace {

class ShellSpoutFaultTest : public ::testing::TestWithParam<FaultCase> {};

// A spout child that dies or breaks the protocol is reported and restarted,
// and the restarted child's tuples flow and are acked.
TEST_P(ShellSpoutFaultTest, ReportsTheFailureAndRestartsTheChild) {
  const FaultCase& fault = GetParam();
  Rig run;
  run.AddCounter(0);
  TopologyBuilder b("multilang-spout-fault");
  b.SetSpout("sentences", "tempest.ShellSpout");
  b.SetBolt("count", "test.Count").ShuffleGrouping("sentences");
  b.Config(api::kTopologyMaxSpoutPending, api::Value(50));
  core::TopologyDef def = b.Build();
  def.spouts[0].args.constructor_args = {
      StringList({Python3(), TestScript("crashing_spout.py"), fault.mode, "100"}),
      StringList({"sentence"})};
  run.Start(std::move(def));
  ASSERT_NE(run.cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(kWait, [&] {
    return run.Pids().size() == 2 && run.cluster->Stats().acked >= 300;
  })) << run.cluster->Stats().acked << " acked; errors:\n" << run.Errors();
  const std::string errors = run.Errors();
  EXPECT_NE(errors.find(fault.expected_error), std::string::npos) << errors;
  EXPECT_NE(errors.find("restarting it"), std::string::npos) << errors;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, ShellSpoutFaultTest,
    ::testing::Values(FaultCase{"exit", "exited 3"},
                      FaultCase{"malformed", "malformed JSON from the child"}),
    [](const ::testing::TestParamInfo<FaultCase>& info) { return info.param.mode; });

}  // namespace
}  // namespace tempest

// Restarts and deactivation against children on the Storm-like adapter
// (examples/legacy/multilang/storm.py): each emit blocks until its task ids
// arrive, commands arriving before them are queued, heartbeats get `sync`,
// bolt emits are anchored to the input.
namespace tempest {
namespace {

constexpr int64_t kRestartPending = 20;

core::TopologyDef StormLikeSplit(const std::string& mode, int n) {
  core::TopologyDef def = SplitTopology(
      {Python3(), TestScript("storm_like_bolt.py"), mode, std::to_string(n)}, kRestartPending);
  def.bolts[0].parallelism = 1;
  def.bolts[1].parallelism = 1;
  def.config.Set("topology.subprocess.timeout.secs", api::Value(2));
  return def;
}

int64_t Failed(Rig& run) {
  std::lock_guard<std::mutex> lock(run.shared->mu);
  return run.shared->failed;
}

// Runs `count` sentences through storm_like_bolt.py MODE N until all are acked.
void RunUntilAllAcked(Rig& run, int64_t count, const std::string& mode, int n) {
  run.AddSpout(count);
  run.AddCounter(0);
  run.Start(StormLikeSplit(mode, n));
  ASSERT_NE(run.cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(
      kWait, [&] { return static_cast<int64_t>(run.shared->NumAcked()) == count; }))
      << run.shared->NumAcked() << " acked; errors:\n" << run.Errors();
}

TEST(ShellBoltRestartTest, HungChildIsRestartedWithoutAReplayStorm) {
  Rig run;
  RunUntilAllAcked(run, 300, "hang", 50);
  EXPECT_NE(run.Errors().find("subprocess heartbeat timeout"), std::string::npos) << run.Errors();
  EXPECT_EQ(run.Pids().size(), 2u);
  // Only the tuples in flight when the child hung failed; their replays
  // waited for the new child.
  EXPECT_LE(Failed(run), kRestartPending);
  EXPECT_GT(Failed(run), 0);
}

TEST(ShellBoltRestartTest, ChildDyingEveryFewInputsMakesProgressWithoutAReplayStorm) {
  Rig run;
  constexpr int64_t kCount = 200;
  RunUntilAllAcked(run, kCount, "die", 40);
  const size_t children = run.Pids().size();
  EXPECT_GE(children, kCount / 40u);
  EXPECT_NE(run.Errors().find("exited 5"), std::string::npos) << run.Errors();
  // At most what was in flight fails per death.
  EXPECT_LE(Failed(run), static_cast<int64_t>(children) * kRestartPending);
  std::lock_guard<std::mutex> lock(run.shared->mu);
  for (int64_t id = 0; id < kCount; ++id) EXPECT_TRUE(run.shared->acked.contains(id)) << id;
}

TEST(ShellBoltRestartTest, ChildWritingGarbageIsRestartedEverSlowerAndFailsLittle) {
  Rig run;
  run.AddSpout(1000);
  run.AddCounter(0);
  run.Start(StormLikeSplit("garbage", 1));
  ASSERT_NE(run.cluster, nullptr);
  // Restart delays 250, 500, 1000 ms: four children within a few seconds.
  ASSERT_TRUE(testing::Eventually(kWait, [&] { return run.Pids().size() >= 4; }))
      << run.Errors();
  const size_t children = run.Pids().size();
  EXPECT_NE(run.Errors().find("malformed JSON from the child"), std::string::npos)
      << run.Errors();
  // Every child fails what it was given (at most the spout's pending
  // tuples); nothing fails while no child runs.
  EXPECT_LE(Failed(run), static_cast<int64_t>(children + 1) * kRestartPending);
  EXPECT_EQ(run.shared->NumAcked(), 0u);
}

TEST(ShellBoltRestartTest, HandshakeContextCarriesStormsSubscriptionKeys) {
  Rig run;
  RunUntilAllAcked(run, 10, "die", 1000);
  std::ifstream in(run.dir.File("context.json"));
  const nlohmann::json context = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(context.is_object());
  EXPECT_EQ(context["componentid"], "split");
  EXPECT_EQ(context["stream->target->grouping"]["default"]["count"]["type"], "FIELDS");
  EXPECT_EQ(context["stream->target->grouping"]["default"]["count"]["fields"],
            nlohmann::json::array({"word"}));
  EXPECT_EQ(context["source->stream->grouping"]["sentences"]["default"]["type"], "SHUFFLE");
  EXPECT_EQ(context["source->stream->fields"]["sentences"]["default"],
            nlohmann::json::array({"sentence"}));
  EXPECT_EQ(context["stream->outputfields"]["default"], nlohmann::json::array({"word"}));
}

// Acks every input but fails those whose sentence number is a multiple of 3,
// 3 ms each, so tuples are still in flight when the spout is deactivated.
class SlowJudgeBolt final : public api::Bolt {
 public:
  absl::Status Prepare(const api::Config&, const api::TopologyContext&,
                       api::OutputCollector& collector) override {
    collector_ = &collector;
    return absl::OkStatus();
  }
  void Execute(const api::Tuple& input) override {
    if (input.IsTick()) return;
    std::this_thread::sleep_for(milliseconds(3));
    const std::string sentence = input.GetString(0);
    const int64_t n = std::atoll(sentence.substr(sentence.rfind(' ') + 1).c_str());
    if (n % 3 == 0) {
      collector_->Fail(input);
    } else {
      collector_->Ack(input);
    }
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer&) const override {}

 private:
  api::OutputCollector* collector_ = nullptr;
};

TEST(ShellSpoutDeactivateTest, DeactivateAcksAndFailsAfterItReachTheChild) {
  Rig run;
  ASSERT_TRUE(run.registry
                  .RegisterBolt("test.SlowJudge",
                                &api::registry_internal::Make<api::Bolt, SlowJudgeBolt>)
                  .ok());
  TopologyBuilder b("multilang-deactivate");
  b.SetSpout("sentences", "tempest.ShellSpout");
  b.SetBolt("judge", "test.SlowJudge").ShuffleGrouping("sentences");
  b.Config(api::kTopologyMaxSpoutPending, api::Value(30));
  core::TopologyDef def = b.Build();
  def.spouts[0].args.constructor_args = {
      StringList({Python3(), TestScript("recording_spout.py"), "100000"}),
      StringList({"sentence"})};
  run.Start(std::move(def));
  ASSERT_NE(run.cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(kWait, [&] {
    const worker::LocalClusterStats s = run.cluster->Stats();
    return s.acked + s.failed >= 60;
  })) << run.Errors();
  run.cluster->Deactivate();
  // What the child saw, from its own record.
  struct Seen {
    std::set<std::string> emitted, answered;
    int64_t acks = 0, fails = 0, after_deactivate = 0, deactivates = 0, duplicates = 0;
  };
  auto read_seen = [&] {
    Seen seen;
    std::ifstream in(run.dir.File("commands.txt"));
    for (std::string line; std::getline(in, line);) {
      if (line == "deactivate") ++seen.deactivates;
      if (line.rfind("emit ", 0) == 0) seen.emitted.insert(line.substr(5));
      const bool ack = line.rfind("ack ", 0) == 0;
      const bool fail = line.rfind("fail ", 0) == 0;
      if (!ack && !fail) continue;
      seen.acks += ack ? 1 : 0;
      seen.fails += fail ? 1 : 0;
      seen.after_deactivate += seen.deactivates > 0 ? 1 : 0;
      if (!seen.answered.insert(line.substr(ack ? 4 : 5)).second) ++seen.duplicates;
    }
    return seen;
  };
  Seen seen;
  ASSERT_TRUE(testing::Eventually(kWait, [&] {
    seen = read_seen();
    const worker::LocalClusterStats s = run.cluster->Stats();
    return seen.deactivates == 1 && seen.answered == seen.emitted && s.pending == 0 &&
           s.acked == seen.acks && s.failed == seen.fails;
  })) << seen.emitted.size() << " emitted, " << seen.answered.size() << " answered; errors:\n"
      << run.Errors();
  EXPECT_GT(seen.after_deactivate, 0) << "tuples in flight at deactivate were answered";
  EXPECT_GT(seen.fails, 0);
  EXPECT_EQ(seen.duplicates, 0);
  EXPECT_EQ(run.cluster->Stats().errors, 0) << run.Errors();
}

// The handshake conf and the child's environment hold no credential: the
// conf leaves out every credential key, the environment is the allowlist plus
// the topology's own topology.environment.
TEST(ShellBoltSecretsTest, HandshakeConfAndEnvironmentHoldNoCredential) {
  Rig run;
  run.AddSpout(20);
  run.AddCounter(0);
  std::filesystem::copy_file(ExampleScript("storm.py"), run.dir.File("storm.py"));
  std::ofstream(run.dir.File("recorder.py")) << R"(import json
import os
import storm


class Recorder(storm.BasicBolt):
    def initialize(self, conf, context):
        with open(os.environ["RECORD_TO"], "w") as f:
            json.dump({"conf": conf, "env": dict(os.environ)}, f)

    def process(self, tup):
        storm.emit([tup.values[0]])


Recorder().run()
)";
  ::setenv("TEMPEST_TEST_SECRET", "planted-in-the-worker", 1);
  core::TopologyDef def = SplitTopology({"/usr/bin/python3", "recorder.py"}, 50);
  api::ValueMap environment;
  environment["RECORD_TO"] = api::Value(run.dir.File("seen.json"));
  environment["TOPOLOGY_MARKER"] = api::Value("from-topology-environment");
  def.config.Set("topology.environment", api::Value(std::move(environment)));
  def.config.Set("storm.zookeeper.auth.scheme", api::Value("digest"));
  def.config.Set("storm.zookeeper.auth.payload", api::Value("tempest:cluster-pw-1f2e"));
  def.config.Set("storm.zookeeper.topology.auth.payload", api::Value("topo:topology-pw-3a4b"));
  def.config.Set("app.database.password", api::Value("db-pw-5c6d"));
  run.Start(std::move(def));
  ASSERT_TRUE(testing::Eventually(kWait, [&] { return run.shared->NumAcked() == 20; }))
      << run.Errors();
  ::unsetenv("TEMPEST_TEST_SECRET");
  std::ifstream in(run.dir.File("seen.json"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string recorded = text.str();
  for (const char* secret : {"cluster-pw-1f2e", "topology-pw-3a4b", "db-pw-5c6d",
                             "planted-in-the-worker"}) {
    EXPECT_EQ(recorded.find(secret), std::string::npos) << secret << " reached the child";
  }
  const nlohmann::json seen = nlohmann::json::parse(recorded, nullptr, false);
  ASSERT_TRUE(seen.is_object()) << recorded;
  EXPECT_FALSE(seen["conf"].contains("storm.zookeeper.auth.scheme"));
  EXPECT_TRUE(seen["conf"].contains("topology.max.spout.pending")) << "the rest is passed on";
  EXPECT_EQ(seen["env"].value("TOPOLOGY_MARKER", ""), "from-topology-environment");
  EXPECT_FALSE(seen["env"].contains("TEMPEST_TEST_SECRET"));
}

}  // namespace
}  // namespace tempest
