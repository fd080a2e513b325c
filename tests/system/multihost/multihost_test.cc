// A real multi-host Tempest cluster on network-namespace hosts
// (multihost_world.h): ZooKeeper ensemble, leader and standby nimbus and
// three supervisors each on hosts of their own, driven from a client host.
// A reliable topology (tempest.SequenceSpout -> tempest.IdentityBolt ->
// tempest.VerifierBolt, as in docs/user-guide.md) runs with one worker per
// supervisor host, so tuples and acks cross hosts over the authenticated
// transport; then the network misbehaves: a supervisor host cut off from
// everyone, a pair of worker hosts cut from each other while both still reach
// ZooKeeper, one host dropping a share of its packets. Under at-least-once,
// nothing may be lost in any case.
//
// Needs root, iproute2 and nftables (deploy/install-deps.sh). Where network
// namespaces cannot be made the tests fail and say why: they never pass by
// skipping.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/system/multihost/multihost_world.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// j[key] as an integer; `otherwise` when j is no object, lacks the key or
// holds something else there (`tempest offsets show` writes null for a
// partition with no stored offset yet).
int64_t Int(const json& j, const std::string& key, int64_t otherwise) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return otherwise;
  return j[key].get<int64_t>();
}

// True while `pid` runs. A zombie does not: it has released everything,
// including its namespaces, and waits only for its parent (for orphaned
// workers, the machine's init) to reap it.
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

class MultiHostTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("tempest-multihost");
    const Clock::time_point start = Clock::now();
    absl::StatusOr<std::unique_ptr<MultiHostWorld>> world =
        MultiHostWorld::Start(dir_->path(), TempestBinary());
    if (world.ok()) {
      world_ = world->release();
      std::printf("multi-host world up in %.1f s\n", SecondsSince(start));
    } else {
      *start_error_ = std::string(world.status().message());
    }
  }

  static void TearDownTestSuite() {
    delete world_;
    world_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(world_, nullptr)
        << "the multi-host world could not be built (this test needs root, iproute2 and "
           "nftables to make network-namespace hosts; it fails rather than skips): "
        << *start_error_;
  }

  // A reliable topology across the 3 supervisor hosts: `count` seqs at
  // `rate` per second, a 6 s message timeout so lost trees replay soon.
  std::string Submit(const std::string& name, int64_t count, int64_t rate) {
    const std::string out = dir_->File(name);
    std::filesystem::create_directories(out);
    std::filesystem::permissions(out, std::filesystem::perms::all);
    const std::string yaml = absl::StrCat(
        "name: ", name, "\n",
        "config:\n"
        "  topology.workers: 3\n"
        "  topology.acker.executors: 3\n"
        "  topology.message.timeout.secs: 6\n"
        "  topology.max.spout.pending: 500\n"
        "spouts:\n"
        "  - id: generator\n"
        "    className: tempest.SequenceSpout\n"
        "    parallelism: 1\n"
        "    properties:\n"
        "      - name: count\n"
        "        value: ", count, "\n",
        "      - name: rate\n"
        "        value: ", rate, "\n",
        "      - name: reliable\n"
        "        value: true\n"
        "bolts:\n"
        "  - id: identity\n"
        "    className: tempest.IdentityBolt\n"
        "    parallelism: 3\n"
        "  - id: verifier\n"
        "    className: tempest.VerifierBolt\n"
        "    parallelism: 1\n"
        "    properties:\n"
        "      - name: logPath\n"
        "        value: \"", out, "/verifier.log\"\n",
        "      - name: expected\n"
        "        value: ", count, "\n",
        "streams:\n"
        "  - from: generator\n"
        "    to: identity\n"
        "    grouping:\n"
        "      type: SHUFFLE\n"
        "  - from: identity\n"
        "    to: verifier\n"
        "    grouping:\n"
        "      type: SHUFFLE\n");
    const std::string path = dir_->File(name + ".yaml");
    std::ofstream(path) << yaml;
    absl::StatusOr<std::string> id = world_->Tempest({"submit", path}, milliseconds(60000));
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) return "";
    std::string trimmed = *id;
    while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r')) {
      trimmed.pop_back();
    }
    return trimmed;
  }

  std::string VerifierLog(const std::string& name) const {
    return dir_->File(name + "/verifier.log");
  }

  // `tempest verify LOG --expected N --json`; null when it could not run.
  json Verify(const std::string& name, int64_t expected) {
    static int runs = 0;
    CommandRun r = RunCommand({TempestBinary(), "verify", VerifierLog(name), "--expected",
                               absl::StrCat(expected), "--json"},
                              dir_->File(absl::StrCat("verify-", ++runs)), milliseconds(30000));
    json j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json() : j;
  }

  int64_t Unique(const std::string& name, int64_t expected) {
    json v = Verify(name, expected);
    return v.is_object() ? Int(v, "unique", 0) : 0;
  }

  // Waits until the topology's workers run on every supervisor host, as
  // nimbus reports them (workers[].host).
  void ExpectWorkersOnAllHosts(const std::string& id, seconds bound) {
    std::set<std::string> want;
    for (int i = 0; i < MultiHostWorld::kSupervisors; ++i) {
      want.insert(world_->Address(MultiHostWorld::SupervisorHost(i)));
    }
    std::set<std::string> seen;
    ASSERT_TRUE(Eventually(bound, [&] {
      const std::vector<std::string> hosts = world_->WorkerHosts(id);
      seen = std::set<std::string>(hosts.begin(), hosts.end());
      return seen == want;
    }, milliseconds(250)))
        << "workers on " << absl::StrJoin(seen, ",") << ", want " << absl::StrJoin(want, ",")
        << "\n" << world_->LogTails();
  }

  // Waits until every seq is in the verifier log: none missing.
  void ExpectNothingLost(const std::string& name, int64_t count, seconds bound) {
    json v;
    EXPECT_TRUE(Eventually(bound, [&] {
      v = Verify(name, count);
      return v.is_object() && Int(v, "missing", -1) == 0;
    }, milliseconds(1000)))
        << v.dump() << "\n" << world_->LogTails();
    EXPECT_EQ(Int(v, "unexpected", 0), 0) << v.dump();
    std::printf("%s: %s\n", name.c_str(), v.dump().c_str());
  }

  // Submits, and waits until the workers run on all 3 supervisor hosts and
  // the verifier has seen some seqs. The id, or "" after a failure.
  std::string StartRunning(const std::string& name, int64_t count, int64_t rate) {
    const std::string id = Submit(name, count, rate);
    EXPECT_FALSE(id.empty());
    if (id.empty()) return "";
    ExpectWorkersOnAllHosts(id, seconds(90));
    if (HasFailure()) return "";
    if (!Eventually(seconds(60), [&] { return Unique(name, count) > 300; }, milliseconds(500))) {
      ADD_FAILURE() << name << " made no progress\n" << world_->LogTails();
      return "";
    }
    return id;
  }

  // Waits until the verifier has seen `more` seqs beyond what it has now.
  bool Progresses(const std::string& name, int64_t count, int64_t more, seconds bound) {
    const int64_t now = Unique(name, count);
    return Eventually(bound, [&] { return Unique(name, count) >= std::min(count, now + more); },
                      milliseconds(500));
  }

  void Kill(const std::string& name) {
    absl::StatusOr<std::string> killed =
        world_->Tempest({"kill", name, "-w", "1"}, milliseconds(30000));
    EXPECT_TRUE(killed.ok()) << killed.status();
    // A killed topology holds its slots until it is removed; the next case
    // needs every slot free to spread over all hosts.
    json summary;
    EXPECT_TRUE(Eventually(seconds(30), [&] {
      summary = world_->RestGet("/api/v1/topology/summary");
      if (!summary.is_object() || !summary.contains("topologies")) return false;
      for (const json& t : summary["topologies"]) {
        if (t.value("name", "") == name) return false;
      }
      return true;
    }, milliseconds(250))) << summary.dump();
  }

  // Appends the records `from`..`to` (their decimal text as the value) to
  // `topic` of the dev Kafka with kcat, run on the client host.
  bool Produce(const std::string& topic, int64_t from, int64_t to) {
    static int runs = 0;
    CommandRun r = RunCommand(
        world_->hosts().Command(world_->HostIndex("client"),
                                {"sh", "-c",
                                 absl::StrCat("seq ", from, " ", to, " | kcat -P -b ",
                                              world_->KafkaBootstrap(), " -t ", topic)}),
        dir_->File(absl::StrCat("produce-", ++runs)), milliseconds(60000));
    EXPECT_TRUE(r.finished && r.exit_code == 0) << r.out << r.err;
    return r.finished && r.exit_code == 0;
  }

  // `tempest offsets show --json` for the spout `id`, from the client host.
  json Offsets(const std::string& id) {
    CommandRun r = RunCommand(
        world_->hosts().Command(
            world_->HostIndex("client"),
            {TempestBinary(), "offsets", "show", "--zk", world_->ZkConnect(), "--root",
             "/kafkaspout", "--id", id, "--bootstrap", world_->KafkaBootstrap(), "--json"}),
        dir_->File("offsets"), milliseconds(30000));
    json j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json() : j;
  }

  // True once every partition of spout `id` is committed up to its log end
  // and the log ends add up to `n` records.
  bool AllCommitted(const std::string& id, int64_t n) {
    json j = Offsets(id);
    int64_t ends = 0;
    for (const json& p : j.value("partitions", json::array())) {
      if (Int(p, "committed_offset", -1) != Int(p, "log_end_offset", -2)) {
        return false;
      }
      ends += Int(p, "log_end_offset", 0);
    }
    return ends == n;
  }

  // Waits until spout `id` committed `n` records and the verifier has seen
  // everything it will see (its count stays put for 2 s); then its report.
  json Settled(const std::string& name, int64_t n) {
    if (!Eventually(seconds(60), [&] { return AllCommitted(name, n); }, milliseconds(500))) {
      ADD_FAILURE() << "not committed to the log end: " << Offsets(name).dump() << "\n"
                    << world_->LogTails();
      return json();
    }
    json last;
    Eventually(seconds(30), [&] {
      json now = Verify(name, n);
      const bool same = last.is_object() && now.is_object() &&
                        Int(now, "received", -1) == Int(last, "received", -2);
      last = now;
      if (!same) std::this_thread::sleep_for(seconds(2));
      return same;
    }, milliseconds(10));
    return last;
  }

  // What a KafkaSpout case measured: `tempest verify` once the first batch
  // was committed, and once everything was after healing.
  struct KafkaCut {
    json first;
    json final;
  };

  // A KafkaSpout (offsets in ZooKeeper, `guarantee`, 3 partitions, one task
  // per supervisor host) reads `topic`: a first batch of records, committed
  // to the log end; then sup1 is cut from every ZooKeeper member (it keeps
  // Kafka and the other workers) while a second batch arrives; then healed,
  // until every partition is committed to its log end again. Checks that no
  // committed offset goes back.
  KafkaCut RunKafkaCut(const std::string& topic, const std::string& guarantee) {
    KafkaCut result;
    const std::string& name = topic;
    const int64_t first = 3000;
    const int64_t total = 6000;
    if (!Produce(topic, 0, first - 1)) return result;
    const std::string out = dir_->File(name);
    std::filesystem::create_directories(out);
    std::filesystem::permissions(out, std::filesystem::perms::all);
    const std::string yaml = absl::StrCat(
        "name: ", name, "\n",
        "config:\n"
        "  topology.workers: 3\n"
        "  topology.acker.executors: 3\n"
        "  topology.message.timeout.secs: 6\n"
        "  topology.max.spout.pending: 300\n"
        "spouts:\n"
        "  - id: kafka\n"
        "    className: tempest.KafkaSpout\n"
        "    parallelism: 3\n"
        "    properties:\n"
        "      - name: bootstrap.servers\n"
        "        value: \"", world_->KafkaBootstrap(), "\"\n",
        "      - name: topics\n"
        "        value: ", topic, "\n",
        "      - name: zkServers\n"
        "        value: \"", world_->ZkConnect(), "\"\n",
        "      - name: zkRoot\n"
        "        value: /kafkaspout\n"
        "      - name: id\n"
        "        value: ", name, "\n",
        "      - name: processingGuarantee\n"
        "        value: ", guarantee, "\n",
        "      - name: startOffsetTime\n"
        "        value: -2\n"
        "      - name: stateUpdateIntervalMs\n"
        "        value: 1000\n"
        "bolts:\n"
        "  - id: identity\n"
        "    className: tempest.IdentityBolt\n"
        "    parallelism: 3\n"
        "    properties:\n"
        "      - name: fields\n"
        "        value: [topic, partition, offset, key, value]\n"
        "  - id: verifier\n"
        "    className: tempest.VerifierBolt\n"
        "    parallelism: 1\n"
        "    properties:\n"
        "      - name: field\n"
        "        value: value\n"
        "      - name: logPath\n"
        "        value: \"", out, "/verifier.log\"\n",
        "      - name: expected\n"
        "        value: ", total, "\n",
        "streams:\n"
        "  - from: kafka\n"
        "    to: identity\n"
        "    grouping:\n"
        "      type: SHUFFLE\n"
        "  - from: identity\n"
        "    to: verifier\n"
        "    grouping:\n"
        "      type: SHUFFLE\n");
    const std::string path = dir_->File(name + ".yaml");
    std::ofstream(path) << yaml;
    absl::StatusOr<std::string> submitted =
        world_->Tempest({"submit", path}, milliseconds(60000));
    if (!submitted.ok()) {
      ADD_FAILURE() << submitted.status();
      return result;
    }
    std::string id = *submitted;
    while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
    ExpectWorkersOnAllHosts(id, seconds(90));
    if (HasFatalFailure()) return result;
    result.first = Settled(name, first);
    std::printf("%s, first batch: %s\n", name.c_str(), result.first.dump().c_str());

    auto committed = [&] {
      std::map<int64_t, int64_t> offsets;
      for (const json& p : Offsets(name).value("partitions", json::array())) {
        offsets[Int(p, "partition", -1)] = Int(p, "committed_offset", -1);
      }
      return offsets;
    };
    const std::map<int64_t, int64_t> before = committed();

    // sup1 keeps Kafka and the other workers but loses every ZooKeeper member.
    const int sup1 = world_->HostIndex("sup1");
    for (const char* zk : {"zk1", "zk2", "zk3"}) {
      if (!world_->hosts().CutPair(sup1, world_->HostIndex(zk)).ok()) {
        ADD_FAILURE() << "cannot cut sup1 from " << zk;
        return result;
      }
    }
    const Clock::time_point cut = Clock::now();
    const bool produced = Produce(topic, first, total - 1);
    std::this_thread::sleep_for(seconds(12));
    std::printf("sup1 cut from ZooKeeper for %.1f s; workers now on %s\n", SecondsSince(cut),
                absl::StrJoin(world_->WorkerHosts(id), ",").c_str());
    const absl::Status healed = world_->hosts().Heal();
    if (!healed.ok() || !produced) {
      ADD_FAILURE() << healed;
      return result;
    }
    const Clock::time_point heal = Clock::now();
    if (guarantee == "AT_LEAST_ONCE") ExpectNothingLost(name, total, seconds(120));
    result.final = Settled(name, total);
    const std::map<int64_t, int64_t> after = committed();
    for (const auto& [partition, offset] : before) {
      EXPECT_GE(after.count(partition) ? after.at(partition) : -1, offset)
          << "partition " << partition << "'s committed offset went back";
    }
    std::printf("%s: settled %.1f s after healing: %s\n", name.c_str(), SecondsSince(heal),
                result.final.dump().c_str());
    Kill(name);
    return result;
  }

  static TempDir* dir_;
  static MultiHostWorld* world_;
  static std::string* start_error_;
};

