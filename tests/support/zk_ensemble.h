#ifndef TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_
#define TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/zk_server.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {

// 1 or 3 real ZooKeeper servers (Debian's package) on free loopback ports, in
// a temp directory. Members are child processes in their own process groups
// that die with the test binary, so a crashing test leaves nothing behind.
// Not thread-safe: drive it from the test's main thread.
class ZkEnsemble {
 public:
  struct Options {
    int size = 1;       // 1 (standalone) or 3
    int tick_ms = 250;  // sessions may then last 0.5..5 s
    std::chrono::milliseconds start_timeout{90'000};
    bool read_only_mode = false;  // members serve ZOO_READONLY clients without quorum
  };

  // Starts every member and waits until each serves.
  static absl::StatusOr<std::unique_ptr<ZkEnsemble>> Start(Options options);
  static absl::StatusOr<std::unique_ptr<ZkEnsemble>> Start() { return Start(Options{}); }

  int size() const { return static_cast<int>(servers_.size()); }
  // Every member, comma-separated: what clients get.
  std::string ConnectString() const;
  // One member only (0-based index).
  std::string MemberConnectString(int i) const;

  void Stop(int i);    // graceful
  void Kill(int i);    // SIGKILL
  void Pause(int i);   // SIGSTOP; the member stops answering, its sockets stay open
  void Resume(int i);  // SIGCONT
  // Starts a stopped/killed member again (same data dir and ports) and waits
  // until it serves, which for an ensemble member needs a quorum.
  absl::Status Restart(int i, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Starts a stopped/killed member again without waiting: for bringing back
  // several members of a quorum at once, then WaitServing on each.
  absl::Status Relaunch(int i);
  absl::Status WaitServing(int i, std::chrono::milliseconds timeout);

  // True if member i answers `srvr` with a serving mode within `timeout`.
  // A paused or killed member, or one without quorum, is not serving.
  bool IsServing(int i, std::chrono::milliseconds timeout = std::chrono::milliseconds(500)) const;
  // "standalone", "leader", "follower", or an error.
  absl::StatusOr<std::string> Mode(int i) const;
  // Index of the current leader (or the standalone server); -1 if none.
  int LeaderIndex() const;

  // Really expires a session: opens a second handle with the same id and
  // password, waits until it is connected, and closes it. Closing ends the
  // session on the server, so its ephemeral nodes vanish and its original
  // client sees SESSION_EXPIRED when it next talks to the ensemble.
  absl::Status ExpireSession(int64_t session_id, const std::string& password,
                             std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;

  const std::string& dir() const { return dir_.path(); }

 private:
  ZkEnsemble() : dir_("tempest-zk") {}

  TempDir dir_;
  std::vector<std::unique_ptr<coord::ZkServer>> servers_;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_
