#ifndef TEMPEST_COMMON_COORD_LEADER_ELECTION_H_
#define TEMPEST_COMMON_COORD_LEADER_ELECTION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/serial_executor.h"
#include "common/coord/zk_session.h"
#include "common/core/clock.h"

namespace tempest::coord {

// Leader election among participants under one path: each creates an
// ephemeral-sequential node "n_<seq>" holding a tempest.v1.ElectionParticipant
// and watches only its predecessor (no herd effect); the lowest sequence
// leads. Leadership is given up (on_change(false)) as soon as the session is
// Suspended or Lost, since neither lets us be sure the node still exists; it
// is regained after reconnecting if our node survived, or by re-joining on a
// new session.
//
// Owns a SerialExecutor thread, where all ZooKeeper calls and on_change run.
// IsLeader() is thread-safe; CurrentLeader() blocks the caller for at most
// op_timeout, AwaitRound() until the deadline it is given. participant_id
// must be unique among participants (it also identifies our node when a
// create's outcome is ambiguous). The ZkSession
// must outlive it; destroying it leaves the election.
class LeaderElection {
 public:
  struct Options {
    std::string path;  // e.g. /tempest/leader
    std::string participant_id;
    std::string host;
    int port = 0;
    std::chrono::milliseconds op_timeout{5000};
    std::chrono::milliseconds retry_interval{250};
    std::function<void(bool is_leader)> on_change;
    // What AwaitRound's deadline is read on.
    core::Clock* clock = &core::RealClock();
  };

  static absl::StatusOr<std::unique_ptr<LeaderElection>> Create(ZkSession& session,
                                                                Options options);
  ~LeaderElection();

  bool IsLeader() const { return leader_.load(); }
  // The participant id of the current leader, read from ZooKeeper now;
  // NotFound when nobody participates.
  absl::StatusOr<std::string> CurrentLeader() const;

  // Blocks until the election finishes a round after this call (a round
  // ends when this participant leads, or follows a predecessor it watches;
  // each session event and each predecessor leaving starts one), or until
  // `deadline` on Options::clock. Returns IsLeader(). A participant that has
  // just joined or lost its predecessor learns here, without polling, whether
  // it now leads. Thread-safe; never from on_change, which runs on the thread
  // that finishes rounds.
  bool AwaitRound(core::Clock::TimePoint deadline) const;

 private:
  LeaderElection(ZkSession& session, Options options);
  void Reconcile();
  // Creates our node on session `sid`; false if that failed (retry later).
  bool Join(int64_t sid);
  void SetLeader(bool leader);
  // Wakes AwaitRound: the round has settled this participant's place.
  void FinishRound();

  ZkSession& session_;
  Options options_;
  int subscription_ = 0;
  std::atomic<bool> leader_{false};
  mutable absl::Mutex round_mu_;
  mutable absl::CondVar round_done_;
  // Rounds finished so far (FinishRound).
  uint64_t rounds_ ABSL_GUARDED_BY(round_mu_) = 0;
  // Touched only on the executor thread.
  std::string my_node_;
  int64_t my_session_ = 0;
  // Shared with pending watch callbacks (weakly), which may fire after we
  // are gone; a stopped executor ignores their posts.
  std::shared_ptr<SerialExecutor> executor_ = std::make_shared<SerialExecutor>();
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_LEADER_ELECTION_H_
