// The leader's monitor loop against a real ZooKeeper, with supervisor and
// workerbeat nodes written by the test: a worker whose beat stops changing
// loses its executors after nimbus.task.timeout.secs, a vanished supervisor
// loses them at once (the child watch, not the periodic round), the
// transport secret survives reassignment, rebalance and failover, a
// rebalance moves only the executors it has to and each write bumps the
// assignment's version, and workerbeats go with their topology.

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "nimbus/nimbus.h"
#include "tests/integration/nimbus/nimbus_fixture.h"
#include "tests/support/eventually.h"

namespace tempest::nimbus::testing {
namespace {

using std::chrono::seconds;
using tempest::testing::Eventually;

constexpr milliseconds kWait(30000);

std::set<std::pair<std::string, int>> SlotsOf(const v1::Assignment& a) {
  std::set<std::pair<std::string, int>> out;
  for (const auto& e : a.executors()) out.insert({e.node(), e.port()});
  return out;
}

// Executor [start, end] -> its slot.
using Placement = std::map<std::pair<int, int>, std::pair<std::string, int>>;
Placement PlacementOf(const v1::Assignment& a) {
  Placement out;
  for (const auto& e : a.executors()) out[{e.start_task(), e.end_task()}] = {e.node(), e.port()};
  return out;
}

// A rebalance moves only what it has to: every executor that changed slots
// went to a slot the topology did not use before (more workers) or left one
// it no longer uses (fewer workers); none moved between slots it keeps.
void ExpectMovedOnlyToNewOrFromGivenUpSlots(const v1::Assignment& before,
                                            const v1::Assignment& after) {
  const Placement old = PlacementOf(before);
  const std::set<std::pair<std::string, int>> old_slots = SlotsOf(before);
  const std::set<std::pair<std::string, int>> new_slots = SlotsOf(after);
  for (const auto& [range, slot] : PlacementOf(after)) {
    auto it = old.find(range);
    if (it == old.end() || it->second == slot) continue;
    EXPECT_TRUE(!old_slots.contains(slot) || !new_slots.contains(it->second))
        << "[" << range.first << "-" << range.second << "] moved from " << it->second.first
        << ":" << it->second.second << " to " << slot.first << ":" << slot.second;
  }
}

void ExpectChange(const v1::Assignment& a, int64_t version, const std::string& reason, int kept,
                  int moved, int started, int stopped) {
  EXPECT_EQ(a.version(), version);
  EXPECT_EQ(a.last_change().reason(), reason);
  EXPECT_EQ(a.last_change().kept(), kept);
  EXPECT_EQ(a.last_change().moved(), moved);
  EXPECT_EQ(a.last_change().started(), started);
  EXPECT_EQ(a.last_change().stopped(), stopped);
  EXPECT_GT(a.last_change().time_secs(), 0);
}

// Stand-ins for worker processes: every 100 ms each slot of the current
// assignment gets a new beat listing its executors, except `frozen` slots,
// which beat once and then never change (a hung worker).
class FakeWorkers {
 public:
  FakeWorkers(std::string topology, std::set<std::pair<std::string, int>> frozen,
              std::function<void(const std::string&, const std::string&, int,
                                 const std::vector<v1::ExecutorRange>&, int64_t)>
                  write,
              std::function<std::optional<v1::Assignment>()> read)
      : topology_(std::move(topology)),
        frozen_(std::move(frozen)),
        write_(std::move(write)),
        read_(std::move(read)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~FakeWorkers() {
    stop_ = true;
    thread_.join();
  }

 private:
  void Run() {
    std::set<std::pair<std::string, int>> frozen_written;
    for (int64_t round = 1; round < 3000 && !stop_; ++round) {
      if (std::optional<v1::Assignment> a = read_()) {
        std::map<std::pair<std::string, int>, std::vector<v1::ExecutorRange>> by_slot;
        for (const auto& e : a->executors()) {
          v1::ExecutorRange r;
          r.set_start_task(e.start_task());
          r.set_end_task(e.end_task());
          by_slot[{e.node(), e.port()}].push_back(r);
        }
        for (const auto& [slot, executors] : by_slot) {
          if (frozen_.contains(slot)) {
            if (!frozen_written.insert(slot).second) continue;
          }
          write_(topology_, slot.first, slot.second, executors, round);
        }
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
  }

  std::string topology_;
  std::set<std::pair<std::string, int>> frozen_;
  std::function<void(const std::string&, const std::string&, int,
                     const std::vector<v1::ExecutorRange>&, int64_t)>
      write_;
  std::function<std::optional<v1::Assignment>()> read_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class MonitorTest : public NimbusTest {
 protected:
  std::unique_ptr<FakeWorkers> StartWorkers(const std::string& topology,
                                            std::set<std::pair<std::string, int>> frozen = {}) {
    return std::make_unique<FakeWorkers>(
        topology, std::move(frozen),
        [this](const std::string& t, const std::string& node, int port,
               const std::vector<v1::ExecutorRange>& executors,
               int64_t counter) { WriteBeat(t, node, port, executors, counter); },
        [this, topology] { return StoredAssignment(topology); });
  }
  std::unique_ptr<Nimbus> Start(NimbusOptions o) {
    auto n = Nimbus::Create(std::move(o));
    EXPECT_TRUE(n.ok()) << n.status();
    if (!n.ok()) return nullptr;
    EXPECT_TRUE(Eventually(kWait, [&] { return (*n)->IsLeader(); }));
    return *std::move(n);
  }
};

TEST_F(MonitorTest, ABeatThatStopsChangingMovesItsExecutorsToAnotherSlot) {
  NimbusOptions o = Options();
  o.liveness.task_timeout = seconds(3);
  o.liveness.task_launch = seconds(0);
  auto n = Start(o);
  ASSERT_NE(n, nullptr);
  AddSupervisor("sup-a", {6700, 6701});
  AddSupervisor("sup-b", {6700});
  // The workers beat from the moment the assignment exists: sup-b's beats
  // once and then hangs; sup-a's keeps beating.
  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok()) << id.status();
  auto workers = StartWorkers(*id, {{"sup-b", 6700}});
  // Interleaved slots: one worker on each supervisor.
  std::optional<v1::Assignment> before;
  ASSERT_TRUE(Eventually(kWait, [&] {
    before = StoredAssignment(*id);
    return before && before->executors_size() == 7 && SlotsOf(*before).size() == 2;
  }));
  ASSERT_EQ(SlotsOf(*before), (std::set<std::pair<std::string, int>>{{"sup-a", 6700},
                                                                      {"sup-b", 6700}}));
  EXPECT_EQ(before->transport_secret().size(), 32u);
  ExpectChange(*before, 1, "first", 0, 0, 7, 0);

  ASSERT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*id);
    return a && a->executors_size() == 7 &&
           SlotsOf(*a) == std::set<std::pair<std::string, int>>{{"sup-a", 6700}, {"sup-a", 6701}};
  }));
  const v1::Assignment after = *StoredAssignment(*id);
  EXPECT_EQ(after.transport_secret(), before->transport_secret());
  // sup-a:6700 runs 4 of the 7 (interleaved dealing), the hung worker 3.
  ExpectChange(after, 2, "reassignment", 4, 3, 0, 0);
  // Executors of the live worker stay where they were, start time included.
  for (const auto& e : before->executors()) {
    if (e.node() != "sup-a") continue;
    bool kept = false;
    for (const auto& f : after.executors()) {
      kept |= f.start_task() == e.start_task() && f.node() == "sup-a" && f.port() == 6700 &&
              f.start_time_secs() == e.start_time_secs();
    }
    EXPECT_TRUE(kept) << e.start_task();
  }
  // The hung worker's beat is stale now: nimbus deletes it.
  EXPECT_TRUE(Eventually(kWait, [&] {
    auto exists = zk().Exists(absl::StrCat(root_, "/workerbeats/", *id, "/sup-b-6700"));
    return exists.ok() && !exists->has_value();
  }));
  // The moved executors' new worker beats, and its beat is not stale.
  EXPECT_TRUE(Eventually(kWait, [&] {
    auto exists = zk().Exists(absl::StrCat(root_, "/workerbeats/", *id, "/sup-a-6701"));
    return exists.ok() && exists->has_value();
  }));
  ASSERT_TRUE(n->ReconcileNow().ok());
  EXPECT_EQ(CountChildren(absl::StrCat(root_, "/workerbeats/", *id)), 2);
  workers.reset();
}

TEST_F(MonitorTest, AVanishedSupervisorsExecutorsMoveAtOnce) {
  NimbusOptions o = Options();
  // No periodic round within the test: only the supervisors watch (and the
  // rounds writes trigger) can react.
  o.monitor_interval = std::chrono::hours(1);
  auto n = Start(o);
  ASSERT_NE(n, nullptr);
  ASSERT_TRUE(n->ReconcileNow().ok());
  AddSupervisor("sup-a", {6700, 6701});
  AddSupervisor("sup-b", {6700});
  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*id);
    return a && SlotsOf(*a).size() == 2 && a->executors_size() == 7;
  }));
  const std::string secret = StoredAssignment(*id)->transport_secret();
  ASSERT_TRUE(zk().Delete(absl::StrCat(root_, "/supervisors/sup-b")).ok());
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*id);
    return a && a->executors_size() == 7 &&
           SlotsOf(*a) == std::set<std::pair<std::string, int>>{{"sup-a", 6700}, {"sup-a", 6701}};
  }));
  EXPECT_EQ(StoredAssignment(*id)->transport_secret(), secret);
  // A new supervisor is noticed the same way (the watch was re-armed):
  // nothing is free, so it stays unused, but a second topology gets it.
  AddSupervisor("sup-c", {6700, 6701});
  auto other = n->Submit(Demo("other"));
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*other);
    return a && SlotsOf(*a) == std::set<std::pair<std::string, int>>{{"sup-c", 6700},
                                                                     {"sup-c", 6701}};
  }));
  // Each topology has its own secret.
  EXPECT_NE(StoredAssignment(*other)->transport_secret(), secret);
}

