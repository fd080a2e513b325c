// Real loopback TCP between TransportClient and TransportServer on one
// EventLoop (plus raw sockets for hostile peers).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/core/metrics_registry.h"
#include "common/net/batch.h"
#include "common/net/event_loop.h"
#include "common/net/frame_codec.h"
#include "common/net/frame_mac.h"
#include "common/net/transport_client.h"
#include "common/net/transport_server.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"

namespace tempest::net {
namespace {

using std::chrono::milliseconds;
using tempest::testing::Eventually;

constexpr char kSecret[] = "per-topology-secret-0123456789";
constexpr milliseconds kDeadline(20000);

// Everything the server delivered, recorded on the loop thread.
class Sink {
 public:
  bool OnBatch(ConnectionId id, std::span<const Message> messages) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Message& m : messages) {
      received_.push_back({m.task_id, std::string(m.bytes)});
      connections_.push_back(id);
    }
    ++frames_;
    return !paused_;
  }
  void SetPaused(bool paused) {
    std::lock_guard<std::mutex> lock(mu_);
    paused_ = paused;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return received_.size();
  }
  int frames() const {
    std::lock_guard<std::mutex> lock(mu_);
    return frames_;
  }
  std::vector<std::pair<int32_t, std::string>> received() const {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<int32_t, std::string>> received_;
  std::vector<ConnectionId> connections_;
  int frames_ = 0;
  bool paused_ = false;
};

std::string Payload(int64_t seq, size_t size = 100) {
  std::string s = std::to_string(seq);
  s.resize(size, '.');
  return s;
}

// Checks that received messages are exactly 0..n-1 in order, task = seq % 7.
void ExpectInOrder(const std::vector<std::pair<int32_t, std::string>>& received, int64_t n,
                   size_t size = 100) {
  ASSERT_EQ(static_cast<int64_t>(received.size()), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(received[i].first, static_cast<int32_t>(i % 7)) << "message " << i;
    ASSERT_EQ(received[i].second, Payload(i, size)) << "message " << i;
  }
}

class TransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = EventLoop::Create("net-test");
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
  }

  std::unique_ptr<TransportServer> StartServer(Sink& sink, TransportServerOptions options = {}) {
    if (options.secret.empty()) options.secret = kSecret;
    options.metrics = &metrics_;
    auto server = TransportServer::Create(
        *loop_, options,
        [&sink](ConnectionId id, std::span<const Message> m) { return sink.OnBatch(id, m); });
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  std::unique_ptr<TransportClient> StartClient(int port, TransportClientOptions options = {}) {
    options.port = port;
    if (options.secret.empty()) options.secret = kSecret;
    options.metrics = &metrics_;
    options.backoff_seed = 1234;
    auto client = TransportClient::Create(*loop_, options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  int64_t Errors(const std::string& reason) {
    return metrics_
        .GetCounter("tempest_net_connection_errors_total", {{"side", "server"}, {"reason", reason}})
        .Value();
  }

  core::MetricsRegistry metrics_;
  std::unique_ptr<EventLoop> loop_;
};

// Sends messages [from, to) in batches of `per_batch`, retrying a full queue
// with a blocking timeout.
void SendRange(TransportClient& client, int64_t from, int64_t to, int per_batch,
               size_t size = 100) {
  Batch batch;
  for (int64_t i = from; i < to; ++i) {
    batch.Add(static_cast<int32_t>(i % 7), Payload(i, size));
    if (batch.message_count() == static_cast<uint32_t>(per_batch) || i + 1 == to) {
      absl::Status s;
      for (int attempt = 0; attempt < 1000; ++attempt) {
        s = client.Send(batch, milliseconds(100));
        if (!absl::IsResourceExhausted(s)) break;
      }
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_TRUE(batch.empty());
    }
  }
}

// A plain POSIX socket for hostile peers.
class RawPeer {
 public:
  explicit RawPeer(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawPeer() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool Write(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads exactly `size` bytes (the server's challenge), each wait bounded.
  bool ReadExactly(char* out, size_t size) {
    size_t done = 0;
    while (done < size) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return false;
      const ssize_t n = ::recv(fd_, out + done, size - done, 0);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // True once the server has closed the connection (EOF or reset). The
  // server's hello challenge arrives first and is skipped.
  bool ClosedByServer(milliseconds timeout) {
    for (int i = 0; i < 100; ++i) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
      char buf[256];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

TEST_F(TransportTest, BatchesArriveCompleteAndInOrder) {
  Sink sink;
  auto server = StartServer(sink);
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->port(), 0);
  auto client = StartClient(server->port());
  constexpr int64_t kMessages = 50000;
  SendRange(*client, 0, kMessages, 37);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == kMessages; }));
  ExpectInOrder(sink.received(), kMessages);
  EXPECT_EQ(metrics_.GetCounter("tempest_net_messages_received_total").Value(), kMessages);
  EXPECT_EQ(metrics_.GetCounter("tempest_net_messages_sent_total").Value(), kMessages);
  EXPECT_EQ(metrics_.GetCounter("tempest_net_bytes_received_total").Value(),
            metrics_.GetCounter("tempest_net_bytes_sent_total").Value());
  EXPECT_EQ(client->queued_bytes(), 0u);
}

TEST_F(TransportTest, SmallBatchesAreCoalescedIntoOneFrame) {
  Sink sink;
  auto server = StartServer(sink);
  TransportClientOptions options;
  options.min_write_bytes = 1 << 20;  // never reached by this test
  options.flush_interval = std::chrono::seconds(3600);
  auto client = StartClient(server->port(), options);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return client->connected(); }));
  SendRange(*client, 0, 1000, /*per_batch=*/1, /*size=*/10);
  EXPECT_EQ(sink.size(), 0u);  // nothing was due yet: no write per batch
  client->Flush();
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 1000; }));
  ExpectInOrder(sink.received(), 1000, 10);
  EXPECT_EQ(sink.frames(), 1);
  EXPECT_EQ(metrics_.GetCounter("tempest_net_frames_sent_total").Value(), 1);
}

