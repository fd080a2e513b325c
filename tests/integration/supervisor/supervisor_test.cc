// The supervisor against a real ZooKeeper server: registration, assignment
// sync, worker launch/monitor/restart, adoption after a restart, shutdown.
// Workers are heartbeat_worker processes (see heartbeat_worker.cc). Under
// root, the worker sandbox: what a slot's account can plant or reach.

#include "supervisor/supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/coord/zk_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/os/privileges.h"
#include "supervisor/worker_files.h"
#include "supervisor/worker_launcher.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::supervisor {
namespace {

using std::chrono::milliseconds;
using tempest::testing::Eventually;
using ::testing::HasSubstr;

constexpr milliseconds kWait{30000};

class SupervisorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = tempest::testing::ZkEnsemble::Start();
    ASSERT_TRUE(e.ok()) << e.status();
    ensemble_ = e->release();
  }
  static void TearDownTestSuite() {
    delete ensemble_;
    ensemble_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(ensemble_, nullptr);
    static std::atomic<int> counter{0};
    root_ = absl::StrCat("/supervisor-test-", ++counter);
    auto s = ::tempest::testing::ConnectedZkSession(ensemble_->ConnectString());
    ASSERT_TRUE(s.ok()) << s.status();
    zk_ = *std::move(s);
  }

  void TearDown() override {
    if (zk_) zk_->Close();
    // Reap stand-in workers left as zombies by supervisors that abandoned
    // them (adoption tests): they are children of this test process.
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }

  SupervisorOptions Options() const {
    SupervisorOptions o;
    o.zk_connect = ensemble_->ConnectString();
    o.root = root_;
    o.zk.session_timeout = milliseconds(4000);
    o.zk.connection_timeout = milliseconds(10000);
    o.zk.retry_interval = milliseconds(100);
    o.zk.retry_interval_ceiling = milliseconds(1000);
    o.local_dir = local_.path();
    o.hostname = "test-host";
    o.slot_ports = {6700, 6701, 6702};
    o.heartbeat_interval = milliseconds(1000);
    o.monitor_interval = milliseconds(1000);
    o.check_interval = milliseconds(50);
    o.worker_timeout = milliseconds(3000);
    o.worker_start_timeout = milliseconds(20000);
    o.worker_shutdown_wait = milliseconds(2000);
    o.worker_exit_grace = milliseconds(1000);
    o.op_timeout = milliseconds(15000);
    o.worker_command = {HEARTBEAT_WORKER_PATH};
    // Beat faster than the real worker's 1 s, so heartbeat checks settle quickly.
    o.worker_config_args = {"-c", "storm.zookeeper.root=" + root_, "-c",
                            "heartbeat.worker.interval.ms=200"};
    return o;
  }

  std::unique_ptr<Supervisor> Start(SupervisorOptions o) {
    auto s = Supervisor::Create(std::move(o));
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }
  std::unique_ptr<Supervisor> Start() { return Start(Options()); }

  // Writes {root}/assignments/{topology} placing one executor per port.
  void Assign(const std::string& topology, const std::string& supervisor_id,
              const std::vector<int>& ports) {
    v1::Assignment a;
    (*a.mutable_node_host())[supervisor_id] = "test-host";
    int task = 1;
    for (int port : ports) {
      v1::ExecutorAssignment* e = a.add_executors();
      e->set_start_task(task);
      e->set_end_task(task);
      ++task;
      e->set_node(supervisor_id);
      e->set_port(port);
    }
    PutRaw(topology, a.SerializeAsString());
  }
  void PutRaw(const std::string& topology, const std::string& data) {
    const std::string path = absl::StrCat(root_, "/assignments/", topology);
    coord::ZkCreateOptions create;
    create.create_parents = true;
    auto created = zk_->Create(path, data, create);
    if (absl::IsAlreadyExists(created.status())) {
      ASSERT_TRUE(zk_->Set(path, data).ok());
    } else {
      ASSERT_TRUE(created.ok()) << created.status();
    }
  }
  void Unassign(const std::string& topology) {
    ASSERT_TRUE(zk_->Delete(absl::StrCat(root_, "/assignments/", topology)).ok());
  }

  // The live, heartbeating worker on `port`, if any.
  static std::optional<WorkerSnapshot> Worker(Supervisor& s, int port) {
    auto workers = s.Workers();
    if (!workers.ok()) return std::nullopt;
    for (const WorkerSnapshot& w : *workers) {
      if (w.port == port && !w.stopping) return w;
    }
    return std::nullopt;
  }
  static std::optional<WorkerSnapshot> BeatingWorker(Supervisor& s, int port) {
    std::optional<WorkerSnapshot> w = Worker(s, port);
    if (w && w->has_heartbeat) return w;
    return std::nullopt;
  }
  static pid_t WaitBeating(Supervisor& s, int port, pid_t not_pid = 0) {
    pid_t pid = 0;
    Eventually(kWait, [&] {
      std::optional<WorkerSnapshot> w = BeatingWorker(s, port);
      if (w && w->pid != not_pid) pid = w->pid;
      return pid != 0;
    });
    return pid;
  }
  // Gone, or a zombie nobody reaped (a worker abandoned by a "crashed"
  // supervisor is still this test's child).
  static bool ProcessGone(pid_t pid) { return !ProcessStartTime(pid).has_value(); }

  std::optional<v1::SupervisorInfo> Registered(const std::string& id,
                                               coord::ZkStat* stat = nullptr) {
    auto node = zk_->Get(absl::StrCat(root_, "/supervisors/", id));
    if (!node.ok()) return std::nullopt;
    v1::SupervisorInfo info;
    if (!info.ParseFromString(node->data)) return std::nullopt;
    if (stat != nullptr) *stat = node->stat;
    return info;
  }

  std::string WorkerDirOf(int port) const { return WorkerDir(local_.path(), port); }
  std::string RecordsDirOf(int port) const { return SlotRecordsDir(local_.path(), port); }

  static tempest::testing::ZkEnsemble* ensemble_;
  std::string root_;
  std::unique_ptr<coord::ZkSession> zk_;
  tempest::testing::TempDir local_{"supervisor-local"};
};

