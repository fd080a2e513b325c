#include "study/study_runner.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bolts/verification_report.h"
#include "common/coord/zk_session.h"
#include "spout/offset_admin.h"
#include "common/kafka/record_producer.h"
#include "study/run_analysis.h"
#include "study/study_world.h"

namespace tempest::study {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kOffsetsRoot = "/study-offsets";
constexpr auto kSampleEvery = milliseconds(200);
// How long a settled run must stay still before it counts as quiescent.
constexpr double kStillFor = 2.0;
// The dev cluster keeps about 5 MiB per partition (spout/dev_kafka_cluster.h).
constexpr int64_t kRetainedBytesPerPartition = 5 * 1024 * 1024;

std::string ShortName(const std::string& guarantee) {
  if (guarantee == "at-least-once") return "alo";
  if (guarantee == "at-most-once") return "amo";
  return "none";
}

std::string SpoutGuarantee(const std::string& guarantee) {
  if (guarantee == "at-least-once") return "AT_LEAST_ONCE";
  if (guarantee == "at-most-once") return "AT_MOST_ONCE";
  return "NO_GUARANTEE";
}

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string NowIso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Follows a growing sink log without rereading it: how many lines it holds
// and how many distinct records (plain integer lines; see CountDeliveries for
// the full parse done at the end).
class SinkFollower {
 public:
  SinkFollower(std::string path, int64_t records)
      : path_(std::move(path)), seen_(static_cast<size_t>(std::max<int64_t>(records, 0)), false) {}

  void Poll() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(offset_));
    char buf[65536];
    while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
      const std::streamsize n = in.gcount();
      offset_ += static_cast<uint64_t>(n);
      for (std::streamsize i = 0; i < n; ++i) {
        if (buf[i] != '\n') {
          if (partial_.size() < 64) partial_.push_back(buf[i]);
          continue;
        }
        ++lines_;
        int64_t seq = 0;
        if (absl::SimpleAtoi(partial_, &seq) && seq >= 0 &&
            seq < static_cast<int64_t>(seen_.size()) && !seen_[static_cast<size_t>(seq)]) {
          seen_[static_cast<size_t>(seq)] = true;
          ++distinct_;
        }
        partial_.clear();
      }
    }
  }
  int64_t lines() const { return lines_; }
  int64_t distinct() const { return distinct_; }

 private:
  std::string path_;
  uint64_t offset_ = 0;
  int64_t lines_ = 0;
  int64_t distinct_ = 0;
  std::string partial_;
  std::vector<bool> seen_;
};

// One topology of a scenario: a guarantee's pipeline and what is seen of it.
struct Pipeline {
  PipelineSpec spec;
  std::string yaml_path;
  // Written by the sampler thread, read after it stops.
  std::vector<Sample> samples;
  std::vector<int64_t> max_committed;  // per partition, highest seen
  int64_t regressions = 0;
  std::unique_ptr<SinkFollower> sink;
  // Retention: what was deleted before the pipeline saw it.
  int64_t expected_loss = 0;
  int64_t dedup_expected_loss = 0;
};

// Committed offsets of a spout id, one per partition (-1: absent or
// unreadable). Nullopt when ZooKeeper could not be read at all.
std::optional<std::vector<int64_t>> ReadCommitted(coord::ZkSession& zk, const std::string& id,
                                                  int partitions) {
  absl::StatusOr<std::vector<spout::StoredPartitionOffset>> stored =
      spout::ListStoredOffsets(zk, kOffsetsRoot, id);
  if (!stored.ok()) {
    // Before the first commit the spout's node does not exist yet.
    if (absl::IsNotFound(stored.status())) return std::vector<int64_t>(partitions, 0);
    return std::nullopt;
  }
  std::vector<int64_t> out(partitions, 0);
  for (const spout::StoredPartitionOffset& s : *stored) {
    if (s.partition < 0 || s.partition >= partitions) continue;
    out[s.partition] = s.state.has_value() ? s.state->offset : -1;
  }
  return out;
}

class ScenarioRun {
 public:
  ScenarioRun(StudyWorld& world, const StudyOptions& options, const Scenario& scenario,
              StudyProgress& progress)
      : world_(world), options_(options), scenario_(scenario), progress_(progress) {
    layout_.records = options.records;
    layout_.partitions = options.partitions;
    topic_ = absl::StrCat("study-", scenario.name);
    dir_ = std::filesystem::path(options.out_dir) / "runs" / scenario.name;
    production_s_ = static_cast<double>(options.records) / options.rate;
    plan_ = PlanFault(scenario, options.seed, production_s_);
  }