// Written batches' buffers come back to the sender: once a frame is out, the
// next Send leaves `batch` empty but with a buffer it can refill without
// regrowing; reused buffers carry no stale messages.
TEST_F(TransportTest, SendHandsBackTheBufferOfAWrittenBatch) {
  Sink sink;
  auto server = StartServer(sink);
  auto client = StartClient(server->port());
  ASSERT_TRUE(Eventually(kDeadline, [&] { return client->connected(); }));
  Batch batch;
  for (int64_t i = 0; i < 50; ++i) batch.Add(static_cast<int32_t>(i % 7), Payload(i, 100));
  ASSERT_TRUE(client->Send(batch).ok());
  client->Flush();
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 50; }));
  ASSERT_TRUE(Eventually(kDeadline, [&] { return client->queued_bytes() == 0; }));
  for (int64_t i = 50; i < 100; ++i) batch.Add(static_cast<int32_t>(i % 7), Payload(i, 100));
  ASSERT_TRUE(client->Send(batch).ok());
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.payload_size(), 0u);
  EXPECT_GE(batch.payload().capacity(), 50 * (100 + Batch::kPerMessageOverhead));
  for (int64_t i = 100; i < 150; ++i) batch.Add(static_cast<int32_t>(i % 7), Payload(i, 100));
  ASSERT_TRUE(client->Send(batch).ok());
  client->Flush();
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 150; }));
  ExpectInOrder(sink.received(), 150);
}

