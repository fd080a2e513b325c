// devcluster::NetnsHosts on the real kernel: hosts reach each other and
// nothing else, each fault drops what it says and Heal restores everything,
// teardown and RemoveStale leave no namespace or process behind. Probes are
// real sockets opened on the hosts (the test thread moves onto a host with
// EnterHost). Needs root, iproute2 and nftables; fails, never skips, without.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/os/loopback.h"
#include "devcluster/netns_hosts.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"

namespace tempest::devcluster {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Eventually;

constexpr int kTcpPort = 7000;
constexpr int kUdpPort = 7001;

bool NetnsExists(const std::string& name) {
  std::error_code ec;
  return std::filesystem::exists("/run/netns/" + name, ec);
}

bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

int Bound(int type, const std::string& address, int port) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 128) != 0)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class NetnsHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NetnsHosts::Options o;
    o.names = {"a", "b", "c"};
    absl::StatusOr<std::unique_ptr<NetnsHosts>> made = NetnsHosts::Create(o);
    ASSERT_TRUE(made.ok()) << "network-namespace hosts cannot be made here (root, iproute2 and "
                              "nftables are needed; this test fails rather than skips): "
                           << made.status();
    hosts_ = *std::move(made);
    // A TCP listener and a UDP socket on every host, opened there.
    for (int i = 0; i < hosts_->size(); ++i) {
      ASSERT_TRUE(hosts_->EnterHost(i).ok());
      tcp_.push_back(Bound(SOCK_STREAM, hosts_->host(i).address, kTcpPort));
      udp_.push_back(Bound(SOCK_DGRAM, hosts_->host(i).address, kUdpPort));
      ASSERT_GE(tcp_.back(), 0);
      ASSERT_GE(udp_.back(), 0);
    }
    ASSERT_TRUE(hosts_->LeaveHost().ok());
  }

  void TearDown() override {
    for (int fd : tcp_) ::close(fd);
    for (int fd : udp_) ::close(fd);
    if (hosts_ != nullptr) {
      EXPECT_TRUE(hosts_->Teardown().ok());
    }
  }

  // Whether a TCP connection from host `from` to host `to` is accepted.
  bool Connects(int from, int to) {
    EXPECT_TRUE(hosts_->EnterHost(from).ok());
    const bool ok = os::TcpPortAccepts(hosts_->host(to).address, kTcpPort, milliseconds(400));
    EXPECT_TRUE(hosts_->LeaveHost().ok());
    // Drain the backlog, so probes never fill it.
    while (true) {
      const int c = ::accept4(tcp_[to], nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) break;
      ::close(c);
    }
    return ok;
  }

  // How many of `count` datagrams from host `from` arrive at host `to`.
  int Datagrams(int from, int to, int count) {
    char buf[64];
    while (::recv(udp_[to], buf, sizeof(buf), 0) > 0) {
    }
    sockaddr_in dest{};
    dest.sin_family = AF_INET;
    dest.sin_port = htons(kUdpPort);
    ::inet_pton(AF_INET, hosts_->host(to).address.c_str(), &dest.sin_addr);
    for (int n = 0; n < count; ++n) {
      ::sendto(udp_[from], "x", 1, 0, reinterpret_cast<sockaddr*>(&dest), sizeof(dest));
      if (n % 50 == 49) std::this_thread::sleep_for(milliseconds(2));  // no socket overflow
    }
    int received = 0;
    pollfd p{.fd = udp_[to], .events = POLLIN, .revents = 0};
    // Datagrams arrive at once or never; stop after 300 ms of silence.
    while (::poll(&p, 1, 300) > 0) {
      while (::recv(udp_[to], buf, sizeof(buf), 0) > 0) ++received;
    }
    return received;
  }

  std::unique_ptr<NetnsHosts> hosts_;
  std::vector<int> tcp_;
  std::vector<int> udp_;
};