TEST_F(MonitorTest, ASupervisorWhoseTimeStopsChangingLosesItsSlots) {
  NimbusOptions o = Options();
  o.liveness.supervisor_timeout = seconds(2);
  auto n = Start(o);
  ASSERT_NE(n, nullptr);
  AddSupervisor("sup-a", {6700, 6701});
  AddSupervisor("sup-b", {6700});
  // sup-a rewrites its SupervisorInfo with a new time_secs every 100 ms;
  // sup-b's node stays but never changes (a hung supervisor).
  std::atomic<bool> stop{false};
  std::thread beater([&] {
    for (int64_t i = 1; i < 3000 && !stop; ++i) {
      v1::SupervisorInfo info;
      info.set_supervisor_id("sup-a");
      info.set_hostname("127.0.0.1");
      info.add_slot_ports(6700);
      info.add_slot_ports(6701);
      info.set_time_secs(1'700'000'000 + i);
      (void)zk().Set(absl::StrCat(root_, "/supervisors/sup-a"), info.SerializeAsString());
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok()) << id.status();
  // Both are alive at first (a full timeout from first sight); later only
  // sup-a's slots are used, though sup-b's node is still there.
  EXPECT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*id);
    return a && a->executors_size() == 7 &&
           SlotsOf(*a) == std::set<std::pair<std::string, int>>{{"sup-a", 6700}, {"sup-a", 6701}};
  }));
  EXPECT_TRUE(zk().Exists(absl::StrCat(root_, "/supervisors/sup-b"))->has_value());
  stop = true;
  beater.join();
}