  // Runs the scenario; the results are one RunResult per guarantee.
  absl::StatusOr<std::vector<RunResult>> Run();
  // Not OK when a fault could not be undone: later scenarios cannot run.
  const absl::Status& world_broken() const { return world_broken_; }

 private:
  absl::Status Prepare();
  absl::Status SubmitAll();
  absl::Status KillAll();
  absl::Status WaitSpoutsReady(std::chrono::seconds timeout);
  void StartSampler();
  void StopSampler();
  void SampleOnce(coord::ZkSession& zk);
  void StartProducer();
  absl::Status Inject();
  absl::Status Heal();
  absl::Status ComputeRetentionLoss();
  bool Settled();
  // True once every pipeline's sink has received a record: a fault that hits
  // a pipeline before then tests nothing (see "Not tested" in the guide).
  bool AllSinksFlowing();
  std::vector<std::string> OurTopologies() const;
  std::vector<StudyWorld::Worker> SpoutWorkers() const;
  std::vector<RunResult> Analyse();
  double Now() const { return SecondsSince(t0_); }

  StudyWorld& world_;
  const StudyOptions& options_;
  const Scenario& scenario_;
  StudyProgress& progress_;
  RecordLayout layout_;
  std::string topic_;
  std::filesystem::path dir_;
  double production_s_ = 0;
  FaultPlan plan_;
  std::vector<Pipeline> pipelines_;
  std::string switch_file_;

  Clock::time_point t0_;
  std::optional<double> fault_start_s_;
  bool fault_held_for_flow_ = false;
  std::optional<double> fault_end_s_;
  bool quiesced_ = false;
  std::vector<std::string> notes_;

  // Producer thread.
  std::thread producer_;
  std::atomic<bool> big_keys_{false};
  std::atomic<bool> producer_done_{false};
  std::optional<double> production_end_s_;  // main thread: when producer_done_ was seen
  std::atomic<bool> producer_stop_{false};  // the study was stopped
  std::atomic<bool> producer_held_{false};  // waits (retention: while the topologies die)
  std::vector<std::atomic<int64_t>> delivered_;  // per partition
  absl::Status producer_status_;
  std::mutex producer_mu_;

  // Sampler thread.
  std::thread sampler_;
  std::atomic<bool> sampler_stop_{false};
  std::mutex samples_mu_;

  absl::Status world_broken_;

  // Fault state.
  std::vector<pid_t> paused_;
  int killed_supervisor_ = -1;
  int killed_zk_ = -1;
  std::vector<int> paused_zk_;
};

absl::Status ScenarioRun::Prepare() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  std::filesystem::create_directories(dir_, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir_.string()));
  if (absl::Status s = world_.kafka().CreateTopic({topic_, options_.partitions}); !s.ok()) {
    return s;
  }
  switch_file_ = (dir_ / "fault-on").string();
  for (const std::string& g : options_.guarantees) {
    Pipeline p;
    p.spec.name = absl::StrCat("study-", scenario_.name, "-", ShortName(g));
    p.spec.guarantee = g;
    p.spec.topic = topic_;
    p.spec.bootstrap_servers = world_.bootstrap_servers();
    p.spec.zk_servers = world_.spout_zk_servers();
    p.spec.zk_root = kOffsetsRoot;
    std::filesystem::create_directories(dir_ / g, ec);
    p.spec.sink_log = (dir_ / g / "sink.log").string();
    if (g == "at-least-once") p.spec.dedup_sink_log = (dir_ / g / "dedup-sink.log").string();
    p.spec.fault_switch_file = switch_file_;
    p.spec.seed = options_.seed;
    if (scenario_.fault == FaultKind::kBoltFailures) p.spec.fail_fraction = scenario_.fail_fraction;
    if (scenario_.fault == FaultKind::kSlowBolt) p.spec.delay_micros = scenario_.delay_ms * 1000;
    p.yaml_path = (dir_ / g / "topology.yaml").string();
    std::ofstream yaml(p.yaml_path);
    yaml << PipelineTopologyYaml(p.spec);
    if (!yaml) return absl::InternalError(absl::StrCat("cannot write ", p.yaml_path));
    p.max_committed.assign(options_.partitions, -1);
    p.sink = std::make_unique<SinkFollower>(p.spec.sink_log, options_.records);
    pipelines_.push_back(std::move(p));
  }
  delivered_ = std::vector<std::atomic<int64_t>>(options_.partitions);
  return absl::OkStatus();
}

std::vector<std::string> ScenarioRun::OurTopologies() const {
  std::vector<std::string> names;
  for (const Pipeline& p : pipelines_) names.push_back(p.spec.name);
  return names;
}

