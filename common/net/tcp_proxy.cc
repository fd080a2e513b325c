#include "common/net/tcp_proxy.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/connect.hpp"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/write.hpp"
#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"

namespace tempest::net {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

// Closes a socket without caring how the peer left it: a relay must never
// fail because of what the peer did.
void CloseQuietly(tcp::socket& socket) {
  error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

// Latency of small messages (ZooKeeper pings, Kafka requests) through the
// proxy should match a direct connection, so Nagle stays off on both legs.
void NoDelay(tcp::socket& socket) {
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
}

class Relay;

}  // namespace

// The listener, the partition flag and the table of live relays. Everything
// except the atomics is touched on the io thread only.
class ProxyCore {
 public:
  ProxyCore(asio::io_context& io, tcp::resolver::results_type target, std::string target_name)
      : work_(io.get_executor()),
        acceptor_(io),
        retry_timer_(io),
        target_(std::move(target)),
        target_name_(std::move(target_name)) {}

  absl::StatusOr<int> Listen();
  void Accept();
  void ApplyPartition(bool partitioned);
  // Closes the listener and every relay and releases the work guard, so the
  // io thread's run() returns once the aborted handlers have run.
  void Shutdown();
  void Remove(uint64_t id) { relays_.erase(id); }

  const std::string& name() const { return name_; }

  std::atomic<bool> partitioned{false};
  std::atomic<int64_t> accepted{0};

 private:
  void OnAccept(const error_code& ec, tcp::socket socket);
  // Closes every relay; returns how many were open.
  size_t CloseAll();

  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  const tcp::resolver::results_type target_;
  const std::string target_name_;
  std::string name_;  // "127.0.0.1:PORT -> target", for logs
  std::map<uint64_t, std::shared_ptr<Relay>> relays_;
  uint64_t next_id_ = 1;
  bool stopped_ = false;
};

namespace {

// One accepted client and its upstream connection. Each direction owns one
// buffer and alternates read → write-all → read, so at most kBufferBytes per
// direction are in the proxy and a stalled reader stalls its writer through
// TCP flow control. Lives on the io thread; pending handlers keep it alive.
class Relay : public std::enable_shared_from_this<Relay> {
 public:
  Relay(uint64_t id, tcp::socket client, ProxyCore& owner)
      : id_(id),
        client_(std::move(client)),
        upstream_(client_.get_executor()),
        owner_(owner),
        to_upstream_{&client_, &upstream_, std::make_unique<char[]>(TcpProxy::kBufferBytes)},
        to_client_{&upstream_, &client_, std::make_unique<char[]>(TcpProxy::kBufferBytes)} {}

  void Start(const tcp::resolver::results_type& target) {
    auto self = shared_from_this();
    asio::async_connect(upstream_, target, [self](const error_code& ec, const tcp::endpoint&) {
      if (self->closed_) return;
      if (ec) {
        // Whatever the target's problem, the client learns it the same way
        // a direct connection would show a dead server: the socket closes.
        spdlog::debug("tcp proxy {}: connection {}: upstream connect failed: {}",
                      self->owner_.name(), self->id_, ec.message());
        self->Finish();
        return;
      }
      NoDelay(self->upstream_);
      self->Read(self->to_upstream_);
      self->Read(self->to_client_);
    });
  }

  // Closes both sockets; pending handlers then see closed_ and do nothing.
  // Does not touch the owner's table (the caller may be iterating it).
  void Close() {
    if (closed_) return;
    closed_ = true;
    CloseQuietly(client_);
    CloseQuietly(upstream_);
  }

 private:
  struct Direction {
    tcp::socket* from;
    tcp::socket* to;
    std::unique_ptr<char[]> buffer;
  };

  void Read(Direction& d) {
    auto self = shared_from_this();
    d.from->async_read_some(asio::buffer(d.buffer.get(), TcpProxy::kBufferBytes),
                            [self, &d](const error_code& ec, size_t n) {
                              if (self->closed_) return;
                              if (ec) {
                                self->Finish();
                                return;
                              }
                              self->Write(d, n);
                            });
  }

  void Write(Direction& d, size_t n) {
    auto self = shared_from_this();
    asio::async_write(*d.to, asio::buffer(d.buffer.get(), n),
                      [self, &d](const error_code& ec, size_t) {
                        if (self->closed_) return;
                        if (ec) {
                          self->Finish();
                          return;
                        }
                        self->Read(d);
                      });
  }

  // EOF, reset or any error on either side ends the relay: both sides close
  // (no half-close; the protocols we proxy do not use it).
  void Finish() {
    Close();
    owner_.Remove(id_);  // drops the table's reference; the caller's `self` keeps us alive
  }

  const uint64_t id_;
  tcp::socket client_;
  tcp::socket upstream_;
  ProxyCore& owner_;
  Direction to_upstream_;
  Direction to_client_;
  bool closed_ = false;
};

}  // namespace

absl::StatusOr<int> ProxyCore::Listen() {
  const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), 0);
  error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return absl::InternalError(absl::StrCat("tcp proxy: cannot listen: ", ec.message()));
  const auto local = acceptor_.local_endpoint(ec);
  if (ec) return absl::InternalError(absl::StrCat("tcp proxy: local_endpoint: ", ec.message()));
  name_ = absl::StrCat("127.0.0.1:", local.port(), " -> ", target_name_);
  return static_cast<int>(local.port());
}

