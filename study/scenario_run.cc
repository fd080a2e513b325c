#include "study/scenario_run.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bolts/verification_report.h"
#include "common/coord/zk_session.h"
#include "common/core/status_macros.h"
#include "common/os/privileges.h"
#include "spout/kafka/offsets/offset_admin.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"
#include "study/committed_offsets.h"
#include "study/range_explanation.h"
#include "supervisor/supervisor_options.h"

namespace tempest::study {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Runs `tempest` commands side by side and waits for all of them; the first
// failure is returned.
absl::Status RunTogether(StudyWorld& world, const std::vector<std::vector<std::string>>& runs) {
  std::vector<StudyWorld::Command> commands;
  for (const std::vector<std::string>& args : runs) {
    ASSIGN_OR_RETURN(StudyWorld::Command c, world.StartTempest(args));
    commands.push_back(std::move(c));
  }
  absl::Status first = absl::OkStatus();
  for (StudyWorld::Command& c : commands) {
    absl::StatusOr<std::string> out = world.Finish(c, seconds(120));
    if (!out.ok() && first.ok()) first = out.status();
  }
  return first;
}

// A ZooKeeper session to the world's ensemble for the main thread's reads
// (with the spouts' credentials: it reads their creator-only nodes too).
absl::StatusOr<std::unique_ptr<coord::ZkSession>> ConnectZk(StudyWorld& world) {
  coord::ZkSession::Options o;
  o.connect_string = world.zk_connect();
  o.config = world.reader_zk_config();
  return coord::ZkSession::Create(o);
}

int64_t MetricOf(const std::map<std::string, int64_t>& m, const char* name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

// A pipeline's commit figures: the maxima seen, plus each worker's latest
// counters summed.
std::optional<CommitPathFigures> CommitFigures(
    const std::map<pid_t, std::map<std::string, int64_t>>& latest, CommitPathFigures f) {
  if (f.readings == 0) return std::nullopt;
  for (const auto& [pid, m] : latest) {
    f.multis += MetricOf(m, "tempest_kafka_spout_zk_multis");
    f.failures += MetricOf(m, "tempest_kafka_spout_commit_failures");
    f.denied += MetricOf(m, "tempest_kafka_spout_commit_denied");
    f.coalesced += MetricOf(m, "tempest_kafka_spout_commits_coalesced");
    f.ambiguous_writes += MetricOf(m, "tempest_zk_ambiguous_writes_total");
  }
  return f;
}

// The lines that show a cut-off owner fencing itself: a KafkaSpout giving
// up a partition it was emitting ("kafka spout NAME: stop emitting ..."), a
// worker stopping its spouts when its session is lost ("worker fenced: ...
// (topology ID, ..."), whichever comes first; a nimbus losing leadership.
constexpr char kSpoutFenceLine[] = ": stop emitting ";
constexpr char kWorkerFenceLine[] = "worker fenced: ";
constexpr char kLeaderFenceLine[] = ": is not the leader";
// Lines of a nimbus log that record a state change only the leader makes.
constexpr const char* kLeaderWriteLines[] = {": assigned ", ": removed ", ": rebalanced "};

int64_t CountLines(const std::string& path, std::string_view needle) {
  std::ifstream in(path);
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) ++n;
  }
  return n;
}

// The copies each record reached `log` with; none when it cannot be read.
DeliveryCounts CountsOrNone(const std::string& log, int64_t records) {
  absl::StatusOr<DeliveryCounts> counts = CountDeliveries({log}, records);
  if (!counts.ok()) return DeliveryCounts{std::vector<uint32_t>(records, 0), 0, 0};
  return *std::move(counts);
}

// The run's lost and duplicated ranges, each explained from the spout's offset
// journal (read now, while the world's ZooKeeper is up; without `zk`, none).
void FillRanges(coord::ZkSession* zk, const std::string& spout_id, const std::string& topic,
                const RecordLayout& layout, const std::vector<int64_t>& committed,
                const DeliveryCounts& counts, RunResult& run) {
  std::vector<PartitionJournal> journals(layout.partitions);
  if (zk != nullptr) {
    journals = ReadJournals(*zk, spout_id, topic, committed, layout.partitions);
  } else {
    for (PartitionJournal& j : journals) j.unreadable = "ZooKeeper could not be reached";
  }
  ExplainedRanges ranges = ExplainRanges(counts, layout, topic, journals);
  run.zombie_commits = CountZombieCommits(journals);
  run.ranges = std::move(ranges.ranges);
  run.ranges_omitted = ranges.omitted;
}

}  // namespace