// Runs `tempest` commands side by side and waits for all of them; the first
// failure is returned.
absl::Status RunTogether(StudyWorld& world, const std::vector<std::vector<std::string>>& runs) {
  std::vector<StudyWorld::Command> commands;
  for (const std::vector<std::string>& args : runs) {
    absl::StatusOr<StudyWorld::Command> c = world.StartTempest(args);
    if (!c.ok()) return c.status();
    commands.push_back(*std::move(c));
  }
  absl::Status first = absl::OkStatus();
  for (StudyWorld::Command& c : commands) {
    absl::StatusOr<std::string> out = world.Finish(c, seconds(120));
    if (!out.ok() && first.ok()) first = out.status();
  }
  return first;
}

absl::Status ScenarioRun::SubmitAll() {
  std::vector<std::vector<std::string>> runs;
  for (const Pipeline& p : pipelines_) runs.push_back({"submit", p.yaml_path, "--until-running"});
  return RunTogether(world_, runs);
}

absl::Status ScenarioRun::KillAll() {
  std::vector<std::vector<std::string>> runs;
  for (const std::string& name : OurTopologies()) {
    runs.push_back({"kill", name, "-w", "0", "--until-removed"});
  }
  return RunTogether(world_, runs);
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

absl::Status ScenarioRun::WaitSpoutsReady(std::chrono::seconds timeout) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
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
      "the spouts of ", scenario_.name, " did not read their partitions within ",
      timeout.count(), " s; see ", world_.options().dir, "/logs and the supervisors' worker logs"));
}

void ScenarioRun::SampleOnce(coord::ZkSession& zk) {
  // The cheap readings first, all at one instant; then ZooKeeper, which may
  // be unreachable (quorum loss): the first failed read marks the rest of
  // this sample unreadable instead of waiting out each pipeline's timeout.
  const double t = std::round(Now() * 1000.0) / 1000.0;
  int64_t log_end = 0;
  for (const auto& d : delivered_) log_end += d.load();
  std::vector<Sample> taken;
  for (Pipeline& p : pipelines_) {
    Sample s;
    s.t_s = t;
    p.sink->Poll();
    s.sink_received = p.sink->lines();
    s.sink_distinct = p.sink->distinct();
    s.log_end = log_end;
    taken.push_back(s);
  }
  bool zk_readable = true;
  for (size_t i = 0; i < pipelines_.size() && zk_readable; ++i) {
    Pipeline& p = pipelines_[i];
    std::optional<std::vector<int64_t>> committed =
        ReadCommitted(zk, p.spec.name, options_.partitions);
    if (!committed.has_value()) {
      zk_readable = false;
      break;
    }
    int64_t sum = 0;
    for (int k = 0; k < options_.partitions; ++k) {
      const int64_t c = (*committed)[k];
      if (c < 0) {
        sum = -1;
        break;
      }
      if (c < p.max_committed[k]) ++p.regressions;
      p.max_committed[k] = std::max(p.max_committed[k], c);
      sum += c;
    }
    taken[i].committed = sum;
  }
  std::lock_guard<std::mutex> lock(samples_mu_);
  for (size_t i = 0; i < pipelines_.size(); ++i) pipelines_[i].samples.push_back(taken[i]);
}

void ScenarioRun::StartSampler() {
  sampler_stop_ = false;
  sampler_ = std::thread([this] {
    coord::ZkSession::Options o;
    o.connect_string = world_.zk_connect();
    o.operation_timeout = milliseconds(300);
    absl::StatusOr<std::unique_ptr<coord::ZkSession>> zk = coord::ZkSession::Create(o);
    if (!zk.ok()) return;
    (void)(*zk)->WaitConnected(seconds(10));
    while (!sampler_stop_) {
      const auto next = Clock::now() + kSampleEvery;
      SampleOnce(**zk);
      std::this_thread::sleep_until(next);
    }
    (*zk)->Close();
  });
}

void ScenarioRun::StopSampler() {
  sampler_stop_ = true;
  if (sampler_.joinable()) sampler_.join();
}