TEST_F(NetnsHostsTest, HostsReachEachOtherButNotTheMachine) {
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(hosts_->host(i).netns.starts_with(NetnsHosts::kPrefix));
    EXPECT_TRUE(NetnsExists(hosts_->host(i).netns));
    for (int j = 0; j < 3; ++j) {
      if (i != j) {
        EXPECT_TRUE(Connects(i, j)) << i << " -> " << j;
      }
    }
  }
  // The machine's own namespace got no interface or address on the hosts' network.
  char path[] = "/tmp/tempest-netns-root-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  ASSERT_EQ(std::system(absl::StrCat("ip -o addr > ", path).c_str()), 0);
  std::ifstream in(path);
  const std::string root_addresses((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  const std::string subnet = hosts_->host(0).address.substr(0, hosts_->host(0).address.rfind('.'));
  EXPECT_EQ(root_addresses.find(subnet + "."), std::string::npos) << root_addresses;
  // Commands run on a host see that host's interfaces.
  absl::StatusOr<std::string> addr = hosts_->Run(2, {"ip", "-4", "-o", "addr", "show", "eth0"});
  ASSERT_TRUE(addr.ok()) << addr.status();
  EXPECT_NE(addr->find(hosts_->host(2).address + "/24"), std::string::npos) << *addr;
  EXPECT_EQ(hosts_->Find("b"), 1);
  EXPECT_EQ(hosts_->Find("nope"), -1);
}

TEST_F(NetnsHostsTest, IsolatedHostReachesNobodyUntilHealed) {
  ASSERT_TRUE(hosts_->Isolate(0).ok());
  EXPECT_FALSE(Connects(0, 1));
  EXPECT_FALSE(Connects(1, 0));
  EXPECT_FALSE(Connects(2, 0));
  EXPECT_TRUE(Connects(1, 2));
  EXPECT_TRUE(Connects(2, 1));
  absl::StatusOr<std::string> rules = hosts_->FaultRules(0);
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_NE(rules->find("drop"), std::string::npos) << *rules;
  ASSERT_TRUE(hosts_->Heal().ok());
  EXPECT_TRUE(Connects(0, 1));
  EXPECT_TRUE(Connects(2, 0));
  EXPECT_EQ(*hosts_->FaultRules(0), "");
  // Healing twice is harmless.
  EXPECT_TRUE(hosts_->Heal().ok());
}

TEST_F(NetnsHostsTest, PairCutLeavesEveryOtherLink) {
  ASSERT_TRUE(hosts_->CutPair(0, 1).ok());
  EXPECT_FALSE(Connects(0, 1));
  EXPECT_FALSE(Connects(1, 0));
  EXPECT_TRUE(Connects(0, 2));
  EXPECT_TRUE(Connects(1, 2));
  EXPECT_TRUE(Connects(2, 0));
  ASSERT_TRUE(hosts_->Heal().ok());
  EXPECT_TRUE(Connects(0, 1));
}

TEST_F(NetnsHostsTest, OneWayCutDropsOneDirectionOnly) {
  ASSERT_TRUE(hosts_->CutOneWay(0, 1).ok());
  EXPECT_EQ(Datagrams(0, 1, 20), 0);
  EXPECT_EQ(Datagrams(1, 0, 20), 20);
  EXPECT_EQ(Datagrams(0, 2, 20), 20);
  // TCP needs both directions: neither side can connect.
  EXPECT_FALSE(Connects(0, 1));
  EXPECT_FALSE(Connects(1, 0));
  EXPECT_FALSE(hosts_->CutOneWay(1, 1).ok());
}

TEST_F(NetnsHostsTest, LossDropsAShareOfTheHostsPackets) {
  ASSERT_TRUE(hosts_->SetLoss(0, 50).ok());
  // 400 datagrams at 50% loss: far outside 25%..75% only by a fault.
  const int out = Datagrams(0, 1, 400);
  const int in = Datagrams(2, 0, 400);
  EXPECT_GT(out, 100);
  EXPECT_LT(out, 300);
  EXPECT_GT(in, 100);
  EXPECT_LT(in, 300);
  EXPECT_EQ(Datagrams(1, 2, 100), 100) << "hosts without loss lose nothing";
  ASSERT_TRUE(hosts_->Heal().ok());
  EXPECT_EQ(Datagrams(0, 1, 100), 100);
  EXPECT_FALSE(hosts_->SetLoss(0, 101).ok());
}

TEST_F(NetnsHostsTest, SharedLoopbackPortReachesItsOwnerAcrossTheBridge) {
  constexpr int kShared = 7100;
  ASSERT_TRUE(hosts_->EnterHost(0).ok());
  const int server = Bound(SOCK_STREAM, "127.0.0.1", kShared);
  ASSERT_TRUE(hosts_->LeaveHost().ok());
  ASSERT_GE(server, 0);
  auto reaches = [&](int from) {
    EXPECT_TRUE(hosts_->EnterHost(from).ok());
    const bool ok = os::TcpPortAccepts("127.0.0.1", kShared, milliseconds(400));
    EXPECT_TRUE(hosts_->LeaveHost().ok());
    while (true) {
      const int c = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) break;
      ::close(c);
    }
    return ok;
  };
  EXPECT_FALSE(reaches(1)) << "not shared yet";
  ASSERT_TRUE(hosts_->ShareLoopbackPort(0, kShared).ok());
  EXPECT_TRUE(reaches(1));
  EXPECT_TRUE(reaches(2));
  EXPECT_TRUE(reaches(0)) << "the owner itself, as before";
  // The connection crosses the bridge: a cut between the hosts stops it.
  ASSERT_TRUE(hosts_->CutPair(0, 1).ok());
  EXPECT_FALSE(reaches(1));
  EXPECT_TRUE(reaches(2));
  ASSERT_TRUE(hosts_->Heal().ok());
  EXPECT_TRUE(reaches(1));
  ::close(server);
}

