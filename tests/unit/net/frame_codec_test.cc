#include "common/net/frame_codec.h"

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/net/batch.h"
#include "common/net/frame_mac.h"
#include "gtest/gtest.h"

namespace tempest::net {
namespace {

using Kind = FrameCodec::DecodeResult::Kind;

std::unique_ptr<FrameMac> Mac(const std::string& secret = "topology-secret") {
  auto mac = FrameMac::Create(secret);
  EXPECT_TRUE(mac.ok()) << mac.status();
  return *std::move(mac);
}

Batch SampleBatch() {
  Batch batch;
  batch.Add(7, "hello");
  batch.Add(-1, "");
  batch.Add(123456, std::string(1000, 'x'));
  batch.Add(0, std::string("\0\1\2", 3));
  return batch;
}

TEST(FrameCodecTest, RoundTripPreservesTasksBytesAndOrder) {
  auto mac = Mac();
  const Batch batch = SampleBatch();
  std::string wire;
  FrameCodec::EncodeFrame(batch, /*seq=*/0, mac.get(), &wire);
  ASSERT_EQ(wire.size(), FrameCodec::kHeaderSize + batch.payload_size());

  std::vector<Message> messages;
  const auto r = FrameCodec::Decode(wire, 0, *mac, FrameCodec::kDefaultMaxPayloadBytes, &messages);
  ASSERT_EQ(r.kind, Kind::kFrame) << r.error;
  EXPECT_EQ(r.frame_size, wire.size());
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0].task_id, 7);
  EXPECT_EQ(messages[0].bytes, "hello");
  EXPECT_EQ(messages[1].task_id, -1);
  EXPECT_EQ(messages[1].bytes, "");
  EXPECT_EQ(messages[2].task_id, 123456);
  EXPECT_EQ(messages[2].bytes, std::string(1000, 'x'));
  EXPECT_EQ(messages[3].bytes, std::string("\0\1\2", 3));
}

TEST(FrameCodecTest, MessagesEncodedInPlaceEqualAddedOnesAndAFailedEncodeLeavesNothing) {
  Batch added = SampleBatch();
  Batch encoded;
  for (auto [task, bytes] :
       std::vector<std::pair<int32_t, std::string>>{{7, "hello"},
                                                    {-1, ""},
                                                    {123456, std::string(1000, 'x')},
                                                    {0, std::string("\0\1\2", 3)}}) {
    // A failed encode in between (after writing part of its bytes) must not
    // leave a message or a byte behind.
    EXPECT_FALSE(encoded.AddEncoded(99, [](std::string& out) {
      out += "partial";
      return false;
    }));
    EXPECT_TRUE(encoded.AddEncoded(task, [&bytes](std::string& out) {
      out += bytes;
      return true;
    }));
  }
  EXPECT_EQ(encoded.message_count(), added.message_count());
  EXPECT_EQ(encoded.payload(), added.payload());
}

TEST(FrameCodecTest, HeaderLayoutIsLittleEndianWithMagicVersionAndCounts) {
  auto mac = Mac();
  Batch batch;
  batch.Add(0x01020304, "ab");
  std::string wire;
  FrameCodec::EncodeFrame(batch, 0, mac.get(), &wire);
  EXPECT_EQ(wire.substr(0, 4), "TMPF");
  EXPECT_EQ(wire[4], 1);                               // version
  EXPECT_EQ(wire[5], FrameCodec::kFlagMac);            // flags
  EXPECT_EQ(wire.substr(6, 2), std::string(2, '\0'));  // reserved
  EXPECT_EQ(static_cast<uint8_t>(wire[8]), 10);        // payload length = 8 + 2
  EXPECT_EQ(static_cast<uint8_t>(wire[12]), 1);        // message count
  EXPECT_EQ(static_cast<uint8_t>(wire[48]), 0x04);     // task id, LE
  EXPECT_EQ(wire.substr(56), "ab");
}

