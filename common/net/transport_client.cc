#include "common/net/transport_client.h"

#include <array>
#include <atomic>
#include <deque>
#include <chrono>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "boost/asio/connect.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/read.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/write.hpp"
#include "common/core/status_macros.h"
#include "common/net/backoff.h"
#include "common/net/frame_codec.h"
#include "common/net/frame_mac.h"
#include "spdlog/spdlog.h"

namespace tempest::net {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

struct ClientMetrics {
  explicit ClientMetrics(core::MetricsRegistry& r)
      : registry(r),
        bytes_sent(r.GetCounter("tempest_net_bytes_sent_total")),
        frames_sent(r.GetCounter("tempest_net_frames_sent_total")),
        messages_sent(r.GetCounter("tempest_net_messages_sent_total")),
        messages_dropped(r.GetCounter("tempest_net_messages_dropped_total")),
        reconnects(r.GetCounter("tempest_net_reconnects_total")),
        goodbyes(r.GetCounter("tempest_net_peer_goodbyes_total")),
        send_queue_full(r.GetCounter("tempest_net_send_queue_full_total")) {}

  core::Counter& Error(const std::string& reason) {
    return registry.GetCounter("tempest_net_connection_errors_total",
                               {{"side", "client"}, {"reason", reason}});
  }

  core::MetricsRegistry& registry;
  core::Counter& bytes_sent;
  core::Counter& frames_sent;
  core::Counter& messages_sent;
  core::Counter& messages_dropped;
  core::Counter& reconnects;
  core::Counter& goodbyes;
  core::Counter& send_queue_full;
};

uint64_t SeedOrRandom(uint64_t seed) {
  if (seed != 0) return seed;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

constexpr size_t kMaxSpares = 8;
// After a peer's goodbye, reconnect this often for this long (its slot's
// next worker takes a second or so to listen), then back off as usual.
constexpr std::chrono::milliseconds kRestartRetryInterval(50);
constexpr std::chrono::seconds kRestartRetryWindow(30);
constexpr size_t kMaxSpareBytes = 256 << 10;

// Socket, timers and write state live on the loop thread; the queue (and
// the counters guarded by mu_) is shared with sending threads.
class FrameWriterConnection : public std::enable_shared_from_this<FrameWriterConnection> {
 public:
  FrameWriterConnection(EventLoop& loop, TransportClientOptions options,
                        std::unique_ptr<FrameMac> mac)
      : loop_(loop),
        options_(std::move(options)),
        mac_(std::move(mac)),
        metrics_(options_.metrics != nullptr ? *options_.metrics : core::MetricsRegistry::Global()),
        socket_(loop.context()),
        resolver_(loop.context()),
        connect_timer_(loop.context()),
        reconnect_timer_(loop.context()),
        flush_timer_(loop.context()),
        backoff_(options_.reconnect_initial, options_.reconnect_max,
                 SeedOrRandom(options_.backoff_seed)),
        peer_(absl::StrCat(options_.host, ":", options_.port)) {}

  // ---- any thread ----

  absl::Status Send(Batch& batch, std::chrono::milliseconds timeout) {
    if (batch.empty()) return absl::OkStatus();
    const size_t size = batch.payload_size();
    if (size > options_.max_queued_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch of ", size, " bytes exceeds max_queued_bytes ", options_.max_queued_bytes));
    }
    bool kick = false;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return absl::FailedPreconditionError("transport client is closed");
      if (queued_bytes_ + size > options_.max_queued_bytes) {
        if (timeout.count() > 0) AwaitRoom(size, timeout);
        if (closed_) return absl::FailedPreconditionError("transport client is closed");
        if (queued_bytes_ + size > options_.max_queued_bytes) {
          metrics_.send_queue_full.Add();
          return absl::ResourceExhaustedError(
              absl::StrCat("send queue to ", peer_, " is full (", queued_bytes_, " bytes)"));
        }
      }
      const size_t before = pending_bytes_;
      queued_bytes_ += size;
      pending_bytes_ += size;
      queue_.push_back(std::move(batch));
      batch.Clear();
      // Give the sender a written batch's buffer back: a moved-from batch
      // starts with no capacity and regrew by doubling, a dozen
      // reallocations and copies per 64 KiB batch on the executor thread.
      if (!spare_.empty()) {
        batch = std::move(spare_.back());
        spare_.pop_back();
      }
      // Wake the loop only when it has something new to decide: arm the flush
      // timer (queue turned non-empty) or write now (threshold crossed).
      kick = !kick_posted_ && (before == 0 || (before < options_.min_write_bytes &&
                                               pending_bytes_ >= options_.min_write_bytes));
      if (kick) kick_posted_ = true;
    }
    if (kick) {
      auto self = shared_from_this();
      loop_.Post([self] { self->Kick(); });
    }
    return absl::OkStatus();
  }

  void Flush() {
    auto self = shared_from_this();
    loop_.Post([self] { self->MaybeWrite(/*force=*/true); });
  }

  void Close() {
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return;
      closed_ = true;
      queue_.clear();
      queued_bytes_ = pending_bytes_ = 0;
    }
    cv_.SignalAll();
    auto self = shared_from_this();
    loop_.RunSync([self] { self->CloseOnLoop(); });
  }