tempest::testing::ZkEnsemble* SupervisorTest::ensemble_ = nullptr;

TEST_F(SupervisorTest, RegistersAndRegistersAgainAfterSessionExpiry) {
  std::unique_ptr<Supervisor> s = Start();
  ASSERT_NE(s, nullptr);
  const std::string id = s->id();
  EXPECT_EQ(*ReadSmallFile(SupervisorIdPath(local_.path())), id + "\n");
  coord::ZkStat stat;
  std::optional<v1::SupervisorInfo> info = Registered(id, &stat);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->supervisor_id(), id);
  EXPECT_EQ(info->hostname(), "test-host");
  EXPECT_THAT(info->slot_ports(), ::testing::ElementsAre(6700, 6701, 6702));
  EXPECT_EQ(stat.ephemeral_owner, s->session().session_id());
  // Rewritten once per heartbeat interval, not in a loop: by the time the
  // next beat shows a later time, only a few writes happened.
  const int64_t first_beat = info->time_secs();
  coord::ZkStat later;
  ASSERT_TRUE(Eventually(kWait, [&] {
    std::optional<v1::SupervisorInfo> i = Registered(id, &later);
    return i && i->time_secs() > first_beat;
  }));
  EXPECT_LE(later.version - stat.version, 4);

  const int64_t old_session = s->session().session_id();
  ASSERT_TRUE(ensemble_->ExpireSession(old_session, s->session().session_password()).ok());
  EXPECT_TRUE(Eventually(kWait, [&] {
    coord::ZkStat now;
    return Registered(id, &now).has_value() && now.ephemeral_owner != old_session &&
           now.ephemeral_owner == s->session().session_id();
  }));

  // The same id after a restart; the node goes with a clean shutdown.
  s.reset();
  EXPECT_FALSE(Registered(id).has_value());
  s = Start();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->id(), id);
  EXPECT_TRUE(Registered(id).has_value());
}

