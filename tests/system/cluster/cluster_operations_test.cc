// Operating a real cluster: rebalance 2 -> 4 -> 2 workers with nothing
// lost, and bad input at every door (submit, a worker's transport port, the
// REST API) refused with one clear error while everything keeps running.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/os/loopback.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ClusterOperationsTest : public ClusterFixture {
 protected:
  // The paced example with identity as one executor over two tasks, which
  // `-e identity=2` splits in place; its id, or empty.
  std::string SubmitWithIdentityAsOneExecutorOfTwoTasks(int64_t count) {
    const std::string yaml = absl::StrReplaceAll(
        PacedExample(count, 4000),
        {{"className: tempest.IdentityBolt\n    parallelism: 4",
          "className: tempest.IdentityBolt\n    parallelism: 1\n    numTasks: 2"}});
    EXPECT_NE(yaml.find("numTasks: 2"), std::string::npos) << "the example's identity changed";
    return Submit(yaml, "paced.yaml");
  }

  // The pids and the acked / failed totals of the topology's beating workers.
  struct WorkerTotals {
    std::set<pid_t> pids;
    int64_t acked = 0;
    int64_t failed = 0;
  };
  WorkerTotals TotalsOf(const std::string& id) {
    WorkerTotals t;
    for (const WorkerSlot& w : WorkersOf(id)) {
      if (!w.beat.has_value()) continue;
      t.pids.insert(w.pid);
      t.acked += w.beat->acked();
      t.failed += w.beat->failed();
    }
    return t;
  }

  // Waits for an assignment newer than `before`, then for `workers` workers
  // that all beat running it; returns them (empty if either wait ran out).
  std::vector<WorkerSlot> WaitForNewVersionRunning(const std::string& id,
                                                  const v1::Assignment& before, size_t workers,
                                                  v1::Assignment& after) {
    std::optional<v1::Assignment> newer;
    if (!Eventually(seconds(60), [&] {
          newer = AssignmentOf(id);
          return newer.has_value() && newer->version() > before.version();
        }, milliseconds(200))) {
      return {};
    }
    after = *newer;
    std::vector<WorkerSlot> running;
    const bool all = Eventually(seconds(60), [&] {
      running = WorkersOf(id);
      size_t current = 0;
      for (const WorkerSlot& w : running) {
        current += w.beat.has_value() && w.beat->assignment_version() == after.version() ? 1 : 0;
      }
      return running.size() == workers && current == workers;
    }, milliseconds(200));
    return all ? running : std::vector<WorkerSlot>{};
  }

  // Waits until both workers beat and have acked `acked` trees together:
  // past the start and the message timeout of trees lost while the workers
  // connected, so failures counted across a later change are its own.
  bool WaitForTwoWorkersAcking(const std::string& id, int64_t acked) {
    return Eventually(seconds(90), [&] {
      std::vector<WorkerSlot> w = WorkersOf(id);
      return w.size() == 2 && w[0].beat.has_value() && w[1].beat.has_value() &&
             w[0].beat->acked() + w[1].beat->acked() >= acked;
    }, milliseconds(200));
  }

  std::set<std::pair<std::string, int>> Slots(const std::string& id) {
    std::set<std::pair<std::string, int>> slots;
    if (std::optional<v1::Assignment> a = AssignmentOf(id)) {
      for (const auto& e : a->executors()) slots.insert({e.node(), e.port()});
    }
    return slots;
  }

  // A connection to 127.0.0.1:port that sent `bytes`; true if the peer then
  // closed it (read returns 0 or an error) within `timeout`.
  static bool PeerClosesAfter(int port, const std::string& bytes, milliseconds timeout) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      return false;
    }
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void)!::write(fd, bytes.data(), bytes.size());
    // The server's hello (a challenge) may arrive first; read until EOF.
    char buf[4096];
    const auto until = std::chrono::steady_clock::now() + timeout;
    bool closed = false;
    while (std::chrono::steady_clock::now() < until) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        closed = true;
        break;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // timed out
    }
    ::close(fd);
    return closed;
  }

  // A raw HTTP exchange with the nimbus: (status code, parsed JSON body).
  std::pair<int, json> Http(const std::string& request) {
    const std::string address = AnyNimbus();
    const size_t colon = address.rfind(':');
    auto response = os::TcpRequest(address.substr(0, colon), std::stoi(address.substr(colon + 1)),
                                   request, milliseconds(10000));
    if (!response.ok() || response->size() < 12) return {0, json()};
    const int status = std::atoi(response->substr(9, 3).c_str());
    const size_t body = response->find("\r\n\r\n");
    json j = body == std::string::npos
                 ? json()
                 : json::parse(response->substr(body + 4), nullptr, false);
    return {status, j.is_discarded() ? json() : j};
  }
};

