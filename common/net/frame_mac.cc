#include "common/net/frame_mac.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace tempest::net {
namespace {

EVP_MAC* AsMac(void* p) { return static_cast<EVP_MAC*>(p); }
EVP_MAC_CTX* AsCtx(void* p) { return static_cast<EVP_MAC_CTX*>(p); }

}  // namespace

absl::StatusOr<std::unique_ptr<FrameMac>> FrameMac::Create(std::string_view secret) {
  if (secret.empty()) return absl::InvalidArgumentError("frame MAC secret must not be empty");
  std::unique_ptr<FrameMac> mac(new FrameMac());
  mac->secret_ = std::string(secret);
  mac->mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (mac->mac_ == nullptr) return absl::InternalError("OpenSSL: HMAC not available");
  mac->ctx_ = EVP_MAC_CTX_new(AsMac(mac->mac_));
  if (mac->ctx_ == nullptr) return absl::InternalError("OpenSSL: EVP_MAC_CTX_new failed");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (EVP_MAC_CTX_set_params(AsCtx(mac->ctx_), params) != 1) {
    return absl::InternalError("OpenSSL: cannot select SHA256 for HMAC");
  }
  return mac;
}

FrameMac::~FrameMac() {
  if (ctx_ != nullptr) EVP_MAC_CTX_free(AsCtx(ctx_));
  if (mac_ != nullptr) EVP_MAC_free(AsMac(mac_));
  OPENSSL_cleanse(secret_.data(), secret_.size());
}

void FrameMac::Begin() {
  // Re-keying per frame costs two SHA-256 blocks; frames are ≥ kilobytes on
  // the hot path, so this is noise and keeps the context state simple.
  if (EVP_MAC_init(AsCtx(ctx_), reinterpret_cast<const unsigned char*>(secret_.data()),
                   secret_.size(), nullptr) != 1) {
    // Only fails on allocation failure or a broken OpenSSL: a broken invariant.
    spdlog::critical("OpenSSL EVP_MAC_init failed");
    std::abort();
  }
}

void FrameMac::Update(const void* data, size_t size) {
  if (size == 0) return;
  if (EVP_MAC_update(AsCtx(ctx_), static_cast<const unsigned char*>(data), size) != 1) {
    spdlog::critical("OpenSSL EVP_MAC_update failed");
    std::abort();
  }
}

FrameMac::Tag FrameMac::Finish() {
  Tag tag{};
  size_t out_len = 0;
  if (EVP_MAC_final(AsCtx(ctx_), tag.data(), &out_len, tag.size()) != 1 || out_len != kTagSize) {
    spdlog::critical("OpenSSL EVP_MAC_final failed");
    std::abort();
  }
  return tag;
}

bool FrameMac::Equal(const uint8_t* a, const uint8_t* b) {
  return CRYPTO_memcmp(a, b, kTagSize) == 0;
}

}  // namespace tempest::net

namespace tempest::net {

std::string FrameMac::RandomBytes(size_t size) {
  std::string out(size, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(size)) != 1) {
    spdlog::critical("OpenSSL RAND_bytes failed");
    std::abort();
  }
  return out;
}

}  // namespace tempest::net
