// TcpProxy over real loopback sockets: relaying through a plain-socket echo
// server, partitions, and a real ZooKeeper session expired by a partition.

#include "common/net/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::net {
namespace {

using std::chrono::milliseconds;
using tempest::testing::Eventually;

// Bounds a failing test only; passing tests wait as long as needed.
constexpr milliseconds kDeadline(20000);

// A blocking echo server on 127.0.0.1:<free port>: one thread per
// connection, echoing until the peer closes. Counts accepted and finished
// connections so tests can tell what reached the target.
class EchoServer {
 public:
  EchoServer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(listen_fd_, 64) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "echo server: cannot listen: " << errno;
      return;
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~EchoServer() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    if (acceptor_.joinable()) acceptor_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : fds_) shutdown(fd, SHUT_RDWR);  // wakes read()
    }
    for (auto& t : workers_) t.join();
    for (int fd : fds_) close(fd);
    close(listen_fd_);
  }

  int port() const { return port_; }
  int accepted() const { return accepted_; }
  int finished() const { return finished_; }

 private:
  void AcceptLoop() {
    while (!stop_) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) {
        if (errno == EINTR) continue;
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++accepted_;
      fds_.push_back(fd);
      workers_.emplace_back([this, fd] { Echo(fd); });
    }
  }

  void Echo(int fd) {
    std::vector<char> buf(64 << 10);
    for (;;) {
      const ssize_t n = read(fd, buf.data(), buf.size());
      if (n <= 0) break;
      ssize_t off = 0;
      while (off < n) {
        const ssize_t w = send(fd, buf.data() + off, n - off, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += w;
      }
      if (off < n) break;
    }
    ++finished_;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> finished_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;  // closed only in the destructor, so no fd is reused under a worker
  std::vector<std::thread> workers_;
};

// A client socket, closed on destruction.
class Client {
 public:
  explicit Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Client() { close(fd_); }

  bool connected() const { return connected_; }

  bool SendAll(const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads until `n` bytes arrived, the peer closed, or the deadline passed.
  std::string Read(size_t n, milliseconds deadline = kDeadline) {
    std::string out;
    const auto until = std::chrono::steady_clock::now() + deadline;
    std::vector<char> buf(64 << 10);
    while (out.size() < n && !closed_) {
      if (!WaitReadable(until)) break;
      const ssize_t got = read(fd_, buf.data(), std::min(buf.size(), n - out.size()));
      if (got <= 0) {
        closed_ = true;
        break;
      }
      out.append(buf.data(), static_cast<size_t>(got));
    }
    return out;
  }

  // Reads until the peer closes (EOF or reset) or the deadline passes;
  // returns whether it closed, and puts any bytes received into `data`.
  bool WaitClosed(std::string* data, milliseconds deadline = kDeadline) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    char buf[4096];
    while (!closed_) {
      if (!WaitReadable(until)) return false;
      const ssize_t got = read(fd_, buf, sizeof(buf));
      if (got <= 0) {
        closed_ = true;
        break;
      }
      data->append(buf, static_cast<size_t>(got));
    }
    return true;
  }

 private:
  bool WaitReadable(std::chrono::steady_clock::time_point until) {
    for (;;) {
      const auto left =
          std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int r = poll(&p, 1, static_cast<int>(left.count()));
      if (r > 0) return true;  // readable, hung up or failed: read() tells which
      if (r < 0 && errno != EINTR) return false;
    }
  }

  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

std::string Pattern(size_t size) {
  std::string s(size, '\0');
  uint32_t x = 12345;
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

// A port nothing listens on: bound once by us, then released.
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  EXPECT_TRUE(ok) << "cannot find an unused port: " << errno;
  return ok ? ntohs(addr.sin_port) : 0;
}

std::unique_ptr<TcpProxy> StartProxy(int target_port) {
  auto proxy = TcpProxy::Start("127.0.0.1", target_port);
  EXPECT_TRUE(proxy.ok()) << proxy.status();
  return proxy.ok() ? *std::move(proxy) : nullptr;
}

// Sends `bytes` through `c` and expects them echoed back.
void ExpectEchoed(Client& c, const std::string& bytes) {
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.SendAll(bytes));
  ASSERT_EQ(c.Read(bytes.size()), bytes);
}

// Most tests: an echo server behind a proxy.
class ProxiedEchoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    proxy = StartProxy(echo.port());
    ASSERT_NE(proxy, nullptr);
  }
  EchoServer echo;
  std::unique_ptr<TcpProxy> proxy;
};

