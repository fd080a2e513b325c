#ifndef TEMPEST_COMMON_NET_TRANSPORT_SECRET_H_
#define TEMPEST_COMMON_NET_TRANSPORT_SECRET_H_

// Per-topology transport secrets derived from the cluster secret
// (tempest.cluster.secret.file, docs/adr/0022-cluster-secret-file.md):
// HKDF-SHA256 of the cluster secret with the topology id as context, so
// every topology gets its own key and nothing that holds one topology's
// secret learns another's or the cluster secret. Functions only; safe from
// any thread.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tempest::net {

inline constexpr char kClusterSecretFileKey[] = "tempest.cluster.secret.file";
// A cluster secret shorter than this is refused: 32 hex digits carry 128 bits.
inline constexpr size_t kMinClusterSecretChars = 32;
inline constexpr size_t kTransportSecretBytes = 32;

// HKDF-SHA256 (RFC 5869): `length` bytes from input key material `ikm`,
// `salt` and `info`, computed with OpenSSL's EVP_KDF. InvalidArgument for an
// empty `ikm` or a length of 0 or over 255 * 32; Internal when OpenSSL fails.
absl::StatusOr<std::string> HkdfSha256(std::string_view ikm, std::string_view salt,
                                       std::string_view info, size_t length);

// The 32-byte transport secret of `topology_id` under `cluster_secret`.
absl::StatusOr<std::string> DeriveTransportSecret(std::string_view cluster_secret,
                                                  std::string_view topology_id);

// The cluster secret in the file `path` (the first line; named by
// tempest.cluster.secret.file in errors): refused when missing, unreadable,
// empty, over 4 KiB, holding a space or control character, or shorter than
// kMinClusterSecretChars. Logs a warning when the file is readable by its
// group or by everyone.
absl::StatusOr<std::string> LoadClusterSecret(const std::string& path);

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_TRANSPORT_SECRET_H_
