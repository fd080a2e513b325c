#include "common/net/frame_mac.h"

// SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP,
// whose first use loads the provider layer (ADR 0036); they remain OpenSSL's
// own, known-answer-tested implementation.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace tempest::net {

struct FrameMac::Pads {
  SHA256_CTX inner;    // after absorbing key ^ ipad
  SHA256_CTX outer;    // after absorbing key ^ opad
  SHA256_CTX running;  // the current message's inner hash
};

namespace {

constexpr size_t kBlockSize = 64;  // SHA-256's block, HMAC's key pad length

// A broken invariant: the SHA256_* calls fail only on null arguments.
void Check(int ok, const char* what) {
  if (ok != 1) {
    spdlog::critical("OpenSSL {} failed", what);
    std::abort();
  }
}

}  // namespace

FrameMac::FrameMac() : pads_(std::make_unique<Pads>()) {}

absl::StatusOr<std::unique_ptr<FrameMac>> FrameMac::Create(std::string_view secret) {
  if (secret.empty()) return absl::InvalidArgumentError("frame MAC secret must not be empty");
  std::unique_ptr<FrameMac> mac(new FrameMac());
  // RFC 2104: a key longer than the block is hashed first; then zero-padded.
  unsigned char key[kBlockSize] = {};
  if (secret.size() > kBlockSize) {
    SHA256_CTX c;
    Check(SHA256_Init(&c), "SHA256_Init");
    Check(SHA256_Update(&c, secret.data(), secret.size()), "SHA256_Update");
    Check(SHA256_Final(key, &c), "SHA256_Final");
    OPENSSL_cleanse(&c, sizeof(c));
  } else {
    std::memcpy(key, secret.data(), secret.size());
  }
  unsigned char pad[kBlockSize];
  for (size_t i = 0; i < kBlockSize; ++i) pad[i] = key[i] ^ 0x36;
  Check(SHA256_Init(&mac->pads_->inner), "SHA256_Init");
  Check(SHA256_Update(&mac->pads_->inner, pad, kBlockSize), "SHA256_Update");
  for (size_t i = 0; i < kBlockSize; ++i) pad[i] = key[i] ^ 0x5c;
  Check(SHA256_Init(&mac->pads_->outer), "SHA256_Init");
  Check(SHA256_Update(&mac->pads_->outer, pad, kBlockSize), "SHA256_Update");
  OPENSSL_cleanse(key, sizeof(key));
  OPENSSL_cleanse(pad, sizeof(pad));
  mac->Begin();
  return mac;
}

FrameMac::~FrameMac() { OPENSSL_cleanse(pads_.get(), sizeof(Pads)); }

void FrameMac::Begin() { pads_->running = pads_->inner; }

void FrameMac::Update(const void* data, size_t size) {
  if (size == 0) return;
  Check(SHA256_Update(&pads_->running, data, size), "SHA256_Update");
}

FrameMac::Tag FrameMac::Finish() {
  unsigned char inner_digest[SHA256_DIGEST_LENGTH];
  Check(SHA256_Final(inner_digest, &pads_->running), "SHA256_Final");
  SHA256_CTX outer = pads_->outer;
  Check(SHA256_Update(&outer, inner_digest, sizeof(inner_digest)), "SHA256_Update");
  Tag tag{};
  Check(SHA256_Final(tag.data(), &outer), "SHA256_Final");
  OPENSSL_cleanse(&outer, sizeof(outer));
  // Finish without Begin MACs the empty message, never a stale one.
  Begin();
  return tag;
}

bool FrameMac::Equal(const uint8_t* a, const uint8_t* b) {
  return CRYPTO_memcmp(a, b, kTagSize) == 0;
}

std::string FrameMac::RandomBytes(size_t size) {
  std::string out(size, '\0');
  size_t filled = 0;
  while (filled < size) {
    const ssize_t n = getrandom(out.data() + filled, size - filled, 0);
    if (n > 0) {
      filled += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      // Only without a kernel CSPRNG (pre-3.17 kernels, a seccomp filter): no
      // nonce is better than a predictable one.
      spdlog::critical("getrandom failed: {}", std::strerror(errno));
      std::abort();
    }
  }
  return out;
}

}  // namespace tempest::net