TEST(FrameCodecTest, ConcatenatedBatchesFormOneFrame) {
  auto mac = Mac();
  Batch a, b;
  a.Add(1, "one");
  b.Add(2, "two");
  b.Add(3, "three");
  std::string wire;
  const size_t header = FrameCodec::BeginFrame(&wire);
  wire.append(a.payload());
  wire.append(b.payload());
  FrameCodec::FinishFrame(&wire, header, a.message_count() + b.message_count(), 5, mac.get());
  std::vector<Message> messages;
  const auto r = FrameCodec::Decode(wire, 5, *mac, 1 << 20, &messages);
  ASSERT_EQ(r.kind, Kind::kFrame) << r.error;
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[2].bytes, "three");
}

// The gather write's header (payload left in the batches' buffers) is the
// header FinishFrame writes over the same bytes laid out contiguously, MAC
// included, so the receiver cannot tell them apart.
TEST(FrameCodecTest, HeaderOverPayloadPiecesMatchesTheContiguousFrame) {
  Batch a, b;
  a.Add(1, "one");
  b.Add(2, std::string(300, 'y'));
  b.Add(3, "three");
  const std::vector<std::string_view> pieces = {a.payload(), b.payload()};
  for (bool maced : {false, true}) {
    auto mac = Mac();
    FrameMac* m = maced ? mac.get() : nullptr;
    std::string contiguous;
    const size_t header = FrameCodec::BeginFrame(&contiguous);
    contiguous.append(a.payload());
    contiguous.append(b.payload());
    FrameCodec::FinishFrame(&contiguous, header, 3, 9, m);

    char gathered[FrameCodec::kHeaderSize];
    FrameCodec::EncodeHeader(gathered, pieces, 3, 9, m);
    EXPECT_EQ(std::string(gathered, sizeof(gathered)),
              contiguous.substr(0, FrameCodec::kHeaderSize));
    std::string wire(gathered, sizeof(gathered));
    wire.append(a.payload());
    wire.append(b.payload());
    std::vector<Message> messages;
    const auto r = FrameCodec::Decode(wire, 9, *mac, 1 << 20, &messages);
    ASSERT_EQ(r.kind, Kind::kFrame) << r.error;
    EXPECT_EQ(r.flags & FrameCodec::kFlagMac, maced ? FrameCodec::kFlagMac : 0);
    ASSERT_EQ(messages.size(), 3u);
    EXPECT_EQ(messages[1].bytes, std::string(300, 'y'));
  }
}

TEST(FrameCodecTest, EveryStrictPrefixNeedsMoreBytes) {
  auto mac = Mac();
  std::string wire;
  FrameCodec::EncodeFrame(SampleBatch(), 0, mac.get(), &wire);
  std::vector<Message> messages;
  for (size_t n = 0; n < wire.size(); ++n) {
    const auto r =
        FrameCodec::Decode(std::string_view(wire).substr(0, n), 0, *mac, 1 << 20, &messages);
    ASSERT_EQ(r.kind, Kind::kNeedMore) << "prefix " << n;
    if (n >= FrameCodec::kHeaderSize) {
      EXPECT_EQ(r.frame_size, wire.size());
    }
  }
}

TEST(FrameCodecTest, WrongSecretIsRejected) {
  auto sender = Mac("secret-of-topology-a");
  auto receiver = Mac("secret-of-topology-b");
  std::string wire;
  FrameCodec::EncodeFrame(SampleBatch(), 0, sender.get(), &wire);
  std::vector<Message> messages;
  const auto r = FrameCodec::Decode(wire, 0, *receiver, 1 << 20, &messages);
  ASSERT_EQ(r.kind, Kind::kError);
  EXPECT_STREQ(r.reason, "bad_mac");
}

TEST(FrameCodecTest, ReplayedOrReorderedFrameIsRejected) {
  auto mac = Mac();
  std::string wire;
  FrameCodec::EncodeFrame(SampleBatch(), /*seq=*/0, mac.get(), &wire);
  std::vector<Message> messages;
  // The receiver expects frame #1 next; a copy of frame #0 must not pass.
  const auto r = FrameCodec::Decode(wire, /*seq=*/1, *mac, 1 << 20, &messages);
  ASSERT_EQ(r.kind, Kind::kError);
  EXPECT_STREQ(r.reason, "bad_mac");
}