TEST_F(ProxiedEchoTest, RelaysBytesBothWays) {
  EXPECT_EQ(proxy->address(), "127.0.0.1:" + std::to_string(proxy->port()));
  EXPECT_FALSE(proxy->partitioned());

  Client small(proxy->port());
  ExpectEchoed(small, "hello");

  // 1 MiB is far more than the proxy's buffers plus the kernel's, so this
  // only completes if both directions keep flowing under back pressure.
  const std::string payload = Pattern(1 << 20);
  Client big(proxy->port());
  ASSERT_TRUE(big.connected());
  std::thread writer([&] { EXPECT_TRUE(big.SendAll(payload)); });
  const std::string echoed = big.Read(payload.size());
  writer.join();
  ASSERT_EQ(echoed.size(), payload.size());
  EXPECT_TRUE(echoed == payload);

  EXPECT_EQ(proxy->connections_accepted(), 2);
  EXPECT_EQ(echo.accepted(), 2);
}

TEST_F(ProxiedEchoTest, ClientCloseClosesUpstream) {
  {
    Client c(proxy->port());
    ExpectEchoed(c, "x");
  }
  EXPECT_TRUE(Eventually(kDeadline, [&] { return echo.finished() == 1; }));
}

TEST(TcpProxyTest, FailedUpstreamConnectClosesTheClient) {
  auto proxy = StartProxy(UnusedPort());
  ASSERT_NE(proxy, nullptr);
  Client c(proxy->port());
  ASSERT_TRUE(c.connected());  // the proxy accepted; only its upstream connect fails
  std::string data;
  EXPECT_TRUE(c.WaitClosed(&data));
  EXPECT_EQ(data, "");
}