  bool connected() const { return connected_.load(std::memory_order_acquire); }
  int64_t connect_count() const { return connects_.load(std::memory_order_relaxed); }
  size_t queued_bytes() const {
    absl::MutexLock lock(&mu_);
    return queued_bytes_;
  }

  // ---- loop thread ----

  void Connect() {
    if (loop_closed_) return;
    const uint64_t gen = ++gen_;
    auto self = shared_from_this();
    resolver_.async_resolve(
        options_.host, std::to_string(options_.port),
        [self, gen](const boost::system::error_code& ec, tcp::resolver::results_type results) {
          if (gen != self->gen_ || self->loop_closed_) return;
          if (ec) {
            self->Failed("resolve", ec.message());
            return;
          }
          self->connect_timer_.expires_after(self->options_.connect_timeout);
          self->connect_timer_.async_wait([self, gen](const boost::system::error_code& tec) {
            if (tec || gen != self->gen_ || self->connected()) return;
            boost::system::error_code ignored;
            self->socket_.close(ignored);  // the connect handler reports the failure
          });
          asio::async_connect(self->socket_, results,
                              [self, gen](const boost::system::error_code& cec,
                                          const tcp::endpoint&) { self->OnConnect(gen, cec); });
        });
  }

 private:
  // Waits up to `timeout` until the queue has room for `size` more bytes or
  // the client is closed.
  void AwaitRoom(size_t size, std::chrono::milliseconds timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    ++waiters_;
    while (!closed_ && queued_bytes_ + size > options_.max_queued_bytes) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) break;
      cv_.WaitWithTimeout(&mu_, absl::FromChrono(left));
    }
    --waiters_;
  }

  void OnConnect(uint64_t gen, const boost::system::error_code& ec) {
    if (gen != gen_ || loop_closed_) return;
    if (ec) {
      connect_timer_.cancel();
      Failed(ec == asio::error::operation_aborted ? "connect_timeout" : "connect", ec.message());
      return;
    }
    boost::system::error_code opt_ec;
    // We coalesce ourselves; Nagle would only add latency to the flushes.
    socket_.set_option(tcp::no_delay(true), opt_ec);
    if (options_.send_buffer_bytes > 0) {
      socket_.set_option(asio::socket_base::send_buffer_size(options_.send_buffer_bytes), opt_ec);
    }
    // Handshake, still under the connect timer: read the server's challenge,
    // answer it with a MAC'd hello (frame 0 of this connection).
    hello_.assign(FrameCodec::kHeaderSize + FrameCodec::kNonceSize, '\0');
    auto self = shared_from_this();
    asio::async_read(
        socket_, asio::buffer(hello_),
        [self, gen](const boost::system::error_code& rec, size_t) { self->OnChallenge(gen, rec); });
  }

  void OnChallenge(uint64_t gen, const boost::system::error_code& ec) {
    if (gen != gen_ || loop_closed_) return;
    if (ec) {
      connect_timer_.cancel();
      Failed("handshake", absl::StrCat("no challenge from server: ", ec.message()));
      return;
    }
    std::vector<Message> unused;
    const auto challenge = FrameCodec::Decode(hello_, 0, *mac_, FrameCodec::kNonceSize, &unused);
    if (challenge.kind != FrameCodec::DecodeResult::Kind::kFrame ||
        (challenge.flags & FrameCodec::kFlagHello) == 0) {
      connect_timer_.cancel();
      Failed("handshake", "server sent no valid challenge (not a Tempest transport server?)");
      return;
    }
    std::string answer;
    FrameCodec::EncodeHello(challenge.payload, 0, mac_.get(), &answer);
    hello_ = std::move(answer);
    auto self = shared_from_this();
    asio::async_write(
        socket_, asio::buffer(hello_),
        [self, gen](const boost::system::error_code& wec, size_t) { self->OnHelloSent(gen, wec); });
  }

  void OnHelloSent(uint64_t gen, const boost::system::error_code& ec) {
    if (gen != gen_ || loop_closed_) return;
    connect_timer_.cancel();
    if (ec) {
      Failed("handshake", ec.message());
      return;
    }
    metrics_.bytes_sent.Add(static_cast<int64_t>(hello_.size()));
    seq_ = 1;  // frame 0 was the hello
    backoff_.Reset();
    if (connects_.fetch_add(1, std::memory_order_relaxed) > 0) metrics_.reconnects.Add();
    connected_.store(true, std::memory_order_release);
    logged_failure_ = false;
    spdlog::debug("transport: connected to {}", peer_);
    goodbye_received_ = answered_goodbye_ = false;
    WatchServer(gen);
    MaybeWrite(/*force=*/false);
  }

  // The server sends one thing after the challenge: a goodbye frame when its
  // worker stops gracefully (FrameCodec, "Goodbye"). Anything else, or a
  // closed socket, is a broken connection; noticing it here lets an idle
  // client reconnect early.
  void WatchServer(uint64_t gen) {
    auto self = shared_from_this();
    asio::async_read(socket_, asio::buffer(from_server_),
                     [self, gen](const boost::system::error_code& ec, size_t) {
                       if (gen != self->gen_ || self->loop_closed_) return;
                       if (ec == asio::error::eof) {
                         self->Failed("closed_by_peer", "server closed the connection");
                       } else if (ec) {
                         self->Failed("io_error", ec.message());
                       } else {
                         self->OnServerFrame(gen);
                       }
                     });
  }

  void OnServerFrame(uint64_t gen) {
    std::vector<Message> unused;
    const auto frame = FrameCodec::Decode(std::string_view(from_server_.data(), from_server_.size()),
                                          0, *mac_, 0, &unused);
    if (frame.kind != FrameCodec::DecodeResult::Kind::kFrame ||
        (frame.flags & FrameCodec::kFlagGoodbye) == 0 || goodbye_received_) {
      Failed("protocol", "server sent unexpected bytes");
      return;
    }
    goodbye_received_ = true;
    goodbye_at_ = std::chrono::steady_clock::now();
    spdlog::info("transport: {} is stopping gracefully; holding what is queued for it", peer_);
    if (!writing_) WriteGoodbyeAnswer(gen);  // else OnWrite answers after the frame
    WatchServer(gen);  // the server closes once it has read the answer
  }

  // Our last frame on this connection: the server has read everything we
  // wrote before it. The queue stays for the next connection.
  void WriteGoodbyeAnswer(uint64_t gen) {
    goodbye_answer_.clear();
    FrameCodec::EncodeGoodbye(seq_++, options_.mac_every_frame ? mac_.get() : nullptr,
                              &goodbye_answer_);
    writing_ = true;
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(goodbye_answer_),
                      [self, gen](const boost::system::error_code& ec, size_t n) {
                        if (gen != self->gen_ || self->loop_closed_) return;
                        if (ec) {
                          self->Failed("io_error", ec.message());
                          return;
                        }
                        self->metrics_.bytes_sent.Add(static_cast<int64_t>(n));
                        // writing_ stays set: nothing more goes on this
                        // connection; Failed() clears it when the server closes.
                        self->answered_goodbye_ = true;
                      });
  }

  void Failed(const char* reason, const std::string& detail) {
    if (loop_closed_) return;
    const bool after_goodbye = answered_goodbye_;
    answered_goodbye_ = goodbye_received_ = false;
    if (after_goodbye) {
      // The close that ends a goodbye: nothing was lost, nothing to warn
      // about. The peer's next worker is usually up within a second.
      writing_ = false;
      metrics_.goodbyes.Add();
    } else {
      metrics_.Error(reason).Add();
      // One log line per outage, not one per reconnect attempt.
      if (!logged_failure_) {
        spdlog::warn("transport: connection to {} failed: {} ({}); reconnecting", peer_, detail,
                     reason);
        logged_failure_ = true;
      }
    }
    ++gen_;  // handlers of the old socket become no-ops
    connected_.store(false, std::memory_order_release);
    boost::system::error_code ignored;
    socket_.close(ignored);
    connect_timer_.cancel();
    if (writing_) {
      writing_ = false;
      metrics_.messages_dropped.Add(in_flight_messages_);
      {
        absl::MutexLock lock(&mu_);
        queued_bytes_ -= std::min(queued_bytes_, in_flight_bytes_);
      }
      cv_.SignalAll();
      in_flight_bytes_ = 0;
      in_flight_messages_ = 0;
      taken_.clear();
    }
    // After a goodbye the peer's slot restarts within a second or so: retry
    // at a short, fixed pace for a while rather than backing off to seconds.
    const bool peer_restarting =
        std::chrono::steady_clock::now() - goodbye_at_ < kRestartRetryWindow;
    const auto delay = peer_restarting ? kRestartRetryInterval : backoff_.Next();
    auto self = shared_from_this();
    const uint64_t gen = gen_;
    reconnect_timer_.expires_after(delay);
    reconnect_timer_.async_wait([self, gen](const boost::system::error_code& ec) {
      if (ec || gen != self->gen_) return;
      self->Connect();
    });
  }

  void Kick() {
    {
      absl::MutexLock lock(&mu_);
      kick_posted_ = false;
    }
    MaybeWrite(/*force=*/false);
  }

  void MaybeWrite(bool force) {
    if (loop_closed_ || !connected() || writing_ || goodbye_received_) return;
    size_t pending;
    {
      absl::MutexLock lock(&mu_);
      pending = pending_bytes_;
    }
    if (pending == 0) return;
    if (force || pending >= options_.min_write_bytes) {
      StartWrite();
      return;
    }
    if (!flush_timer_armed_) {
      flush_timer_armed_ = true;
      auto self = shared_from_this();
      flush_timer_.expires_after(options_.flush_interval);
      flush_timer_.async_wait([self](const boost::system::error_code& ec) {
        self->flush_timer_armed_ = false;
        if (ec) return;
        self->MaybeWrite(/*force=*/true);
      });
    }
  }

  void StartWrite() {
    taken_.clear();
    size_t payload = 0;
    {
      absl::MutexLock lock(&mu_);
      while (!queue_.empty()) {
        const size_t size = queue_.front().payload_size();
        if (!taken_.empty() && payload + size > options_.max_frame_payload_bytes) break;
        payload += size;
        pending_bytes_ -= size;
        taken_.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (taken_.empty()) return;
    // One gather write of the header and the batches' own buffers: copying
    // them into one frame buffer cost a pass over every byte on this thread.
    pieces_.clear();
    uint32_t count = 0;
    for (const Batch& b : taken_) {
      pieces_.push_back(b.payload());
      count += b.message_count();
    }
    FrameCodec::EncodeHeader(header_.data(), pieces_, count, seq_++,
                             options_.mac_every_frame ? mac_.get() : nullptr);
    buffers_.clear();
    buffers_.push_back(asio::buffer(header_));
    for (const Batch& b : taken_) buffers_.push_back(asio::buffer(b.payload()));
    in_flight_bytes_ = payload;
    in_flight_messages_ = count;
    writing_ = true;
    auto self = shared_from_this();
    const uint64_t gen = gen_;
    asio::async_write(
        socket_, buffers_,
        [self, gen](const boost::system::error_code& ec, size_t n) { self->OnWrite(gen, ec, n); });
  }

  // The written batches' buffers become spares for Send (bounded: a few
  // batches' worth per connection, none of an unusually large batch).
  void RecycleTaken() {
    {
      absl::MutexLock lock(&mu_);
      for (Batch& b : taken_) {
        if (spare_.size() >= kMaxSpares || b.payload().capacity() > kMaxSpareBytes) break;
        b.Clear();
        spare_.push_back(std::move(b));
      }
    }
    taken_.clear();
  }

  void OnWrite(uint64_t gen, const boost::system::error_code& ec, size_t n) {
    if (gen != gen_ || loop_closed_) return;
    if (ec) {
      Failed("io_error", ec.message());
      return;
    }
    writing_ = false;
    RecycleTaken();
    metrics_.bytes_sent.Add(static_cast<int64_t>(n));
    metrics_.frames_sent.Add();
    metrics_.messages_sent.Add(in_flight_messages_);
    bool notify;
    {
      absl::MutexLock lock(&mu_);
      queued_bytes_ -= std::min(queued_bytes_, in_flight_bytes_);
      notify = waiters_ > 0;
    }
    if (notify) cv_.SignalAll();
    in_flight_bytes_ = 0;
    in_flight_messages_ = 0;
    if (goodbye_received_) {
      WriteGoodbyeAnswer(gen);
      return;
    }
    MaybeWrite(/*force=*/false);
  }

  void CloseOnLoop() {
    loop_closed_ = true;
    ++gen_;
    connected_.store(false, std::memory_order_release);
    boost::system::error_code ignored;
    resolver_.cancel();
    connect_timer_.cancel();
    reconnect_timer_.cancel();
    flush_timer_.cancel();
    socket_.close(ignored);
  }

  EventLoop& loop_;
  const TransportClientOptions options_;
  std::unique_ptr<FrameMac> mac_;
  ClientMetrics metrics_;

  // Loop thread only.
  tcp::socket socket_;
  tcp::resolver resolver_;
  asio::steady_timer connect_timer_;
  asio::steady_timer reconnect_timer_;
  asio::steady_timer flush_timer_;
  Backoff backoff_;
  const std::string peer_;
  uint64_t gen_ = 0;  // bumped per connection attempt and on failure
  uint64_t seq_ = 0;
  bool writing_ = false;
  bool flush_timer_armed_ = false;
  bool loop_closed_ = false;
  bool logged_failure_ = false;
  // The batches of the frame being written (their buffers are written in
  // place), its header and the gather list.
  std::vector<Batch> taken_;
  std::array<char, FrameCodec::kHeaderSize> header_{};
  std::vector<std::string_view> pieces_;
  std::vector<asio::const_buffer> buffers_;
  std::string hello_;  // the challenge being read, then our answer being written
  size_t in_flight_bytes_ = 0;
  int64_t in_flight_messages_ = 0;
  // Read from the server after the handshake: a goodbye frame's header.
  std::array<char, FrameCodec::kHeaderSize> from_server_{};
  bool goodbye_received_ = false;  // on this connection; no new frames start
  bool answered_goodbye_ = false;  // our answer is written; the close is expected
  std::string goodbye_answer_;
  std::chrono::steady_clock::time_point goodbye_at_{};  // the last goodbye

  // Any thread.
  std::atomic<bool> connected_{false};
  std::atomic<int64_t> connects_{0};

  // Shared with senders.
  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // signalled when queued bytes leave the queue or it closes
  std::deque<Batch> queue_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;   // queued + being written
  size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // queued, not yet taken by a write
  bool kick_posted_ ABSL_GUARDED_BY(mu_) = false;
  // Emptied batches with capacity, handed back to senders by Send.
  std::vector<Batch> spare_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int waiters_ ABSL_GUARDED_BY(mu_) = 0;
};

TransportClient::TransportClient(EventLoop& loop, std::shared_ptr<FrameWriterConnection> conn)
    : loop_(loop), conn_(std::move(conn)) {}

absl::StatusOr<std::unique_ptr<TransportClient>> TransportClient::Create(
    EventLoop& loop, TransportClientOptions options) {
  if (options.port <= 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad transport port ", options.port));
  }
  if (options.max_queued_bytes == 0 || options.max_frame_payload_bytes == 0) {
    return absl::InvalidArgumentError("queue and frame limits must be positive");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<FrameMac> mac, FrameMac::Create(options.secret));
  auto conn = std::make_shared<FrameWriterConnection>(loop, std::move(options), std::move(mac));
  loop.RunSync([conn] { conn->Connect(); });
  return std::unique_ptr<TransportClient>(new TransportClient(loop, std::move(conn)));
}

TransportClient::~TransportClient() { Close(); }

absl::Status TransportClient::Send(Batch& batch, std::chrono::milliseconds timeout) {
  return conn_->Send(batch, timeout);
}

void TransportClient::Flush() { conn_->Flush(); }
void TransportClient::Close() { conn_->Close(); }
bool TransportClient::connected() const { return conn_->connected(); }
int64_t TransportClient::connect_count() const { return conn_->connect_count(); }
size_t TransportClient::queued_bytes() const { return conn_->queued_bytes(); }

}  // namespace tempest::net
