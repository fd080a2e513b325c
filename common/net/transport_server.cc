#include "common/net/transport_server.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/write.hpp"
#include "common/core/rate_limited_log.h"
#include "common/core/status_macros.h"
#include "common/net/acceptor.h"
#include "spdlog/spdlog.h"

namespace tempest::net {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Before the handshake a connection reads exactly one hello frame.
constexpr size_t kHandshakeFrameBytes = FrameCodec::kHeaderSize + FrameCodec::kNonceSize;
// How long a connection waits before asking again for receive memory the
// process has run out of.
constexpr std::chrono::milliseconds kMemoryRetry(10);

// Receive-buffer bytes of every TransportServer of the process.
std::atomic<size_t> g_buffered_bytes{0};

// Metric handles resolved once per server; updates are lock-free.
struct ServerMetrics {
  explicit ServerMetrics(core::MetricsRegistry& r)
      : registry(r),
        bytes_received(r.GetCounter("tempest_net_bytes_received_total")),
        frames_received(r.GetCounter("tempest_net_frames_received_total")),
        messages_received(r.GetCounter("tempest_net_messages_received_total")),
        connections_accepted(r.GetCounter("tempest_net_connections_accepted_total")),
        receive_pauses(r.GetCounter("tempest_net_receive_pauses_total")),
        memory_waits(r.GetCounter("tempest_net_receive_memory_waits_total")),
        open_connections(r.GetGauge("tempest_net_server_connections")) {}

  core::Counter& Error(const std::string& reason) {
    return registry.GetCounter("tempest_net_connection_errors_total",
                               {{"side", "server"}, {"reason", reason}});
  }

  core::MetricsRegistry& registry;
  core::Counter& bytes_received;
  core::Counter& frames_received;
  core::Counter& messages_received;
  core::Counter& connections_accepted;
  core::Counter& receive_pauses;
  core::Counter& memory_waits;
  core::Gauge& open_connections;
};

}  // namespace

absl::StatusOr<size_t> MaxFrameBytesOf(const api::Config& config) {
  constexpr int64_t kMin = 4096;
  constexpr int64_t kMax = int64_t{1} << 30;
  const int64_t v = config.GetInt(kMaxFrameBytesKey,
                                  static_cast<int64_t>(FrameCodec::kDefaultMaxPayloadBytes));
  if (v < kMin || v > kMax) {
    return absl::InvalidArgumentError(absl::StrCat("config ", std::string(kMaxFrameBytesKey),
                                                   " must be an integer from ", kMin, " to ",
                                                   kMax, ", got ", v));
  }
  return static_cast<size_t>(v);
}

absl::StatusOr<ConnectionLimits> TransportLimitsOf(const api::Config& config) {
  return ConnectionLimitsOf(config, kTransportLimitKeys, ConnectionLimits{});
}

class FrameReaderConnection;

// The listener plus the table of live connections. Lives on the loop thread;
// only `port` and `open_count` are read elsewhere.
class FrameAcceptor : public std::enable_shared_from_this<FrameAcceptor> {
 public:
  FrameAcceptor(asio::io_context& io, TransportServerOptions options, ReceiveCallback callback)
      : options_(std::move(options)),
        callback_(std::move(callback)),
        metrics_(options_.metrics != nullptr ? *options_.metrics
                                             : core::MetricsRegistry::Global()),
        acceptor_(io, "transport", metrics_.registry, options_.limits) {}

  absl::StatusOr<int> Listen();
  void Accept();
  void Resume(ConnectionId id);
  void ResumeAll();
  void Stop();
  void SayGoodbye();
  void Remove(ConnectionId id);

  const TransportServerOptions& options() const { return options_; }
  ServerMetrics& metrics() { return metrics_; }
  ReceiveCallback& callback() { return callback_; }
  // One line per closed connection, at most a few per 10 s: a peer decides
  // how often its frames are malformed.
  core::RateLimitedLog& fail_log() { return fail_log_; }
  // A connection that answered the handshake is never closed for others.
  void Authenticated(ConnectionId id) { acceptor_.gate().SetIdle(id, false); }
  std::atomic<size_t> open_count{0};

 private:
  void OnAccepted(tcp::socket socket, const std::string& peer);