TEST(FrameCodecTest, OversizedHeaderIsRejectedBeforeThePayloadArrives) {
  auto mac = Mac();
  Batch batch;
  batch.Add(1, std::string(2000, 'y'));
  std::string wire;
  FrameCodec::EncodeFrame(batch, 0, mac.get(), &wire);
  std::vector<Message> messages;
  const auto r = FrameCodec::Decode(std::string_view(wire).substr(0, FrameCodec::kHeaderSize), 0,
                                    *mac, /*max_payload_bytes=*/1024, &messages);
  ASSERT_EQ(r.kind, Kind::kError);
  EXPECT_STREQ(r.reason, "oversized");
}

TEST(FrameCodecTest, BadMagicVersionAndFlagsAreRejectedEarly) {
  auto mac = Mac();
  std::vector<Message> messages;
  auto r = FrameCodec::Decode("GET ", 0, *mac, 1 << 20, &messages);
  EXPECT_EQ(r.kind, Kind::kError);
  EXPECT_STREQ(r.reason, "bad_magic");

  std::string wire;
  FrameCodec::EncodeFrame(SampleBatch(), 0, mac.get(), &wire);
  std::string v2 = wire;
  v2[4] = 2;
  r = FrameCodec::Decode(std::string_view(v2).substr(0, 5), 0, *mac, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "bad_version");
  std::string flagged = wire;
  flagged[5] = static_cast<char>(0x80);
  r = FrameCodec::Decode(flagged, 0, *mac, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "bad_flags");
}

// Builds an authenticated frame around an arbitrary payload, so the payload
// checks (not the MAC) are what is exercised.
std::string AuthenticatedFrame(const std::string& payload, uint32_t count, FrameMac& mac) {
  std::string wire;
  const size_t header = FrameCodec::BeginFrame(&wire);
  wire.append(payload);
  FrameCodec::FinishFrame(&wire, header, count, 0, &mac);
  return wire;
}

TEST(FrameCodecTest, MalformedAuthenticatedPayloadsAreRejected) {
  auto mac = Mac();
  std::vector<Message> messages;
  Batch one;
  one.Add(1, "abc");
  // Count larger than the messages present.
  auto r =
      FrameCodec::Decode(AuthenticatedFrame(one.payload(), 2, *mac), 0, *mac, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "malformed_payload");
  // Trailing bytes after the last message.
  r = FrameCodec::Decode(AuthenticatedFrame(one.payload() + "zz", 1, *mac), 0, *mac, 1 << 20,
                         &messages);
  EXPECT_STREQ(r.reason, "malformed_payload");
  // A message length that runs past the payload.
  std::string lying = one.payload();
  lying[4] = 100;
  r = FrameCodec::Decode(AuthenticatedFrame(lying, 1, *mac), 0, *mac, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "malformed_payload");
  // A count no payload of that size could hold (would otherwise be a huge
  // reservation).
  r = FrameCodec::Decode(AuthenticatedFrame(std::string(16, '\0'), 0xffffffffu, *mac), 0, *mac,
                         1 << 20, &messages);
  EXPECT_STREQ(r.reason, "malformed_payload");
}

TEST(FrameCodecTest, EmptyFrameIsValid) {
  auto mac = Mac();
  std::string wire;
  FrameCodec::EncodeFrame(Batch(), 3, mac.get(), &wire);
  std::vector<Message> messages;
  const auto r = FrameCodec::Decode(wire, 3, *mac, 1 << 20, &messages);
  ASSERT_EQ(r.kind, Kind::kFrame);
  EXPECT_TRUE(messages.empty());
}