TEST_F(SupervisorTest, LaunchesAnAssignedWorkerAndRelaunchesItAfterSigkill) {
  std::unique_ptr<Supervisor> s = Start();
  ASSERT_NE(s, nullptr);
  // Garbage next to a good assignment: reported, ignored, no crash.
  PutRaw("garbage-1-1", "\x01\x02 this is not an Assignment \xff");
  Assign("topo-1-1", s->id(), {6700});
  const pid_t first = WaitBeating(*s, 6700);
  ASSERT_NE(first, 0);

  // The contract: worker.json, the command line, the log.
  absl::StatusOr<std::string> json = ReadSmallFile(WorkerJsonPath(RecordsDirOf(6700)));
  ASSERT_TRUE(json.ok()) << json.status();
  absl::StatusOr<WorkerLaunchRecord> record = ParseWorkerJson(*json);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->pid, first);
  EXPECT_EQ(record->topology_id, "topo-1-1");
  EXPECT_EQ(record->port, 6700);
  EXPECT_EQ(record->supervisor_id, s->id());
  EXPECT_TRUE(LooksLikeWorker(first, 6700));
  EXPECT_EQ(::getpgid(first), first);  // its own process group
  absl::StatusOr<std::string> log = ReadSmallFile(WorkerLogPath(RecordsDirOf(6700)));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(*log, HasSubstr(absl::StrCat(" worker --topology-id topo-1-1 --supervisor-id ",
                                           s->id(), " --port 6700 --worker-dir ", WorkerDirOf(6700),
                                           " -c storm.zookeeper.root=", root_)));
  EXPECT_TRUE(Eventually(kWait, [&] {
    std::optional<v1::SupervisorInfo> info = Registered(s->id());
    return info && info->used_ports_size() == 1 && info->used_ports(0) == 6700;
  }));

  ASSERT_EQ(::kill(first, SIGKILL), 0);
  const pid_t second = WaitBeating(*s, 6700, first);
  ASSERT_NE(second, 0);
  EXPECT_NE(second, first);
  EXPECT_TRUE(ProcessGone(first));
  errno = 0;
  EXPECT_EQ(::kill(first, 0), -1);  // reaped, not a zombie
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(ParseWorkerJson(*ReadSmallFile(WorkerJsonPath(RecordsDirOf(6700))))->pid, second);
}

TEST_F(SupervisorTest, KillsAndRelaunchesAWorkerWhoseHeartbeatGoesStale) {
  std::unique_ptr<Supervisor> s = Start();
  ASSERT_NE(s, nullptr);
  Assign("topo-2-1", s->id(), {6701});
  const pid_t first = WaitBeating(*s, 6701);
  ASSERT_NE(first, 0);
  ASSERT_TRUE(
      WriteFileAtomically(absl::StrCat(WorkerDirOf(6701), "/stop-beating.", first), "").ok());
  const pid_t second = WaitBeating(*s, 6701, first);
  ASSERT_NE(second, 0);
  EXPECT_TRUE(Eventually(kWait, [&] { return ProcessGone(first); }));
  absl::StatusOr<std::string> log = ReadSmallFile(WorkerLogPath(RecordsDirOf(6701)));
  ASSERT_TRUE(log.ok());
  EXPECT_THAT(*log, HasSubstr("SIGTERM, exiting"));  // stopped cleanly, not killed
}