TEST_F(TransportTest, ReconnectsAfterServerRestartOnTheSamePort) {
  Sink first;
  auto server = StartServer(first);
  const int port = server->port();
  auto client = StartClient(port);
  SendRange(*client, 0, 100, 10);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return first.size() == 100; }));
  ASSERT_EQ(client->connect_count(), 1);

  server.reset();  // closes the listener and the connection
  ASSERT_TRUE(Eventually(kDeadline, [&] { return !client->connected(); }));

  Sink second;
  TransportServerOptions options;
  options.port = port;
  std::unique_ptr<TransportServer> restarted;
  ASSERT_TRUE(Eventually(kDeadline, [&] {
    restarted = StartServer(second, options);
    return restarted != nullptr;
  }));
  ASSERT_TRUE(Eventually(kDeadline, [&] { return client->connected(); }));
  EXPECT_GE(client->connect_count(), 2);
  EXPECT_GE(metrics_.GetCounter("tempest_net_reconnects_total").Value(), 1);

  // Fresh connection, fresh frame sequence: the new server accepts it.
  SendRange(*client, 0, 500, 25);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return second.size() == 500; }));
  ExpectInOrder(second.received(), 500);
}

// A graceful stop (FrameCodec, "Goodbye"): the first server says goodbye
// while the client streams; once the client has answered, the first server
// has everything it was sent, and the client holds the rest until the
// slot's next server listens. Together they receive every message exactly
// once and in order, and nothing is counted dropped.
TEST_F(TransportTest, AGoodbyeHandsTheStreamToTheNextServerWithoutLossOrRepeat) {
  Sink first;
  auto server = StartServer(first);
  const int port = server->port();
  auto client = StartClient(port);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return client->connected(); }));

  constexpr int64_t kMessages = 20000;
  constexpr int kPerBatch = 20;
  std::thread sender([&] {
    for (int64_t from = 0; from < kMessages; from += kPerBatch) {
      SendRange(*client, from, from + kPerBatch, kPerBatch);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  ASSERT_TRUE(Eventually(kDeadline, [&] { return first.size() >= 2000; }));
  server->SayGoodbye();
  ASSERT_TRUE(Eventually(kDeadline, [&] { return server->connection_count() == 0; }));
  const size_t before_restart = first.size();
  server.reset();

  Sink second;
  TransportServerOptions options;
  options.port = port;
  std::unique_ptr<TransportServer> next;
  ASSERT_TRUE(Eventually(kDeadline, [&] {
    next = StartServer(second, options);
    return next != nullptr;
  }));
  sender.join();
  ASSERT_TRUE(
      Eventually(kDeadline, [&] { return first.size() + second.size() == kMessages; }))
      << first.size() << " + " << second.size();
  EXPECT_EQ(first.size(), before_restart) << "the first server took frames after the answer";
  EXPECT_LT(first.size(), static_cast<size_t>(kMessages)) << "the goodbye came too late to test";
  std::vector<std::pair<int32_t, std::string>> all = first.received();
  for (auto& m : second.received()) all.push_back(m);
  ExpectInOrder(all, kMessages);
  EXPECT_EQ(metrics_.GetCounter("tempest_net_messages_dropped_total").Value(), 0);
  EXPECT_EQ(metrics_.GetCounter("tempest_net_peer_goodbyes_total").Value(), 1);
  EXPECT_EQ(metrics_
                .GetCounter("tempest_net_connection_errors_total",
                            {{"side", "client"}, {"reason", "closed_by_peer"}})
                .Value(),
            0);
}

// A server whose receiver is paused reads the answer only once resumed: the
// goodbye waits behind the frames before it rather than skipping them.
TEST_F(TransportTest, AGoodbyeIsAnsweredBehindTheFramesOfAPausedConnection) {
  Sink sink;
  sink.SetPaused(true);
  auto server = StartServer(sink);
  auto client = StartClient(server->port());
  SendRange(*client, 0, 300, 30);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.frames() >= 1; }));
  // All written (what is still queued at the goodbye waits for the next
  // server), most of it unread behind the pause.
  ASSERT_TRUE(Eventually(kDeadline, [&] { return client->queued_bytes() == 0; }));
  server->SayGoodbye();
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(server->connection_count(), 1u) << "closed before delivering what came first";
  sink.SetPaused(false);
  server->ResumeAll();
  ASSERT_TRUE(Eventually(kDeadline, [&] { return server->connection_count() == 0; }));
  ExpectInOrder(sink.received(), 300);
}

