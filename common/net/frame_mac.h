#ifndef TEMPEST_COMMON_NET_FRAME_MAC_H_
#define TEMPEST_COMMON_NET_FRAME_MAC_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tempest::net {

// HMAC-SHA256 keyed with the per-topology secret, computed with OpenSSL's
// EVP_MAC API (docs/adr/0002-openssl-for-frame-mac.md). Owns an OpenSSL MAC
// context. Not thread-safe: each connection (always on the event-loop
// thread) or each test owns its own instance.
//
// Usage: Begin(); Update(...) for every piece; Finish() → 32-byte tag.
class FrameMac {
 public:
  static constexpr size_t kTagSize = 32;
  using Tag = std::array<uint8_t, kTagSize>;

  // `secret` must be non-empty.
  static absl::StatusOr<std::unique_ptr<FrameMac>> Create(std::string_view secret);
  ~FrameMac();

  FrameMac(const FrameMac&) = delete;
  FrameMac& operator=(const FrameMac&) = delete;

  void Begin();
  void Update(const void* data, size_t size);
  Tag Finish();

  // Constant-time comparison, so a peer cannot learn a tag byte by byte.
  static bool Equal(const uint8_t* a, const uint8_t* b);
  // `size` bytes from OpenSSL's CSPRNG (handshake nonces).
  static std::string RandomBytes(size_t size);

 private:
  FrameMac() = default;

  std::string secret_;
  void* mac_ = nullptr;  // EVP_MAC*
  void* ctx_ = nullptr;  // EVP_MAC_CTX*
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_FRAME_MAC_H_