  TransportServerOptions options_;
  ReceiveCallback callback_;
  ServerMetrics metrics_;
  Acceptor acceptor_;
  core::RateLimitedLog fail_log_{5, std::chrono::seconds(10)};
  std::map<ConnectionId, std::shared_ptr<FrameReaderConnection>> connections_;
  ConnectionId next_id_ = 1;
  bool stopped_ = false;
};

// One accepted socket: reads into a buffer (80 bytes until the handshake is
// done, then growable up to one frame plus a read chunk, within the process
// budget), decodes frames in place and hands them to the callback. Lives on
// the loop thread.
class FrameReaderConnection : public std::enable_shared_from_this<FrameReaderConnection> {
 public:
  FrameReaderConnection(ConnectionId id, tcp::socket socket, std::unique_ptr<FrameMac> mac,
                        std::shared_ptr<FrameAcceptor> owner)
      : id_(id),
        socket_(std::move(socket)),
        mac_(std::move(mac)),
        owner_(std::move(owner)),
        options_(owner_->options()),
        metrics_(owner_->metrics()),
        callback_(owner_->callback()),
        timer_(socket_.get_executor()) {
    boost::system::error_code ec;
    const auto remote = socket_.remote_endpoint(ec);
    peer_ = ec ? std::string("?") : absl::StrCat(remote.address().to_string(), ":", remote.port());
  }

