#ifndef TEMPEST_DEVCLUSTER_NETNS_HOSTS_H_
#define TEMPEST_DEVCLUSTER_NETNS_HOSTS_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/os/unique_fd.h"

namespace tempest::devcluster {

// One host of a NetnsHosts set.
struct NetnsHost {
  std::string name;     // as given in Options::names, e.g. "zk1"
  std::string netns;    // the network namespace: <prefix><pid>-<run>-<name>
  std::string address;  // its IPv4 address on the shared bridge, e.g. 10.71.0.3
};

// Several "hosts" on one Linux machine, each a network namespace of its own
// with `lo` up and one interface `eth0` that carries an address in a private
// /24. Every eth0 is a veth pair whose other end hangs on a bridge that lives
// in a further namespace of the set, so the machine's own network (the root
// namespace) is never touched and two sets never see each other. Daemons run
// on a host through Command() (`ip netns exec`); the calling thread can move
// onto a host with EnterHost() to be a client there.
//
// Faults are nftables rules inside the namespaces, in a table of their own
// (`inet tempest_faults`), all dropping packets where they arrive: cut a host
// off, cut a pair, cut one direction, drop a share of a host's packets at
// random. Heal() removes every rule. There is no delay: the kernels this runs
// on may lack netem.
//
// Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN), `ip` (iproute2) and `nft`.
// Owns the namespaces and everything inside them: the destructor (or
// Teardown) kills every process still running on a host and deletes the
// namespaces. A process that died without tearing down leaves namespaces
// named after its pid; RemoveStale() in a later run deletes those.
// Not thread-safe: use it from one thread (EnterHost moves only that thread).
class NetnsHosts {
 public:
  // Every namespace of every set starts with this.
  static constexpr const char* kPrefix = "tempest-host-";

  struct Options {
    // One host per name: letters, digits and '-', at most 20 characters.
    std::vector<std::string> names;
    // The second octet of the hosts' subnet 10.N.0.0/24 (1..254); 0 picks
    // one from the pid. Sets are isolated from each other, so two sets may
    // use the same subnet.
    int subnet = 0;
    std::chrono::milliseconds command_timeout{10'000};  // per `ip`/`nft` call
  };

  // Creates the bridge and every host. On failure removes what it made and
  // says what is missing (not root, no `ip`, no `nft`).
  static absl::StatusOr<std::unique_ptr<NetnsHosts>> Create(Options options);

  // Deletes the namespaces (and kills the processes on them) of sets whose
  // creating process no longer exists. Returns how many were removed.
  static absl::StatusOr<int> RemoveStale();

  ~NetnsHosts();
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  int size() const { return static_cast<int>(hosts_.size()); }
  const NetnsHost& host(int i) const { return hosts_.at(i); }
  const std::vector<NetnsHost>& hosts() const { return hosts_; }
  // Index of the host called `name`, or -1.
  int Find(const std::string& name) const;

  // `argv` prefixed so that it runs on host i: {"ip", "netns", "exec", NETNS, argv...}.
  std::vector<std::string> Command(int i, const std::vector<std::string>& argv) const;
  // Runs `argv` on host i to completion (bounded by Options::command_timeout)
  // and returns its output; an error carries the output when it fails.
  absl::StatusOr<std::string> Run(int i, const std::vector<std::string>& argv) const;

  // Moves the calling thread into host i's network namespace: sockets it
  // opens from then on, and threads and processes it starts, are on host i.
  absl::Status EnterHost(int i);
  // Moves the calling thread back to the namespace it had at Create.
  absl::Status LeaveHost();

  // Host i can neither send to nor receive from any other host.
  absl::Status Isolate(int i);
  // Hosts a and b cannot reach each other; both still reach everyone else.
  absl::Status CutPair(int a, int b);
  // Packets from host `from` to host `to` are dropped; the other way passes.
  absl::Status CutOneWay(int from, int to);
  // Every packet host i sends to or receives from another host is dropped
  // with probability `percent`/100 (nft `numgen random`).
  absl::Status SetLoss(int i, int percent);
  // Removes every fault rule on every host.
  absl::Status Heal();

  // For a server on host `owner` that can only listen on 127.0.0.1 (such as
  // librdkafka's mock brokers, which also advertise 127.0.0.1:port): makes
  // 127.0.0.1:`port` on every other host lead to it. Connections cross the
  // bridge from the client's address to the owner's (NAT inside the
  // namespaces, with route_localnet), so every fault between the two hosts
  // applies to them. Heal() leaves this in place.
  absl::Status ShareLoopbackPort(int owner, int port);
  // The fault rules on host i as `nft list table` prints them ("" if none).
  absl::StatusOr<std::string> FaultRules(int i) const;

  // Kills every process on the hosts and deletes every namespace. Called by
  // the destructor; safe to call twice.
  absl::Status Teardown();

 private:
  NetnsHosts(Options options, std::string run_prefix)
      : options_(std::move(options)), run_prefix_(std::move(run_prefix)) {}

  absl::Status Build();
  absl::StatusOr<std::string> RunTool(const std::vector<std::string>& argv) const;
  // Appends nft rules to host i's fault table, creating it if needed.
  absl::Status AddRules(int i, const std::vector<std::string>& input_rules);

  Options options_;
  std::string run_prefix_;  // kPrefix + "<pid>-<run>-"
  std::string bridge_netns_;
  std::vector<NetnsHost> hosts_;
  std::vector<std::string> created_;  // every namespace made, in order
  os::UniqueFd home_netns_fd_;        // the creating thread's namespace
  bool torn_down_ = false;
};

}  // namespace tempest::devcluster

#endif  // TEMPEST_DEVCLUSTER_NETNS_HOSTS_H_
