#include "common/net/transport_secret.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "common/os/secret_file.h"
#include "spdlog/spdlog.h"

namespace tempest::net {
namespace {

// Fixed per purpose, so a key derived for something else from the same
// cluster secret can never equal a transport secret.
constexpr std::string_view kTransportSalt = "tempest transport secret v1";

}  // namespace

absl::StatusOr<std::string> HkdfSha256(std::string_view ikm, std::string_view salt,
                                       std::string_view info, size_t length) {
  if (ikm.empty()) return absl::InvalidArgumentError("HKDF: empty input key material");
  if (length == 0 || length > 255 * 32) {
    return absl::InvalidArgumentError(absl::StrCat("HKDF: cannot derive ", length, " bytes"));
  }
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (kdf == nullptr) return absl::InternalError("OpenSSL: HKDF not available");
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  EVP_KDF_free(kdf);
  if (ctx == nullptr) return absl::InternalError("OpenSSL: EVP_KDF_CTX_new failed");
  char digest[] = "SHA256";
  // OSSL_PARAM takes non-const pointers; OpenSSL only reads these.
  auto bytes = [](std::string_view s) { return const_cast<char*>(s.data()); };
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, bytes(ikm), ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, bytes(salt), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, bytes(info), info.size()),
      OSSL_PARAM_construct_end()};
  std::string out(length, '\0');
  const int ok =
      EVP_KDF_derive(ctx, reinterpret_cast<unsigned char*>(out.data()), out.size(), params);
  EVP_KDF_CTX_free(ctx);
  if (ok != 1) return absl::InternalError("OpenSSL: HKDF derivation failed");
  return out;
}

absl::StatusOr<std::string> DeriveTransportSecret(std::string_view cluster_secret,
                                                  std::string_view topology_id) {
  if (topology_id.empty()) return absl::InvalidArgumentError("no topology id to derive for");
  return HkdfSha256(cluster_secret, kTransportSalt, topology_id, kTransportSecretBytes);
}

absl::StatusOr<std::string> LoadClusterSecret(const std::string& path) {
  const os::SecretKind kind{"secret", "the cluster secret"};
  ASSIGN_OR_RETURN(os::LoadedSecret loaded, os::LoadSecretFile(path, kClusterSecretFileKey, kind));
  if (loaded.value.size() < kMinClusterSecretChars) {
    return absl::InvalidArgumentError(absl::StrCat(
        kClusterSecretFileKey, " ", path, ": the secret has ", loaded.value.size(),
        " characters; use at least ", kMinClusterSecretChars, " (openssl rand -hex 32)"));
  }
  if (loaded.warning.has_value()) spdlog::warn("{}", *loaded.warning);
  return std::move(loaded.value);
}

}  // namespace tempest::net