  void Start() {
    // The challenge: a fresh nonce the client must MAC with the secret. The
    // read loop starts at once; a write failure surfaces there as well.
    FrameCodec::EncodeHello(FrameMac::RandomBytes(FrameCodec::kNonceSize), 0, nullptr, &challenge_);
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(challenge_),
                      [self](const boost::system::error_code&, size_t) {});
    timer_.expires_after(options_.handshake_timeout);
    timer_.async_wait([self](const boost::system::error_code& ec) {
      if (ec || self->authenticated_) return;
      self->Fail("handshake_timeout", "no handshake within the deadline");
    });
    ReadMore();
  }

  void Resume() {
    if (!paused_ || closed_) return;
    paused_ = false;
    ProcessBuffer();
  }

  // Graceful stop: a connection still in its handshake is closed, an
  // authenticated one gets a goodbye frame and closes when the answer is
  // read (Deliver).
  void SayGoodbye() {
    if (closed_ || goodbye_sent_) return;
    if (!authenticated_) {
      CloseAndForget();
      return;
    }
    goodbye_sent_ = true;
    FrameCodec::EncodeGoodbye(0, nullptr, &goodbye_);
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(goodbye_),
                      [self](const boost::system::error_code&, size_t) {});
  }

  // Closes a connection still in its handshake to make room for a new one.
  void Evict(const char* reason) {
    if (closed_) return;
    metrics_.Error(reason).Add();
    CloseAndForget();
  }

  // Closes without logging (server shutdown).
  void Close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    SetCapacity(0);
  }

  ~FrameReaderConnection() { SetCapacity(0); }

 private:
  void Fail(const char* reason, const std::string& detail) {
    if (closed_) return;
    uint64_t withheld = 0;
    if (owner_->fail_log().Allow(&withheld)) {
      spdlog::error("transport: closing connection {} from {}: {} ({}; {} similar lines withheld)",
                    id_, peer_, detail, reason, withheld);
    }
    metrics_.Error(reason).Add();
    CloseAndForget();
  }

  // Resizes the receive buffer, keeping the process-wide count; false (and
  // nothing changed) if growing would pass the process budget (unless
  // `force`: the 80 bytes of a handshake are always granted).
  bool SetCapacity(size_t bytes, bool force = false) {
    const size_t old = buffer_.size();
    if (bytes > old) {
      const size_t grow = bytes - old;
      size_t cur = g_buffered_bytes.load(std::memory_order_relaxed);
      do {
        if (!force && cur > 0 && cur + grow > options_.process_buffer_limit_bytes) return false;
      } while (!g_buffered_bytes.compare_exchange_weak(cur, cur + grow, std::memory_order_relaxed));
      buffer_.resize(bytes);
    } else if (bytes < old) {
      if (bytes == 0) {
        std::vector<char>().swap(buffer_);
      } else {
        buffer_.resize(bytes);
      }
      g_buffered_bytes.fetch_sub(old - bytes, std::memory_order_relaxed);
    }
    return true;
  }

  // Waits for receive memory: the socket is not read meanwhile.
  void WaitForMemory() {
    metrics_.memory_waits.Add();
    waiting_for_memory_ = true;
    timer_.expires_after(kMemoryRetry);
    auto self = shared_from_this();
    timer_.async_wait([self](const boost::system::error_code& ec) {
      self->waiting_for_memory_ = false;
      if (!ec && !self->closed_) self->ReadMore();
    });
  }

  void CloseAndForget() {
    Close();
    owner_->Remove(id_);
  }

  void ReadMore() {
    if (paused_ || closed_ || reading_ || waiting_for_memory_) return;
    if (!authenticated_) {
      // Exactly the hello frame; the buffer is allocated once and small.
      if (buffer_.empty()) SetCapacity(kHandshakeFrameBytes, /*force=*/true);
      StartRead(kHandshakeFrameBytes - end_);
      return;
    }
    // Make room: the whole pending frame (once its size is known) must fit,
    // so a large frame is moved to the front at most once.
    const size_t want = std::max(options_.read_chunk_bytes, needed_);
    if (begin_ > 0 && buffer_.size() - end_ < want) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buffer_.size() - end_ < options_.read_chunk_bytes || buffer_.size() < needed_) {
      if (!SetCapacity(std::max(end_ + options_.read_chunk_bytes, needed_))) {
        return WaitForMemory();
      }
    }
    StartRead(buffer_.size() - end_);
  }

  void StartRead(size_t max_bytes) {
    reading_ = true;
    auto self = shared_from_this();
    socket_.async_read_some(
        asio::buffer(buffer_.data() + end_, max_bytes),
        [self](const boost::system::error_code& ec, size_t n) { self->OnRead(ec, n); });
  }

  void OnRead(const boost::system::error_code& ec, size_t n) {
    reading_ = false;
    if (closed_) return;
    if (ec) {
      if (ec == asio::error::eof || ec == asio::error::connection_reset) {
        if (end_ > begin_) {
          Fail("truncated",
               absl::StrCat("peer closed inside a frame (", end_ - begin_, " bytes pending)"));
        } else {
          spdlog::debug("transport: connection {} from {} closed by peer", id_, peer_);
          CloseAndForget();
        }
      } else if (ec != asio::error::operation_aborted) {
        Fail("io_error", ec.message());
      }
      return;
    }
    metrics_.bytes_received.Add(static_cast<int64_t>(n));
    end_ += n;
    ProcessBuffer();
  }

  void ProcessBuffer() {
    auto self = shared_from_this();  // the callback may not drop us, but Fail() may
    while (!paused_ && !closed_) {
      const auto result =
          FrameCodec::Decode(std::string_view(buffer_.data() + begin_, end_ - begin_), seq_, *mac_,
                             options_.max_payload_bytes, &messages_);
      if (result.kind == FrameCodec::DecodeResult::Kind::kNeedMore) {
        needed_ = result.frame_size;
        if (!authenticated_ && needed_ > kHandshakeFrameBytes) {
          Fail("unauthenticated",
               absl::StrCat("first frame announces ", needed_, " bytes before the handshake"));
          return;
        }
        break;
      }
      if (result.kind == FrameCodec::DecodeResult::Kind::kError) {
        Fail(result.reason, std::string(result.error.message()));
        return;
      }
      ++seq_;
      needed_ = 0;
      begin_ += result.frame_size;
      if (!(authenticated_ ? Deliver(result) : Authenticate(result))) return;
    }
    if (begin_ == end_) RewindBuffer();
    ReadMore();
  }

  // The first frame must answer this connection's challenge: a hello frame
  // with a valid MAC carrying our nonce. False once the connection failed.
  bool Authenticate(const FrameCodec::DecodeResult& frame) {
    const bool hello = (frame.flags & FrameCodec::kFlagHello) != 0;
    const bool maced = (frame.flags & FrameCodec::kFlagMac) != 0;
    if (!hello || !maced ||
        frame.payload != std::string_view(challenge_).substr(FrameCodec::kHeaderSize)) {
      Fail("unauthenticated", "first frame does not answer this connection's challenge");
      return false;
    }
    authenticated_ = true;
    timer_.cancel();
    owner_->Authenticated(id_);
    return true;
  }

  // A data frame after the handshake: its messages (decoded into
  // messages_) go to the callback, which may pause the connection. False
  // once the connection failed.
  bool Deliver(const FrameCodec::DecodeResult& frame) {
    if ((frame.flags & FrameCodec::kFlagHello) != 0) {
      Fail("protocol", "unexpected hello frame after the handshake");
      return false;
    }
    if (options_.require_frame_mac && (frame.flags & FrameCodec::kFlagMac) == 0) {
      Fail("unauthenticated", "frame without MAC, but this server requires one on every frame");
      return false;
    }
    if ((frame.flags & FrameCodec::kFlagGoodbye) != 0) {
      if (!goodbye_sent_) {
        Fail("protocol", "goodbye answer, but this server said no goodbye");
        return false;
      }
      // The client's last frame: everything before it has been delivered.
      spdlog::debug("transport: connection {} from {} answered the goodbye", id_, peer_);
      CloseAndForget();
      return false;
    }
    metrics_.frames_received.Add();
    metrics_.messages_received.Add(static_cast<int64_t>(messages_.size()));
    if (!callback_(id_, std::span<const Message>(messages_))) {
      paused_ = true;
      metrics_.receive_pauses.Add();
    }
    return true;
  }

  // Everything received is decoded: the next frame starts at the front.
  void RewindBuffer() {
    begin_ = end_ = 0;
    // Give back the handshake buffer, and the memory of an unusually
    // large frame.
    if (buffer_.size() < options_.read_chunk_bytes ||
        buffer_.size() > 4 * options_.read_chunk_bytes) {
      SetCapacity(0);
    }
  }

  const ConnectionId id_;
  tcp::socket socket_;
  std::unique_ptr<FrameMac> mac_;
  // Shared, not weak: the acceptor's options, metrics and callback must stay
  // alive while any handler of this connection is pending. The cycle through
  // the acceptor's table is broken by Remove() / Stop().
  std::shared_ptr<FrameAcceptor> owner_;
  const TransportServerOptions& options_;
  ServerMetrics& metrics_;
  ReceiveCallback& callback_;
  std::string peer_;
  // The handshake deadline, then the wait for receive memory.
  asio::steady_timer timer_;

  std::vector<char> buffer_;
  size_t begin_ = 0;   // first undecoded byte
  size_t end_ = 0;     // one past the last received byte
  size_t needed_ = 0;  // size of the frame being received, once known
  uint64_t seq_ = 0;
  std::vector<Message> messages_;
  std::string challenge_;  // the hello frame we sent; its payload is the nonce
  std::string goodbye_;    // the goodbye frame we sent (kept alive while written)
  bool goodbye_sent_ = false;
  bool authenticated_ = false;
  bool paused_ = false;
  bool reading_ = false;
  bool waiting_for_memory_ = false;
  bool closed_ = false;
};