void ScenarioRun::StartProducer() {
  producer_done_ = false;
  // Retention needs records big enough that the records produced after the
  // fault overflow what the dev cluster retains per partition (about 5 MiB):
  // the log start then passes every offset committed before the fault.
  const int64_t per_partition = std::max<int64_t>(layout_.CountIn(0), 1);
  const size_t big_key_bytes = static_cast<size_t>(std::clamp<int64_t>(
      5 * kRetainedBytesPerPartition / per_partition, 1024, 900 * 1024));
  producer_ = std::thread([this, big_key_bytes] {
    absl::StatusOr<std::unique_ptr<kafka::RecordProducer>> producer =
        kafka::RecordProducer::Create(world_.bootstrap_servers());
    absl::Status status = producer.status();
    if (producer.ok()) {
      const std::string padding(big_key_bytes, 'x');
      auto publish = [&] {
        for (int p = 0; p < options_.partitions; ++p) {
          delivered_[p] = (*producer)->DeliveredTo(topic_, p);
        }
      };
      for (int64_t seq = 0; seq < options_.records && status.ok() && !producer_stop_; ++seq) {
        const auto due = t0_ + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(seq / options_.rate));
        if (Clock::now() < due) {
          (*producer)->Poll();
          publish();
          std::this_thread::sleep_until(due);
        } else if (seq % 256 == 0) {
          // Behind schedule: still serve delivery reports and publish the
          // log end now and then.
          (*producer)->Poll();
          publish();
        }
        while (producer_held_ && !producer_stop_) {
          (*producer)->Poll();
          std::this_thread::sleep_for(milliseconds(10));
        }
        std::string key = absl::StrCat("k", seq);
        if (big_keys_) absl::StrAppend(&key, "-", padding);
        status = (*producer)->Send(topic_, layout_.PartitionOf(seq), key, absl::StrCat(seq),
                                   seconds(120));
      }
      if (status.ok()) status = (*producer)->Flush(producer_stop_ ? seconds(1) : seconds(120));
      publish();
    }
    std::lock_guard<std::mutex> lock(producer_mu_);
    producer_status_ = status;
    producer_done_ = true;
  });
}

absl::Status ScenarioRun::Inject() {
  fault_start_s_ = Now();
  switch (scenario_.fault) {
    case FaultKind::kKillWorker:
    case FaultKind::kPauseWorker: {
      std::vector<StudyWorld::Worker> targets = SpoutWorkers();
      if (targets.empty()) notes_.push_back("no spout worker was found to hit");
      for (const StudyWorld::Worker& w : targets) {
        if (scenario_.fault == FaultKind::kKillWorker) {
          ::kill(-w.pid, SIGKILL);
        } else {
          ::kill(w.pid, SIGSTOP);
          paused_.push_back(w.pid);
        }
      }
      break;
    }
    case FaultKind::kKillSupervisor: {
      // Among the supervisors running spouts, one chosen by the seed.
      std::vector<int> candidates;
      for (const StudyWorld::Worker& w : SpoutWorkers()) candidates.push_back(w.supervisor);
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
      if (candidates.empty()) candidates.push_back(0);
      killed_supervisor_ = candidates[plan_.pick % candidates.size()];
      world_.KillSupervisor(killed_supervisor_);
      break;
    }
    case FaultKind::kKillNimbus:
      world_.KillNimbus();
      break;
    case FaultKind::kZkSessionExpiry:
      world_.CutSpoutZooKeeper(true);
      break;
    case FaultKind::kKillZkLeader:
      killed_zk_ = world_.zookeeper().LeaderIndex();
      if (killed_zk_ < 0) return absl::UnavailableError("ZooKeeper has no leader to kill");
      world_.zookeeper().Kill(killed_zk_);
      break;
    case FaultKind::kZkQuorumLoss: {
      const int n = world_.zookeeper().size();
      const int leader = std::max(world_.zookeeper().LeaderIndex(), 0);
      paused_zk_ = {leader, static_cast<int>((leader + 1 + plan_.pick % (n - 1)) % n)};
      for (int i : paused_zk_) world_.zookeeper().Pause(i);
      break;
    }
    case FaultKind::kKafkaBrokerDown:
      return world_.kafka().SetBrokerDown(1);
    case FaultKind::kRetention: {
      // Nothing is produced while the topologies die, so they cannot read
      // past the fault; everything after it is big enough for retention to
      // delete it unread.
      producer_held_ = true;
      absl::Status s = KillAll();
      big_keys_ = true;
      producer_held_ = false;
      return s;
    }
    case FaultKind::kBoltFailures:
    case FaultKind::kSlowBolt: {
      std::ofstream on(switch_file_);
      on << "on\n";
      if (!on) return absl::InternalError(absl::StrCat("cannot write ", switch_file_));
      break;
    }
    case FaultKind::kRestartTopology: {
      if (absl::Status s = KillAll(); !s.ok()) return s;
      return SubmitAll();
    }
  }
  return absl::OkStatus();
}

