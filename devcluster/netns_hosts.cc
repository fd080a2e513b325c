#include "devcluster/netns_hosts.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/core/status_macros.h"
#include "common/os/child_process.h"
#include "common/os/unique_fd.h"

namespace tempest::devcluster {
namespace {

// Where `ip netns add` keeps the namespace handles.
constexpr const char* kNetnsDir = "/run/netns/";
constexpr const char* kFaultTable = "inet tempest_faults";
constexpr int kMaxNameLength = 20;

// Sets made by this process so far: part of each set's names, so two sets of
// one process never clash.
std::atomic<int> runs_made{0};

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-') return false;
  }
  return true;
}

bool ProcessExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Runs argv to completion with stdout and stderr captured, bounded by
// `timeout`. Its output on success; an error naming the command otherwise.
absl::StatusOr<std::string> RunCaptured(const std::vector<std::string>& argv,
                                        std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(os::Pipe output, os::MakePipe(O_CLOEXEC));
  os::ChildProcess::Options o;
  o.argv = argv;
  o.stdout_fd = output.write.get();
  o.stderr_path = "=stdout";
  ASSIGN_OR_RETURN(std::unique_ptr<os::ChildProcess> child, os::ChildProcess::Start(o));
  // Ours closed, the child's copy is the only writer: its exit is our end of file.
  output.write.Reset();
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{.fd = output.read.get(), .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    char buf[4096];
    const ssize_t n = ::read(output.read.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < (1 << 20)) out.append(buf, static_cast<size_t>(n));
  }
  output.read.Reset();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  std::optional<int> status = child->WaitFor(std::max(left, std::chrono::milliseconds(1)));
  const std::string command = absl::StrJoin(argv, " ");
  if (!status.has_value()) {
    child->Kill();
    return absl::DeadlineExceededError(
        absl::StrCat("`", command, "` did not finish within ", timeout.count(), " ms"));
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(absl::StrCat("`", command, "` ", os::DescribeWaitStatus(*status),
                                            ": ", absl::StripAsciiWhitespace(out)));
  }
  return out;
}

// Kills every process on `netns` and deletes it. Processes are killed first:
// a namespace whose last handle is deleted lives on while anything runs in it.
absl::Status KillAndDelete(const std::string& netns, std::chrono::milliseconds timeout) {
  if (absl::StatusOr<std::string> pids = RunCaptured({"ip", "netns", "pids", netns}, timeout);
      pids.ok()) {
    std::vector<pid_t> killed;
    for (absl::string_view line : absl::StrSplit(*pids, '\n', absl::SkipWhitespace())) {
      pid_t pid = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &pid) && pid > 1 &&
          pid != ::getpid()) {
        ::kill(pid, SIGKILL);
        killed.push_back(pid);
      }
    }
    // Our own children stay zombies until reaped by their owners; the
    // namespace only waits for the rest to exit.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (pid_t pid : killed) {
      while (std::chrono::steady_clock::now() < deadline) {
        std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
        std::string line;
        if (!std::getline(stat, line)) break;  // gone
        const size_t close = line.rfind(')');  // the name may hold spaces
        if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') {
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
  absl::StatusOr<std::string> deleted = RunCaptured({"ip", "netns", "delete", netns}, timeout);
  std::error_code ec;
  if (!deleted.ok() && std::filesystem::exists(std::string(kNetnsDir) + netns, ec)) {
    return deleted.status();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<NetnsHosts>> NetnsHosts::Create(Options options) {
  if (options.names.empty()) return absl::InvalidArgumentError("NetnsHosts: no hosts named");
  if (options.names.size() > 250) {
    return absl::InvalidArgumentError("NetnsHosts: at most 250 hosts per set");
  }
  std::set<std::string> seen;
  for (const std::string& name : options.names) {
    if (!ValidName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("NetnsHosts: host name '", name, "' is not 1..", kMaxNameLength,
                       " letters, digits or '-'"));
    }
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("NetnsHosts: host '", name, "' twice"));
    }
  }
  if (options.subnet < 0 || options.subnet > 254) {
    return absl::InvalidArgumentError("NetnsHosts: subnet must be 1..254 (0: automatic)");
  }
  if (options.subnet == 0) options.subnet = 20 + static_cast<int>(::getpid() % 200);
  if (::geteuid() != 0) {
    return absl::FailedPreconditionError(
        "network-namespace hosts need root (CAP_NET_ADMIN and CAP_SYS_ADMIN)");
  }
  for (const char* tool : {"ip", "nft"}) {
    if (absl::StatusOr<std::string> v = RunCaptured({tool, "-V"}, options.command_timeout);
        !v.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "network-namespace hosts need `", tool, "` (Debian: iproute2, nftables; see "
          "deploy/install-deps.sh): ", v.status().message()));
    }
  }
  std::string run_prefix = absl::StrCat(kPrefix, ::getpid(), "-", runs_made++, "-");
  auto hosts = std::unique_ptr<NetnsHosts>(new NetnsHosts(std::move(options), run_prefix));
  hosts->home_netns_fd_.Reset(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!hosts->home_netns_fd_.valid()) {
    return absl::InternalError(
        absl::StrCat("cannot open this thread's network namespace: ", std::strerror(errno)));
  }
  if (absl::Status s = hosts->Build(); !s.ok()) {
    (void)hosts->Teardown();  // best effort: the build's error is the one to report
    return absl::FailedPreconditionError(
        absl::StrCat("cannot make network-namespace hosts: ", s.message()));
  }
  return hosts;
}

