#include "common/net/frame_codec.h"

#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tempest::net {
namespace {

void Store32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t Load32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

void SeqBytes(uint64_t seq, uint8_t out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>((seq >> (8 * i)) & 0xff);
}

FrameMac::Tag ComputeTag(const char* header, std::string_view payload, uint64_t seq,
                         FrameMac& mac) {
  uint8_t seq_bytes[8];
  SeqBytes(seq, seq_bytes);
  mac.Begin();
  mac.Update(header, FrameCodec::kMacOffset);
  mac.Update(seq_bytes, sizeof(seq_bytes));
  mac.Update(payload.data(), payload.size());
  return mac.Finish();
}

FrameCodec::DecodeResult Error(const char* reason, std::string message, size_t frame_size = 0) {
  FrameCodec::DecodeResult r;
  r.kind = FrameCodec::DecodeResult::Kind::kError;
  r.reason = reason;
  r.frame_size = frame_size;
  r.error = absl::DataLossError(std::move(message));
  return r;
}

// The magic, version, flags and reserved bytes, checked as soon as they
// arrive, so garbage is rejected after a few bytes rather than after waiting
// for a "payload" that never comes. nullopt when what has arrived is fine.
std::optional<FrameCodec::DecodeResult> CheckFixedFields(std::string_view buffer) {
  if (buffer.size() >= 4 && Load32(buffer.data()) != FrameCodec::kMagic) {
    return Error("bad_magic", "frame has a bad magic number (not a Tempest transport peer?)");
  }
  if (buffer.size() >= 5 && static_cast<uint8_t>(buffer[4]) != FrameCodec::kVersion) {
    return Error("bad_version",
                 absl::StrCat("unsupported frame version ", static_cast<uint8_t>(buffer[4])));
  }
  constexpr uint8_t kKnownFlags =
      FrameCodec::kFlagMac | FrameCodec::kFlagHello | FrameCodec::kFlagGoodbye;
  if (buffer.size() >= 8 && ((static_cast<uint8_t>(buffer[5]) & ~kKnownFlags) != 0 ||
                             buffer[6] != 0 || buffer[7] != 0)) {
    return Error("bad_flags", "frame has unknown flags or non-zero reserved bytes");
  }
  return std::nullopt;
}

// The header's payload length against the limit, and its message count
// against what that many bytes can hold, before any payload is awaited.
std::optional<FrameCodec::DecodeResult> CheckCounts(uint32_t payload_size, uint32_t count,
                                                    size_t max_payload_bytes) {
  if (payload_size > max_payload_bytes) {
    return Error("oversized", absl::StrCat("frame payload of ", payload_size,
                                           " bytes exceeds the limit of ", max_payload_bytes));
  }
  if (count > payload_size / Batch::kPerMessageOverhead) {
    return Error("malformed_payload",
                 absl::StrCat("frame claims ", count, " messages in ", payload_size, " bytes"));
  }
  return std::nullopt;
}

bool MacMatches(std::string_view frame, std::string_view payload, uint64_t seq, FrameMac& mac) {
  const FrameMac::Tag tag = ComputeTag(frame.data(), payload, seq, mac);
  return FrameMac::Equal(tag.data(),
                         reinterpret_cast<const uint8_t*>(frame.data() + FrameCodec::kMacOffset));
}

// The `count` messages of a data frame's payload, as views into it, into
// `messages`; nullopt when they fill the payload exactly.
std::optional<FrameCodec::DecodeResult> SplitMessages(std::string_view payload, uint32_t count,
                                                      size_t frame_size,
                                                      std::vector<Message>* messages) {
  messages->reserve(count);
  size_t pos = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (payload.size() - pos < Batch::kPerMessageOverhead) {
      return Error("malformed_payload", absl::StrCat("message ", i, " header is truncated"),
                   frame_size);
    }
    const int32_t task = static_cast<int32_t>(Load32(payload.data() + pos));
    const uint32_t len = Load32(payload.data() + pos + 4);
    pos += Batch::kPerMessageOverhead;
    if (len > payload.size() - pos) {
      return Error("malformed_payload",
                   absl::StrCat("message ", i, " length ", len, " runs past the payload"),
                   frame_size);
    }
    messages->push_back(Message{task, payload.substr(pos, len)});
    pos += len;
  }
  if (pos != payload.size()) {
    return Error("malformed_payload",
                 absl::StrCat(payload.size() - pos, " trailing bytes after the last message"),
                 frame_size);
  }
  return std::nullopt;
}

}  // namespace

size_t FrameCodec::BeginFrame(std::string* out) {
  const size_t offset = out->size();
  out->append(kHeaderSize, '\0');
  return offset;
}

