#include "common/coord/zk_ensemble.h"

#include <stdlib.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/status_macros.h"
#include "common/os/files.h"
#include "common/os/loopback.h"

namespace tempest::coord {
namespace {

// A fresh directory "$TMPDIR/tempest-zk-XXXXXX" (or under /tmp).
absl::StatusOr<std::string> MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(base != nullptr && *base != '\0' ? base : "/tmp", "/tempest-zk-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", pattern, ": ", std::strerror(errno)));
  }
  return pattern;
}

// Each member's host and ports: the standard ports on hosts of their own,
// free loopback ports otherwise.
absl::StatusOr<std::vector<ZkPeer>> ChoosePeers(const ZkEnsemble::Options& options) {
  std::vector<ZkPeer> peers;
  for (int i = 0; i < options.size; ++i) {
    ZkPeer peer{.id = i + 1};
    if (!options.hosts.empty()) {
      // A host of its own: nothing else listens there.
      peer.host = options.hosts[i];
      peer.client_port = 2181;
      peer.quorum_port = 2888;
      peer.election_port = 3888;
      peers.push_back(peer);
      continue;
    }
    for (int* port : {&peer.client_port, &peer.quorum_port, &peer.election_port}) {
      ASSIGN_OR_RETURN(*port, os::FindFreeLoopbackPort());
    }
    peers.push_back(peer);
  }
  return peers;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ZkEnsemble>> ZkEnsemble::Start(Options options) {
  if (options.size != 1 && options.size != 3) {
    return absl::InvalidArgumentError("ZkEnsemble size must be 1 or 3");
  }
  if (!options.hosts.empty() && static_cast<int>(options.hosts.size()) != options.size) {
    return absl::InvalidArgumentError("ZkEnsemble: give one host per member, or none");
  }
  if (!options.command_prefixes.empty() &&
      static_cast<int>(options.command_prefixes.size()) != options.size) {
    return absl::InvalidArgumentError("ZkEnsemble: give one command prefix per member, or none");
  }
  const bool owns_dir = options.dir.empty();
  if (owns_dir) {
    ASSIGN_OR_RETURN(options.dir, MakeTempDir());
  } else {
    RETURN_IF_ERROR(os::MakeDirs(options.dir));
  }
  // From here on the destructor cleans up (members, owned dir) on any error.
  auto ensemble = std::unique_ptr<ZkEnsemble>(new ZkEnsemble(options.dir, owns_dir));
  ASSIGN_OR_RETURN(const std::vector<ZkPeer> peers, ChoosePeers(options));
  for (int i = 0; i < options.size; ++i) {
    ZkServerConfig config;
    config.data_dir = absl::StrCat(ensemble->dir(), "/zk", i + 1);
    config.host = peers[i].host;
    config.client_port = peers[i].client_port;
    if (!options.command_prefixes.empty()) config.command_prefix = options.command_prefixes[i];
    config.tick_ms = options.tick_ms;
    config.read_only_mode = options.read_only_mode;
    if (options.size > 1) {
      config.ensemble = peers;
      config.my_id = i + 1;
    }
    ASSIGN_OR_RETURN(auto server, ZkServer::Start(config));
    ensemble->servers_.push_back(std::move(server));
  }
  for (int i = 0; i < options.size; ++i) {
    RETURN_IF_ERROR(ensemble->servers_[i]->WaitServing(options.start_timeout));
  }
  return ensemble;
}

ZkEnsemble::~ZkEnsemble() {
  // Members first: they write into dir_ until they die.
  servers_.clear();
  if (!owns_dir_ || std::getenv("TEMPEST_KEEP_TEST_DIRS") != nullptr) return;
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string ZkEnsemble::ConnectString() const {
  std::vector<std::string> parts;
  for (const auto& s : servers_) parts.push_back(s->connect_string());
  return absl::StrJoin(parts, ",");
}

std::string ZkEnsemble::MemberConnectString(int i) const { return servers_.at(i)->connect_string(); }

void ZkEnsemble::Stop(int i) { servers_.at(i)->Stop(); }
void ZkEnsemble::Kill(int i) { servers_.at(i)->Kill(); }
void ZkEnsemble::Pause(int i) { servers_.at(i)->Pause(); }
void ZkEnsemble::Resume(int i) { servers_.at(i)->Resume(); }

absl::Status ZkEnsemble::Restart(int i, std::chrono::milliseconds timeout) {
  RETURN_IF_ERROR(servers_.at(i)->Restart());
  return servers_[i]->WaitServing(timeout);
}

absl::Status ZkEnsemble::Relaunch(int i) { return servers_.at(i)->Restart(); }

absl::Status ZkEnsemble::WaitServing(int i, std::chrono::milliseconds timeout) {
  return servers_.at(i)->WaitServing(timeout);
}

bool ZkEnsemble::IsServing(int i, std::chrono::milliseconds timeout) const {
  return servers_.at(i)->Mode(timeout).ok();
}

absl::StatusOr<std::string> ZkEnsemble::Mode(int i) const { return servers_.at(i)->Mode(); }

int ZkEnsemble::LeaderIndex() const {
  for (int i = 0; i < size(); ++i) {
    auto mode = servers_[i]->Mode();
    if (mode.ok() && (*mode == "leader" || *mode == "standalone")) return i;
  }
  return -1;
}

namespace {
void IgnoreEvents(zhandle_t*, int, int, const char*, void*) {}
}  // namespace

namespace {

enum class Attach { kConnected, kExpired, kTimedOut };

// Waits until `zh` is connected to the session it was opened with, or the
// server says that session has expired.
Attach AwaitAttach(zhandle_t* zh, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const int state = zoo_state(zh);
    if (state == ZOO_CONNECTED_STATE) return Attach::kConnected;
    if (state == ZOO_EXPIRED_SESSION_STATE) return Attach::kExpired;
    if (std::chrono::steady_clock::now() >= deadline) return Attach::kTimedOut;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

absl::Status ZkEnsemble::ExpireSession(int64_t session_id, const std::string& password,
                                       std::chrono::milliseconds timeout) const {
  clientid_t id{};
  id.client_id = session_id;
  std::memcpy(id.passwd, password.data(), std::min(password.size(), sizeof(id.passwd)));
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The first attach that connects closes the session; the next one must
  // find it expired. Bounded by the deadline (each try is one round trip).
  bool closed_once = false;
  while (true) {
    zhandle_t* zh = zookeeper_init(ConnectString().c_str(), IgnoreEvents,
                                   static_cast<int>(timeout.count()), &id, nullptr, 0);
    if (zh == nullptr) return absl::InternalError("zookeeper_init failed");
    const Attach attach = AwaitAttach(zh, deadline);
    if (attach == Attach::kExpired) {
      zookeeper_close(zh);
      return absl::OkStatus();
    }
    if (attach == Attach::kTimedOut) {
      zookeeper_close(zh);
      return absl::DeadlineExceededError(
          closed_once ? "closed the session, but could not confirm that it expired"
                      : "could not attach to the session to expire it");
    }
    const int rc = zookeeper_close(zh);
    if (rc != ZOK && rc != ZOPERATIONTIMEOUT && rc != ZCONNECTIONLOSS) {
      return absl::InternalError(absl::StrCat("close: ", zerror(rc)));
    }
    closed_once = true;
  }
}

}  // namespace tempest::coord