TEST_F(SupervisorTest, WorkersKeepRunningAndAreRestartedWhileZooKeeperIsDown) {
  std::unique_ptr<Supervisor> s = Start();
  ASSERT_NE(s, nullptr);
  Assign("topo-10-1", s->id(), {6700});
  const pid_t first = WaitBeating(*s, 6700);
  ASSERT_NE(first, 0);
  zk_->Close();
  ensemble_->Kill(0);
  // The worker crashes during the outage: it is restarted on the last known
  // assignment, without waiting for ZooKeeper.
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  const pid_t second = WaitBeating(*s, 6700, first);
  EXPECT_NE(second, 0);
  ASSERT_TRUE(ensemble_->Restart(0).ok());
  // Back in ZooKeeper (same session or a new one), still running the worker.
  coord::ZkSession::Options o;
  o.connect_string = ensemble_->ConnectString();
  auto session = coord::ZkSession::Create(std::move(o));
  ASSERT_TRUE(session.ok()) << session.status();
  zk_ = *std::move(session);
  ASSERT_TRUE(zk_->WaitConnected(milliseconds(20000)).ok());
  EXPECT_TRUE(Eventually(kWait, [&] { return Registered(s->id()).has_value(); }));
  std::optional<WorkerSnapshot> w = BeatingWorker(*s, 6700);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->pid, second);
}

TEST_F(SupervisorTest, RemovingTheAssignmentStopsTheWorker) {
  std::unique_ptr<Supervisor> s = Start();
  ASSERT_NE(s, nullptr);
  Assign("topo-3-1", s->id(), {6700, 6702});
  const pid_t a = WaitBeating(*s, 6700);
  const pid_t b = WaitBeating(*s, 6702);
  ASSERT_NE(a, 0);
  ASSERT_NE(b, 0);
  Unassign("topo-3-1");
  EXPECT_TRUE(Eventually(kWait, [&] {
    auto workers = s->Workers();
    return workers.ok() && workers->empty();
  }));
  EXPECT_TRUE(ProcessGone(a));
  EXPECT_TRUE(ProcessGone(b));
  EXPECT_TRUE(Eventually(kWait, [&] {
    std::optional<v1::SupervisorInfo> info = Registered(s->id());
    return info && info->used_ports_size() == 0;
  }));
  // Nothing is relaunched for a slot nobody assigned.
  ASSERT_TRUE(s->SyncNow().ok());
  EXPECT_TRUE(s->Workers()->empty());
}

TEST_F(SupervisorTest, AWorkerThatLeavesItsRemovedSlotByItselfIsNotRestarted) {
  SupervisorOptions o = Options();
  o.worker_exit_grace = milliseconds(120000);  // the supervisor would wait this long
  std::unique_ptr<Supervisor> s = Start(o);
  ASSERT_NE(s, nullptr);
  Assign("topo-9-1", s->id(), {6700});
  const pid_t pid = WaitBeating(*s, 6700);
  ASSERT_NE(pid, 0);
  Unassign("topo-9-1");
  // As the real worker does when its slot goes away: exit 0 by itself.
  ASSERT_TRUE(WriteFileAtomically(absl::StrCat(WorkerDirOf(6700), "/exit.", pid), "0").ok());
  EXPECT_TRUE(Eventually(kWait, [&] {
    auto workers = s->Workers();
    return workers.ok() && workers->empty();
  }));
  ASSERT_TRUE(s->SyncNow().ok());
  EXPECT_TRUE(s->Workers()->empty());
  const std::string log = *ReadSmallFile(WorkerLogPath(RecordsDirOf(6700)));
  EXPECT_THAT(log, HasSubstr("exiting with 0 as asked"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("SIGTERM")));
}

TEST_F(SupervisorTest, AReassignedSlotGetsAWorkerOfTheNewTopology) {
  std::unique_ptr<Supervisor> s = Start();
  ASSERT_NE(s, nullptr);
  Assign("topo-4-1", s->id(), {6700});
  const pid_t old_pid = WaitBeating(*s, 6700);
  ASSERT_NE(old_pid, 0);
  Unassign("topo-4-1");
  Assign("topo-5-1", s->id(), {6700});
  std::optional<WorkerSnapshot> w;
  EXPECT_TRUE(Eventually(kWait, [&] {
    w = BeatingWorker(*s, 6700);
    return w && w->topology_id == "topo-5-1";
  }));
  EXPECT_TRUE(ProcessGone(old_pid));
}

