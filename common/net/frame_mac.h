#ifndef TEMPEST_COMMON_NET_FRAME_MAC_H_
#define TEMPEST_COMMON_NET_FRAME_MAC_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tempest::net {

// HMAC-SHA256 (RFC 2104) keyed with the per-topology secret. The hash is
// OpenSSL's SHA-256 (libcrypto's low-level SHA256_* functions, with the
// CPU's SHA extensions); the two-pass HMAC construction around it is ours,
// because OpenSSL's EVP_MAC route loads its provider machinery, about 2 MB
// of resident memory in every worker (docs/adr/0002-openssl-for-frame-mac.md,
// docs/adr/0036-frame-mac-without-openssl-providers.md). The key's inner and
// outer pads are hashed once, at Create, so a MAC costs only its message.
// Not thread-safe: each connection (always on the event-loop thread) or each
// test owns its own instance.
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
  // `size` bytes from the kernel's CSPRNG (getrandom(2); handshake nonces,
  // tokens).
  static std::string RandomBytes(size_t size);

 private:
  struct Pads;  // SHA-256 states after the key's inner and outer pads; the running state

  FrameMac();

  std::unique_ptr<Pads> pads_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_FRAME_MAC_H_