TempDir* MultiHostTest::dir_ = nullptr;
MultiHostWorld* MultiHostTest::world_ = nullptr;
std::string* MultiHostTest::start_error_ = new std::string();

TEST_F(MultiHostTest, DaemonsServeOnTheirOwnHostAddresses) {
  // Both nimbuses, bound to every interface, advertise their host's address
  // (storm.local.hostname), and exactly one leads.
  const std::vector<std::string> nimbuses = world_->NimbusAddresses();
  ASSERT_EQ(nimbuses.size(), 2u);
  EXPECT_EQ(nimbuses[0], absl::StrCat(world_->Address("nimbus1"), ":", MultiHostWorld::kUiPort));
  EXPECT_EQ(nimbuses[1], absl::StrCat(world_->Address("nimbus2"), ":", MultiHostWorld::kUiPort));
  json summary;
  ASSERT_TRUE(Eventually(seconds(30), [&] {
    summary = world_->RestGet("/api/v1/nimbus/summary");
    if (!summary.is_object() || !summary.contains("nimbuses")) return false;
    int leaders = 0;
    for (const json& n : summary["nimbuses"]) {
      if (n.value("status", "") == "Leader") ++leaders;
    }
    return summary["nimbuses"].size() == 2 && leaders == 1;
  }, milliseconds(250))) << summary.dump();
  // Every supervisor registered under its host's address.
  json sups = world_->RestGet("/api/v1/supervisor/summary");
  std::set<std::string> hosts;
  for (const json& s : sups["supervisors"]) hosts.insert(s.value("host", ""));
  std::set<std::string> want;
  for (int i = 0; i < MultiHostWorld::kSupervisors; ++i) {
    want.insert(world_->Address(MultiHostWorld::SupervisorHost(i)));
  }
  EXPECT_EQ(hosts, want) << sups.dump();
}