TEST_F(ClusterOperationsTest, RebalanceTwoToFourWorkersAndBackLosesNothing) {
  StartCluster({});  // 2 supervisors x 2 slots
  ASSERT_FALSE(HasFatalFailure());
  // 10 s at 4000/s, from the spout's last restart: both rebalances come
  // within seconds of the start (the way back is checked below).
  const int64_t count = 40000;
  const std::string id = Submit(PacedExample(count, 4000), "paced.yaml");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(Eventually(seconds(90), [&] { return WorkersOf(id).size() == 2; }, milliseconds(200)));
  EXPECT_EQ(Slots(id).size(), 2u);

  CommandRun up = Tempest({"rebalance", "cluster-generator-verifier", "-w", "1", "-n", "4"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_TRUE(Eventually(seconds(90), [&] {
    std::vector<WorkerSlot> w = WorkersOf(id);
    int beating = 0;
    for (const WorkerSlot& s : w) beating += s.beat.has_value() ? 1 : 0;
    return Slots(id).size() == 4 && beating == 4;
  }, milliseconds(200))) << "did not reach 4 workers";
  std::printf("rebalanced to %zu workers\n", WorkersOf(id).size());

  // Mid-stream still: the way back to 2 workers has seqs to carry too.
  const json at_down = Verify(VerifierLog(), count);
  const int64_t unique_at_down = at_down.is_object() ? at_down.value("unique", int64_t{0}) : 0;
  std::printf("rebalancing back to 2 workers at %lld of %lld seqs\n",
              static_cast<long long>(unique_at_down), static_cast<long long>(count));
  EXPECT_LT(unique_at_down, count) << "the stream ended before the rebalance";
  CommandRun down = Tempest({"rebalance", "cluster-generator-verifier", "-w", "1", "-n", "2"});
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_TRUE(Eventually(seconds(90), [&] {
    return Slots(id).size() == 2 && WorkersOf(id).size() == 2;
  }, milliseconds(200))) << "did not go back to 2 workers";

  const json v = ExpectAllVerified(count, seconds(240));
  std::printf("after rebalance 2 -> 4 -> 2: %s\n", v.dump().c_str());
}

// identity runs as one executor over two tasks, so `-e identity=2` splits
// it in place: nimbus keeps every other executor on its slot and puts both
// halves where their tasks ran, so the worker that does not run identity
// only learns new routes. It is never restarted and reports the new
// assignment version; nothing is lost.
TEST_F(ClusterOperationsTest, RebalanceOfOneBoltLeavesTheWorkerWithoutItRunning) {
  StartCluster({});  // 2 supervisors x 2 slots
  ASSERT_FALSE(HasFatalFailure());
  const int64_t count = 60000;
  const std::string id = SubmitWithIdentityAsOneExecutorOfTwoTasks(count);
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(Eventually(seconds(90), [&] {
    std::vector<WorkerSlot> w = WorkersOf(id);
    return w.size() == 2 && w[0].beat.has_value() && w[1].beat.has_value();
  }, milliseconds(200)));
  const std::optional<v1::Assignment> before = AssignmentOf(id);
  ASSERT_TRUE(before.has_value());
  int identity_port = 0;
  for (const auto& e : before->executors()) {
    if (e.end_task() > e.start_task()) identity_port = e.port();  // its only 2-task executor
  }
  ASSERT_NE(identity_port, 0);
  std::vector<pid_t> untouched;
  for (const WorkerSlot& w : WorkersOf(id)) {
    if (w.port != identity_port) untouched.push_back(w.pid);
  }
  ASSERT_EQ(untouched.size(), 1u);

  CommandRun r = Tempest({"rebalance", "cluster-generator-verifier", "-w", "0", "-e", "identity=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::optional<v1::Assignment> after;
  ASSERT_TRUE(Eventually(seconds(60), [&] {
    after = AssignmentOf(id);
    return after.has_value() && after->version() > before->version();
  }, milliseconds(200)));
  EXPECT_EQ(after->last_change().reason(), "rebalance");
  EXPECT_EQ(after->last_change().started(), 2);
  EXPECT_EQ(after->last_change().stopped(), 1);
  EXPECT_EQ(after->last_change().moved(), 0);
  for (const auto& e : after->executors()) EXPECT_EQ(e.start_task(), e.end_task());

  const json v = ExpectAllVerified(count, seconds(240));
  for (const WorkerSlot& w : WorkersOf(id)) {
    if (w.pid != untouched[0]) continue;
    ASSERT_TRUE(w.beat.has_value());
    EXPECT_EQ(w.beat->assignment_version(), after->version());
  }
  bool still_running = false;
  for (const WorkerSlot& w : WorkersOf(id)) still_running = still_running || w.pid == untouched[0];
  EXPECT_TRUE(still_running) << "the worker without identity was restarted";
  // What an operator sees: the version and the diff on the topology page.
  const json page = RestGet("/api/v1/topology/" + id);
  EXPECT_EQ(page.value("assignmentVersion", int64_t{0}), after->version()) << page.dump();
  std::printf("rebalance identity 1 -> 2 executors: %s\n", v.dump().c_str());
}

// The same split, seen from the worker that runs identity: its tasks stay
// and are only regrouped into two executors, which it does in place. No
// worker process restarts (the pids stay), both report the new version,
// the topology keeps acking, and the component page shows identity's new
// executors with their own statistics. No tree fails across it.
TEST_F(ClusterOperationsTest, RebalanceOfOneBoltRestartsNoWorker) {
  StartCluster({});  // 2 supervisors x 2 slots
  ASSERT_FALSE(HasFatalFailure());
  const int64_t count = 60000;
  const std::string id = SubmitWithIdentityAsOneExecutorOfTwoTasks(count);
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(WaitForTwoWorkersAcking(id, count / 2));
  const std::optional<v1::Assignment> before = AssignmentOf(id);
  ASSERT_TRUE(before.has_value());
  const WorkerTotals at_change = TotalsOf(id);

  CommandRun r =
      Tempest({"rebalance", "cluster-generator-verifier", "-w", "0", "-e", "identity=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Both workers take the new version without a restart.
  v1::Assignment after;
  const std::vector<WorkerSlot> workers = WaitForNewVersionRunning(id, *before, 2, after);
  ASSERT_EQ(workers.size(), 2u) << "the new assignment is not running on both workers";
  std::set<pid_t> pids_after;
  std::set<std::string> identity_ranges;
  for (const WorkerSlot& w : workers) {
    pids_after.insert(w.pid);
    for (const auto& e : w.beat->executors()) {
      if (e.component() == "identity") {
        EXPECT_EQ(e.start_task(), e.end_task());
        identity_ranges.insert(absl::StrCat(e.start_task(), "-", e.end_task()));
      }
    }
  }
  EXPECT_EQ(pids_after, at_change.pids) << "a worker process was restarted";
  EXPECT_EQ(identity_ranges.size(), 2u);
  const auto changed_at = std::chrono::steady_clock::now();

  const json v = ExpectAllVerified(count, seconds(240));
  // Past a supervisor's exit grace (10 s), after which it would have
  // replaced a worker it no longer took for the slot's.
  std::this_thread::sleep_until(changed_at + seconds(12));
  const WorkerTotals at_end = TotalsOf(id);
  // Not stopped later either, by a supervisor comparing its launch plan.
  for (pid_t pid : at_end.pids) {
    EXPECT_TRUE(at_change.pids.contains(pid)) << "pid " << pid << " replaced a worker";
  }
  EXPECT_GT(at_end.acked, at_change.acked) << "the topology stopped acking";
  EXPECT_EQ(at_end.failed, at_change.failed) << "the regrouping failed trees";
  std::printf("trees acked %lld -> %lld, failed %lld -> %lld across the regrouping\n",
              static_cast<long long>(at_change.acked), static_cast<long long>(at_end.acked),
              static_cast<long long>(at_change.failed), static_cast<long long>(at_end.failed));
  const json component = RestGet("/api/v1/topology/" + id + "/component/identity");
  ASSERT_TRUE(component["executorStats"].is_array()) << component.dump();
  EXPECT_EQ(component["executorStats"].size(), 2u) << component.dump();
  for (const json& e : component["executorStats"]) {
    EXPECT_GT(e.value("executed", int64_t{0}), 0) << e.dump();
  }
  std::printf("rebalance identity 1 -> 2 executors in place: %s\n", v.dump().c_str());
}

// Two workers to three: nimbus moves bolt executors only (ADR 0035), so
// each old worker only loses bolt executors and lets them leave in place.
// One process starts (the new worker), none restarts, and the topology
// keeps acking with no tree failed across the change.
TEST_F(ClusterOperationsTest, RebalanceFromTwoToThreeWorkersStartsOneAndRestartsNone) {
  StartCluster({});  // 2 supervisors x 2 slots
  ASSERT_FALSE(HasFatalFailure());
  // The change after 25000 acked; the 55000 after it (13.75 s at 4000/s)
  // are long enough for a supervisor to have stopped a worker whose
  // executors no longer match its launch (the exit grace, 10 s).
  const int64_t count = 80000;
  const std::string id = Submit(PacedExample(count, 4000), "paced.yaml");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(WaitForTwoWorkersAcking(id, 25000));
  const std::optional<v1::Assignment> before = AssignmentOf(id);
  ASSERT_TRUE(before.has_value());
  const WorkerTotals at_change = TotalsOf(id);
  const std::set<pid_t>& old_pids = at_change.pids;

  CommandRun r = Tempest({"rebalance", "cluster-generator-verifier", "-w", "0", "-n", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  v1::Assignment after;
  const std::vector<WorkerSlot> workers = WaitForNewVersionRunning(id, *before, 3, after);
  ASSERT_EQ(workers.size(), 3u) << "the new assignment is not running on three workers";
  EXPECT_EQ(after.last_change().started(), 0);
  EXPECT_EQ(after.last_change().stopped(), 0);
  EXPECT_GT(after.last_change().moved(), 0);
  std::set<pid_t> new_pids;
  for (const WorkerSlot& w : workers) {
    if (!old_pids.contains(w.pid)) new_pids.insert(w.pid);
  }
  EXPECT_EQ(new_pids.size(), 1u) << "not exactly one process started";
  std::set<pid_t> kept;
  for (const WorkerSlot& w : workers) {
    if (old_pids.contains(w.pid)) kept.insert(w.pid);
  }
  EXPECT_EQ(kept, old_pids) << "an old worker process was restarted";

  const json v = ExpectAllVerified(count, seconds(240));
  const WorkerTotals at_end = TotalsOf(id);
  for (pid_t pid : at_end.pids) {
    EXPECT_TRUE(old_pids.contains(pid) || new_pids.contains(pid)) << "pid " << pid;
  }
  EXPECT_GT(at_end.acked, at_change.acked) << "the topology stopped acking";
  EXPECT_EQ(at_end.failed, at_change.failed) << "the change failed trees";
  std::printf("trees acked %lld -> %lld, failed %lld -> %lld across 2 -> 3 workers: %s\n",
              static_cast<long long>(at_change.acked), static_cast<long long>(at_end.acked),
              static_cast<long long>(at_change.failed), static_cast<long long>(at_end.failed),
              v.dump().c_str());
}

TEST_F(ClusterOperationsTest, MultilangTopologyRunsWithItsShippedResources) {
  StartCluster({});
  ASSERT_FALSE(HasFatalFailure());
  // Storm's word count with a Python split bolt, over two workers; the
  // script exists only in the resources directory given to submit, which
  // nimbus keeps in ZooKeeper and every worker fetches.
  const std::string words = dir_.File("words.txt");
  std::string yaml = ReadFileOrEmpty(SourceDir() + "/examples/legacy/word-count.yaml");
  yaml = absl::StrReplaceAll(
      yaml, {{"topology.workers: 1", "topology.workers: 2"},
             {"className: org.apache.storm.flux.wrappers.bolts.LogInfoBolt\n    parallelism: 1",
              absl::StrCat("className: tempest.FileSinkBolt\n    parallelism: 1\n    properties:\n"
                           "      - name: path\n        value: ",
                           words)}});
  ASSERT_NE(yaml.find("tempest.FileSinkBolt"), std::string::npos);
  std::ofstream(dir_.File("word-count.yaml")) << yaml;
  CommandRun submit = Tempest({"submit", dir_.File("word-count.yaml"), "--resources",
                               SourceDir() + "/examples/legacy/multilang", "--until-running"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::string id = submit.out.substr(0, submit.out.find('\n'));
  EXPECT_EQ(WorkersOf(id).size(), 2u);
  // Words counted downstream of the Python bolt reach the sink.
  EXPECT_TRUE(Eventually(seconds(90), [&] {
    const std::string text = ReadFileOrEmpty(words);
    return std::count(text.begin(), text.end(), '\n') >= 20;
  }, milliseconds(500))) << ReadFileOrEmpty(words);
  bool fetched = false;
  for (int s = 0; s < 2; ++s) {
    std::error_code ec;
    for (const auto& slot :
         std::filesystem::directory_iterator(LocalDir(s) + "/workers", ec)) {
      fetched = fetched || std::filesystem::exists(slot.path() / "resources" / "splitsentence.py");
    }
  }
  EXPECT_TRUE(fetched) << "no worker holds the shipped script";
  // The blob goes with the topology.
  CommandRun kill = Tempest({"kill", "legacy-word-count", "-w", "0", "--until-removed"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
}

TEST_F(ClusterOperationsTest, ComponentErrorsReachTheRestApiAndGetErrors) {
  StartCluster({});
  ASSERT_FALSE(HasFatalFailure());
  // A Python bolt (on the Storm-compatible storm.py) that reports an error
  // for every 25th tuple and acks them all.
  const std::string resources = ErringBoltResources();
  const std::string yaml = R"(name: erring
config:
  topology.workers: 1
spouts:
  - id: numbers
    className: tempest.SequenceSpout
    properties:
      - name: count
        value: -1
      - name: rate
        value: 200
bolts:
  - id: narrow
    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
    constructorArgs:
      - ["python3", "erring_bolt.py"]
      - []
streams:
  - from: numbers
    to: narrow
    grouping:
      type: SHUFFLE
)";
  std::ofstream(dir_.File("erring.yaml")) << yaml;
  CommandRun submit =
      Tempest({"submit", dir_.File("erring.yaml"), "--resources", resources, "--until-running"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::string id = submit.out.substr(0, submit.out.find('\n'));
  json bolt;
  ASSERT_TRUE(Eventually(seconds(60), [&] {
    const json t = RestGet("/api/v1/topology/" + id);
    for (const json& b : t.value("bolts", json::array())) {
      if (b.value("boltId", "") == "narrow") bolt = b;
    }
    return bolt.is_object() && !bolt.value("lastError", "").empty();
  }, milliseconds(500))) << bolt.dump();
  EXPECT_NE(bolt["lastError"].get<std::string>().find("cannot parse record"), std::string::npos)
      << bolt.dump();
  EXPECT_FALSE(bolt["errorHost"].get<std::string>().empty()) << bolt.dump();
  EXPECT_GT(bolt["errorPort"].get<int>(), 0) << bolt.dump();
  EXPECT_GT(bolt["errorTime"].get<int64_t>(), 0) << bolt.dump();
  EXPECT_GE(bolt["errorLapsedSecs"].get<int64_t>(), 0) << bolt.dump();
  // About 8 errors a second: the component page fills up to Storm's 10 and
  // stays there while older ones are trimmed.
  json component;
  int64_t newest_seen = 0;
  ASSERT_TRUE(Eventually(seconds(60), [&] {
    component = RestGet("/api/v1/topology/" + id + "/component/narrow");
    const json& list = component["componentErrors"];
    if (!list.is_array() || list.empty()) return false;
    EXPECT_LE(list.size(), 10u) << "bounded like Storm's";
    const int64_t newest = list[0].value("errorTime", int64_t{0});
    const bool trimmed = newest_seen > 0 && newest > newest_seen && list.size() == 10u;
    if (newest_seen == 0 && list.size() == 10u) newest_seen = newest;
    return trimmed;
  }, milliseconds(500))) << component.dump();
  EXPECT_NE(component["componentErrors"][0]["error"].get<std::string>().find("cannot parse"),
            std::string::npos);
  const json spout = RestGet("/api/v1/topology/" + id + "/component/numbers");
  EXPECT_EQ(spout["componentErrors"], json::array()) << spout.dump();

  CommandRun errors = Tempest({"get-errors", "erring"});
  ASSERT_EQ(errors.exit_code, 0) << errors.err;
  const json printed = json::parse(errors.out, nullptr, false);
  ASSERT_TRUE(printed.is_object()) << errors.out;
  EXPECT_EQ(printed["Topology Name"], "erring");
  EXPECT_NE(printed["Comp-Errors"].value("narrow", "").find("cannot parse record"),
            std::string::npos)
      << errors.out;
  EXPECT_FALSE(printed["Comp-Errors"].contains("numbers")) << errors.out;

  // The errors go with the topology.
  ASSERT_EQ(ClusterNodeExists("errors/" + id + "/narrow"), std::optional<bool>(true));
  CommandRun kill = Tempest({"kill", "erring", "-w", "0", "--until-removed"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
  EXPECT_TRUE(Eventually(seconds(30), [&] {
    return ClusterNodeExists("errors/" + id) == std::optional<bool>(false);
  }, milliseconds(500)));
}

TEST_F(ClusterOperationsTest, RemoteConfValueReadsNimbussOwnConfig) {
  StartCluster({});
  ASSERT_FALSE(HasFatalFailure());
  CommandRun root = Tempest({"remoteconfvalue", "storm.zookeeper.root"});
  ASSERT_EQ(root.exit_code, 0) << root.err;
  EXPECT_EQ(root.out, "storm.zookeeper.root: /tempest-cluster\n");
  CommandRun missing = Tempest({"remoteconfvalue", "no.such.key"});
  ASSERT_EQ(missing.exit_code, 0) << missing.err;
  EXPECT_EQ(missing.out, "no.such.key: null\n");
  const json config = RestGet("/api/v1/cluster/configuration");
  ASSERT_TRUE(config.is_object());
  EXPECT_TRUE(config.contains("storm.zookeeper.servers")) << config.dump();
}

TEST_F(ClusterOperationsTest, SubmitResolvesFiltersOnTheSubmittingMachine) {
  StartCluster({});
  ASSERT_FALSE(HasFatalFailure());
  std::string yaml = absl::StrReplaceAll(PacedExample(500, 1000),
                                         {{"value: 500\n", "value: ${ENV-GV_COUNT}\n"}});
  yaml = absl::StrReplaceAll(yaml, {{"name: cluster-generator-verifier", "name: ${topology.name}"}});
  std::ofstream(dir_.File("filtered.yaml")) << yaml;
  std::ofstream(dir_.File("dev.properties")) << "topology.name = filtered-gv\n";
  auto submit = [&](std::map<std::string, std::string> env) {
    return RunCommand({TempestBinary(), "submit", dir_.File("filtered.yaml"), "--env-filter",
                       "--filter", dir_.File("dev.properties"), "--nimbus", AnyNimbus()},
                      dir_.File("submit-filtered"), milliseconds(60000), env);
  };
  // An unresolved placeholder is refused on the submitting machine.
  CommandRun missing = submit({});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("GV_COUNT"), std::string::npos) << missing.err;
  CommandRun ok = submit({{"GV_COUNT", "400"}});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind("filtered-gv-", 0), 0u) << ok.out;
  // The workers run the substituted text: 400 seqs, no more.
  json v;
  EXPECT_TRUE(Eventually(seconds(90), [&] {
    v = Verify(VerifierLog(), 400);
    return v.is_object() && v.value("unique", 0) == 400 && v.value("missing", -1) == 0;
  }, milliseconds(500))) << v.dump();
  EXPECT_EQ(v.value("unexpected", -1), 0) << v.dump();
}

TEST_F(ClusterOperationsTest, LagEndpointShowsTheKafkaSpoutsPartitions) {
  StartCluster({});
  ASSERT_FALSE(HasFatalFailure());
  auto kafka = DevKafka::Start(1, {{"events", 2}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  std::vector<DevKafka::Record> records;
  for (int i = 0; i < 300; ++i) records.push_back({"", absl::StrCat(i)});
  ASSERT_TRUE((*kafka)->Produce("events", 0, records).ok());
  ASSERT_TRUE((*kafka)->Produce("events", 1, records).ok());
  // Once the spout has read and committed both partitions, each row shows
  // the log head (300), the committed offset (300) and no lag.
  const std::string yaml = absl::StrCat(R"(name: lag-check
config:
  topology.workers: 2
  topology.max.spout.pending: 1000
spouts:
  - id: events
    className: tempest.KafkaSpout
    parallelism: 1
    properties:
      - name: bootstrap.servers
        value: ")", (*kafka)->bootstrap_servers(), R"("
      - name: topics
        value: events
      - name: zkServers
        value: ")", zk_->ConnectString(), R"("
      - name: zkRoot
        value: /kafkaspout
      - name: id
        value: lag-check
      - name: startOffsetTime
        value: -2
      - name: stateUpdateIntervalMs
        value: 200
bolts:
  - id: sink
    className: tempest.IdentityBolt
    parallelism: 2
    properties:
      - name: fields
        value: [topic, partition, offset, key, value]
streams:
  - from: events
    to: sink
    grouping:
      type: SHUFFLE
)");
  const std::string id = Submit(yaml, "lag-check.yaml");
  ASSERT_FALSE(id.empty());
  json lag;
  auto partitions_with_lag = [&](int64_t wanted) {
    lag = RestGet(absl::StrCat("/api/v1/topology/", id, "/lag"));
    if (!lag.is_object() || !lag.contains("events")) return false;
    const json& rows = lag["events"]["spoutLagResult"];
    if (rows.size() != 2) return false;
    for (const json& r : rows) {
      if (r.value("lag", int64_t{-1}) != wanted || r.value("logHeadOffset", int64_t{-1}) != 300) {
        return false;
      }
    }
    return true;
  };
  EXPECT_TRUE(Eventually(seconds(90), [&] { return partitions_with_lag(0); }, milliseconds(500)))
      << lag.dump();
  EXPECT_EQ(lag["events"].value("spoutType", ""), "KAFKA") << lag.dump();
  for (const json& r : lag["events"]["spoutLagResult"]) {
    EXPECT_EQ(r.value("consumerCommittedOffset", int64_t{-1}), 300) << r.dump();
  }
  EXPECT_EQ(RestGet("/api/v1/topology/no-such-topology/lag").value("error", ""), "Not Found");
}

TEST_F(ClusterOperationsTest, BadInputIsRefusedAndNothingStops) {
  StartCluster({});
  ASSERT_FALSE(HasFatalFailure());

  // Submit: bad YAML and an unknown class; nothing is stored.
  std::ofstream(dir_.File("broken.yaml")) << "name: broken\nspouts:\n  - id: s\n    className: [\n";
  CommandRun broken = Tempest({"submit", dir_.File("broken.yaml")});
  EXPECT_NE(broken.exit_code, 0);
  EXPECT_NE(broken.err.find("broken.yaml"), std::string::npos) << broken.err;
  std::string unknown = absl::StrReplaceAll(PacedExample(100, 100),
                                            {{"tempest.IdentityBolt", "com.example.NoSuchBolt"}});
  std::ofstream(dir_.File("unknown.yaml")) << unknown;
  CommandRun unknown_run = Tempest({"submit", dir_.File("unknown.yaml")});
  EXPECT_NE(unknown_run.exit_code, 0);
  EXPECT_NE(unknown_run.err.find("com.example.NoSuchBolt"), std::string::npos) << unknown_run.err;
  CommandRun list = Tempest({"list", "--json"});
  json topologies = json::parse(list.out, nullptr, false);
  ASSERT_FALSE(topologies.is_discarded()) << list.out;
  EXPECT_TRUE(topologies["topologies"].empty()) << list.out;

  // A running topology to attack.
  const std::string id = Submit(PacedExample(1000000, 2000), "paced.yaml");
  ASSERT_FALSE(id.empty());
  std::vector<WorkerSlot> workers;
  ASSERT_TRUE(Eventually(seconds(90), [&] {
    workers = WorkersOf(id);
    return workers.size() == 2 && workers[0].beat.has_value() && workers[1].beat.has_value();
  }, milliseconds(200)));
  const WorkerSlot target = workers[0];

  // Garbage bytes, an oversized frame header and a wrong-secret handshake
  // reply: each connection is closed; the worker keeps running.
  std::string garbage(4096, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 131 + 7) % 251);
  EXPECT_TRUE(PeerClosesAfter(target.port, garbage, milliseconds(5000))) << "garbage accepted";
  EXPECT_TRUE(PeerClosesAfter(target.port, std::string(64, '\xff'), milliseconds(5000)))
      << "an oversized/unknown frame was accepted";
  EXPECT_TRUE(PeerClosesAfter(target.port, std::string(40, 'x'), milliseconds(5000)))
      << "a wrong handshake answer was accepted";

  const int64_t beat_before = target.beat->time_secs();
  json before = Verify(VerifierLog(), 1000000);
  EXPECT_TRUE(Eventually(seconds(30), [&] {
    for (const WorkerSlot& w : WorkersOf(id)) {
      if (w.pid == target.pid && w.beat.has_value() && w.beat->time_secs() > beat_before + 2) {
        return true;
      }
    }
    return false;
  }, milliseconds(200))) << "the attacked worker stopped heartbeating";
  json after = Verify(VerifierLog(), 1000000);
  EXPECT_GT(after.value("unique", 0), before.value("unique", 0)) << "processing stopped";

  // Malformed REST requests: 4xx with a JSON error body.
  auto [bad_json, bad_json_body] = Http(
      "POST /api/v1/topology HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 9\r\nConnection: close\r\n\r\n{\"flux\": ");
  EXPECT_EQ(bad_json, 400);
  EXPECT_TRUE(bad_json_body.contains("error")) << bad_json_body.dump();
  auto [missing, missing_body] = Http("GET /api/v1/topology/no-such-id HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(missing, 404);
  EXPECT_TRUE(missing_body.contains("error")) << missing_body.dump();
  auto [method, method_body] = Http("DELETE /api/v1/cluster/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(method, 405);
  EXPECT_TRUE(method_body.contains("error")) << method_body.dump();
  const std::string bad_options = R"({"rebalanceOptions": {"numWorkers": "many"}})";
  auto [rebalance, rebalance_body] = Http(absl::StrCat(
      "POST /api/v1/topology/", id, "/rebalance/0 HTTP/1.1\r\nHost: 127.0.0.1\r\n",
      "Content-Type: application/json\r\nContent-Length: ", bad_options.size(),
      "\r\nConnection: close\r\n\r\n", bad_options));
  EXPECT_EQ(rebalance, 400);
  EXPECT_TRUE(rebalance_body.contains("error")) << rebalance_body.dump();
  // Resources that would escape the worker's directory, or are not base64.
  for (const json& resource :
       {json{{"path", "../escape.py"}, {"data", "eA=="}}, json{{"path", "ok.py"}, {"data", "@@@"}}}) {
    const std::string submit_body =
        json{{"flux", PacedExample(10, 10)}, {"name", "with-bad-resources"},
             {"resources", json::array({resource})}}
            .dump();
    auto [code, reply] = Http(absl::StrCat(
        "POST /api/v1/topology HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n",
        "Content-Length: ", submit_body.size(), "\r\nConnection: close\r\n\r\n", submit_body));
    EXPECT_EQ(code, 400) << reply.dump();
    EXPECT_TRUE(reply.contains("error")) << reply.dump();
  }
  std::set<pid_t> pids;
  for (const WorkerSlot& w : WorkersOf(id)) pids.insert(w.pid);
  EXPECT_TRUE(pids.contains(target.pid)) << "the attacked worker is gone";
}

}  // namespace
}  // namespace tempest::testing