absl::Status ScenarioRun::ComputeRetentionLoss() {
  // The topologies are gone: their committed offsets stand still. What lies
  // between them and the new log start was deleted unprocessed.
  coord::ZkSession::Options o;
  o.connect_string = world_.zk_connect();
  absl::StatusOr<std::unique_ptr<coord::ZkSession>> zk = coord::ZkSession::Create(o);
  if (!zk.ok()) return zk.status();
  if (absl::Status s = (*zk)->WaitConnected(seconds(20)); !s.ok()) return s;
  std::vector<int64_t> log_start(options_.partitions, 0);
  for (int p = 0; p < options_.partitions; ++p) {
    absl::StatusOr<std::pair<int64_t, int64_t>> marks =
        spout::KafkaWatermarks(world_.bootstrap_servers(), topic_, p, seconds(10));
    if (!marks.ok()) return marks.status();
    log_start[p] = marks->first;
  }
  for (Pipeline& p : pipelines_) {
    std::optional<std::vector<int64_t>> committed =
        ReadCommitted(**zk, p.spec.name, options_.partitions);
    if (!committed.has_value()) return absl::UnavailableError("cannot read committed offsets");
    absl::StatusOr<DeliveryCounts> seen = CountDeliveries({p.spec.sink_log}, options_.records);
    if (!seen.ok()) seen = DeliveryCounts{std::vector<uint32_t>(options_.records, 0), 0, 0};
    p.expected_loss = UnreceivedInRanges(*seen, layout_, *committed, log_start);
    if (!p.spec.dedup_sink_log.empty()) {
      absl::StatusOr<DeliveryCounts> dedup =
          CountDeliveries({p.spec.dedup_sink_log}, options_.records);
      if (!dedup.ok()) dedup = DeliveryCounts{std::vector<uint32_t>(options_.records, 0), 0, 0};
      p.dedup_expected_loss = UnreceivedInRanges(*dedup, layout_, *committed, log_start);
    }
  }
  (*zk)->Close();
  return absl::OkStatus();
}

absl::Status ScenarioRun::Heal() {
  absl::Status status = absl::OkStatus();
  switch (scenario_.fault) {
    case FaultKind::kPauseWorker:
      for (pid_t pid : paused_) ::kill(pid, SIGCONT);
      break;
    case FaultKind::kKillSupervisor:
      if (killed_supervisor_ >= 0) status = world_.StartSupervisor(killed_supervisor_);
      break;
    case FaultKind::kKillNimbus:
      status = world_.StartNimbus();
      break;
    case FaultKind::kZkSessionExpiry:
      world_.CutSpoutZooKeeper(false);
      break;
    case FaultKind::kKillZkLeader:
      if (killed_zk_ >= 0) status = world_.zookeeper().Restart(killed_zk_);
      break;
    case FaultKind::kZkQuorumLoss:
      for (int i : paused_zk_) world_.zookeeper().Resume(i);
      break;
    case FaultKind::kKafkaBrokerDown:
      status = world_.kafka().SetBrokerUp(1);
      break;
    case FaultKind::kRetention:
      status = ComputeRetentionLoss();
      if (status.ok()) status = SubmitAll();
      break;
    case FaultKind::kBoltFailures:
    case FaultKind::kSlowBolt: {
      std::error_code ec;
      std::filesystem::remove(switch_file_, ec);
      if (ec) status = absl::InternalError(absl::StrCat("cannot remove ", switch_file_, ": ", ec.message()));
      break;
    }
    case FaultKind::kKillWorker:
    case FaultKind::kRestartTopology:
      break;
  }
  fault_end_s_ = Now();
  return status;
}

bool ScenarioRun::Settled() {
  std::lock_guard<std::mutex> lock(samples_mu_);
  for (const Pipeline& p : pipelines_) {
    if (p.samples.empty()) return false;
    const Sample& last = p.samples.back();
    // Only a sample taken after the last delivery report has the final log end.
    if (!production_end_s_.has_value() || last.t_s <= *production_end_s_) return false;
    if (last.committed < 0 || last.committed < last.log_end) return false;
    // The sink has not moved for kStillFor seconds.
    for (auto it = p.samples.rbegin(); it != p.samples.rend(); ++it) {
      if (it->sink_received != last.sink_received) return false;
      if (last.t_s - it->t_s >= kStillFor) break;
    }
    if (last.t_s - p.samples.front().t_s < kStillFor) return false;
  }
  return true;
}

bool ScenarioRun::AllSinksFlowing() {
  std::lock_guard<std::mutex> lock(samples_mu_);
  for (const Pipeline& p : pipelines_) {
    if (p.samples.empty() || p.samples.back().sink_received == 0) return false;
  }
  return true;
}