absl::Status NetnsHosts::Build() {
  bridge_netns_ = run_prefix_ + "bridge";
  auto run = [this](const std::vector<std::string>& argv) { return RunTool(argv).status(); };
  RETURN_IF_ERROR(run({"ip", "netns", "add", bridge_netns_}));
  created_.push_back(bridge_netns_);
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"ip", "-n", bridge_netns_, "link", "add", "br0", "type", "bridge"},
           {"ip", "-n", bridge_netns_, "link", "set", "br0", "up"},
           {"ip", "-n", bridge_netns_, "link", "set", "lo", "up"}}) {
    RETURN_IF_ERROR(run(argv));
  }
  for (size_t i = 0; i < options_.names.size(); ++i) {
    NetnsHost host{.name = options_.names[i],
                   .netns = run_prefix_ + options_.names[i],
                   .address = absl::StrCat("10.", options_.subnet, ".0.", i + 1)};
    RETURN_IF_ERROR(run({"ip", "netns", "add", host.netns}));
    created_.push_back(host.netns);
    const std::string veth = absl::StrCat("v", i);
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {"ip", "-n", bridge_netns_, "link", "add", veth, "type", "veth", "peer", "name",
              "eth0", "netns", host.netns},
             {"ip", "-n", bridge_netns_, "link", "set", veth, "master", "br0"},
             {"ip", "-n", bridge_netns_, "link", "set", veth, "up"},
             {"ip", "-n", host.netns, "addr", "add", host.address + "/24", "dev", "eth0"},
             {"ip", "-n", host.netns, "link", "set", "eth0", "up"},
             {"ip", "-n", host.netns, "link", "set", "lo", "up"}}) {
      RETURN_IF_ERROR(run(argv));
    }
    hosts_.push_back(std::move(host));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> NetnsHosts::RemoveStale() {
  std::error_code ec;
  if (!std::filesystem::exists(kNetnsDir, ec)) return 0;
  std::vector<std::string> stale;
  for (const auto& entry : std::filesystem::directory_iterator(kNetnsDir, ec)) {
    const std::string name = entry.path().filename().string();
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, kPrefix)) continue;
    pid_t owner = 0;
    const size_t dash = rest.find('-');
    if (dash == absl::string_view::npos || !absl::SimpleAtoi(rest.substr(0, dash), &owner) ||
        owner <= 0) {
      continue;
    }
    if (owner == ::getpid() || ProcessExists(owner)) continue;
    stale.push_back(name);
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", kNetnsDir, ": ", ec.message()));
  int removed = 0;
  absl::Status first;
  for (const std::string& netns : stale) {
    if (absl::Status s = KillAndDelete(netns, std::chrono::seconds(10)); s.ok()) {
      ++removed;
    } else if (first.ok()) {
      first = s;
    }
  }
  RETURN_IF_ERROR(first);
  return removed;
}

// A destructor has no one to tell; Teardown has done what it could.
NetnsHosts::~NetnsHosts() { (void)Teardown(); }

absl::Status NetnsHosts::Teardown() {
  if (torn_down_) return absl::OkStatus();
  torn_down_ = true;
  absl::Status first;
  if (home_netns_fd_.valid()) {
    // A thread still inside a host would keep that namespace alive.
    if (absl::Status s = LeaveHost(); !s.ok()) first = s;
    home_netns_fd_.Reset();
  }
  // Hosts first, the bridge last.
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (absl::Status s = KillAndDelete(*it, options_.command_timeout); !s.ok() && first.ok()) {
      first = s;
    }
  }
  created_.clear();
  return first;
}

int NetnsHosts::Find(const std::string& name) const {
  for (int i = 0; i < size(); ++i) {
    if (hosts_[i].name == name) return i;
  }
  return -1;
}