// A goodbye answer nobody asked for is a protocol error on that connection.
TEST_F(TransportTest, AnUnaskedGoodbyeAnswerClosesThatConnection) {
  Sink sink;
  auto server = StartServer(sink);
  RawPeer peer(server->port());
  ASSERT_TRUE(peer.connected());
  char challenge[FrameCodec::kHeaderSize + FrameCodec::kNonceSize];
  ASSERT_TRUE(peer.ReadExactly(challenge, sizeof(challenge)));
  auto mac = FrameMac::Create(kSecret);
  ASSERT_TRUE(mac.ok());
  std::string frames;
  FrameCodec::EncodeHello(std::string_view(challenge + FrameCodec::kHeaderSize,
                                           FrameCodec::kNonceSize),
                          0, mac->get(), &frames);
  FrameCodec::EncodeGoodbye(1, nullptr, &frames);
  ASSERT_TRUE(peer.Write(frames));
  EXPECT_TRUE(peer.ClosedByServer(milliseconds(5000)));
  ASSERT_TRUE(Eventually(kDeadline, [&] { return Errors("protocol") == 1; }));
}

TEST_F(TransportTest, QueuedBatchesWaitForTheServerToComeUp) {
  int port = 0;
  {
    Sink unused;
    auto probe = StartServer(unused);
    port = probe->port();
  }
  auto client = StartClient(port);  // nothing listens yet: keeps retrying
  SendRange(*client, 0, 300, 30);
  Sink sink;
  TransportServerOptions options;
  options.port = port;
  std::unique_ptr<TransportServer> server;
  ASSERT_TRUE(Eventually(kDeadline, [&] {
    server = StartServer(sink, options);
    return server != nullptr;
  }));
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 300; }));
  ExpectInOrder(sink.received(), 300);
}

TEST_F(TransportTest, PausedReceiverFillsTheQueueThenResumesWithoutLossOrReorder) {
  Sink sink;
  sink.SetPaused(true);
  TransportServerOptions server_options;
  server_options.receive_buffer_bytes = 4096;
  server_options.read_chunk_bytes = 4096;
  auto server = StartServer(sink, server_options);
  TransportClientOptions options;
  options.max_queued_bytes = 64 << 10;
  options.max_frame_payload_bytes = 16 << 10;
  options.send_buffer_bytes = 4096;
  auto client = StartClient(server->port(), options);

  ASSERT_TRUE(Eventually(kDeadline, [&] { return client->connected(); }));

  // Keep sending until the bounded queue refuses while the server is paused:
  // that only persists if the paused server stopped reading and TCP pushed
  // back. A refusal before the pause (writer briefly behind) just waits.
  int64_t sent = 0;
  bool refused = false;
  Batch batch;
  for (int i = 0; i < 200000 && !refused; ++i) {
    if (batch.empty()) {
      for (int k = 0; k < 10; ++k) {
        batch.Add(static_cast<int32_t>((sent + k) % 7), Payload(sent + k));
      }
    }
    const bool paused = metrics_.GetCounter("tempest_net_receive_pauses_total").Value() >= 1;
    const absl::Status s = client->Send(batch, paused ? milliseconds(0) : milliseconds(20));
    if (absl::IsResourceExhausted(s)) {
      refused = paused;
      EXPECT_EQ(batch.message_count(), 10u);  // the caller keeps a refused batch
    } else {
      ASSERT_TRUE(s.ok()) << s;
      sent += 10;
    }
  }
  ASSERT_TRUE(refused) << "the send queue never filled";
  // A blocking Send with a deadline also gives up while the receiver is paused.
  EXPECT_TRUE(absl::IsResourceExhausted(client->Send(batch, milliseconds(50))));
  // Only the frame whose callback asked for the pause was delivered.
  EXPECT_EQ(sink.frames(), 1);
  EXPECT_LT(static_cast<int64_t>(sink.size()), sent);

  sink.SetPaused(false);
  server->ResumeAll();
  // The refused batch goes out now, in its place in the sequence.
  ASSERT_TRUE(client->Send(batch, milliseconds(10000)).ok());
  sent += 10;
  SendRange(*client, sent, sent + 1000, 10);
  sent += 1000;
  ASSERT_TRUE(Eventually(kDeadline, [&] { return static_cast<int64_t>(sink.size()) == sent; }));
  ExpectInOrder(sink.received(), sent);
  EXPECT_EQ(metrics_.GetCounter("tempest_net_messages_dropped_total").Value(), 0);
}