absl::StatusOr<std::vector<RunResult>> ScenarioRun::Run() {
  progress_.Phase("starting topologies");
  if (absl::Status s = Prepare(); !s.ok()) return s;
  if (absl::Status s = SubmitAll(); !s.ok()) {
    (void)KillAll();  // those that did start
    return s;
  }
  if (absl::Status s = WaitSpoutsReady(seconds(90)); !s.ok()) {
    (void)KillAll();
    return s;
  }

  progress_.Phase(absl::StrCat("producing ", options_.records, " records; ",
                               std::string(FaultKindName(scenario_.fault)), " at ",
                               absl::StrCat(plan_.start_s), " s"));
  t0_ = Clock::now();
  StartSampler();
  StartProducer();
  absl::Status fault_status = absl::OkStatus();
  bool injected = false;
  bool healed = false;
  // Retention holds its fault until production ends; the others for their
  // duration.
  const bool heal_at_end = scenario_.fault == FaultKind::kRetention;
  const double settle_deadline_base = production_s_ + plan_.start_s + plan_.duration_s;
  std::optional<double> all_done_at;
  while (true) {
    if (options_.stop_requested()) {
      fault_status = absl::CancelledError("stopped");
      producer_stop_ = true;
      break;
    }
    const double t = Now();
    // The fault waits past its planned moment for the pipelines to flow (a
    // slow start on a loaded machine would otherwise make the run test
    // nothing), but never past the end of production.
    if (!injected && t >= plan_.start_s && (AllSinksFlowing() || producer_done_)) {
      injected = true;
      fault_held_for_flow_ = t - plan_.start_s > 2 * std::chrono::duration<double>(kSampleEvery).count();
      fault_status = Inject();
      progress_.Phase(absl::StrCat(std::string(FaultKindName(scenario_.fault)), " injected at ",
                                   absl::StrCat(std::round(*fault_start_s_ * 10) / 10), " s"));
      if (!fault_status.ok()) break;
    }
    const bool producing = !producer_done_;
    if (!producing && !production_end_s_.has_value()) production_end_s_ = Now();
    if (injected && !healed &&
        (heal_at_end ? !producing : Now() >= *fault_start_s_ + plan_.duration_s)) {
      healed = true;
      fault_status = Heal();
      progress_.Phase("healed; waiting for the pipelines to settle");
      if (!fault_status.ok()) break;
    }
    if (healed && !producing) {
      if (Settled()) {
        quiesced_ = true;
        break;
      }
      if (!all_done_at.has_value()) all_done_at = Now();
      if (Now() - *all_done_at > options_.settle_timeout_s) {
        notes_.push_back(absl::StrCat("did not settle within ", options_.settle_timeout_s, " s"));
        break;
      }
    }
    const double expected_total = settle_deadline_base + 10;
    progress_.Update(std::min(t / expected_total, 1.0),
                     producing ? absl::StrCat(static_cast<int>(t), " s") : "settling");
    // Wake up on time for the planned fault; otherwise check every 100 ms.
    double wait_s = 0.1;
    if (!injected && Now() < plan_.start_s) wait_s = std::clamp(plan_.start_s - Now(), 0.0, 0.1);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  }
  // Whatever happened, leave the world whole for the next scenario.
  if (!fault_status.ok()) producer_stop_ = true;
  absl::Status heal_status = absl::OkStatus();
  if (injected && !healed) heal_status = Heal();
  if (healed && !fault_status.ok() && !absl::IsCancelled(fault_status)) heal_status = fault_status;
  if (producer_.joinable()) producer_.join();
  StopSampler();
  {
    std::lock_guard<std::mutex> lock(producer_mu_);
    if (!producer_status_.ok()) notes_.push_back(absl::StrCat("producer: ", producer_status_.message()));
  }
  progress_.Phase("collecting results");
  // Final committed offsets, read once more after everything stopped moving.
  std::vector<RunResult> results = Analyse();
  if (absl::Status s = KillAll(); !s.ok()) {
    notes_.push_back(absl::StrCat("kill: ", s.message()));
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
    world_broken_ = absl::AbortedError(
        absl::StrCat("the cluster could not be repaired after ", scenario_.name, ": ",
                     heal_status.message()));
  }
  return results;
}