TEST_F(MonitorTest, SecretIsKeptAcrossFailoverAndPendingRebalanceIsRearmed) {
  auto first = Start(Options());
  ASSERT_NE(first, nullptr);
  auto second = Nimbus::Create(Options());
  ASSERT_TRUE(second.ok()) << second.status();
  AddSupervisor("sup-a", {6700, 6701});
  AddSupervisor("sup-b", {6700, 6701});
  auto id = first->Submit(Demo());
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*id);
    return a && SlotsOf(*a).size() == 2;
  }));
  const std::string secret = StoredAssignment(*id)->transport_secret();
  ASSERT_EQ(secret.size(), 32u);
  // A rebalance the first leader will not live to apply.
  RebalanceRequest r;
  r.wait_secs = 2;
  r.num_workers = 3;
  auto pending = first->Rebalance(*id, r);
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ(pending->status(), v1::REBALANCING);
  first->CloseSessionForTest();
  ASSERT_TRUE(Eventually(kWait, [&] { return (*second)->IsLeader(); }));
  // The new leader finds it in the record and applies it after the wait.
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto t = (*second)->Topology(*id);
    auto a = StoredAssignment(*id);
    return t.ok() && t->base.status() == v1::ACTIVE && t->base.num_workers() == 3 && a &&
           SlotsOf(*a).size() == 3;
  }));
  EXPECT_EQ(StoredAssignment(*id)->transport_secret(), secret);
  // Reassignment by the new leader keeps it too: sup-b's executors move
  // to the new sup-c.
  AddSupervisor("sup-c", {6700});
  ASSERT_TRUE(zk().Delete(absl::StrCat(root_, "/supervisors/sup-b")).ok());
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*id);
    if (!a) return false;
    for (const auto& e : a->executors()) {
      if (e.node() == "sup-b") return false;
    }
    return a->executors_size() == 7 && SlotsOf(*a).size() == 3;
  }));
  EXPECT_EQ(StoredAssignment(*id)->transport_secret(), secret);
  first.reset();
}

