#ifndef TEMPEST_COMMON_NET_FRAME_CODEC_H_
#define TEMPEST_COMMON_NET_FRAME_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/net/batch.h"
#include "common/net/frame_mac.h"

namespace tempest::net {

// Encodes and decodes transport frames. Stateless (the per-connection frame
// sequence number and MAC context are passed in); safe on any thread.
//
// Frame layout, all integers little-endian:
//
//   offset size  field
//   0      4     magic          "TMPF" (0x46504D54 read as LE uint32)
//   4      1     version        1
//   5      1     flags          kFlagMac | kFlagHello | kFlagGoodbye; unknown bits are
//                               rejected
//   6      2     reserved       0
//   8      4     payload length bytes after the 48-byte header
//   12     4     message count
//   16     32    MAC            if kFlagMac: HMAC-SHA256(secret, header[0,16) || seq || payload);
//                               else zero
//   48     ...   payload        message count × {task id int32, length uint32, bytes}
//                               (kFlagHello frames: a 32-byte nonce, count 0)
//
// `seq` is the frame's index on its connection (0, 1, 2, …) as a LE uint64.
// It is not sent: both ends count frames, so a MAC'd frame that is replayed,
// dropped or reordered within a connection fails the check.
//
// Authentication (docs/adr/0002-openssl-for-frame-mac.md): on accept the
// server sends a hello frame carrying a random nonce (no MAC); the client's
// first frame (seq 0) is a hello frame echoing the nonce with a MAC. After
// that, data frames carry a MAC only if the client is configured to (and the
// server may require it); otherwise they are length- and structure-checked.
//
// Goodbye (a graceful stop, ADR 0033): a server whose worker stops sends a
// goodbye frame (empty, count 0, no MAC) on each connection. The client
// finishes the frame it is writing, answers with a goodbye frame of its own
// (its next seq, MAC'd like its data frames) and writes nothing more on that
// connection; what it still has queued waits for its next connection. The
// server has then read every frame the client will send it, and closes.
class FrameCodec {
 public:
  static constexpr uint32_t kMagic = 0x46504D54;  // bytes "TMPF"
  static constexpr uint8_t kVersion = 1;
  static constexpr size_t kHeaderSize = 48;
  static constexpr size_t kMacOffset = 16;
  static constexpr size_t kDefaultMaxPayloadBytes = 64u << 20;
  static constexpr uint8_t kFlagMac = 0x01;
  static constexpr uint8_t kFlagHello = 0x02;
  static constexpr uint8_t kFlagGoodbye = 0x04;
  static constexpr size_t kNonceSize = 32;

  // Appends a header placeholder to `out` and returns its offset; append the
  // payload(s) after it, then call FinishFrame. Lets a sender concatenate
  // several batches into one frame without an extra copy.
  static size_t BeginFrame(std::string* out);
  // Fills in the header at `header_offset`; the payload is everything in
  // `out` after the header. With `mac` non-null the frame gets kFlagMac and
  // its MAC; `extra_flags` may add kFlagHello.
  static void FinishFrame(std::string* out, size_t header_offset, uint32_t message_count,
                          uint64_t seq, FrameMac* mac, uint8_t extra_flags = 0);
  // Writes the kHeaderSize-byte header of a frame whose payload is the
  // concatenation of `payload` (so a sender can write the pieces where they
  // lie, with one gather write). MAC as FinishFrame.
  static void EncodeHeader(char* header, std::span<const std::string_view> payload,
                           uint32_t message_count, uint64_t seq, FrameMac* mac,
                           uint8_t extra_flags = 0);
  // Convenience: one batch → one frame appended to `out`.
  static void EncodeFrame(const Batch& batch, uint64_t seq, FrameMac* mac, std::string* out);
  // A hello frame carrying `nonce` (kNonceSize bytes): the server's challenge
  // (mac == nullptr) or the client's answer (mac set, seq 0).
  static void EncodeHello(std::string_view nonce, uint64_t seq, FrameMac* mac, std::string* out);
  // A goodbye frame: the server's notice (mac == nullptr) or the client's
  // answer (its next seq; mac set if it MACs its data frames).
  static void EncodeGoodbye(uint64_t seq, FrameMac* mac, std::string* out);

  struct DecodeResult {
    enum class Kind { kNeedMore, kFrame, kError };
    Kind kind = Kind::kNeedMore;
    // Total size (header + payload) once the header has been read, else 0.
    // For kFrame this is the number of bytes consumed.
    size_t frame_size = 0;
    // kFrame: the frame's flags (kFlagMac set means the MAC was verified)
    // and its payload (for hello frames, the nonce; messages are not parsed).
    uint8_t flags = 0;
    std::string_view payload;
    // kError only: a short metric label ("bad_magic", "bad_version",
    // "bad_flags", "oversized", "bad_mac", "malformed_payload") and details.
    const char* reason = "";
    absl::Status error;
  };

  // Decodes the frame at the start of `buffer`, verifying the MAC when the
  // frame has kFlagMac. On kFrame, `messages` holds views into `buffer`
  // (cleared first; empty for hello frames). Never reads outside `buffer`, never
  // allocates more than the message count that the payload can hold, and
  // rejects a header whose payload length exceeds `max_payload_bytes` before
  // any payload has arrived.
  static DecodeResult Decode(std::string_view buffer, uint64_t seq, FrameMac& mac,
                             size_t max_payload_bytes, std::vector<Message>* messages);
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_FRAME_CODEC_H_