std::vector<RunResult> ScenarioRun::Analyse() {
  std::vector<RunResult> out;
  coord::ZkSession::Options o;
  o.connect_string = world_.zk_connect();
  absl::StatusOr<std::unique_ptr<coord::ZkSession>> zk = coord::ZkSession::Create(o);
  if (zk.ok()) (void)(*zk)->WaitConnected(seconds(20));
  for (Pipeline& p : pipelines_) {
    RunResult r;
    r.scenario = scenario_.name;
    r.guarantee = p.spec.guarantee;
    r.fault = std::string(FaultKindName(scenario_.fault));
    r.records = options_.records;
    r.fault_planned_s = plan_.start_s;
    r.fault_start_s = fault_start_s_;
    r.fault_held_for_flow = fault_held_for_flow_;
    r.fault_end_s = fault_end_s_;
    r.quiesced = quiesced_;
    r.expected_loss = p.expected_loss;
    r.samples = p.samples;
    r.offset_regressions = p.regressions;
    std::vector<std::string> problems;
    std::vector<int64_t> committed(options_.partitions, -1);
    std::optional<std::vector<int64_t>> c;
    if (zk.ok()) c = ReadCommitted(**zk, p.spec.name, options_.partitions);
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
    FillTimeline(r);
    MarkNotTested(r);
    if (!p.spec.dedup_sink_log.empty()) {
      absl::StatusOr<DeliveryCounts> dedup =
          CountDeliveries({p.spec.dedup_sink_log}, options_.records);
      DedupSinkResult d;
      if (!dedup.ok()) {
        d.lost = options_.records;
        problems.push_back(absl::StrCat("cannot read the effectively-once sink's log: ",
                                        dedup.status().message()));
      } else {
        RunResult figures;
        FillDeliveryFigures(*dedup, figures);
        d.lost = figures.lost;
        d.duplicated = figures.duplicated;
        d.expected_loss = p.dedup_expected_loss;
        absl::StatusOr<bolts::VerificationReport> report =
            bolts::VerifyLogs({p.spec.dedup_sink_log}, std::nullopt);
        if (report.ok()) d.deduplicated = report->deduplicated;
      }
      r.dedup_sink = d;
    }
    r.violations = CheckExpectations(r);
    r.violations.insert(r.violations.end(), problems.begin(), problems.end());
    r.violations.insert(r.violations.end(), notes_.begin(), notes_.end());
    out.push_back(std::move(r));
  }
  if (zk.ok()) (*zk)->Close();
  return out;
}

// Rows for a scenario that produced no figures, one per guarantee, so the
// report shows it as not run instead of leaving it out.
void AddUnrunScenario(const StudyOptions& options, const Scenario& scenario,
                      const std::string& why, StudyResults& results) {
  for (const std::string& g : options.guarantees) {
    RunResult r;
    r.scenario = scenario.name;
    r.guarantee = g;
    r.fault = std::string(FaultKindName(scenario.fault));
    r.records = options.records;
    r.quiesced = false;
    r.violations.push_back(why);
    MarkNotTested(r);
    results.runs.push_back(std::move(r));
  }
}

}  // namespace

std::string PipelineTopologyYaml(const PipelineSpec& spec) {
  std::string zk_servers;
  for (const std::string& s : spec.zk_servers) {
    absl::StrAppend(&zk_servers, zk_servers.empty() ? "" : ", ", YamlQuoted(s));
  }
  std::string yaml = absl::StrCat(
      "# Written by `tempest study`: one guarantee's pipeline of one scenario.\n"
      "name: ", spec.name, "\n",
      "config:\n"
      "  topology.workers: 2\n"
      "  topology.acker.executors: 1\n"
      "  topology.message.timeout.secs: 4\n"
      "  topology.max.spout.pending: 1000\n"
      "  topology.tick.tuple.freq.secs: 1\n"
      "spouts:\n"
      "  - id: kafka\n"
      "    className: tempest.KafkaSpout\n"
      "    parallelism: 1\n"
      "    properties:\n"
      "      - {name: bootstrap.servers, value: ", YamlQuoted(spec.bootstrap_servers), "}\n",
      "      - {name: topics, value: ", YamlQuoted(spec.topic), "}\n",
      "      - {name: zkServers, value: [", zk_servers, "]}\n",
      "      - {name: zkRoot, value: ", YamlQuoted(spec.zk_root), "}\n",
      "      - {name: id, value: ", YamlQuoted(spec.name), "}\n",
      "      - {name: processingGuarantee, value: ", SpoutGuarantee(spec.guarantee), "}\n",
      "      - {name: startOffsetTime, value: -2}\n"
      "      - {name: stateUpdateIntervalMs, value: 500}\n"
      "bolts:\n"
      "  - id: transform\n"
      "    className: tempest.IdentityBolt\n"
      "    parallelism: 1\n"
      "    properties:\n"
      "      - {name: fields, value: [topic, partition, offset, key, value]}\n"
      "      - {name: failFraction, value: ", spec.fail_fraction, "}\n",
      "      - {name: delayMicros, value: ", spec.delay_micros, "}\n",
      "      - {name: seed, value: ", spec.seed, "}\n",
      "      - {name: faultSwitchFile, value: ", YamlQuoted(spec.fault_switch_file), "}\n",
      "  - id: sink\n"
      "    className: tempest.VerifierBolt\n"
      "    parallelism: 1\n"
      "    properties:\n"
      "      - {name: field, value: value}\n"
      "      - {name: logPath, value: ", YamlQuoted(spec.sink_log), "}\n");
  if (!spec.dedup_sink_log.empty()) {
    absl::StrAppend(&yaml,
                    "  - id: dedup-sink\n"
                    "    className: tempest.VerifierBolt\n"
                    "    parallelism: 1\n"
                    "    properties:\n"
                    "      - {name: field, value: value}\n"
                    "      - {name: dedup, value: true}\n"
                    "      - {name: logPath, value: ", YamlQuoted(spec.dedup_sink_log), "}\n");
  }
  absl::StrAppend(&yaml,
                  "streams:\n"
                  "  - {from: kafka, to: transform, grouping: {type: SHUFFLE}}\n"
                  "  - {from: transform, to: sink, grouping: {type: SHUFFLE}}\n");
  if (!spec.dedup_sink_log.empty()) {
    absl::StrAppend(&yaml, "  - {from: transform, to: dedup-sink, grouping: {type: SHUFFLE}}\n");
  }
  return yaml;
}