TEST_F(MonitorTest, RebalanceTwoToFourWorkersAndBack) {
  auto n = Start(Options());
  ASSERT_NE(n, nullptr);
  AddSupervisor("sup-a", {6700, 6701});
  AddSupervisor("sup-b", {6700, 6701});
  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*id);
    return a && SlotsOf(*a).size() == 2 && a->executors_size() == 7;
  }));
  const std::string secret = StoredAssignment(*id)->transport_secret();
  const v1::Assignment first = *StoredAssignment(*id);
  ExpectChange(first, 1, "first", 0, 0, 7, 0);

  // Nothing asked for changes: nothing moves and the version stays.
  RebalanceRequest same;
  same.wait_secs = 0;
  ASSERT_TRUE(n->Rebalance(*id, same).ok());
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto t = n->Topology(*id);
    return t.ok() && t->base.status() == v1::ACTIVE;
  }));
  ASSERT_TRUE(n->ReconcileNow().ok());
  EXPECT_EQ(PlacementOf(*StoredAssignment(*id)), PlacementOf(first));
  EXPECT_EQ(StoredAssignment(*id)->version(), 1);

  RebalanceRequest up;
  up.wait_secs = 0;
  up.num_workers = 4;
  auto begun = n->Rebalance(*id, up);
  ASSERT_TRUE(begun.ok()) << begun.status();
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto t = n->Topology(*id);
    auto a = StoredAssignment(*id);
    return t.ok() && t->base.status() == v1::ACTIVE && a && SlotsOf(*a).size() == 4;
  }));
  EXPECT_EQ(n->Topology(*id)->base.num_workers(), 4);
  const v1::Assignment wide = *StoredAssignment(*id);
  EXPECT_EQ(wide.transport_secret(), secret);
  // 4 + 3 executors become 2 + 2 + 2 + 1: three move to the two new
  // slots, the other four stay where they ran.
  ExpectChange(wide, 2, "rebalance", 4, 3, 0, 0);
  ExpectMovedOnlyToNewOrFromGivenUpSlots(first, wide);

  // Back to 2 workers, with one sink executor instead of three.
  RebalanceRequest down;
  down.wait_secs = 0;
  down.num_workers = 2;
  down.executors["sink"] = 1;
  ASSERT_TRUE(n->Rebalance(*id, down).ok());
  ASSERT_TRUE(Eventually(kWait, [&] {
    auto t = n->Topology(*id);
    auto a = StoredAssignment(*id);
    return t.ok() && t->base.status() == v1::ACTIVE && a && SlotsOf(*a).size() == 2 &&
           a->executors_size() == 5;
  }));
  auto t = n->Topology(*id);
  EXPECT_EQ(t->base.num_executors(), 5);
  EXPECT_EQ(t->base.component_executors().at("sink"), 1);
  const v1::Assignment narrow = *StoredAssignment(*id);
  EXPECT_EQ(narrow.transport_secret(), secret);
  // The two slots kept keep their executors; the three sink executors
  // stop and their merged range starts.
  EXPECT_EQ(narrow.version(), 3);
  EXPECT_EQ(narrow.last_change().reason(), "rebalance");
  EXPECT_EQ(narrow.last_change().started(), 1);
  EXPECT_EQ(narrow.last_change().stopped(), 3);
  EXPECT_EQ(narrow.last_change().kept() + narrow.last_change().moved(), 4);
  ExpectMovedOnlyToNewOrFromGivenUpSlots(wide, narrow);

  // A long wait: REBALANCING until then; activate refused, kill allowed.
  RebalanceRequest later;
  later.wait_secs = 3600;
  ASSERT_EQ(n->Rebalance(*id, later)->status(), v1::REBALANCING);
  ASSERT_TRUE(n->ReconcileNow().ok());
  EXPECT_EQ(n->Topology(*id)->base.status(), v1::REBALANCING);
  EXPECT_TRUE(absl::IsFailedPrecondition(n->Activate(*id).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(n->Rebalance(*id, later).status()));
  RebalanceRequest bad;
  bad.executors["nope"] = 1;
  EXPECT_TRUE(absl::IsInvalidArgument(n->Rebalance(*id, bad).status()));
  EXPECT_EQ(n->Kill(*id, 3600)->status(), v1::KILLED);
}