TEST_F(SupervisorTest, ARestartAdoptsAnAssignedWorkerAndKillsAnUnassignedOne) {
  std::unique_ptr<Supervisor> first = Start();
  ASSERT_NE(first, nullptr);
  const std::string id = first->id();
  Assign("topo-6-1", id, {6700});
  Assign("topo-7-1", id, {6701});
  Assign("topo-11-1", id, {6702});
  const pid_t kept = WaitBeating(*first, 6700);
  const pid_t dropped = WaitBeating(*first, 6701);
  const pid_t unnamed = WaitBeating(*first, 6702);
  ASSERT_NE(kept, 0);
  ASSERT_NE(dropped, 0);
  ASSERT_NE(unnamed, 0);
  // The supervisor "crashes": its workers keep running.
  first->LeaveWorkersRunningForTest();
  first.reset();
  EXPECT_FALSE(ProcessGone(kept));
  EXPECT_FALSE(ProcessGone(dropped));
  // While it is down, topo-7 loses its slot, and the worker.json of port 6702
  // is torn: its worker can only be found through /proc.
  Unassign("topo-7-1");
  ASSERT_TRUE(WriteFileAtomically(WorkerJsonPath(RecordsDirOf(6702)), "{\"pid\": 12").ok());

  std::unique_ptr<Supervisor> second = Start();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->id(), id);
  std::optional<WorkerSnapshot> adopted = Worker(*second, 6700);
  ASSERT_TRUE(adopted.has_value());
  EXPECT_EQ(adopted->pid, kept);
  EXPECT_TRUE(adopted->adopted);
  EXPECT_TRUE(ProcessGone(dropped));  // killed during start-up
  EXPECT_TRUE(ProcessGone(unnamed));  // killed too: nothing to adopt it by
  EXPECT_FALSE(Worker(*second, 6701).has_value());
  // Its slot is still assigned: a fresh worker takes it.
  EXPECT_NE(WaitBeating(*second, 6702, unnamed), 0);
  EXPECT_TRUE(Eventually(kWait, [&] { return BeatingWorker(*second, 6700).has_value(); }));

  // The adopted worker is monitored too: when it dies it is relaunched.
  ASSERT_EQ(::kill(kept, SIGKILL), 0);
  const pid_t relaunched = WaitBeating(*second, 6700, kept);
  ASSERT_NE(relaunched, 0);
  std::optional<WorkerSnapshot> now = Worker(*second, 6700);
  ASSERT_TRUE(now.has_value());
  EXPECT_FALSE(now->adopted);
}

TEST_F(SupervisorTest, ShutdownStopsEveryWorkerAndEscalatesToSigkill) {
  // The worker on 6701 ignores SIGTERM (its scratch directory is made
  // afresh at launch, so the stand-in is told through its environment).
  ::setenv("HEARTBEAT_WORKER_IGNORE_TERM_PORT", "6701", 1);
  // As in `tempest supervisor`, SIGTERM is blocked in every supervisor
  // thread; workers must get it unblocked (the polite one exits on it).
  sigset_t term, old_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &old_mask), 0);
  std::unique_ptr<Supervisor> s = Start();
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ASSERT_NE(s, nullptr);
  const std::string id = s->id();
  Assign("topo-8-1", id, {6700, 6701});
  const pid_t polite = WaitBeating(*s, 6700);
  const pid_t ignores_term = WaitBeating(*s, 6701);
  ::unsetenv("HEARTBEAT_WORKER_IGNORE_TERM_PORT");
  ASSERT_NE(polite, 0);
  ASSERT_NE(ignores_term, 0);
  s.reset();
  for (pid_t pid : {polite, ignores_term}) {
    errno = 0;
    EXPECT_EQ(::kill(pid, 0), -1) << pid;  // gone and reaped
    EXPECT_EQ(errno, ESRCH);
  }
  EXPECT_FALSE(Registered(id).has_value());
  EXPECT_THAT(*ReadSmallFile(WorkerLogPath(RecordsDirOf(6700))), HasSubstr("SIGTERM, exiting"));
}