// Fuzz-style: seeded random garbage, random corruptions of a valid frame and
// random authenticated payloads must never crash, never read out of bounds
// (run under ASan to check that), and never decode as a frame unless the
// bytes are exactly a valid frame.
TEST(FrameCodecTest, RandomGarbageIsNeverAcceptedAndNeverCrashes) {
  auto mac = Mac();
  std::mt19937_64 rng(20261130);
  std::vector<Message> messages;
  int errors = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string junk(rng() % 200, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    // Half of the inputs start with a plausible header prefix to get past
    // the early magic/version checks.
    if (i % 2 == 0 && junk.size() >= 8) {
      junk.replace(0, 8, std::string("TMPF\1\0\0\0", 8));
    }
    const auto r = FrameCodec::Decode(junk, 0, *mac, 1 << 16, &messages);
    if (r.kind == Kind::kFrame) {
      // Only possible for a structurally valid frame without a MAC claim.
      ASSERT_EQ(r.flags & FrameCodec::kFlagMac, 0) << "iteration " << i;
      size_t total = 0;
      for (const Message& m : messages) total += Batch::kPerMessageOverhead + m.bytes.size();
      ASSERT_EQ(total + FrameCodec::kHeaderSize, r.frame_size) << "iteration " << i;
    }
    if (r.kind == Kind::kError) ++errors;
  }
  EXPECT_GT(errors, 10000);

  std::string valid;
  FrameCodec::EncodeFrame(SampleBatch(), 0, mac.get(), &valid);
  for (int i = 0; i < 5000; ++i) {
    std::string corrupted = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      corrupted[rng() % corrupted.size()] ^= static_cast<char>(1 + rng() % 255);
    }
    if (corrupted == valid) continue;
    const auto r = FrameCodec::Decode(corrupted, 0, *mac, 1 << 20, &messages);
    // A corruption that clears the MAC flag can leave a valid unauthenticated
    // frame (that is what per-frame MACs are for); it is never accepted as
    // authenticated.
    ASSERT_FALSE(r.kind == Kind::kFrame && (r.flags & FrameCodec::kFlagMac) != 0)
        << "corrupted frame accepted as authenticated at iteration " << i;
  }

  // Authenticated but random payloads: the structural checks alone must
  // reject them (or decode them consistently if they happen to be valid).
  for (int i = 0; i < 5000; ++i) {
    std::string payload(rng() % 64, '\0');
    for (char& c : payload) c = static_cast<char>(rng() % 4);  // small lengths
    const uint32_t count = static_cast<uint32_t>(rng() % 8);
    const std::string wire = AuthenticatedFrame(payload, count, *mac);
    const auto r = FrameCodec::Decode(wire, 0, *mac, 1 << 20, &messages);
    if (r.kind == Kind::kFrame) {
      size_t total = 0;
      for (const Message& m : messages) total += Batch::kPerMessageOverhead + m.bytes.size();
      ASSERT_EQ(total, payload.size());
      ASSERT_EQ(messages.size(), count);
    } else {
      ASSERT_EQ(r.kind, Kind::kError);
      ASSERT_STREQ(r.reason, "malformed_payload");
    }
  }
}

TEST(FrameCodecTest, FrameWithoutMacIsStructureCheckedOnly) {
  auto mac = Mac();
  std::string wire;
  FrameCodec::EncodeFrame(SampleBatch(), 9, /*mac=*/nullptr, &wire);
  EXPECT_EQ(wire[5], 0);
  EXPECT_EQ(wire.substr(FrameCodec::kMacOffset, FrameMac::kTagSize), std::string(32, '\0'));
  std::vector<Message> messages;
  const auto r = FrameCodec::Decode(wire, 0, *mac, 1 << 20, &messages);
  ASSERT_EQ(r.kind, Kind::kFrame) << r.error;
  EXPECT_EQ(r.flags, 0);
  EXPECT_EQ(messages.size(), 4u);
}