TEST_F(TransportTest, GarbageClosesOnlyThatConnection) {
  Sink sink;
  auto server = StartServer(sink);
  auto good = StartClient(server->port());
  SendRange(*good, 0, 100, 10);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 100; }));

  RawPeer peer(server->port());
  ASSERT_TRUE(peer.connected());
  ASSERT_TRUE(peer.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_TRUE(peer.ClosedByServer(kDeadline));
  EXPECT_EQ(Errors("bad_magic"), 1);

  SendRange(*good, 100, 200, 10);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 200; }));
  ExpectInOrder(sink.received(), 200);
  EXPECT_TRUE(good->connected());
}

TEST_F(TransportTest, PastThePerPeerCapTheOldestUnauthenticatedConnectionIsClosed) {
  Sink sink;
  TransportServerOptions options;
  options.limits.max_per_peer = 3;
  auto server = StartServer(sink, options);
  auto good = StartClient(server->port());
  SendRange(*good, 0, 100, 10);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 100; }));
  // All from 127.0.0.1, like the authenticated client: each newcomer past
  // three closes the oldest that has not answered the challenge, never the
  // client.
  std::vector<std::unique_ptr<RawPeer>> idle;
  for (int i = 0; i < 6; ++i) {
    idle.push_back(std::make_unique<RawPeer>(server->port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(idle[i]->ClosedByServer(kDeadline)) << i;
  EXPECT_EQ(Errors("peer_limit"), 4);
  SendRange(*good, 100, 200, 10);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 200; }));
  EXPECT_TRUE(good->connected());
}

TEST_F(TransportTest, WrongSecretClosesOnlyThatConnection) {
  Sink sink;
  auto server = StartServer(sink);
  auto good = StartClient(server->port());
  TransportClientOptions intruder_options;
  intruder_options.secret = "secret-of-another-topology";
  auto intruder = StartClient(server->port(), intruder_options);
  Batch batch;
  batch.Add(1, "must never be delivered");
  ASSERT_TRUE(intruder->Send(batch).ok());
  // The intruder's answer to the challenge fails the MAC check.
  ASSERT_TRUE(Eventually(kDeadline, [&] { return Errors("bad_mac") >= 1; }));

  SendRange(*good, 0, 300, 10);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 300; }));
  ExpectInOrder(sink.received(), 300);  // nothing of the intruder's got through
  EXPECT_TRUE(good->connected());
  intruder->Close();
}

TEST_F(TransportTest, DataFrameWithoutHandshakeIsUnauthenticated) {
  Sink sink;
  auto server = StartServer(sink);
  // Even a frame MAC'd with the right secret is refused if the connection
  // skipped the challenge–response.
  auto mac = FrameMac::Create(kSecret);
  ASSERT_TRUE(mac.ok());
  Batch batch;
  batch.Add(1, "sneaky");
  std::string wire;
  FrameCodec::EncodeFrame(batch, 0, mac->get(), &wire);
  RawPeer peer(server->port());
  ASSERT_TRUE(peer.Write(wire));
  EXPECT_TRUE(peer.ClosedByServer(kDeadline));
  EXPECT_EQ(Errors("unauthenticated"), 1);
  EXPECT_EQ(sink.size(), 0u);
}

TEST_F(TransportTest, ServerCanRequireAMacOnEveryFrame) {
  Sink sink;
  TransportServerOptions strict;
  strict.require_frame_mac = true;
  auto server = StartServer(sink, strict);
  TransportClientOptions maced;
  maced.mac_every_frame = true;
  auto good = StartClient(server->port(), maced);
  SendRange(*good, 0, 1000, 50);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 1000; }));
  ExpectInOrder(sink.received(), 1000);

  auto lax = StartClient(server->port());  // handshake only
  Batch batch;
  batch.Add(0, "no mac");
  ASSERT_TRUE(lax->Send(batch).ok());
  lax->Flush();
  ASSERT_TRUE(Eventually(kDeadline, [&] { return Errors("unauthenticated") >= 1; }));
  EXPECT_EQ(sink.size(), 1000u);
  lax->Close();
}