ScenarioRun::ScenarioRun(StudyWorld& world, const StudyOptions& options, const Scenario& scenario,
                         StudyProgress& progress)
    : world_(world),
      options_(options),
      scenario_(scenario),
      progress_(progress),
      topic_(absl::StrCat("study-", scenario.name)),
      dir_(std::filesystem::path(options.out_dir) / "runs" / scenario.name),
      work_dir_(options.worker_out_dir.empty()
                    ? dir_
                    : std::filesystem::path(options.worker_out_dir) / scenario.name),
      production_s_(static_cast<double>(options.records) / options.rate),
      plan_(PlanFault(scenario, options.seed, production_s_)),
      switch_file_((work_dir_ / "fault-on").string()),
      injector_(&world, scenario.fault, plan_, switch_file_, *this) {
  layout_.records = options.records;
  layout_.partitions = options.partitions;
}

ScenarioRun::~ScenarioRun() {
  if (work_dir_ == dir_) return;
  std::error_code ec;
  for (const std::string& g : options_.guarantees) {
    std::filesystem::copy(work_dir_ / g, dir_ / g,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing,
                          ec);
    if (ec) progress_.Line(absl::StrCat("cannot copy ", (work_dir_ / g).string(), " into ",
                                        (dir_ / g).string(), ": ", ec.message()));
  }
  std::filesystem::remove_all(work_dir_, ec);
}

double ScenarioRun::Now() const {
  return std::chrono::duration<double>(SteadyClock::now() - t0_).count();
}