absl::StatusOr<int> FrameAcceptor::Listen() {
  return acceptor_.Listen(options_.bind_address, options_.port, options_.receive_buffer_bytes);
}

void FrameAcceptor::Accept() {
  auto self = shared_from_this();
  acceptor_.Accept(
      [self](tcp::socket socket, const std::string& peer) {
        self->OnAccepted(std::move(socket), peer);
      },
      [self] { self->metrics_.Error("accept").Add(); });
}

void FrameAcceptor::OnAccepted(tcp::socket socket, const std::string& peer) {
  ConnectionGate& gate = acceptor_.gate();
  const ConnectionGate::Verdict verdict = gate.Admit(peer);
  for (ConnectionId victim : verdict.evict) {
    auto it = connections_.find(victim);
    if (it == connections_.end()) continue;
    gate.Report(peer, verdict.reason, /*refused=*/false);
    auto conn = it->second;  // Evict erases it from the table
    conn->Evict(verdict.reason);
  }
  if (!verdict.admit) {
    gate.Report(peer, verdict.reason, /*refused=*/true);
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  auto mac = FrameMac::Create(options_.secret);
  if (!mac.ok()) {  // cannot happen: the secret was checked in Create
    spdlog::critical("transport: {}", mac.status().ToString());
    std::abort();
  }
  const ConnectionId id = next_id_++;
  auto conn = std::make_shared<FrameReaderConnection>(id, std::move(socket), *std::move(mac),
                                                      shared_from_this());
  connections_.emplace(id, conn);
  gate.Add(id, peer, /*idle=*/true);
  open_count.store(connections_.size(), std::memory_order_relaxed);
  metrics_.connections_accepted.Add();
  metrics_.open_connections.Add(1);
  conn->Start();
}

void FrameAcceptor::Resume(ConnectionId id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  auto conn = it->second;
  conn->Resume();
}

void FrameAcceptor::ResumeAll() {
  // Resume may close a connection (bad buffered frame) and erase it.
  std::vector<std::shared_ptr<FrameReaderConnection>> all;
  all.reserve(connections_.size());
  for (auto& [id, conn] : connections_) all.push_back(conn);
  for (auto& conn : all) conn->Resume();
}

void FrameAcceptor::Remove(ConnectionId id) {
  acceptor_.gate().Remove(id);
  if (connections_.erase(id) > 0) {
    metrics_.open_connections.Add(-1);
    open_count.store(connections_.size(), std::memory_order_relaxed);
  }
}

void FrameAcceptor::SayGoodbye() {
  if (stopped_) return;
  acceptor_.Stop();
  // SayGoodbye may close a connection (still in its handshake) and erase it.
  std::vector<std::shared_ptr<FrameReaderConnection>> all;
  all.reserve(connections_.size());
  for (auto& [id, conn] : connections_) all.push_back(conn);
  for (auto& conn : all) conn->SayGoodbye();
}

void FrameAcceptor::Stop() {
  if (stopped_) return;
  stopped_ = true;
  acceptor_.Stop();
  for (auto& [id, conn] : connections_) conn->Close();
  metrics_.open_connections.Add(-static_cast<int64_t>(connections_.size()));
  connections_.clear();
  open_count.store(0, std::memory_order_relaxed);
}

TransportServer::TransportServer(EventLoop& loop, std::shared_ptr<FrameAcceptor> acceptor, int port)
    : loop_(loop), acceptor_(std::move(acceptor)), port_(port) {}

absl::StatusOr<std::unique_ptr<TransportServer>> TransportServer::Create(
    EventLoop& loop, TransportServerOptions options, ReceiveCallback callback) {
  if (!callback) return absl::InvalidArgumentError("TransportServer needs a receive callback");
  if (options.read_chunk_bytes < FrameCodec::kHeaderSize) {
    return absl::InvalidArgumentError("read_chunk_bytes is smaller than a frame header");
  }
  // Checked once here; each connection makes its own MAC context.
  RETURN_IF_ERROR(FrameMac::Create(options.secret));
  auto acceptor =
      std::make_shared<FrameAcceptor>(loop.context(), std::move(options), std::move(callback));
  absl::StatusOr<int> port = absl::InternalError("not run");
  loop.RunSync([&] {
    port = acceptor->Listen();
    if (port.ok()) acceptor->Accept();
  });
  RETURN_IF_ERROR(port);
  return std::unique_ptr<TransportServer>(new TransportServer(loop, std::move(acceptor), *port));
}

TransportServer::~TransportServer() { Stop(); }

void TransportServer::Resume(ConnectionId id) {
  std::weak_ptr<FrameAcceptor> weak = acceptor_;
  loop_.Post([weak, id] {
    if (auto a = weak.lock()) a->Resume(id);
  });
}

void TransportServer::ResumeAll() {
  std::weak_ptr<FrameAcceptor> weak = acceptor_;
  loop_.Post([weak] {
    if (auto a = weak.lock()) a->ResumeAll();
  });
}

size_t TransportServer::process_buffered_bytes() {
  return g_buffered_bytes.load(std::memory_order_relaxed);
}

size_t TransportServer::connection_count() const {
  return acceptor_->open_count.load(std::memory_order_relaxed);
}

void TransportServer::SayGoodbye() {
  auto acceptor = acceptor_;
  loop_.RunSync([acceptor] { acceptor->SayGoodbye(); });
}

void TransportServer::Stop() {
  auto acceptor = acceptor_;
  loop_.RunSync([acceptor] { acceptor->Stop(); });
}

}  // namespace tempest::net