std::vector<std::string> NetnsHosts::Command(int i, const std::vector<std::string>& argv) const {
  std::vector<std::string> out = {"ip", "netns", "exec", hosts_.at(i).netns};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

absl::StatusOr<std::string> NetnsHosts::Run(int i, const std::vector<std::string>& argv) const {
  return RunTool(Command(i, argv));
}

absl::StatusOr<std::string> NetnsHosts::RunTool(const std::vector<std::string>& argv) const {
  return RunCaptured(argv, options_.command_timeout);
}

absl::Status NetnsHosts::EnterHost(int i) {
  const std::string path = std::string(kNetnsDir) + hosts_.at(i).netns;
  const os::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  if (::setns(fd.get(), CLONE_NEWNET) != 0) {
    return absl::InternalError(absl::StrCat("setns into ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status NetnsHosts::LeaveHost() {
  if (!home_netns_fd_.valid()) return absl::FailedPreconditionError("NetnsHosts: torn down");
  if (::setns(home_netns_fd_.get(), CLONE_NEWNET) != 0) {
    return absl::InternalError(
        absl::StrCat("setns back to the original namespace: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status NetnsHosts::AddRules(int i, const std::vector<std::string>& input_rules) {
  std::string script = absl::StrCat(
      "add table ", kFaultTable, "; add chain ", kFaultTable,
      " input { type filter hook input priority -10; policy accept; };");
  for (const std::string& rule : input_rules) {
    absl::StrAppend(&script, " add rule ", kFaultTable, " input ", rule, ";");
  }
  return Run(i, {"nft", script}).status();
}

absl::Status NetnsHosts::Isolate(int i) {
  (void)hosts_.at(i);  // only its bounds check: an unknown host is the caller's bug
  // Dropped where packets arrive: nothing reaches i, and nothing from i
  // reaches anyone. Loopback on i still works.
  RETURN_IF_ERROR(AddRules(i, {"iifname \"eth0\" drop"}));
  for (int j = 0; j < size(); ++j) {
    if (j == i) continue;
    RETURN_IF_ERROR(AddRules(j, {absl::StrCat("ip saddr ", hosts_[i].address, " drop")}));
  }
  return absl::OkStatus();
}

absl::Status NetnsHosts::CutPair(int a, int b) {
  RETURN_IF_ERROR(CutOneWay(a, b));
  return CutOneWay(b, a);
}

absl::Status NetnsHosts::CutOneWay(int from, int to) {
  if (from == to) return absl::InvalidArgumentError("NetnsHosts: a host cannot be cut from itself");
  return AddRules(to, {absl::StrCat("ip saddr ", hosts_.at(from).address, " drop")});
}

absl::Status NetnsHosts::SetLoss(int i, int percent) {
  if (percent < 0 || percent > 100) {
    return absl::InvalidArgumentError("NetnsHosts: loss must be 0..100 percent");
  }
  (void)hosts_.at(i);  // only its bounds check: an unknown host is the caller's bug
  if (percent == 0) return absl::OkStatus();
  const std::string drop = absl::StrCat("numgen random mod 100 < ", percent, " drop");
  RETURN_IF_ERROR(AddRules(i, {absl::StrCat("iifname \"eth0\" ", drop)}));
  for (int j = 0; j < size(); ++j) {
    if (j == i) continue;
    RETURN_IF_ERROR(AddRules(j, {absl::StrCat("ip saddr ", hosts_[i].address, " ", drop)}));
  }
  return absl::OkStatus();
}

absl::Status NetnsHosts::Heal() {
  absl::Status first;
  for (int i = 0; i < size(); ++i) {
    // `add` first makes the delete succeed when there is nothing to heal.
    absl::Status s =
        Run(i, {"nft", absl::StrCat("add table ", kFaultTable, "; delete table ", kFaultTable)})
            .status();
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

absl::Status NetnsHosts::ShareLoopbackPort(int owner, int port) {
  if (port <= 0 || port > 65535) return absl::InvalidArgumentError("NetnsHosts: bad port");
  const std::string& target = hosts_.at(owner).address;
  // Packets to or from 127.0.0.0/8 may cross eth0 only with route_localnet.
  const std::vector<std::string> localnet = {
      "sh", "-c",
      "echo 1 > /proc/sys/net/ipv4/conf/all/route_localnet && "
      "echo 1 > /proc/sys/net/ipv4/conf/eth0/route_localnet"};
  for (int i = 0; i < size(); ++i) {
    RETURN_IF_ERROR(Run(i, localnet).status());
    std::string script = "add table ip tempest_share; ";
    if (i == owner) {
      absl::StrAppend(&script,
                      "add chain ip tempest_share prerouting { type nat hook prerouting priority "
                      "-100; }; add rule ip tempest_share prerouting iifname \"eth0\" tcp dport ",
                      port, " dnat to 127.0.0.1:", port);
    } else {
      absl::StrAppend(&script,
                      "add chain ip tempest_share output { type nat hook output priority -100; }; "
                      "add rule ip tempest_share output ip daddr 127.0.0.1 tcp dport ",
                      port, " dnat to ", target, ":", port,
                      "; add chain ip tempest_share postrouting { type nat hook postrouting "
                      "priority 100; }; add rule ip tempest_share postrouting ip daddr ",
                      target, " tcp dport ", port, " masquerade");
    }
    RETURN_IF_ERROR(Run(i, {"nft", script}).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> NetnsHosts::FaultRules(int i) const {
  absl::StatusOr<std::string> listed = Run(i, {"nft", "list", "table", "inet", "tempest_faults"});
  if (!listed.ok() && absl::StrContains(listed.status().message(), "No such file")) return "";
  return listed;
}

}  // namespace tempest::devcluster