TEST_F(TransportTest, OversizedFrameIsRejectedAndOthersKeepWorking) {
  Sink sink;
  TransportServerOptions options;
  options.max_payload_bytes = 4096;
  auto server = StartServer(sink, options);
  auto good = StartClient(server->port());

  // A correctly authenticated frame whose payload exceeds the limit: only
  // its header is needed for the rejection.
  auto mac = FrameMac::Create(kSecret);
  ASSERT_TRUE(mac.ok());
  Batch big;
  big.Add(1, std::string(100000, 'z'));
  std::string wire;
  FrameCodec::EncodeFrame(big, 1, mac->get(), &wire);
  RawPeer peer(server->port());
  ASSERT_TRUE(peer.connected());
  ASSERT_TRUE(peer.Write(wire.substr(0, FrameCodec::kHeaderSize)));
  EXPECT_TRUE(peer.ClosedByServer(kDeadline));
  EXPECT_EQ(Errors("oversized"), 1);

  SendRange(*good, 0, 20, 5);  // 20 × 108 bytes per frame at most: within limit
  ASSERT_TRUE(Eventually(kDeadline, [&] { return sink.size() == 20; }));
  ExpectInOrder(sink.received(), 20);
}

TEST_F(TransportTest, TruncatedFrameAndUnknownVersionAreCountedErrors) {
  Sink sink;
  auto server = StartServer(sink);
  auto mac = FrameMac::Create(kSecret);
  ASSERT_TRUE(mac.ok());
  Batch batch;
  batch.Add(3, "abc");
  std::string wire;
  FrameCodec::EncodeFrame(batch, 0, mac->get(), &wire);
  {
    RawPeer peer(server->port());
    ASSERT_TRUE(peer.Write(wire.substr(0, wire.size() - 1)));
  }  // closes mid-frame
  ASSERT_TRUE(Eventually(kDeadline, [&] { return Errors("truncated") == 1; }));
  {
    std::string v9 = wire;
    v9[4] = 9;
    RawPeer peer(server->port());
    ASSERT_TRUE(peer.Write(v9));
    EXPECT_TRUE(peer.ClosedByServer(kDeadline));
  }
  EXPECT_EQ(Errors("bad_version"), 1);
  EXPECT_EQ(sink.size(), 0u);
  ASSERT_TRUE(Eventually(kDeadline, [&] { return server->connection_count() == 0; }));
}

TEST_F(TransportTest, CreateRejectsBadArguments) {
  Sink sink;
  TransportServerOptions no_secret;
  no_secret.secret = "";
  auto server = TransportServer::Create(
      *loop_, no_secret, [](ConnectionId, std::span<const Message>) { return true; });
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  TransportClientOptions bad_port;
  bad_port.secret = kSecret;
  EXPECT_FALSE(TransportClient::Create(*loop_, bad_port).ok());
  // Port already taken by another server.
  auto first = StartServer(sink);
  TransportServerOptions same;
  same.secret = kSecret;
  same.port = first->port();
  auto second = TransportServer::Create(
      *loop_, same, [](ConnectionId, std::span<const Message>) { return true; });
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(TransportTest, SendAfterCloseFailsAndOversizedBatchIsInvalid) {
  Sink sink;
  auto server = StartServer(sink);
  TransportClientOptions options;
  options.max_queued_bytes = 1024;
  auto client = StartClient(server->port(), options);
  Batch big;
  big.Add(1, std::string(2000, 'q'));
  EXPECT_EQ(client->Send(big).code(), absl::StatusCode::kInvalidArgument);
  client->Close();
  Batch small;
  small.Add(1, "x");
  EXPECT_EQ(client->Send(small).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tempest::net
