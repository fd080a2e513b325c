#ifndef TEMPEST_SPOUT_ZK_OFFSET_STORE_H_
#define TEMPEST_SPOUT_ZK_OFFSET_STORE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "common/core/rate_limited_log.h"
#include "spout/kafka/offsets/offset_journal.h"
#include "spout/kafka/offsets/offset_store.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"
#include "spout/kafka/offsets/partition_assignment.h"

namespace tempest::spout {

// The ZooKeeper side of one KafkaSpout task: acquires per-partition
// ownership (ephemeral owner nodes whose ephemeralOwner must be our session),
// reads the stored storm-kafka offsets, and commits offsets as one atomic
// multi per round covering every changed partition, each as
// [check(owner node version) + set(offset node, expected version) or create],
// sent bound to the owning session. Offsets never move backwards here.
//
// Owns a ZkSession and one background thread that makes every ZooKeeper
// call. The spout's executor thread talks to it only through a
// mutex-protected mailbox and never blocks on ZooKeeper: SetAssignment and
// RequestCommit post, TakeUpdates drains results. Only Close waits (bounded)
// for a final commit. Thread-safe; the spout's executor thread owns it (as
// its OffsetStore).
//
//   auto store = ZkOffsetStore::Create(options);
//   store->SetAssignment({{"events", 0}});
//   ... per NextTuple: for (auto& u : store->TakeUpdates()) ...
//   store->RequestCommit({{tp, acquisition, state}});
//   store->Close(std::chrono::seconds(5));
class ZkOffsetStore : public OffsetStore {
 public:
  struct Options {
    std::string connect_string;  // offsets ZooKeeper
    coord::ZkClientConfig zk_config;
    std::string zk_root;
    std::string spout_id;
    bool topic_level = false;
    // Written into owner nodes for operators (tempest offsets show).
    std::string owner_description;
    // Deadline of one ZooKeeper call made by the store thread.
    std::chrono::milliseconds op_timeout{5000};
    // Pause between attempts to acquire a contended or unreadable partition.
    std::chrono::milliseconds retry_interval{500};
    core::MetricsRegistry* metrics = nullptr;  // nullptr: the global registry
    core::MetricLabels labels;                 // component / task
    // Offset journal (spout/kafka/offsets/offset_journal.h): entries ride in the commit
    // multis; trimmed at acquisition and after every trim_every appends.
    bool journal = true;
    int64_t journal_max_entries = kDefaultJournalMaxEntries;
    std::chrono::seconds journal_retention{kDefaultJournalRetentionSecs};
    std::string topology_id;  // written into acquisition entries
    std::string guarantee;    // written into commit entries (e.g. AT_LEAST_ONCE)
  };

  static absl::StatusOr<std::unique_ptr<ZkOffsetStore>> Create(Options options);
  ~ZkOffsetStore() override;
  ZkOffsetStore(const ZkOffsetStore&) = delete;
  ZkOffsetStore& operator=(const ZkOffsetStore&) = delete;

  // OffsetStore. Close also closes the session.
  void SetAssignment(std::vector<TopicPartition> partitions) override;
  void RequestCommit(std::vector<OffsetCommit> commits) override;
  std::vector<OffsetStoreUpdate> TakeUpdates() override;
  bool HasUpdates() const override;
  void Close(std::chrono::milliseconds timeout) override;

  // The store's session (tests expire it).
  coord::ZkSession* session() const { return session_.get(); }
  // Commit multis sent (for the one-multi-per-interval check); journal
  // entries ride in them.
  int64_t multi_count() const;
  // Journal trim passes that deleted something (each one list + one multi,
  // off the commit path).
  int64_t journal_trim_count() const { return trims_.load(); }

 private:
  struct Owned {
    uint64_t acquisition = 0;
    int64_t session_id = 0;
    int32_t owner_version = 0;
    int64_t owner_czxid = 0;
    int32_t offset_version = -1;  // -1: node absent
    int64_t stored_offset = -1;   // highest offset known stored (never go below)
    // Journal entries of a commit that failed without a verdict: sent again
    // with the partition's next commit.
    std::vector<JournalEntry> unsent_journal;
    int64_t appends_since_trim = 0;
    bool trim_due = true;  // trim once after acquisition
  };