TEST_F(MonitorTest, WorkerbeatsGoWithTheTopologyAndOrphansAreRemoved) {
  auto n = Start(Options());
  ASSERT_NE(n, nullptr);
  AddSupervisor("sup-a", {6700, 6701});
  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(Eventually(kWait, [&] { return StoredAssignment(*id).has_value(); }));
  v1::ExecutorRange r;
  r.set_start_task(1);
  r.set_end_task(1);
  WriteBeat(*id, "sup-a", 6700, {r}, 1);
  // A beat for a slot the topology does not have, and one for a topology
  // that does not exist: both are removed.
  WriteBeat(*id, "sup-z", 6799, {r}, 1);
  WriteBeat("gone-1-1", "sup-a", 6700, {r}, 1);
  EXPECT_TRUE(Eventually(kWait, [&] {
    return CountChildren(absl::StrCat(root_, "/workerbeats/", *id)) == 1 &&
           !zk().Exists(absl::StrCat(root_, "/workerbeats/gone-1-1"))->has_value();
  }));
  auto beats = n->WorkerBeats(*id);
  ASSERT_TRUE(beats.ok());
  ASSERT_EQ(beats->size(), 1u);
  EXPECT_EQ((*beats)[0].slot.node, "sup-a");
  EXPECT_EQ((*beats)[0].slot.port, 6700);
  EXPECT_TRUE((*beats)[0].parsed);

  ASSERT_TRUE(n->Kill(*id, 0).ok());
  EXPECT_TRUE(Eventually(kWait, [&] {
    return CountChildren(root_ + "/storms") == 0 &&
           !zk().Exists(absl::StrCat(root_, "/workerbeats/", *id))->has_value();
  }));
}

}  // namespace
}  // namespace tempest::nimbus::testing