void FrameCodec::EncodeHeader(char* h, std::span<const std::string_view> payload,
                              uint32_t message_count, uint64_t seq, FrameMac* mac,
                              uint8_t extra_flags) {
  size_t payload_size = 0;
  for (std::string_view piece : payload) payload_size += piece.size();
  Store32(h, kMagic);
  h[4] = static_cast<char>(kVersion);
  h[5] = static_cast<char>(extra_flags | (mac != nullptr ? kFlagMac : 0));
  h[6] = 0;
  h[7] = 0;
  Store32(h + 8, static_cast<uint32_t>(payload_size));
  Store32(h + 12, message_count);
  if (mac != nullptr) {
    uint8_t seq_bytes[8];
    SeqBytes(seq, seq_bytes);
    mac->Begin();
    mac->Update(h, kMacOffset);
    mac->Update(seq_bytes, sizeof(seq_bytes));
    for (std::string_view piece : payload) mac->Update(piece.data(), piece.size());
    const FrameMac::Tag tag = mac->Finish();
    std::memcpy(h + kMacOffset, tag.data(), tag.size());
  } else {
    std::memset(h + kMacOffset, 0, FrameMac::kTagSize);
  }
}

void FrameCodec::FinishFrame(std::string* out, size_t header_offset, uint32_t message_count,
                             uint64_t seq, FrameMac* mac, uint8_t extra_flags) {
  char* h = out->data() + header_offset;
  const std::string_view payload(h + kHeaderSize, out->size() - header_offset - kHeaderSize);
  EncodeHeader(h, std::span<const std::string_view>(&payload, 1), message_count, seq, mac,
               extra_flags);
}

void FrameCodec::EncodeFrame(const Batch& batch, uint64_t seq, FrameMac* mac, std::string* out) {
  const size_t offset = BeginFrame(out);
  out->append(batch.payload());
  FinishFrame(out, offset, batch.message_count(), seq, mac);
}

void FrameCodec::EncodeHello(std::string_view nonce, uint64_t seq, FrameMac* mac,
                             std::string* out) {
  const size_t offset = BeginFrame(out);
  out->append(nonce.data(), nonce.size());
  FinishFrame(out, offset, 0, seq, mac, kFlagHello);
}

void FrameCodec::EncodeGoodbye(uint64_t seq, FrameMac* mac, std::string* out) {
  const size_t offset = BeginFrame(out);
  FinishFrame(out, offset, 0, seq, mac, kFlagGoodbye);
}

FrameCodec::DecodeResult FrameCodec::Decode(std::string_view buffer, uint64_t seq, FrameMac& mac,
                                            size_t max_payload_bytes,
                                            std::vector<Message>* messages) {
  if (std::optional<DecodeResult> refused = CheckFixedFields(buffer)) return *std::move(refused);
  DecodeResult result;
  if (buffer.size() < kHeaderSize) return result;

  const uint32_t payload_size = Load32(buffer.data() + 8);
  const uint32_t count = Load32(buffer.data() + 12);
  if (std::optional<DecodeResult> refused = CheckCounts(payload_size, count, max_payload_bytes)) {
    return *std::move(refused);
  }
  result.frame_size = kHeaderSize + payload_size;
  if (buffer.size() < result.frame_size) return result;

  const uint8_t flags = static_cast<uint8_t>(buffer[5]);
  const std::string_view payload = buffer.substr(kHeaderSize, payload_size);
  if ((flags & kFlagMac) != 0 && !MacMatches(buffer, payload, seq, mac)) {
    return Error("bad_mac", "frame MAC mismatch (wrong topology secret or corrupted stream)",
                 result.frame_size);
  }
  result.flags = flags;
  result.payload = payload;
  messages->clear();
  if ((flags & kFlagHello) != 0 && (flags & kFlagGoodbye) != 0) {
    return Error("bad_flags", "frame is both a hello and a goodbye", result.frame_size);
  }
  if ((flags & kFlagHello) != 0) {
    if (count != 0 || payload_size != kNonceSize) {
      return Error("malformed_payload", "hello frame must carry exactly one nonce",
                   result.frame_size);
    }
    result.kind = DecodeResult::Kind::kFrame;
    return result;
  }
  if ((flags & kFlagGoodbye) != 0) {
    if (count != 0 || payload_size != 0) {
      return Error("malformed_payload", "goodbye frame must be empty", result.frame_size);
    }
    result.kind = DecodeResult::Kind::kFrame;
    return result;
  }
  if (std::optional<DecodeResult> refused =
          SplitMessages(payload, count, result.frame_size, messages)) {
    return *std::move(refused);
  }
  result.kind = DecodeResult::Kind::kFrame;
  return result;
}

}  // namespace tempest::net