  // One multi: per partition an ownership check and the offset write.
  struct CommitBatch {
    std::vector<coord::ZkOp> ops;
    std::vector<TopicPartition> op_partition;  // the partition of each op
    std::vector<bool> op_journal;              // op appends a journal entry
    std::vector<OffsetCommit> sent;
    int64_t session_id = 0;  // every op is bound to this owning session
  };

  // What the store thread takes from the mailbox in one pass.
  struct Mail {
    std::optional<std::vector<TopicPartition>> desired;  // set: the assignment changed
    std::map<TopicPartition, OffsetCommit> requested;
    bool closing = false;
    std::chrono::steady_clock::time_point close_deadline;
  };

  explicit ZkOffsetStore(Options options);
  void Loop();
  // Waits (at most 100 ms) for something in the mailbox and takes it.
  Mail TakeMail();
  bool HasMail() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The final commit, with what is left of Close's budget until `deadline`.
  void FinalCommit(std::map<TopicPartition, OffsetCommit> commits,
                   std::chrono::steady_clock::time_point deadline);
  // Releases the partitions no longer assigned and forgets their retry times.
  void ApplyAssignment(std::vector<TopicPartition> desired);
  // Releases every owned partition while Close's `deadline` has not passed.
  void ReleaseAll(std::chrono::steady_clock::time_point deadline);
  // Tries to acquire the assigned partitions whose retry time has come.
  void AcquireDue();
  void Post(OffsetStoreUpdate update);
  void HandleSession();
  // Each multi of the round is one ZooKeeper call bounded by `call_timeout`.
  void CommitRound(std::map<TopicPartition, OffsetCommit> commits,
                   std::chrono::milliseconds call_timeout);
  // NOAUTH on a commit: counts it; logs one error line when an episode of
  // refusals starts (and again every 10 min while it lasts).
  void ReportCommitDenied(const CommitBatch& batch, int failed_op, const absl::Status& st);
  // A commit went through: ends a NOAUTH episode with one line.
  void EndDeniedEpisode();
  // With credentials: PermissionDenied when they may not read the spout's
  // directory (wrong storm.zookeeper.auth.payload), so open fails.
  absl::Status CheckCredentials();
  // A connect string with a chroot that does not exist: FailedPrecondition
  // naming it, so open fails instead of the spout waiting forever for
  // ownership it can never take (the store never creates a chroot).
  absl::Status CheckChroot();
  // Drops stale and already-stored requests from `commits` (answering the
  // latter) and batches the rest.
  CommitBatch BuildCommitBatch(std::map<TopicPartition, OffsetCommit>& commits);
  void OnCommitApplied(const std::vector<OffsetCommit>& sent);
  // Adds one partition's journal ops (its queued entries, then the commit
  // entry when the offset moves) to `batch`.
  void AddJournalOps(const OffsetCommit& c, Owned& o, bool moves, CommitBatch& batch);
  // Fills the writer fields of an entry the spout queued.
  JournalEntry Stamped(JournalEntry e, const Owned& o, const OffsetCommit& c) const;
  void TrimJournals();
  void Release(const TopicPartition& tp);
  void TryAcquire(const TopicPartition& tp);
  // The steps of TryAcquire; each false means "not now, try again later".
  bool EnsureParents(const TopicPartition& tp, const coord::ZkCall& call);
  bool ClaimOwnerNode(const TopicPartition& tp, const coord::ZkCall& call, Owned& o);
  bool ReadStoredOffset(const TopicPartition& tp, const coord::ZkCall& call, Owned& o,
                        std::optional<StormKafkaOffset>& stored);
  void MarkLost(const TopicPartition& tp, absl::Status why);
  // With credentials: every node from zkRoot down to `dir` is owned
  // (coord::EnsureOwnedNode: repaired when we may, refused otherwise).
  // `offset_parent`'s levels are legacy-readable, the others private.
  // The spout's zkRoot (normalised as the offset paths use it).
  std::string ZkRootDir() const;
  absl::Status EnsureOwnedChain(const std::string& dir, const std::string& offset_parent,
                                const coord::ZkCall& call);
  // EnsureOwnedChain; a refusal blocks `tp`. False: not now.
  bool CheckChain(const TopicPartition& tp, const std::string& dir,
                  const std::string& offset_parent, const coord::ZkCall& call);
  // A node another client made or may change blocks the partition: reported
  // (kReadFailed: the spout logs it and calls ReportError), counted in
  // tempest_kafka_spout_partition_blocked, and retried with a growing pause
  // until it is gone. Unblock ends that once the partition is acquired.
  void Block(const TopicPartition& tp, absl::Status why);
  void Unblock(const TopicPartition& tp);
  // Whether `owner`, an existing owner node not held by our session, is a
  // real owner (ephemeral, made by an identity of the policy) to wait for;
  // otherwise blocks the partition.
  bool OwnerNodeIsGenuine(const TopicPartition& tp, const std::string& owner,
                          const coord::ZkNode& node, const coord::ZkCall& call);
  std::string OffsetPath(const TopicPartition& tp) const;
  std::string OwnerPath(const TopicPartition& tp) const;
  std::string JournalDir(const TopicPartition& tp) const;