TEST_F(MultiHostTest, TopologySpreadsOverThreeHostsAndLosesNothing) {
  const int64_t count = 3000;
  const std::string name = "mh-spread";
  const std::string id = Submit(name, count, 500);
  ASSERT_FALSE(id.empty());
  ExpectWorkersOnAllHosts(id, seconds(90));
  if (HasFatalFailure()) return;
  ExpectNothingLost(name, count, seconds(90));
  json v = Verify(name, count);
  EXPECT_EQ(Int(v, "duplicated", -1), 0) << "nothing failed, so nothing replayed";
  Kill(name);
}

TEST_F(MultiHostTest, SupervisorHostCutOffThenHealedLosesNothing) {
  const int64_t count = 6000;
  const std::string name = "mh-isolate";
  const std::string id = Submit(name, count, 200);
  ASSERT_FALSE(id.empty());
  ExpectWorkersOnAllHosts(id, seconds(90));
  if (HasFatalFailure()) return;
  ASSERT_TRUE(Eventually(seconds(60), [&] { return Unique(name, count) > 500; },
                         milliseconds(500)));
  const int sup3 = world_->HostIndex("sup3");
  const std::string sup3_address = world_->Address("sup3");
  const Clock::time_point cut = Clock::now();
  ASSERT_TRUE(world_->hosts().Isolate(sup3).ok());
  // Nimbus stops hearing from sup3's worker and moves its executors to the
  // two other supervisor hosts.
  std::vector<std::string> hosts;
  EXPECT_TRUE(Eventually(seconds(60), [&] {
    hosts = world_->WorkerHosts(id);
    return !hosts.empty() && std::find(hosts.begin(), hosts.end(), sup3_address) == hosts.end();
  }, milliseconds(250)))
      << absl::StrJoin(hosts, ",") << "\n" << world_->LogTails();
  const double reassigned = SecondsSince(cut);
  const int64_t at_reassign = Unique(name, count);
  // The topology makes progress without sup3.
  EXPECT_TRUE(Eventually(seconds(60), [&] { return Unique(name, count) > at_reassign + 200; },
                         milliseconds(500)))
      << world_->LogTails();
  const double progressing = SecondsSince(cut);
  const absl::Status healed = world_->hosts().Heal();
  ASSERT_TRUE(healed.ok()) << healed;
  const Clock::time_point heal = Clock::now();
  ExpectNothingLost(name, count, seconds(120));
  std::printf(
      "isolated sup3: executors moved off it after %.1f s, progress again after %.1f s; "
      "all %lld seqs verified %.1f s after healing\n",
      reassigned, progressing, static_cast<long long>(count), SecondsSince(heal));
  Kill(name);
}

