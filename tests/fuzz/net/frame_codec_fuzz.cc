// Fuzzes the transport frame decoder with what a peer may send on a worker
// connection: the bytes are decoded frame after frame, as TransportServer
// consumes its read buffer (the sequence number counting up, a MAC context
// keyed with a fixed secret, the default payload bound and a small one).
// Every accepted frame is encoded again from its messages and must decode to
// the same messages.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/net/batch.h"
#include "common/net/frame_codec.h"
#include "common/net/frame_mac.h"

namespace {

using tempest::net::Batch;
using tempest::net::FrameCodec;
using tempest::net::FrameMac;
using tempest::net::Message;

FrameMac& Mac() {
  static FrameMac* mac = FrameMac::Create("fuzz-transport-secret").value().release();
  return *mac;
}

// Re-encodes a decoded data frame without a MAC and checks it decodes to the
// same messages.
void CheckRoundTrip(const std::vector<Message>& messages, size_t max_payload) {
  Batch batch;
  for (const Message& m : messages) batch.Add(m.task_id, m.bytes);
  std::string frame;
  FrameCodec::EncodeFrame(batch, 0, nullptr, &frame);
  std::vector<Message> again;
  FrameCodec::DecodeResult r = FrameCodec::Decode(frame, 0, Mac(), max_payload, &again);
  if (r.kind != FrameCodec::DecodeResult::Kind::kFrame || r.frame_size != frame.size() ||
      again.size() != messages.size()) {
    std::abort();
  }
  for (size_t i = 0; i < again.size(); ++i) {
    if (again[i].task_id != messages[i].task_id || again[i].bytes != messages[i].bytes) std::abort();
  }
}

void DecodeStream(std::string_view buffer, size_t max_payload) {
  std::vector<Message> messages;
  for (uint64_t seq = 0; !buffer.empty() && seq < 64; ++seq) {
    FrameCodec::DecodeResult r = FrameCodec::Decode(buffer, seq, Mac(), max_payload, &messages);
    if (r.kind != FrameCodec::DecodeResult::Kind::kFrame) return;
    if (r.frame_size == 0 || r.frame_size > buffer.size()) std::abort();
    if ((r.flags & FrameCodec::kFlagHello) == 0) CheckRoundTrip(messages, max_payload);
    buffer.remove_prefix(r.frame_size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view buffer(reinterpret_cast<const char*>(data), size);
  DecodeStream(buffer, FrameCodec::kDefaultMaxPayloadBytes);
  DecodeStream(buffer, 256);
  return 0;
}