TEST(TcpProxyTest, RejectsABadTargetPort) {
  EXPECT_TRUE(absl::IsInvalidArgument(TcpProxy::Start("127.0.0.1", 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(TcpProxy::Start("127.0.0.1", 70000).status()));
}

TEST_F(ProxiedEchoTest, PartitionClosesOpenConnectionsAndRefusesNewOnesUntilHealed) {
  Client relayed(proxy->port());
  ExpectEchoed(relayed, "ping");

  proxy->SetPartitioned(true);
  EXPECT_TRUE(proxy->partitioned());
  std::string data;
  EXPECT_TRUE(relayed.WaitClosed(&data));
  EXPECT_EQ(data, "");
  // The proxy closed its upstream leg too.
  EXPECT_TRUE(Eventually(kDeadline, [&] { return echo.finished() == 1; }));

  // A new connection is accepted by the kernel, then closed by the proxy
  // without a byte relayed and without reaching the target.
  Client refused(proxy->port());
  ASSERT_TRUE(refused.connected());
  refused.SendAll("lost");  // may already fail: the proxy may have closed it
  std::string refused_data;
  EXPECT_TRUE(refused.WaitClosed(&refused_data));
  EXPECT_EQ(refused_data, "");
  EXPECT_EQ(proxy->connections_accepted(), 2);
  EXPECT_EQ(echo.accepted(), 1);

  proxy->SetPartitioned(false);
  EXPECT_FALSE(proxy->partitioned());
  Client healed(proxy->port());
  ExpectEchoed(healed, "pong");
  EXPECT_EQ(echo.accepted(), 2);
}

TEST_F(ProxiedEchoTest, DestroyingTheProxyClosesItsConnections) {
  Client c(proxy->port());
  ExpectEchoed(c, "x");
  proxy.reset();
  std::string data;
  EXPECT_TRUE(c.WaitClosed(&data));
  EXPECT_TRUE(Eventually(kDeadline, [&] { return echo.finished() == 1; }));
}

// Records a session's events (they arrive on its dispatcher thread).
class SessionEvents {
 public:
  explicit SessionEvents(coord::ZkSession& session) : session_(session) {
    id_ = session.Subscribe([this](const coord::ZkSessionEvent& e) {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(e);
    });
  }
  ~SessionEvents() { session_.Unsubscribe(id_); }
  std::vector<coord::ZkSessionEvent> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  coord::ZkSession& session_;
  int id_ = 0;
  mutable std::mutex mu_;
  std::vector<coord::ZkSessionEvent> events_;
};

// The study's scenario: one client reaches ZooKeeper only through the proxy;
// a partition longer than its session timeout makes the server expire the
// session, while a client connected directly keeps working and sees the
// partitioned client's ephemeral node vanish.
TEST(TcpProxyZooKeeperTest, PartitionExpiresTheSessionOnTheServer) {
  auto ensemble = testing::ZkEnsemble::Start({.size = 1});
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  const std::string member = (*ensemble)->MemberConnectString(0);
  const int zk_port = std::stoi(member.substr(member.rfind(':') + 1));
  auto proxy = StartProxy(zk_port);
  ASSERT_NE(proxy, nullptr);

  core::MetricsRegistry metrics;
  coord::ZkSession::Options options;
  options.connect_string = proxy->address();
  options.config.session_timeout = milliseconds(4000);
  options.config.connection_timeout = milliseconds(10000);
  options.operation_timeout = milliseconds(10000);
  options.metrics = metrics;
  options.retry_seed = 1234;
  auto created = coord::ZkSession::Create(options);
  ASSERT_TRUE(created.ok()) << created.status();
  std::unique_ptr<coord::ZkSession> session = *std::move(created);
  ASSERT_TRUE(session->WaitConnected(kDeadline).ok());
  SessionEvents events(*session);
  const int64_t old_id = session->session_id();
  const uint64_t old_generation = session->generation();
  ASSERT_NE(old_id, 0);

  const std::string path = "/tcp-proxy-test/owner";
  coord::ZkCreateOptions ephemeral;
  ephemeral.mode = coord::ZkCreateMode::kEphemeral;
  ephemeral.create_parents = true;
  ASSERT_TRUE(session->Create(path, "spout", ephemeral).ok());

  auto direct = testing::RawZkClient::Connect((*ensemble)->ConnectString(), 10000, kDeadline);
  ASSERT_NE(direct, nullptr);
  ASSERT_EQ(direct->Exists(path), ZOK);

  const auto partitioned_at = std::chrono::steady_clock::now();
  proxy->SetPartitioned(true);
  const int64_t accepted_before = proxy->connections_accepted();
  // The client notices at once: its socket was closed.
  EXPECT_TRUE(Eventually(kDeadline, [&] { return !session->IsConnected(); }));
  // The server expires the session once its timeout passes without a ping,
  // which everyone else sees as the ephemeral node disappearing.
  ASSERT_TRUE(Eventually(milliseconds(30000), [&] { return direct->Exists(path) == ZNONODE; }));
  const auto server_expired_after = std::chrono::steady_clock::now() - partitioned_at;
  EXPECT_EQ(direct->State(), ZOO_CONNECTED_STATE);
  // Meanwhile the partitioned session's own timer gives up too.
  ASSERT_TRUE(
      Eventually(kDeadline, [&] { return session->state() == coord::ZkSessionState::kLost; }));
  const auto partition_length = std::chrono::steady_clock::now() - partitioned_at;
  const int64_t refused = proxy->connections_accepted() - accepted_before;

  proxy->SetPartitioned(false);
  // Once healed, the server answers the old session's reconnect with
  // "expired"; ZkSession then replaces its handle: a new session id on a new
  // generation. (A loss decided by the local timer alone would have resumed
  // the old session id instead.)
  ASSERT_TRUE(Eventually(milliseconds(30000), [&] {
    return session->IsConnected() && session->session_id() != old_id && session->session_id() != 0;
  }));
  EXPECT_GT(session->generation(), old_generation);
  auto gone = session->Exists(path);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_FALSE(gone->has_value());

  // kLost for the old session, then kConnecting on a newer generation: the
  // handle replacement only a server-reported expiry causes.
  bool lost = false, lost_by_timer = false, replaced = false;
  for (const auto& e : events.events()) {
    std::cout << "event: " << coord::ZkSessionStateName(e.previous) << " -> "
              << coord::ZkSessionStateName(e.state) << " session=" << e.session_id
              << " generation=" << e.generation << (e.by_local_timer ? " (local timer)" : "")
              << "\n";
    if (e.state == coord::ZkSessionState::kLost && e.session_id == old_id) {
      lost = true;
      lost_by_timer = e.by_local_timer;
    }
    if (lost && e.state == coord::ZkSessionState::kConnecting && e.generation > old_generation) {
      replaced = true;
    }
  }
  EXPECT_TRUE(lost);
  EXPECT_TRUE(replaced);
  std::cout << "server expired the session "
            << std::chrono::duration_cast<milliseconds>(server_expired_after).count()
            << " ms into the partition; partition lasted "
            << std::chrono::duration_cast<milliseconds>(partition_length).count()
            << " ms; kLost by local timer: " << lost_by_timer
            << "; reconnects refused while partitioned: " << refused << "\n";
  session->Close();
}

}  // namespace
}  // namespace tempest::net
