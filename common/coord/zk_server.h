#ifndef TEMPEST_COMMON_COORD_ZK_SERVER_H_
#define TEMPEST_COMMON_COORD_ZK_SERVER_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/os/child_process.h"

namespace tempest::coord {

// One member of a ZooKeeper ensemble as seen by every other member.
struct ZkPeer {
  int id = 0;  // myid, 1-based
  std::string host = "127.0.0.1";  // the address it serves clients and peers on
  int client_port = 0;
  int quorum_port = 0;
  int election_port = 0;
};

struct ZkServerConfig {
  std::string data_dir;  // created if missing; holds zoo.cfg, myid, snapshots, server.log
  std::string host = "127.0.0.1";  // clientPortAddress, and where Mode() probes
  int client_port = 0;
  int tick_ms = 2000;  // sessions may last 2..20 ticks
  // Empty for a standalone server; otherwise every member (including this one).
  std::vector<ZkPeer> ensemble;
  int my_id = 0;  // this member's id in `ensemble`
  std::string jvm_heap = "256m";
  // Serve reads to ZOO_READONLY clients while cut off from the quorum
  // (Java property readonlymode.enabled).
  bool read_only_mode = false;
  // Put before the java command line, e.g. {"ip", "netns", "exec", NETNS}
  // to run the server on another network-namespace host.
  std::vector<std::string> command_prefix;
};

// A real ZooKeeper server (Debian's `zookeeper` package, run with `java`) as a
// child process. Owns the process: it is killed when this object goes away or
// when the owning process dies. Not thread-safe.
class ZkServer {
 public:
  // Writes zoo.cfg and myid into config.data_dir and starts the JVM. Does not
  // wait: call WaitServing().
  static absl::StatusOr<std::unique_ptr<ZkServer>> Start(const ZkServerConfig& config);

  // Waits until the server answers `srvr` with a mode (standalone, leader or
  // follower), i.e. it serves clients.
  absl::Status WaitServing(std::chrono::milliseconds timeout);
  // The mode reported by `srvr` right now: "standalone", "leader",
  // "follower", or an error if it does not serve.
  absl::StatusOr<std::string> Mode(std::chrono::milliseconds timeout =
                                       std::chrono::milliseconds(1000)) const;

  void Stop();    // SIGTERM, then SIGKILL after a grace period
  void Kill();    // SIGKILL
  void Pause();   // SIGSTOP, returning once every thread has stopped: the process stays, answers nothing
  void Resume();  // SIGCONT
  absl::Status Restart();  // Kill (if running) and start again on the same dir and port
  bool Running();
  bool Paused() const { return paused_; }

  int client_port() const { return config_.client_port; }
  std::string connect_string() const;
  const ZkServerConfig& config() const { return config_; }

 private:
  explicit ZkServer(ZkServerConfig config) : config_(std::move(config)) {}
  absl::Status Launch();

  ZkServerConfig config_;
  std::unique_ptr<os::ChildProcess> process_;
  bool paused_ = false;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_SERVER_H_