absl::Status ScenarioRun::Prepare() {
  std::error_code ec;
  for (const std::filesystem::path& d : {dir_, work_dir_}) {
    std::filesystem::remove_all(d, ec);
    std::filesystem::create_directories(d, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot create ", d.string()));
  }
  RETURN_IF_ERROR(world_.kafka().CreateTopic({topic_, options_.partitions}));
  PipelineSite site;
  site.topic = topic_;
  site.bootstrap_servers = world_.bootstrap_servers();
  site.zk_servers = world_.spout_zk_servers();
  site.dir = work_dir_;
  site.fault_switch_file = switch_file_;
  site.seed = options_.seed;
  site.spout_credentials = world_.spout_credentials();
  site.zk_session_timeout_ms = world_.options().zk_session_timeout_ms;
  // Under root the world's workers run as slot uids in the group of the
  // default worker account (supervisor.worker.user): each pipeline's
  // directory, where its sinks write, is given to that account and opened
  // to its group, so the pipeline's workers on any slot may write there.
  std::optional<os::UnixUser> worker_account;
  if (os::RunningAsRoot()) {
    ASSIGN_OR_RETURN(worker_account, os::LookUpUnprivilegedUser(supervisor::kDefaultWorkerUser));
  }
  for (const std::string& g : options_.guarantees) {
    Pipeline p;
    p.spec = PipelineFor(scenario_, g, site);
    std::filesystem::create_directories(dir_ / g, ec);
    std::filesystem::create_directories(work_dir_ / g, ec);
    if (worker_account) {
      const std::string out = (work_dir_ / g).string();
      RETURN_IF_ERROR(os::GiveToUser(out, *worker_account));
      std::filesystem::permissions(out, std::filesystem::perms::owner_all |
                                            std::filesystem::perms::group_all, ec);
    }
    p.yaml_path = (dir_ / g / "topology.yaml").string();
    std::ofstream yaml(p.yaml_path);
    yaml << PipelineTopologyYaml(p.spec);
    if (!yaml) return absl::InternalError(absl::StrCat("cannot write ", p.yaml_path));
    pipelines_.push_back(std::move(p));
  }
  PacedProducer::Options po;
  po.bootstrap_servers = world_.bootstrap_servers();
  po.topic = topic_;
  po.layout = layout_;
  po.rate = options_.rate;
  producer_ = std::make_unique<PacedProducer>(std::move(po));
  return absl::OkStatus();
}

std::vector<std::string> ScenarioRun::OurTopologies() const {
  std::vector<std::string> names;
  for (const Pipeline& p : pipelines_) {
    names.push_back(p.upgraded ? p.spec.name + kUpgradedSuffix : p.spec.name);
  }
  return names;
}

absl::Status ScenarioRun::SubmitTopologies() {
  std::vector<std::vector<std::string>> runs;
  for (const Pipeline& p : pipelines_) runs.push_back({"submit", p.yaml_path, "--until-running"});
  return RunTogether(world_, runs);
}

absl::Status ScenarioRun::KillTopologies() {
  std::vector<std::vector<std::string>> runs;
  for (const std::string& name : OurTopologies()) {
    runs.push_back({"kill", name, "-w", "0", "--until-removed"});
  }
  return RunTogether(world_, runs);
}

absl::Status ScenarioRun::KillTopologiesAfterRun() {
  // A nimbus that has just come back from a partition (partition-nimbus-leader)
  // can answer a name lookup from a view that does not list the topologies
  // yet, and the views converge within seconds. So a kill refused with "no
  // topology named" is tried again, alone (its siblings are gone by then),
  // for a bounded time; anything else is reported at once.
  auto kill = [](const std::string& name) {
    return std::vector<std::string>{"kill", name, "-w", "0", "--until-removed"};
  };
  const std::vector<std::string> names = OurTopologies();
  std::vector<StudyWorld::Command> commands;
  for (const std::string& name : names) {
    ASSIGN_OR_RETURN(StudyWorld::Command c, world_.StartTempest(kill(name)));
    commands.push_back(std::move(c));
  }
  const auto deadline = SteadyClock::now() + seconds(30);
  absl::Status first = absl::OkStatus();
  for (size_t i = 0; i < names.size(); ++i) {
    absl::Status s = world_.Finish(commands[i], seconds(120)).status();
    while (!s.ok() && absl::StrContains(s.message(), "no topology named") &&
           SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(seconds(1));
      s = RunTogether(world_, {kill(names[i])});
    }
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

std::vector<StudyWorld::Worker> ScenarioRun::SpoutWorkers() const {
  // Topology ids start with the topology's name.
  std::vector<StudyWorld::Worker> out;
  for (const StudyWorld::Worker& w : world_.Workers()) {
    if (w.kafka_partitions == 0) continue;
    for (const Pipeline& p : pipelines_) {
      if (w.topology_id.rfind(p.spec.name + "-", 0) == 0) out.push_back(w);
    }
  }
  return out;
}

std::vector<StudyWorld::Worker> ScenarioRun::TopologyWorkers() const {
  std::vector<StudyWorld::Worker> out;
  for (const StudyWorld::Worker& w : world_.Workers()) {
    for (const Pipeline& p : pipelines_) {
      if (w.topology_id.rfind(p.spec.name + "-", 0) == 0) out.push_back(w);
    }
  }
  return out;
}

int64_t ScenarioRun::FenceLines(const Pipeline& p) const {
  return world_.CountWorkerLogLines(p.spec.name + ":", kSpoutFenceLine) +
         world_.CountWorkerLogLines("(topology " + p.spec.name + "-", kWorkerFenceLine);
}

void ScenarioRun::StartFenceWatch() {
  const PartitionCut& cut = injector_.partition_cut();
  for (const auto& [id, host] : cut.fenced_topology_hosts) {
    for (const Pipeline& p : pipelines_) {
      if (id.rfind(p.spec.name + "-", 0) == 0) fence_lines_before_[p.spec.name] = FenceLines(p);
    }
  }
  if (!cut.old_leader_host.empty() && world_.multi_host() != nullptr) {
    leader_lines_before_ = CountLines(
        world_.multi_host()->DaemonLogPath(cut.old_leader_host, "nimbus"), kLeaderFenceLine);
  }
}

void ScenarioRun::WatchFences() {
  if (!injector_.injected() || !injector_.start_s().has_value()) return;
  // A fence that has not come by a few seconds after the heal never came
  // while the fault lasted.
  if (injector_.healed() && Now() > injector_.end_s().value_or(0) + 3) return;
  const auto now = SteadyClock::now();
  if (now < next_fence_poll_) return;
  next_fence_poll_ = now + milliseconds(200);
  const double t = Now();
  for (const Pipeline& p : pipelines_) {
    auto before = fence_lines_before_.find(p.spec.name);
    if (before == fence_lines_before_.end() || fenced_at_.contains(p.spec.name)) continue;
    if (FenceLines(p) > before->second) fenced_at_[p.spec.name] = t;
  }
  const PartitionCut& cut = injector_.partition_cut();
  if (!cut.old_leader_host.empty() && !leader_fenced_at_.has_value() &&
      world_.multi_host() != nullptr &&
      CountLines(world_.multi_host()->DaemonLogPath(cut.old_leader_host, "nimbus"),
                 kLeaderFenceLine) > leader_lines_before_) {
    leader_fenced_at_ = t;
  }
}

int64_t ScenarioRun::LeaderWritesAfterLoss() const {
  const PartitionCut& cut = injector_.partition_cut();
  std::ifstream in(world_.multi_host()->DaemonLogPath(cut.old_leader_host, "nimbus"));
  std::string line;
  int64_t fences = 0;
  bool lost = false;
  int64_t writes = 0;
  while (std::getline(in, line)) {
    if (line.find(kLeaderFenceLine) != std::string::npos && ++fences > leader_lines_before_) {
      lost = true;
    } else if (line.find(": gained leadership") != std::string::npos) {
      lost = false;  // leading again (after the heal): its writes are its own
    } else if (lost) {
      for (const char* w : kLeaderWriteLines) {
        if (line.find(w) != std::string::npos) ++writes;
      }
    }
  }
  return writes;
}

void ScenarioRun::FillPartitionFigures(const Pipeline& p, RunResult& r) const {
  const PartitionCut& cut = injector_.partition_cut();
  // From the moment the owner's host was completely cut off.
  auto since_cut = [&](double fenced_at, const std::string& host) {
    auto at = cut.cut_at.find(host);
    const double from = at != cut.cut_at.end() ? at->second : injector_.start_s().value_or(0);
    return std::round((fenced_at - from) * 10) / 10;
  };
  if (!cut.old_leader_host.empty()) {
    r.fence_expected = true;
    if (leader_fenced_at_.has_value()) {
      r.fence_s = since_cut(*leader_fenced_at_, cut.old_leader_host);
    }
    r.leader_writes_after_loss = LeaderWritesAfterLoss();
  } else if (fence_lines_before_.contains(p.spec.name)) {
    r.fence_expected = true;
    auto at = fenced_at_.find(p.spec.name);
    for (const auto& [id, host] : cut.fenced_topology_hosts) {
      if (at != fenced_at_.end() && id.rfind(p.spec.name + "-", 0) == 0) {
        r.fence_s = since_cut(at->second, host);
      }
    }
  }
  PartitionLimits limits;
  // The spouts commit every 500 ms (pipeline_topology.cc).
  limits.fence_s = world_.options().zk_session_timeout_ms / 1000.0 + 0.5;
  r.bounds = CheckBounds(r, limits);
  for (const BoundCheck& b : r.bounds) {
    if (b.pass) continue;
    // Lost, duplicated and zombie commits are already among the violations.
    if (b.figure.rfind("time to", 0) == 0 || b.figure == "old leader's writes") {
      r.violations.push_back(absl::StrCat(b.figure, " ", b.value, ", bound ", b.bound));
    }
  }
}

std::vector<std::string> ScenarioRun::OffsetNodes() {
  std::vector<std::string> nodes;
  absl::StatusOr<std::unique_ptr<coord::ZkSession>> zk = ConnectZk(world_);
  if (!zk.ok() || !(*zk)->WaitConnected(seconds(20)).ok()) return nodes;
  for (const Pipeline& p : pipelines_) {
    for (int k = 0; k < options_.partitions; ++k) {
      const std::string path = spout::OffsetNodePath(kStudyOffsetsRoot, p.spec.name, topic_, k,
                                                     /*topic_level=*/false);
      absl::StatusOr<std::optional<coord::ZkStat>> stat = (*zk)->Exists(path);
      if (stat.ok() && stat->has_value()) nodes.push_back(path);
    }
  }
  (*zk)->Close();
  return nodes;
}

absl::Status ScenarioRun::SubmitTopologiesWith(ZkServers servers) {
  const char* variant = servers == ZkServers::kMissingChroot ? "missing-chroot" : "dead-first";
  std::vector<std::string> list = world_.spout_zk_servers();
  if (servers == ZkServers::kMissingChroot) {
    // A chroot follows the whole server list (host:port,...,host:port/chroot).
    if (!list.empty()) list.back() += kMissingChroot;
  } else {
    ASSIGN_OR_RETURN(std::string dead, world_.DeadZkServer());
    list.insert(list.begin(), std::move(dead));
  }
  std::vector<std::vector<std::string>> runs;
  for (const Pipeline& p : pipelines_) {
    PipelineSpec spec = p.spec;
    spec.zk_servers = list;
    const std::string path = (std::filesystem::path(p.yaml_path).parent_path() /
                              absl::StrCat("topology-", variant, ".yaml"))
                                 .string();
    std::ofstream yaml(path);
    yaml << PipelineTopologyYaml(spec);
    if (!yaml) return absl::InternalError(absl::StrCat("cannot write ", path));
    runs.push_back({"submit", path});
  }
  return RunTogether(world_, runs);
}

absl::Status ScenarioRun::RebalanceTopologies(int executors) {
  if (rebalancer_ == nullptr) {
    std::vector<std::string> names;
    for (const Pipeline& p : pipelines_) names.push_back(p.spec.name);
    rebalancer_ =
        std::make_unique<PipelineRebalancer>(world_, std::move(names), [this] { return Now(); });
  }
  progress_.Phase(absl::StrCat("rebalancing ", kRebalancedBolt, " to ", executors, " executors"));
  return rebalancer_->Rebalance(executors, seconds(60), options_.stop_requested);
}

absl::Status ScenarioRun::UpgradeTopologies() {
  std::vector<PipelineUpgrader::Target> targets;
  for (const Pipeline& p : pipelines_) {
    ASSIGN_OR_RETURN(std::string copy, WriteUpgradeCopy(p.spec, p.yaml_path));
    targets.push_back({p.spec.name, std::move(copy)});
  }
  upgrader_ =
      std::make_unique<PipelineUpgrader>(world_, std::move(targets), [this] { return Now(); });
  progress_.Phase("upgrading every topology to its copy");
  absl::Status s = upgrader_->Upgrade(seconds(kUpgradeWaitSecs + 180));
  for (Pipeline& p : pipelines_) p.upgraded = upgrader_->Figures(p.spec.name).applied > 0;
  return s;
}

absl::Status ScenarioRun::WaitWorkerLogs(std::string_view needle, std::chrono::seconds timeout) {
  const auto until = SteadyClock::now() + timeout;
  const std::vector<std::string> names = OurTopologies();
  while (world_.TopologiesLogging(names, needle) < static_cast<int>(names.size())) {
    if (SteadyClock::now() >= until || options_.stop_requested()) {
      return absl::NotFoundError(absl::StrCat(world_.TopologiesLogging(names, needle), " of ",
                                              names.size(), " topologies' worker logs say '",
                                              std::string(needle), "' after ", timeout.count(),
                                              " s"));
    }
    std::this_thread::sleep_for(milliseconds(500));
  }
  return absl::OkStatus();
}

void ScenarioRun::ReadCommitMetrics() {
  const auto now = SteadyClock::now();
  if (now < next_metrics_read_) return;
  next_metrics_read_ = now + seconds(1);
  std::vector<StudyWorld::Worker> workers = SpoutWorkers();
  for (Pipeline& p : pipelines_) {
    for (const StudyWorld::Worker& w : workers) {
      if (w.topology_id.rfind(p.spec.name + "-", 0) != 0 || w.commit_metrics.empty()) continue;
      const auto& m = w.commit_metrics;
      p.commit_metrics[w.pid] = m;
      CommitPathFigures& f = p.commit_maxima;
      ++f.readings;
      f.pending_max =
          std::max(f.pending_max, MetricOf(m, "tempest_kafka_spout_commit_partitions_pending"));
      f.in_flight_max =
          std::max(f.in_flight_max, MetricOf(m, "tempest_kafka_spout_commit_multis_in_flight"));
      f.latency_max_ms = std::max(f.latency_max_ms,
                                  MetricOf(m, "tempest_kafka_spout_commit_latency_us_max") / 1000);
      f.latency_p99_ms = std::max(f.latency_p99_ms,
                                  MetricOf(m, "tempest_kafka_spout_commit_latency_us_p99") / 1000);
    }
  }
}

std::vector<std::string> ScenarioRun::CheckFaultExpectations(const RunResult& r) const {
  std::vector<std::string> v;
  if (!r.commit_path.has_value()) {
    if (scenario_.fault == FaultKind::kZkOverload || scenario_.fault == FaultKind::kZkAclRevoked) {
      v.push_back("no spout worker's commit metrics could be read");
    }
    return v;
  }
  const CommitPathFigures& c = *r.commit_path;
  // One multi at a time, and at most one waiting request per partition: a
  // slow ZooKeeper makes commits coalesce, never queue.
  if (c.in_flight_max > 1) {
    v.push_back(absl::StrCat(c.in_flight_max, " commit multis were in flight at once"));
  }
  if (c.pending_max > options_.partitions) {
    v.push_back(absl::StrCat(c.pending_max, " commits waited at once for ", options_.partitions,
                             " partitions"));
  }
  if (scenario_.fault == FaultKind::kZkAclRevoked && injector_.injected() && c.denied == 0) {
    v.push_back("no commit was refused while the ACL was revoked (the fault did not bite)");
  }
  return v;
}

absl::Status ScenarioRun::WaitSpoutsReady(std::chrono::seconds timeout) {
  const auto until = SteadyClock::now() + timeout;
  while (SteadyClock::now() < until) {
    int ready = 0;
    std::vector<StudyWorld::Worker> workers = SpoutWorkers();
    for (const Pipeline& p : pipelines_) {
      for (const StudyWorld::Worker& w : workers) {
        if (w.topology_id.rfind(p.spec.name + "-", 0) == 0 &&
            w.kafka_partitions == options_.partitions) {
          ++ready;
          break;
        }
      }
    }
    if (ready == static_cast<int>(pipelines_.size())) return absl::OkStatus();
    if (options_.stop_requested()) return absl::CancelledError("stopped");
    std::this_thread::sleep_for(milliseconds(200));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "the spouts of ", scenario_.name, " did not read their partitions within ", timeout.count(),
      " s; see ", world_.options().dir, "/logs and the supervisors' worker logs"));
}

absl::Status ScenarioRun::StartTopologies() {
  RETURN_IF_ERROR(Prepare());
  if (absl::Status s = SubmitTopologies(); !s.ok()) {
    (void)KillTopologies();  // those that did start
    return s;
  }
  if (absl::Status s = WaitSpoutsReady(seconds(90)); !s.ok()) {
    (void)KillTopologies();  // best effort: the wait's error is the one to report
    return s;
  }
  return absl::OkStatus();
}

void ScenarioRun::StartSampler() {
  Sampler::Options so;
  so.zk_connect = world_.zk_connect();
  so.zk_config = world_.reader_zk_config();
  for (const Pipeline& p : pipelines_) so.pipelines.push_back({p.spec.name, p.spec.sink_log});
  so.partitions = options_.partitions;
  so.records = options_.records;
  so.log_end = [producer = producer_.get()] { return producer->LogEnd(); };
  sampler_ = std::make_unique<Sampler>(std::move(so));
  sampler_->Start(t0_);
}

void ScenarioRun::StartProducer() { producer_->Start(t0_); }

absl::Status ScenarioRun::RecordRetentionLoss() {
  // The topologies are gone: their committed offsets stand still. What lies
  // between them and the new log start was deleted unprocessed.
  ASSIGN_OR_RETURN(std::unique_ptr<coord::ZkSession> zk, ConnectZk(world_));
  RETURN_IF_ERROR(zk->WaitConnected(seconds(20)));
  std::vector<int64_t> log_start(options_.partitions, 0);
  for (int p = 0; p < options_.partitions; ++p) {
    ASSIGN_OR_RETURN(const auto marks,
                     spout::KafkaWatermarks(world_.bootstrap_servers(), topic_, p, seconds(10)));
    log_start[p] = marks.first;
  }
  for (Pipeline& p : pipelines_) {
    std::optional<std::vector<int64_t>> committed =
        ReadCommitted(*zk, p.spec.name, options_.partitions);
    if (!committed.has_value()) return absl::UnavailableError("cannot read committed offsets");
    p.expected_loss = UnreceivedInRanges(CountsOrNone(p.spec.sink_log, options_.records), layout_,
                                         *committed, log_start);
    if (!p.spec.dedup_sink_log.empty()) {
      p.dedup_expected_loss = UnreceivedInRanges(
          CountsOrNone(p.spec.dedup_sink_log, options_.records), layout_, *committed, log_start);
    }
  }
  zk->Close();
  return absl::OkStatus();
}

absl::Status ScenarioRun::MaybeInject(double t) {
  // The fault waits past its planned moment for the pipelines to flow (a
  // slow start on a loaded machine would otherwise make the run test
  // nothing), but never past the end of production.
  if (injector_.injected() || t < plan_.start_s ||
      !(sampler_->AllSinksFlowing() || producer_->done())) {
    return absl::OkStatus();
  }
  fault_held_for_flow_ =
      t - plan_.start_s > 2 * std::chrono::duration<double>(Sampler::kEvery).count();
  absl::Status status = injector_.Inject();
  if (NeedsHosts(scenario_.fault)) StartFenceWatch();
  const std::vector<std::string>& cut = injector_.partition_cut().hosts;
  progress_.Phase(absl::StrCat(std::string(FaultKindName(scenario_.fault)), " injected at ",
                               absl::StrCat(std::round(*injector_.start_s() * 10) / 10), " s",
                               cut.empty() ? "" : absl::StrCat(" (", absl::StrJoin(cut, ", "), ")")));
  return status;
}

bool ScenarioRun::HealDue(bool producing) const {
  // Retention holds its fault until production ends; the others for their
  // duration.
  if (scenario_.fault == FaultKind::kRetention) return !producing;
  return Now() >= *injector_.start_s() + plan_.duration_s;
}

absl::Status ScenarioRun::DriveFault() {
  const double expected_total = production_s_ + plan_.start_s + plan_.duration_s + 10;
  std::optional<double> all_done_at;
  while (true) {
    if (options_.stop_requested()) {
      producer_->Stop();
      return absl::CancelledError("stopped");
    }
    const double t = Now();
    RETURN_IF_ERROR(MaybeInject(t));
    const bool producing = !producer_->done();
    if (!producing && !production_end_s_.has_value()) production_end_s_ = Now();
    if (injector_.injected() && !injector_.healed() && HealDue(producing)) {
      absl::Status s = injector_.Heal();
      progress_.Phase("healed; waiting for the pipelines to settle");
      RETURN_IF_ERROR(s);
    }
    if (injector_.healed() && !producing) {
      if (sampler_->Settled(production_end_s_)) {
        quiesced_ = true;
        return absl::OkStatus();
      }
      if (!all_done_at.has_value()) all_done_at = Now();
      if (Now() - *all_done_at > options_.settle_timeout_s) {
        notes_.push_back(absl::StrCat("did not settle within ", options_.settle_timeout_s, " s"));
        return absl::OkStatus();
      }
    }
    ReadCommitMetrics();
    if (NeedsHosts(scenario_.fault)) WatchFences();
    progress_.Update(std::min(t / expected_total, 1.0),
                     producing ? absl::StrCat(static_cast<int>(t), " s") : "settling");
    // Wake up on time for the planned fault; otherwise check every 100 ms.
    double wait_s = 0.1;
    if (!injector_.injected() && Now() < plan_.start_s) {
      wait_s = std::clamp(plan_.start_s - Now(), 0.0, 0.1);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  }
}

absl::Status ScenarioRun::StopAll(const absl::Status& fault_status) {
  // Whatever happened, leave the world whole for the next scenario.
  if (!fault_status.ok()) producer_->Stop();
  const bool healed_in_loop = injector_.healed();
  absl::Status heal_status = absl::OkStatus();
  if (injector_.injected() && !healed_in_loop) heal_status = injector_.Heal();
  if (healed_in_loop && !fault_status.ok() && !absl::IsCancelled(fault_status)) {
    heal_status = fault_status;
  }
  producer_->Join();
  sampler_->Stop();
  if (absl::Status s = producer_->status(); !s.ok()) {
    notes_.push_back(absl::StrCat("producer: ", s.message()));
  }
  return heal_status;
}

absl::StatusOr<std::vector<RunResult>> ScenarioRun::Run() {
  progress_.Phase("starting topologies");
  RETURN_IF_ERROR(StartTopologies());
  progress_.Phase(absl::StrCat("producing ", options_.records, " records; ",
                               std::string(FaultKindName(scenario_.fault)), " at ",
                               absl::StrCat(plan_.start_s), " s"));
  t0_ = SteadyClock::now();
  StartSampler();
  StartProducer();
  const absl::Status fault_status = DriveFault();
  const absl::Status heal_status = StopAll(fault_status);
  progress_.Phase("collecting results");
  // Final committed offsets, read once more after everything stopped moving.
  std::vector<RunResult> results = Analyse();
  if (absl::Status s = KillTopologiesAfterRun(); !s.ok()) {
    // Analyse has already copied the notes into each run: add this one too.
    notes_.push_back(absl::StrCat("kill: ", s.message()));
    for (RunResult& r : results) r.violations.push_back(notes_.back());
  }
  world_.CollectWorkerLogs(OurTopologies(), (dir_ / "worker-logs").string());
  std::error_code ec;
  std::filesystem::remove(switch_file_, ec);
  if (!fault_status.ok()) {
    if (absl::IsCancelled(fault_status)) return fault_status;
    for (RunResult& r : results) {
      r.violations.push_back(absl::StrCat("the fault could not be run: ", fault_status.message()));
    }
  }
  // A world that could not be repaired (a daemon or ZooKeeper server that
  // would not start again) would fail every later scenario for the wrong
  // reason: the study stops here.
  if (!heal_status.ok()) {
    world_broken_ = absl::AbortedError(absl::StrCat("the cluster could not be repaired after ",
                                                    scenario_.name, ": ", heal_status.message()));
  }
  return results;
}

std::vector<RunResult> ScenarioRun::Analyse() {
  std::vector<RunResult> out;
  absl::StatusOr<std::unique_ptr<coord::ZkSession>> zk = ConnectZk(world_);
  // Not connected in time, the reads below fail and the figures say so.
  if (zk.ok()) (void)(*zk)->WaitConnected(seconds(20));
  for (size_t i = 0; i < pipelines_.size(); ++i) {
    out.push_back(AnalysePipeline(pipelines_[i], i, zk.ok() ? zk->get() : nullptr));
  }
  if (zk.ok()) (*zk)->Close();
  return out;
}

RunResult ScenarioRun::AnalysePipeline(const Pipeline& p, size_t index, coord::ZkSession* zk) {
  RunResult r;
  r.scenario = scenario_.name;
  r.guarantee = p.spec.guarantee;
  r.fault = std::string(FaultKindName(scenario_.fault));
  r.records = options_.records;
  r.fault_planned_s = plan_.start_s;
  r.fault_start_s = injector_.start_s();
  r.fault_held_for_flow = fault_held_for_flow_;
  r.fault_end_s = injector_.end_s();
  r.quiesced = quiesced_;
  r.expected_loss = p.expected_loss;
  r.samples = sampler_->samples(index);
  r.offset_regressions = sampler_->regressions(index);
  std::vector<std::string> problems;
  std::vector<int64_t> committed(options_.partitions, -1);
  std::optional<std::vector<int64_t>> c;
  if (zk != nullptr) c = ReadCommitted(*zk, p.spec.name, options_.partitions);
  if (c.has_value()) {
    committed = *c;
  } else {
    problems.push_back("the final committed offsets could not be read; the offset diff is empty");
  }
  absl::StatusOr<DeliveryCounts> counts = CountDeliveries({p.spec.sink_log}, options_.records);
  if (!counts.ok()) {
    problems.push_back(absl::StrCat("cannot read the sink's log: ", counts.status().message()));
    counts = DeliveryCounts{std::vector<uint32_t>(options_.records, 0), 0, 0};
  }
  FillDeliveryFigures(*counts, r);
  FillOffsetDiff(*counts, layout_, committed, r);
  FillRanges(zk, p.spec.name, topic_, layout_, committed, *counts, r);
  FillTimeline(r);
  MarkNotTested(r);
  if (!p.spec.dedup_sink_log.empty()) r.dedup_sink = AnalyseDedupSink(p, problems);
  r.commit_path = CommitFigures(p.commit_metrics, p.commit_maxima);
  r.violations = CheckExpectations(r);
  for (std::string& v : CheckFaultExpectations(r)) r.violations.push_back(std::move(v));
  if (NeedsHosts(scenario_.fault)) FillPartitionFigures(p, r);
  if (rebalancer_ != nullptr) {
    r.rebalance = rebalancer_->Figures(p.spec.name);
    FillOutputGaps(r.samples, *r.rebalance);
    r.bounds = CheckRebalanceBounds(r);
    for (std::string& v : RebalanceViolations(r)) r.violations.push_back(std::move(v));
  }
  if (upgrader_ != nullptr) {
    r.upgrade = upgrader_->Figures(p.spec.name);
    r.upgrade->output_gap_s = LongestOutputGap(r.samples, r.upgrade->at_s);
    r.bounds = CheckUpgradeBounds(r);
    for (std::string& v : UpgradeViolations(r)) r.violations.push_back(std::move(v));
  }
  r.violations.insert(r.violations.end(), problems.begin(), problems.end());
  r.violations.insert(r.violations.end(), notes_.begin(), notes_.end());
  return r;
}

DedupSinkResult ScenarioRun::AnalyseDedupSink(const Pipeline& p,
                                              std::vector<std::string>& problems) {
  absl::StatusOr<DeliveryCounts> dedup = CountDeliveries({p.spec.dedup_sink_log}, options_.records);
  DedupSinkResult d;
  if (!dedup.ok()) {
    d.lost = options_.records;
    problems.push_back(
        absl::StrCat("cannot read the effectively-once sink's log: ", dedup.status().message()));
    return d;
  }
  RunResult figures;
  FillDeliveryFigures(*dedup, figures);
  d.lost = figures.lost;
  d.duplicated = figures.duplicated;
  d.expected_loss = p.dedup_expected_loss;
  absl::StatusOr<bolts::VerificationReport> report =
      bolts::VerifyLogs({p.spec.dedup_sink_log}, std::nullopt);
  if (report.ok()) d.deduplicated = report->deduplicated;
  return d;
}

}  // namespace tempest::study