void ProxyCore::Accept() {
  if (stopped_) return;
  acceptor_.async_accept(
      [this](const error_code& ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void ProxyCore::OnAccept(const error_code& ec, tcp::socket socket) {
  if (stopped_) return;  // `socket`, if any, closes on destruction
  if (ec) {
    if (ec == asio::error::operation_aborted) return;
    // Typically EMFILE. Retrying at once would spin while the condition
    // lasts, so wait a little.
    spdlog::warn("tcp proxy {}: accept failed: {}; retrying", name_, ec.message());
    retry_timer_.expires_after(std::chrono::milliseconds(100));
    retry_timer_.async_wait([this](const error_code& timer_ec) {
      if (!timer_ec) Accept();
    });
    return;
  }
  accepted.fetch_add(1, std::memory_order_relaxed);
  if (partitioned.load(std::memory_order_relaxed)) {
    // Accepting and closing (rather than not listening) makes the client see
    // the same thing on every attempt: a connection that dies at once, with
    // nothing reaching the target.
    CloseQuietly(socket);
  } else {
    NoDelay(socket);
    const uint64_t id = next_id_++;
    auto relay = std::make_shared<Relay>(id, std::move(socket), *this);
    relays_.emplace(id, relay);
    relay->Start(target_);
  }
  Accept();
}

size_t ProxyCore::CloseAll() {
  // Swap first: Close() does not call Remove(), but a later handler of a
  // closed relay may, and must find nothing to erase.
  std::map<uint64_t, std::shared_ptr<Relay>> relays;
  relays.swap(relays_);
  for (auto& [id, relay] : relays) relay->Close();
  return relays.size();
}

void ProxyCore::ApplyPartition(bool partitioned_now) {
  if (stopped_) return;
  const bool was = partitioned.exchange(partitioned_now, std::memory_order_relaxed);
  if (partitioned_now) {
    const size_t closed = CloseAll();
    spdlog::info("tcp proxy {}: partitioned ({} relayed connections closed)", name_, closed);
  } else if (was) {
    spdlog::info("tcp proxy {}: healed", name_);
  }
}

void ProxyCore::Shutdown() {
  if (stopped_) return;
  stopped_ = true;
  error_code ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
  CloseAll();
  work_.reset();
}

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(std::string target_host,
                                                          int target_port) {
  if (target_port <= 0 || target_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("tcp proxy: bad target port ", target_port));
  }
  std::unique_ptr<TcpProxy> proxy(new TcpProxy());
  proxy->io_ = std::make_unique<asio::io_context>(1);
  // Resolved once: a proxy for a fault-injection run should not depend on a
  // resolver during the run.
  tcp::resolver resolver(*proxy->io_);
  error_code ec;
  auto target = resolver.resolve(target_host, std::to_string(target_port),
                                 tcp::resolver::numeric_service, ec);
  if (ec || target.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("tcp proxy: cannot resolve ", target_host, ": ",
                                                   ec ? ec.message() : "no address"));
  }
  proxy->core_ = std::make_unique<ProxyCore>(*proxy->io_, std::move(target),
                                             absl::StrCat(target_host, ":", target_port));
  ASSIGN_OR_RETURN(proxy->port_, proxy->core_->Listen());
  proxy->core_->Accept();

  asio::io_context* io = proxy->io_.get();
  proxy->thread_ = std::thread([io] {
    pthread_setname_np(pthread_self(), "tcp-proxy");
    // Handlers use error codes and throw nothing a peer can cause; should
    // one throw anyway (e.g. bad_alloc), log it and keep serving rather than
    // take the process under test down with the proxy.
    for (;;) {
      try {
        io->run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("tcp proxy: handler threw: {}", e.what());
      } catch (...) {
        spdlog::error("tcp proxy: handler threw a non-exception");
      }
    }
  });
  spdlog::debug("tcp proxy {}: listening", proxy->core_->name());
  return proxy;
}

TcpProxy::~TcpProxy() {
  if (!thread_.joinable()) return;  // Start failed before the thread existed
  ProxyCore* core = core_.get();
  asio::post(*io_, [core] { core->Shutdown(); });
  thread_.join();
}

std::string TcpProxy::address() const { return absl::StrCat("127.0.0.1:", port_); }

void TcpProxy::SetPartitioned(bool partitioned) {
  ProxyCore* core = core_.get();
  auto done = std::make_shared<std::promise<void>>();
  auto applied = done->get_future();
  asio::post(*io_, [core, partitioned, done] {
    core->ApplyPartition(partitioned);
    done->set_value();
  });
  // The io thread runs until the destructor, so this returns promptly.
  applied.wait();
}

bool TcpProxy::partitioned() const { return core_->partitioned.load(std::memory_order_relaxed); }

int64_t TcpProxy::connections_accepted() const {
  return core_->accepted.load(std::memory_order_relaxed);
}

}  // namespace tempest::net