TEST_F(MultiHostTest, WorkerPairCutWhileBothReachZooKeeperLosesNothing) {
  const int64_t count = 6000;
  const std::string name = "mh-pair";
  const std::string id = Submit(name, count, 200);
  ASSERT_FALSE(id.empty());
  ExpectWorkersOnAllHosts(id, seconds(90));
  if (HasFatalFailure()) return;
  ASSERT_TRUE(Eventually(seconds(60), [&] { return Unique(name, count) > 500; },
                         milliseconds(500)));
  const int sup1 = world_->HostIndex("sup1");
  const int sup2 = world_->HostIndex("sup2");
  ASSERT_TRUE(world_->hosts().CutPair(sup1, sup2).ok());
  const Clock::time_point cut = Clock::now();
  // Longer than the message timeout, so trees through the cut link time out
  // and replay; both supervisors keep their ZooKeeper sessions all along.
  std::this_thread::sleep_for(seconds(12));
  json sups = world_->RestGet("/api/v1/supervisor/summary");
  EXPECT_EQ(sups.value("supervisors", json::array()).size(), 3u)
      << "a pair cut must not cost anyone ZooKeeper: " << sups.dump();
  json topology = world_->RestGet("/api/v1/topology/" + id);
  std::printf("pair cut for %.1f s: %s\n", SecondsSince(cut),
              topology.value("topologyStats", json::array()).dump().c_str());
  const absl::Status healed = world_->hosts().Heal();
  ASSERT_TRUE(healed.ok()) << healed;
  const Clock::time_point heal = Clock::now();
  ExpectNothingLost(name, count, seconds(120));
  std::printf("pair cut sup1<->sup2: all %lld seqs verified %.1f s after healing\n",
              static_cast<long long>(count), SecondsSince(heal));
  Kill(name);
}