// --- the worker sandbox (as root) ---------------------------------------------

// Runs `fn` in a child process that has become `account` for good; its
// result is the child's exit code (-1 when it did not exit normally).
int RunAs(const os::UnixUser& account, const std::function<int()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!os::DropPrivilegesTo(account).ok()) ::_exit(100);
    ::_exit(fn());
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The account the worker of `port` runs as under a root supervisor.
os::UnixUser SlotUser(int port) {
  absl::StatusOr<os::UnixUser> nobody = os::LookUpUnprivilegedUser(kDefaultWorkerUser);
  EXPECT_TRUE(nobody.ok()) << nobody.status();
  return SlotAccount(nobody.value_or(os::UnixUser{"nobody", 65534, 65534}), kDefaultSlotUidBase,
                     port);
}

std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

TEST_F(SupervisorTest, LinksPlantedByTheWorkersAccountAreNeverFollowedOnRelaunch) {
  if (!os::RunningAsRoot()) GTEST_SKIP() << "the worker sandbox needs a root supervisor";
  // A root-only file in a root-only directory: what the links point at.
  tempest::testing::TempDir outside("sandbox-secret");
  const std::string secret = outside.File("secret");
  ASSERT_EQ(::mkdir(secret.c_str(), 0700), 0);
  const std::string precious = secret + "/precious";
  ASSERT_TRUE(WriteFileAtomically(precious, "root only\n").ok());
  ASSERT_EQ(::chmod(precious.c_str(), 0600), 0);

  std::unique_ptr<Supervisor> s = Start();
  ASSERT_NE(s, nullptr);
  Assign("topo-9-1", s->id(), {6700});
  const pid_t first = WaitBeating(*s, 6700);
  ASSERT_NE(first, 0);
  // The stand-in stays root here; it stops beating so that the planted
  // heartbeat link is what the supervisor finds.
  ASSERT_TRUE(
      WriteFileAtomically(absl::StrCat(WorkerDirOf(6700), "/stop-beating.", first), "").ok());
  const std::string scratch = WorkerDirOf(6700);
  const std::string records = RecordsDirOf(6700);
  const std::string tmp = absl::StrCat("worker.json.tmp.", ::getpid());  // the old name
  const std::string new_tmp = absl::StrCat(".worker.json.tmp.", ::getpid());
  const int planted = RunAs(SlotUser(6700), [&] {
    int failed = 0;
    // Its own directory: links wherever the supervisor reads, or once wrote.
    for (const std::string name : {"heartbeat", "heartbeat.previous", "worker.log", "worker.json",
                                   tmp.c_str(), new_tmp.c_str()}) {
      const std::string at = scratch + "/" + name;
      ::unlink(at.c_str());
      if (::symlink(precious.c_str(), at.c_str()) != 0) ++failed;
    }
    if (::symlink(secret.c_str(), (scratch + "/resources").c_str()) != 0) ++failed;
    if (::symlink((secret + "/created").c_str(), (scratch + "/dangling").c_str()) != 0) ++failed;
    // Where the supervisor writes now: closed to the account.
    for (const std::string name : {"worker.log", "worker.json", new_tmp.c_str()}) {
      const std::string at = records + "/" + name;
      if (::unlink(at.c_str()) == 0 || ::symlink(precious.c_str(), at.c_str()) == 0) return 90;
    }
    // The scratch directory cannot be swapped for a link, nor another slot's
    // be prepared for the next topology.
    if (::rename(scratch.c_str(), (scratch + ".stolen").c_str()) == 0) return 91;
    if (::symlink(secret.c_str(), WorkerDirOf(6701).c_str()) == 0) return 92;
    return failed;
  });
  ASSERT_EQ(planted, 0) << "the slot's account could not plant its links, or wrote where it "
                           "must not (exit code 9x)";

  // No beat is read through the heartbeat link: the worker goes stale, the
  // supervisor kills it and launches the next one in a fresh directory.
  const pid_t second = WaitBeating(*s, 6700, first);
  ASSERT_NE(second, 0);

  struct stat st {};
  ASSERT_EQ(::stat(precious.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(*ReadSmallFile(precious), "root only\n");
  EXPECT_EQ(Entries(secret), std::set<std::string>{"precious"}) << "a file appeared beside it";
  // The new scratch directory holds nothing of the old one's links.
  for (const std::string& name : Entries(scratch)) {
    EXPECT_FALSE(std::filesystem::is_symlink(scratch + "/" + name)) << name;
  }
  ASSERT_EQ(::stat(scratch.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, SlotUser(6700).uid);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // The log is the supervisor's regular file and has both launches.
  ASSERT_EQ(::lstat(WorkerLogPath(records).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, 0u);
  const std::string log = ReadSmallFile(WorkerLogPath(records)).value_or("");
  EXPECT_NE(log.find("heartbeat_worker argv:"), log.rfind("heartbeat_worker argv:")) << log;
  EXPECT_EQ(ParseWorkerJson(*ReadSmallFile(WorkerJsonPath(records)))->pid, second);
}

TEST_F(SupervisorTest, OneSlotsAccountCannotReachAnotherTopologysFiles) {
  if (!os::RunningAsRoot()) GTEST_SKIP() << "slot accounts need a root supervisor";
  std::unique_ptr<Supervisor> s = Start();
  ASSERT_NE(s, nullptr);
  Assign("topo-10-1", s->id(), {6700});
  Assign("topo-11-1", s->id(), {6701});
  const pid_t a = WaitBeating(*s, 6700);
  const pid_t b = WaitBeating(*s, 6701);
  ASSERT_NE(a, 0);
  ASSERT_NE(b, 0);
  // Something topo-11 left running under its slot's uid.
  const pid_t lingering = ::fork();
  if (lingering == 0) {
    if (!os::DropPrivilegesTo(SlotUser(6701)).ok()) ::_exit(1);
    for (;;) ::pause();
  }
  ASSERT_GT(lingering, 0);

  const std::string other = WorkerDirOf(6701);
  const int reached = RunAs(SlotUser(6700), [&] {
    // Its own directory is its to write.
    const int own = ::open((WorkerDirOf(6700) + "/scratch-file").c_str(),
                           O_WRONLY | O_CREAT | O_NOFOLLOW, 0600);
    if (own < 0) return 10;
    ::close(own);
    // Another topology's: not listed, read or written.
    if (DIR* d = ::opendir(other.c_str()); d != nullptr) return 11;
    if (::open((other + "/heartbeat").c_str(), O_RDONLY) >= 0) return 12;
    if (::open((other + "/planted").c_str(), O_WRONLY | O_CREAT, 0644) >= 0) return 13;
    if (::open(WorkerLogPath(RecordsDirOf(6701)).c_str(), O_RDONLY) >= 0) return 14;
    if (::open(WorkerJsonPath(RecordsDirOf(6701)).c_str(), O_RDONLY) >= 0) return 15;
    // Nor its processes signalled.
    if (::kill(lingering, 0) == 0 || errno != EPERM) return 16;
    return 0;
  });
  EXPECT_EQ(reached, 0) << "slot 6700's account reached slot 6701's files (exit code)";
  EXPECT_FALSE(std::filesystem::exists(other + "/planted"));

  // When topo-11's worker goes, so does everything of its slot's uid.
  ASSERT_EQ(::kill(b, SIGKILL), 0);
  EXPECT_TRUE(Eventually(kWait,
                         [&] { return ::waitpid(lingering, nullptr, WNOHANG) == lingering; }))
      << "a process of the slot's uid outlived its worker";
  EXPECT_NE(WaitBeating(*s, 6701, b), 0);
  const std::optional<WorkerSnapshot> untouched = BeatingWorker(*s, 6700);
  ASSERT_TRUE(untouched.has_value());
  EXPECT_EQ(untouched->pid, a);  // the other slot's worker was not touched
}

}  // namespace
}  // namespace tempest::supervisor