  Options options_;
  std::unique_ptr<coord::ZkSession> session_;
  core::MetricsRegistry* metrics_;
  core::Histogram* commit_latency_us_ = nullptr;
  core::Counter* commit_failures_ = nullptr;
  core::Counter* commit_denied_ = nullptr;  // tempest_kafka_spout_commit_denied (NOAUTH)
  // One line when refusals start, then at most one per 10 min while they go
  // on; Reset when a commit goes through again.
  core::RateLimitedLog denied_log_{1, std::chrono::minutes(10)};
  int64_t denied_in_episode_ = 0;  // refused commits since the last one that went through
  core::Counter* commits_ = nullptr;
  // A request that replaced one not yet sent (commits coalesce while
  // ZooKeeper is slow instead of queueing).
  core::Counter* coalesced_ = nullptr;
  // Partitions whose commit waits for the next multi (at most the assigned
  // partitions), and multis in flight (at most one).
  core::Gauge* pending_ = nullptr;
  core::Gauge* in_flight_ = nullptr;

  // Mailbox. The store thread waits on it with mu_.AwaitWithTimeout(HasMail).
  mutable absl::Mutex mu_;
  std::vector<TopicPartition> desired_ ABSL_GUARDED_BY(mu_);
  bool desired_changed_ ABSL_GUARDED_BY(mu_) = false;
  std::map<TopicPartition, OffsetCommit> requested_ ABSL_GUARDED_BY(mu_);
  std::vector<OffsetStoreUpdate> updates_ ABSL_GUARDED_BY(mu_);
  bool session_event_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  // Close's deadline, handed to the store thread for the final commit.
  std::chrono::steady_clock::time_point close_deadline_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;

  // Store-thread state.
  std::map<TopicPartition, Owned> owned_;
  std::map<TopicPartition, std::chrono::steady_clock::time_point> next_attempt_;
  std::vector<TopicPartition> assignment_;
  std::set<std::string> ensured_;  // parent paths known to exist
  std::set<std::string> owned_dirs_;  // parent paths found owned (EnsureOwnedChain)
  // Partitions blocked by a foreign node, and the pause before the next try.
  std::map<TopicPartition, std::chrono::milliseconds> blocked_;
  int64_t ensured_session_ = 0;
  uint64_t next_acquisition_ = 1;
  std::atomic<int64_t> multis_{0};
  std::atomic<int64_t> trims_{0};
  std::atomic<bool> has_updates_{false};
  int subscription_ = 0;
  std::thread thread_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_ZK_OFFSET_STORE_H_