TEST_F(MultiHostTest, NimbusLeaderCutOffStandbyTakesOver) {
  const int64_t count = 4000;
  const std::string name = "mh-leader";
  const std::string id = StartRunning(name, count, 200);
  ASSERT_FALSE(id.empty());
  const std::vector<std::string> nimbuses = world_->NimbusAddresses();
  std::string leader;
  ASSERT_TRUE(Eventually(seconds(30), [&] { return !(leader = world_->Leader()).empty(); },
                         milliseconds(250)));
  const std::string standby = leader == nimbuses[0] ? nimbuses[1] : nimbuses[0];
  const std::string leader_host = leader == nimbuses[0] ? "nimbus1" : "nimbus2";
  const Clock::time_point cut = Clock::now();
  ASSERT_TRUE(world_->hosts().Isolate(world_->HostIndex(leader_host)).ok());
  // The standby's view: it leads once the old leader's session has expired.
  EXPECT_TRUE(Eventually(seconds(45), [&] { return world_->Leader(standby) == standby; },
                         milliseconds(250)))
      << world_->RestGet("/api/v1/nimbus/summary", standby).dump() << "\n"
      << world_->LogTails();
  const double took_over = SecondsSince(cut);
  // Workers need no nimbus: the topology keeps going meanwhile, and the new
  // leader answers changes.
  EXPECT_TRUE(Progresses(name, count, 200, seconds(60)));
  absl::StatusOr<std::string> listed =
      world_->Tempest({"list"}, milliseconds(30000), standby);
  EXPECT_TRUE(listed.ok()) << listed.status();
  // A client configured with both nimbus hosts, the unreachable one first,
  // still gets through.
  const std::string leader_ip = leader.substr(0, leader.rfind(':'));
  const std::string standby_ip = standby.substr(0, standby.rfind(':'));
  absl::StatusOr<std::string> via_seeds =
      world_->TempestWithSeeds({"list"}, {leader_ip, standby_ip}, milliseconds(30000));
  EXPECT_TRUE(via_seeds.ok()) << via_seeds.status();
  if (via_seeds.ok()) {
    EXPECT_NE(via_seeds->find(name), std::string::npos) << *via_seeds;
  }
  const absl::Status healed = world_->hosts().Heal();
  ASSERT_TRUE(healed.ok()) << healed;
  // The old leader comes back as a standby: still exactly one leader.
  json summary;
  EXPECT_TRUE(Eventually(seconds(45), [&] {
    summary = world_->RestGet("/api/v1/nimbus/summary", leader);
    if (!summary.is_object() || !summary.contains("nimbuses")) return false;
    int leaders = 0;
    for (const json& n : summary["nimbuses"]) leaders += n.value("status", "") == "Leader";
    return summary["nimbuses"].size() == 2 && leaders == 1 &&
           world_->Leader(leader) == world_->Leader(standby);
  }, milliseconds(250))) << summary.dump();
  ExpectNothingLost(name, count, seconds(120));
  std::printf("isolated the nimbus leader: the standby led after %.1f s\n", took_over);
  Kill(name);
}

TEST_F(MultiHostTest, ZooKeeperMemberCutOffClientsMoveToTheMajority) {
  const int64_t count = 4000;
  const std::string name = "mh-zk";
  const std::string id = StartRunning(name, count, 200);
  ASSERT_FALSE(id.empty());
  const Clock::time_point cut = Clock::now();
  ASSERT_TRUE(world_->hosts().Isolate(world_->HostIndex("zk3")).ok());
  // The two others still form a quorum; clients of zk3 reconnect to them.
  EXPECT_TRUE(Progresses(name, count, 600, seconds(60))) << world_->LogTails();
  json sups;
  EXPECT_TRUE(Eventually(seconds(30), [&] {
    sups = world_->RestGet("/api/v1/supervisor/summary");
    return sups.is_object() && sups.value("supervisors", json::array()).size() == 3u;
  }, milliseconds(250))) << sups.dump();
  std::printf("zk3 cut off for %.1f s with the topology running\n", SecondsSince(cut));
  const absl::Status healed = world_->hosts().Heal();
  ASSERT_TRUE(healed.ok()) << healed;
  ExpectNothingLost(name, count, seconds(120));
  Kill(name);
}