absl::StatusOr<StudyResults> RunStudy(const StudyOptions& options, StudyProgress& progress) {
  if (options.scenarios.empty()) return absl::InvalidArgumentError("no scenarios to run");
  if (options.guarantees.empty()) return absl::InvalidArgumentError("no guarantees to run");
  if (options.records < options.partitions) {
    return absl::InvalidArgumentError(
        absl::StrCat("--records must be at least ", options.partitions));
  }
  if (!(options.rate > 0)) return absl::InvalidArgumentError("--rate must be positive");
  const auto started = Clock::now();
  StudyResults results;
  results.seed = options.seed;
  results.records = options.records;
  results.rate = options.rate;
  results.started_at = NowIso8601();

  progress.StartScenario(0, static_cast<int>(options.scenarios.size()), "world");
  progress.Phase("starting ZooKeeper (3 servers), Kafka, nimbus and 2 supervisors");
  StudyWorld::Options wo;
  wo.dir = (std::filesystem::path(options.out_dir) / "world").string();
  wo.binary = options.binary;
  absl::StatusOr<std::unique_ptr<StudyWorld>> world = StudyWorld::Start(wo);
  if (!world.ok()) return world.status();
  // This process's ZooKeeper clients complain loudly during the faults the
  // study injects on purpose; their lines go to a log, not the progress.
  std::FILE* zk_log =
      std::fopen((std::filesystem::path(wo.dir) / "logs" / "study-zk-client.log").c_str(), "a");
  if (zk_log != nullptr) coord::SetZkClientLogStream(zk_log);

  absl::Status broken = absl::OkStatus();
  for (size_t i = 0; i < options.scenarios.size(); ++i) {
    const Scenario& scenario = options.scenarios[i];
    progress.StartScenario(static_cast<int>(i + 1), static_cast<int>(options.scenarios.size()),
                           scenario.name);
    ScenarioRun run(**world, options, scenario, progress);
    absl::StatusOr<std::vector<RunResult>> runs = run.Run();
    if (!run.world_broken().ok()) {
      if (runs.ok()) results.runs.insert(results.runs.end(), runs->begin(), runs->end());
      progress.Line(std::string(run.world_broken().message()));
      broken = run.world_broken();
      break;
    }
    if (!runs.ok()) {
      if (absl::IsCancelled(runs.status())) break;
      // One broken scenario is reported; the study goes on.
      AddUnrunScenario(options, scenario,
                       absl::StrCat("the scenario could not run: ", runs.status().message()),
                       results);
      progress.Line(absl::StrCat(scenario.name, ": could not run: ", runs.status().message()));
      continue;
    }
    for (RunResult& r : *runs) {
      progress.Line(absl::StrCat(
          scenario.name, " ", r.guarantee, ": lost ", r.lost, ", duplicated ", r.duplicated,
          r.dedup_sink.has_value()
              ? absl::StrCat(" (effectively-once sink: lost ", r.dedup_sink->lost, ", duplicated ",
                             r.dedup_sink->duplicated, ")")
              : "",
          r.violations.empty() ? "" : absl::StrCat("; ", r.violations.size(), " violation(s)"),
          r.not_tested ? absl::StrCat("; not tested: ", r.not_tested_reason) : ""));
      results.runs.push_back(std::move(r));
    }
  }
  if (!broken.ok()) {
    // The scenarios after the breakage are reported as not run, not as lost.
    for (const Scenario& scenario : options.scenarios) {
      const bool ran = std::any_of(results.runs.begin(), results.runs.end(),
                                   [&](const RunResult& r) { return r.scenario == scenario.name; });
      if (!ran) AddUnrunScenario(options, scenario, absl::StrCat("not run: ", broken.message()), results);
    }
  }
  results.duration_s = std::round(SecondsSince(started) * 10) / 10;
  world->reset();
  if (zk_log != nullptr) {
    coord::SetZkClientLogStream(nullptr);
    std::fclose(zk_log);
  }
  return results;
}

}  // namespace tempest::study