TEST_F(NetnsHostsTest, TeardownKillsWhatRunsOnTheHosts) {
  std::vector<std::string> names;
  for (const NetnsHost& h : hosts_->hosts()) names.push_back(h.netns);
  // A process started on a host that outlives its starter (setsid, no death signal).
  absl::StatusOr<std::string> started = hosts_->Run(
      1, {"sh", "-c", "setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo $!"});
  ASSERT_TRUE(started.ok()) << started.status();
  pid_t sleeper = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(*started), &sleeper)) << *started;
  ASSERT_TRUE(Alive(sleeper));
  for (int fd : tcp_) ::close(fd);
  for (int fd : udp_) ::close(fd);
  tcp_.clear();
  udp_.clear();
  ASSERT_TRUE(hosts_->Teardown().ok());
  for (const std::string& n : names) EXPECT_FALSE(NetnsExists(n)) << n;
  EXPECT_TRUE(Eventually(seconds(5), [&] { return !Alive(sleeper); }, milliseconds(50)));
}

TEST(NetnsHostsStaleTest, LaterRunRemovesTheHostsOfADeadRun) {
  int report[2];
  // Close-on-exec: a process the dead run leaves behind must not hold it open.
  ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A run that dies without tearing down: _exit runs no destructor.
    ::close(report[0]);
    NetnsHosts::Options o;
    o.names = {"x", "y"};
    absl::StatusOr<std::unique_ptr<NetnsHosts>> made = NetnsHosts::Create(o);
    std::string text;
    if (made.ok()) {
      absl::StatusOr<std::string> pid = (*made)->Run(
          0, {"sh", "-c", "setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo $!"});
      text = absl::StrCat((*made)->host(0).netns, " ", (*made)->host(1).netns, " ",
                          pid.ok() ? absl::StripAsciiWhitespace(*pid) : "0");
      (void)made->release();
    }
    (void)!::write(report[1], text.data(), text.size());
    ::_exit(made.ok() ? 0 : 1);
  }
  ::close(report[1]);
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = ::read(report[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(report[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the dead run could not make its hosts (root, iproute2 and nftables are needed)";
  const std::vector<std::string> parts = absl::StrSplit(text, ' ');
  ASSERT_EQ(parts.size(), 3u) << text;
  pid_t sleeper = 0;
  ASSERT_TRUE(absl::SimpleAtoi(parts[2], &sleeper) && sleeper > 0) << text;
  EXPECT_TRUE(NetnsExists(parts[0]));
  EXPECT_TRUE(Alive(sleeper));

  absl::StatusOr<int> removed = NetnsHosts::RemoveStale();
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_GE(*removed, 3) << "two hosts and their bridge";
  EXPECT_FALSE(NetnsExists(parts[0]));
  EXPECT_FALSE(NetnsExists(parts[1]));
  EXPECT_TRUE(Eventually(seconds(5), [&] { return !Alive(sleeper); }, milliseconds(50)));
}

TEST(NetnsHostsOptionsTest, BadNamesAreRefused) {
  NetnsHosts::Options o;
  EXPECT_EQ(NetnsHosts::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.names = {"a", "a"};
  EXPECT_EQ(NetnsHosts::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.names = {"has space"};
  EXPECT_EQ(NetnsHosts::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.names = {std::string(21, 'h')};
  EXPECT_EQ(NetnsHosts::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.names = {"ok"};
  o.subnet = 255;
  EXPECT_EQ(NetnsHosts::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tempest::devcluster