TEST_F(MultiHostTest, LossyHostAndOneWayCutLoseNothing) {
  const int64_t count = 5000;
  const std::string name = "mh-lossy";
  const std::string id = StartRunning(name, count, 200);
  ASSERT_FALSE(id.empty());
  // 10% of every packet to or from sup2 dropped: TCP retransmits, acks
  // come late, trees past the message timeout replay.
  ASSERT_TRUE(world_->hosts().SetLoss(world_->HostIndex("sup2"), 10).ok());
  EXPECT_TRUE(Progresses(name, count, 600, seconds(60))) << world_->LogTails();
  ASSERT_TRUE(world_->hosts().Heal().ok());
  // Packets from sup1 to sup3 dropped, sup3 to sup1 passing: TCP between
  // them stalls both ways, the rest of the cluster carries on.
  ASSERT_TRUE(world_->hosts()
                  .CutOneWay(world_->HostIndex("sup1"), world_->HostIndex("sup3"))
                  .ok());
  std::this_thread::sleep_for(seconds(10));
  json sups = world_->RestGet("/api/v1/supervisor/summary");
  EXPECT_EQ(sups.value("supervisors", json::array()).size(), 3u) << sups.dump();
  ASSERT_TRUE(world_->hosts().Heal().ok());
  const Clock::time_point heal = Clock::now();
  ExpectNothingLost(name, count, seconds(120));
  std::printf("10%% loss on sup2, then sup1->sup3 dropped for 10 s: all verified %.1f s after "
              "healing\n", SecondsSince(heal));
  Kill(name);
}

TEST_F(MultiHostTest, KafkaSpoutAcrossHostsWithItsHostCutFromZooKeeperLosesNothing) {
  const KafkaCut run = RunKafkaCut(MultiHostWorld::kKafkaTopics[0], "AT_LEAST_ONCE");
  EXPECT_EQ(Int(run.first, "missing", -1), 0) << run.first.dump();
  EXPECT_EQ(Int(run.final, "missing", -1), 0) << run.final.dump();
}

TEST_F(MultiHostTest, AtMostOnceKafkaSpoutWithItsHostCutFromZooKeeperDuplicatesNothing) {
  const KafkaCut run = RunKafkaCut(MultiHostWorld::kKafkaTopics[1], "AT_MOST_ONCE");
  EXPECT_EQ(Int(run.first, "duplicated", -1), 0) << run.first.dump();
  EXPECT_EQ(Int(run.final, "duplicated", -1), 0) << run.final.dump();
  EXPECT_TRUE(run.final.is_object()) << "never settled";
  std::printf("at-most-once: %lld of %lld records lost across the cut\n",
              static_cast<long long>(Int(run.final, "missing", -1)),
              static_cast<long long>(Int(run.final, "expected", -1)));
}

TEST_F(MultiHostTest, TeardownLeavesNoNamespaceOrProcess) {
  std::vector<std::string> netns;
  std::vector<pid_t> pids;
  for (const devcluster::NetnsHost& h : world_->hosts().hosts()) {
    netns.push_back(h.netns);
    const std::string listed =
        RunCommand({"ip", "netns", "pids", h.netns}, dir_->File("pids-" + h.name), seconds(10))
            .out;
    for (absl::string_view line : absl::StrSplit(listed, '\n', absl::SkipWhitespace())) {
      pid_t pid = 0;
      // This process is on the client host too; it stays.
      if (absl::SimpleAtoi(line, &pid) && pid > 1 && pid != ::getpid()) pids.push_back(pid);
    }
  }
  EXPECT_GE(pids.size(), 8u) << "every daemon runs on a host";
  delete world_;
  world_ = nullptr;
  for (const std::string& n : netns) {
    EXPECT_FALSE(std::filesystem::exists("/run/netns/" + n)) << n;
  }
  std::vector<pid_t> alive;
  EXPECT_TRUE(Eventually(seconds(10), [&] {
    alive.clear();
    for (pid_t pid : pids) {
      if (Alive(pid)) alive.push_back(pid);
    }
    return alive.empty();
  }, milliseconds(100))) << "processes of the hosts outlived their teardown: "
                         << absl::StrJoin(alive, ",");
}

}  // namespace
}  // namespace tempest::testing
