#ifndef TEMPEST_SPOUT_OFFSET_REWIND_H_
#define TEMPEST_SPOUT_OFFSET_REWIND_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/versioned_cas.h"
#include "common/coord/zk_session.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"
#include "spout/kafka/offsets/partition_assignment.h"

namespace tempest::spout {

// A fenced move of a live partition's offset (`tempest offsets set` on a
// partition a running KafkaSpout owns). The tool writes a request node that
// the owning spout task watches:
//
//   {zkRoot}/{id}/@rewind/partition_{N}            (one topic)
//   {zkRoot}/{id}/@rewind/{topic}/partition_{N}    (several topics)
//
// holding one JSON object (EncodeRewindRequest). The owner pauses the
// partition, drops its in-flight tuples (their late acks find nothing), and
// writes the new offset in one multi bound to its session: a check of its
// owner node, the versioned offset write, a journal entry of type "rewind",
// and the request node's answer ("done", with the previous offset). Then it
// re-acquires the partition and resumes from the new offset. A zombie owner
// (session gone) cannot answer: its multi is fenced and the request stays
// "pending" until the tool withdraws it.
struct RewindRequest {
  int64_t offset = 0;         // the offset to resume from
  std::string requested_by;   // "tempest offsets set (user@host pid N)"
  int64_t requested_at_ms = 0;
  std::string status = "pending";  // "pending" | "done" | "refused"
  // Written by the owner.
  int64_t from = -1;          // the stored offset before the move (-1: none)
  std::string owner;          // the owner's description
  std::string message;        // "refused": why
};
std::string EncodeRewindRequest(const RewindRequest& request);
// InvalidArgument naming the problem for anything that is not such an object.
absl::StatusOr<RewindRequest> DecodeRewindRequest(std::string_view json);

// This host's name, as owner descriptions carry it ("topology:component:task@host").
std::string LocalHostName();

std::string RewindRequestPath(const std::string& zk_root, const std::string& spout_id,
                              const std::string& topic, int partition, bool topic_level);

// The tool's side: creates the request for the partition whose owner node is
// `owner_path`, waits (at most `timeout`) for the owner's answer and removes
// the request. Results: the answered request ("done" or "refused");
// DeadlineExceeded when the owner did not answer (the request is withdrawn,
// nothing changed); AlreadyExists when another request is pending.
// `acl`: the request node's (and its missing parents') ACL; nullopt: the
// session's policy. A tool on the cluster identity passes one that lets the
// owner's topology identity read and answer it.
absl::StatusOr<RewindRequest> RequestRewind(coord::ZkSession& session, const std::string& path,
                                            const RewindRequest& request,
                                            std::chrono::milliseconds timeout,
                                            const std::optional<coord::ZkAcl>& acl = std::nullopt);

// The owner's side, one per KafkaSpout task. Watches the request nodes of
// the partitions the task owns and makes the fenced writes, on a thread of
// its own using the offset store's ZooKeeper session; the spout's executor
// only posts (Watch / Unwatch / Apply / Refuse) and drains (TakeRequests /
// TakeOutcomes), so it never blocks on ZooKeeper. Thread-safe.
class RewindWatcher {
 public:
  struct Options {
    std::string zk_root;
    std::string spout_id;
    bool topic_level = false;
    std::string owner_description;
    std::string topology_id;
    std::chrono::milliseconds op_timeout{5000};
    // Re-check of watched request nodes, in case a watch was lost.
    std::chrono::milliseconds poll_interval{2000};
  };
  // A request seen for a watched partition, not yet applied.
  struct Pending {
    TopicPartition partition;
    RewindRequest request;
    int32_t version = 0;  // the request node's version when read; -1: no request node
  };
  struct Outcome {
    TopicPartition partition;
    bool applied = false;
    int64_t from = -1;
    int64_t to = -1;
    absl::Status status;  // why not applied
  };

  // `session` (the offset store's) must outlive the watcher.
  RewindWatcher(coord::ZkSession* session, Options options);
  ~RewindWatcher();
  // Not OK when the watcher's thread could not be started (it then watches
  // nothing).
  const absl::Status& start_status() const { return start_status_; }
  RewindWatcher(const RewindWatcher&) = delete;
  RewindWatcher& operator=(const RewindWatcher&) = delete;

  // The task owns `tp` under the session `session_id`: watch its request node.
  void Watch(const TopicPartition& tp, int64_t session_id);
  void Unwatch(const TopicPartition& tp);
  // Writes `state` (its offset is the new position) under the owner's fence,
  // with the journal entry and the answer; the outcome comes back through
  // TakeOutcomes.
  void Apply(const Pending& pending, StormKafkaOffset state);
  void Refuse(const Pending& pending, std::string why);
  // The owner's own move (a stored offset outside the log, moved under
  // outOfRangePolicy): the same fenced write with a journal entry of type
  // "reset" giving `reason`, and no request to answer. The outcome comes back
  // through TakeOutcomes.
  void Reposition(const TopicPartition& tp, StormKafkaOffset state, std::string reason);
  std::vector<Pending> TakeRequests();
  std::vector<Outcome> TakeOutcomes();
  bool HasWork() const;

 private:
  struct Watched {
    int64_t session_id = 0;
    bool armed = false;     // a watch is set on the request node
    int64_t seen_czxid = 0;  // the request already handed to the spout
  };
  struct Job {
    Pending pending;
    std::optional<StormKafkaOffset> state;  // nullopt: refuse
    std::string why;
  };
  // The nodes one partition's fenced rewind reads and writes.
  struct RewindPaths {
    std::string owner;
    std::string offset;
    std::string request;
    std::string journal_dir;
  };
  void Loop();
  void CheckRequest(const TopicPartition& tp, Watched& w);
  Outcome Write(const Job& job, int64_t session_id);
  RewindPaths PathsOf(const TopicPartition& tp) const;
  // The fenced multi of one Write attempt: owner check, offset write, the
  // answer (for a request) and the journal entry.
  std::vector<coord::ZkOp> WriteOps(const Job& job, int64_t session_id, const RewindPaths& paths,
                                    const coord::ZkNode& owner,
                                    const absl::StatusOr<coord::ZkNode>& offset,
                                    const Outcome& out) const;
  absl::Status Answer(const Job& job, int64_t session_id);

  // Shared with watch callbacks, which may run after the watcher is gone.
  // The thread waits on `mu` until `wake` (mu.AwaitWithTimeout).
  struct Shared {
    absl::Mutex mu;
    bool wake ABSL_GUARDED_BY(mu) = false;
    std::set<TopicPartition> fired ABSL_GUARDED_BY(mu);  // watches that fired
  };

  coord::ZkSession* session_;
  Options options_;
  const std::shared_ptr<Shared> shared_;  // its mu guards every member below
  bool stop_ ABSL_GUARDED_BY(shared_->mu) = false;
  std::map<TopicPartition, Watched> watched_ ABSL_GUARDED_BY(shared_->mu);
  std::vector<Job> jobs_ ABSL_GUARDED_BY(shared_->mu);
  std::vector<Pending> requests_ ABSL_GUARDED_BY(shared_->mu);
  std::vector<Outcome> outcomes_ ABSL_GUARDED_BY(shared_->mu);
  std::thread thread_;
  absl::Status start_status_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_OFFSET_REWIND_H_
