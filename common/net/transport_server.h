#ifndef TEMPEST_COMMON_NET_TRANSPORT_SERVER_H_
#define TEMPEST_COMMON_NET_TRANSPORT_SERVER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/core/metrics_registry.h"
#include "common/net/batch.h"
#include "common/net/connection_gate.h"
#include "common/net/event_loop.h"
#include "common/net/frame_codec.h"

namespace tempest::net {

class FrameAcceptor;

// The largest frame payload a worker accepts (and sends):
// `tempest.transport.max.frame.bytes` of the topology's config, 4096 to
// 2^30, default FrameCodec::kDefaultMaxPayloadBytes (64 MiB). It must exceed
// the largest serialized tuple. InvalidArgument outside that range.
inline constexpr std::string_view kMaxFrameBytesKey = "tempest.transport.max.frame.bytes";
absl::StatusOr<size_t> MaxFrameBytesOf(const api::Config& config);

// The connection limits of a worker's transport server from the topology's
// config: tempest.transport.max.connections (default 1024),
// tempest.transport.max.connections.per.peer (256) and
// tempest.transport.descriptor.reserve (32). InvalidArgument naming the key.
inline constexpr ConnectionLimitKeys kTransportLimitKeys = {
    "tempest.transport.max.connections", "tempest.transport.max.connections.per.peer",
    "tempest.transport.descriptor.reserve"};
absl::StatusOr<ConnectionLimits> TransportLimitsOf(const api::Config& config);

// Identifies one accepted connection of a TransportServer (unique per server).
using ConnectionId = uint64_t;

// Called on the event-loop thread with each decoded, authenticated frame of
// a connection, in arrival order. `messages` (and the bytes they point to)
// are only valid during the call: copy or deserialize them. Return true to
// keep reading; return false to pause this connection: no further frame of
// it is delivered and its socket is not read (so TCP's window closes and the
// sender's writes stall) until TransportServer::Resume(id) or ResumeAll().
// The frame passed to the call that returned false counts as delivered.
// Must not block.
using ReceiveCallback = std::function<bool(ConnectionId id, std::span<const Message> messages)>;

struct TransportServerOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0 = ephemeral; read the bound port with port()
  // Per-topology secret. Every connection must answer the server's hello
  // challenge with a MAC under this secret before any frame is delivered.
  std::string secret;
  // Also require a MAC on every data frame (clients set
  // TransportClientOptions::mac_every_frame). Costs ~0.6 ns/byte on each
  // side; see docs/adr/0002-openssl-for-frame-mac.md.
  bool require_frame_mac = false;
  // A frame header announcing a larger payload closes the connection before
  // anything is allocated for it (`tempest.transport.max.frame.bytes`).
  // With read_chunk_bytes it bounds what one connection buffers.
  size_t max_payload_bytes = FrameCodec::kDefaultMaxPayloadBytes;
  // A connection that has not completed the handshake this long after
  // accept is closed. Until then it owns a fixed 80-byte buffer (one hello
  // frame) and nothing else; a first frame announcing more is refused. A
  // real peer answers within a round trip.
  std::chrono::milliseconds handshake_timeout = std::chrono::seconds(5);
  // Per-address and total connection caps and the descriptor reserve
  // (ConnectionGate; `tempest.transport.*` keys, TransportLimitsOf). A
  // connection still in its handshake is the one closed to make room.
  ConnectionLimits limits;
  // The receive buffers of all TransportServers of the process together stay
  // under this; a connection that needs more waits (its socket unread, so TCP
  // pushes back on the sender) until others have given memory back.
  size_t process_buffer_limit_bytes = size_t{512} << 20;
  // Bytes asked from the kernel per read; many small frames arrive per read.
  size_t read_chunk_bytes = 256 << 10;
  // SO_RCVBUF for accepted sockets; 0 keeps the OS default. Tests shrink it
  // to reach back pressure quickly.
  int receive_buffer_bytes = 0;
  // Where metrics go; nullptr = MetricsRegistry::Global(). Must outlive the
  // server.
  core::MetricsRegistry* metrics = nullptr;
};

// Accepts transport connections on a loopback (or given) address,
// authenticates each with a challenge–response handshake, and decodes their
// frames (see FrameCodec for the layout and the handshake). Owns the listening socket
// and every accepted connection; all of them live on the EventLoop's thread,
// where `callback` runs. A connection that sends garbage, a frame with a
// wrong MAC or an oversized frame is closed with one logged error and a
// `tempest_net_connection_errors_total{reason=...}` increment (log lines are
// rate-limited, see core::RateLimitedLog); the server and its other connections
// keep running. Failed accepts (out of descriptors) back off (AcceptBackoff).
//
// Thread-safety: Create, Resume, ResumeAll, Stop, port and connection_count
// may be called from any thread. Destroying the server (or Stop) closes all
// connections and waits until the loop thread has done so; after that the
// callback is never called again. The EventLoop must outlive the server.
class TransportServer {
 public:
  static absl::StatusOr<std::unique_ptr<TransportServer>> Create(EventLoop& loop,
                                                                 TransportServerOptions options,
                                                                 ReceiveCallback callback);
  ~TransportServer();

  TransportServer(const TransportServer&) = delete;
  TransportServer& operator=(const TransportServer&) = delete;

  int port() const { return port_; }
  // Resumes reading a paused connection: frames already buffered are
  // delivered first, in order. No-op for unknown or unpaused connections.
  void Resume(ConnectionId id);
  void ResumeAll();
  // The start of a graceful stop (FrameCodec, "Goodbye"): closes the
  // listener, closes the connections still in their handshake, and sends a
  // goodbye frame on the others. Each client answers once it has written
  // its last frame, and the server closes that connection after delivering
  // everything before the answer (a paused connection answers when
  // resumed). So once connection_count() is 0 every frame the clients sent
  // has been delivered, and they hold what they send next for their next
  // connection (to this slot's next worker). Idempotent.
  void SayGoodbye();
  // Open connections right now.
  size_t connection_count() const;
  // Bytes of receive buffers held by every TransportServer of this process.
  static size_t process_buffered_bytes();
  // Closes the listener and every connection. Idempotent.
  void Stop();

 private:
  TransportServer(EventLoop& loop, std::shared_ptr<FrameAcceptor> acceptor, int port);

  EventLoop& loop_;
  std::shared_ptr<FrameAcceptor> acceptor_;
  int port_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_TRANSPORT_SERVER_H_