TEST(FrameCodecTest, HelloFramesCarryANonceAndAreAuthenticatedWhenMaced) {
  auto mac = Mac();
  const std::string nonce = FrameMac::RandomBytes(FrameCodec::kNonceSize);
  ASSERT_EQ(nonce.size(), FrameCodec::kNonceSize);
  EXPECT_NE(nonce, FrameMac::RandomBytes(FrameCodec::kNonceSize));
  std::string challenge, answer;
  FrameCodec::EncodeHello(nonce, 0, nullptr, &challenge);
  FrameCodec::EncodeHello(nonce, 0, mac.get(), &answer);
  std::vector<Message> messages;
  auto r = FrameCodec::Decode(challenge, 0, *mac, 1 << 20, &messages);
  ASSERT_EQ(r.kind, Kind::kFrame);
  EXPECT_EQ(r.flags, FrameCodec::kFlagHello);
  EXPECT_EQ(r.payload, nonce);
  EXPECT_TRUE(messages.empty());
  r = FrameCodec::Decode(answer, 0, *mac, 1 << 20, &messages);
  ASSERT_EQ(r.kind, Kind::kFrame);
  EXPECT_EQ(r.flags, FrameCodec::kFlagHello | FrameCodec::kFlagMac);
  // The answer under another secret fails.
  auto other = Mac("another-topology");
  r = FrameCodec::Decode(answer, 0, *other, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "bad_mac");
  // A hello must carry exactly one nonce.
  std::string short_hello;
  FrameCodec::EncodeHello("tiny", 0, nullptr, &short_hello);
  r = FrameCodec::Decode(short_hello, 0, *mac, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "malformed_payload");
}

TEST(FrameCodecTest, GoodbyeFramesAreEmptyAndMacedWhenTheSenderMacsData) {
  auto mac = Mac("per-topology-secret");
  std::string notice, answer;
  FrameCodec::EncodeGoodbye(0, nullptr, &notice);
  FrameCodec::EncodeGoodbye(5, mac.get(), &answer);
  EXPECT_EQ(notice.size(), FrameCodec::kHeaderSize);
  std::vector<Message> messages;
  auto r = FrameCodec::Decode(notice, 0, *mac, 0, &messages);
  ASSERT_EQ(r.kind, Kind::kFrame);
  EXPECT_EQ(r.flags, FrameCodec::kFlagGoodbye);
  EXPECT_TRUE(messages.empty());
  r = FrameCodec::Decode(answer, 5, *mac, 1 << 20, &messages);
  ASSERT_EQ(r.kind, Kind::kFrame);
  EXPECT_EQ(r.flags, FrameCodec::kFlagGoodbye | FrameCodec::kFlagMac);
  // Its MAC covers its place in the connection like a data frame's.
  r = FrameCodec::Decode(answer, 6, *mac, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "bad_mac");

  // A goodbye carries nothing, and is never also a hello.
  Batch batch;
  batch.Add(1, "x");
  std::string loaded;
  FrameCodec::EncodeFrame(batch, 0, nullptr, &loaded);
  loaded[5] = static_cast<char>(FrameCodec::kFlagGoodbye);
  r = FrameCodec::Decode(loaded, 0, *mac, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "malformed_payload");
  std::string both;
  FrameCodec::EncodeHello(std::string(FrameCodec::kNonceSize, 'n'), 0, nullptr, &both);
  both[5] = static_cast<char>(FrameCodec::kFlagHello | FrameCodec::kFlagGoodbye);
  r = FrameCodec::Decode(both, 0, *mac, 1 << 20, &messages);
  EXPECT_STREQ(r.reason, "bad_flags");
}

TEST(FrameMacTest, EmptySecretIsRejected) { EXPECT_FALSE(FrameMac::Create("").ok()); }

TEST(FrameMacTest, KnownAnswerMatchesRfc4231TestCase2) {
  // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
  auto mac = Mac("Jefe");
  mac->Begin();
  const std::string data = "what do ya want for nothing?";
  mac->Update(data.data(), data.size());
  const auto tag = mac->Finish();
  static const uint8_t kExpected[32] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e,
                                        0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
                                        0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
                                        0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
  EXPECT_TRUE(FrameMac::Equal(tag.data(), kExpected));
}

}  // namespace
}  // namespace tempest::net
