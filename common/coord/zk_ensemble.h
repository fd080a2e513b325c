#ifndef TEMPEST_COMMON_COORD_ZK_ENSEMBLE_H_
#define TEMPEST_COMMON_COORD_ZK_ENSEMBLE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/zk_server.h"

namespace tempest::coord {

// 1 or 3 real ZooKeeper servers (Debian's package, see ZkServer) on free
// loopback ports, or each on an address (host) of its own (Options::hosts),
// each in its own subdirectory zk<N> of dir(). It backs the
// test suites' fixtures and `tempest study`, which needs a 3-node ensemble it
// can kill, pause and restart members of.
//
// Owns the member processes (children in their own process groups that die
// with this object or with the owning process, so a crash leaves nothing
// behind) and, when Options::dir is empty, the temp directory it created.
// Not thread-safe: drive it from one thread.
class ZkEnsemble {
 public:
  struct Options {
    int size = 1;       // 1 (standalone) or 3
    int tick_ms = 250;  // sessions may then last 0.5..5 s
    std::chrono::milliseconds start_timeout{90'000};
    bool read_only_mode = false;  // members serve ZOO_READONLY clients without quorum
    // Where the members keep config, data and server.log. Empty: a fresh
    // directory under $TMPDIR (or /tmp), removed with its contents on
    // destruction unless TEMPEST_KEEP_TEST_DIRS is set (the test suites'
    // switch for post-mortems). Given: created if missing, and kept.
    // (The empty initializer lets designated initializers such as
    // `{.size = 3}` omit it under -Werror=missing-field-initializers.)
    std::string dir{};
    // Empty: every member on 127.0.0.1 with free ports. Otherwise one address
    // per member (size entries), each member on ZooKeeper's usual ports
    // 2181/2888/3888 of its own address, as on separate machines.
    std::vector<std::string> hosts{};
    // Empty, or one command prefix per member (e.g. `ip netns exec NETNS`),
    // to start each member on its own host.
    std::vector<std::vector<std::string>> command_prefixes{};
  };

  // Starts every member and waits until each serves.
  static absl::StatusOr<std::unique_ptr<ZkEnsemble>> Start(Options options);
  static absl::StatusOr<std::unique_ptr<ZkEnsemble>> Start() { return Start(Options{}); }

  ~ZkEnsemble();
  ZkEnsemble(const ZkEnsemble&) = delete;
  ZkEnsemble& operator=(const ZkEnsemble&) = delete;

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
  // client sees SESSION_EXPIRED when it next talks to the ensemble. A close
  // request can be lost on a loaded machine, so it attaches again until the
  // server answers that the session has expired (or the timeout passes).
  absl::Status ExpireSession(int64_t session_id, const std::string& password,
                             std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;

  const std::string& dir() const { return dir_; }

 private:
  ZkEnsemble(std::string dir, bool owns_dir) : dir_(std::move(dir)), owns_dir_(owns_dir) {}

  std::string dir_;
  bool owns_dir_;  // created by Start: removed by the destructor
  std::vector<std::unique_ptr<ZkServer>> servers_;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_ENSEMBLE_H_
