#include "nimbus/transport_secrets.h"

#include <sys/random.h>

#include <cerrno>

#include "common/core/status_macros.h"
#include "common/net/frame_mac.h"
#include "common/net/transport_secret.h"

namespace tempest::nimbus {

absl::StatusOr<std::string> NewTransportSecret() {
  std::string secret(net::kTransportSecretBytes, '\0');
  size_t filled = 0;
  for (int attempt = 0; filled < secret.size() && attempt < 100; ++attempt) {
    const ssize_t n = getrandom(secret.data() + filled, secret.size() - filled, 0);
    if (n > 0) {
      filled += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      return absl::InternalError("getrandom failed: cannot generate a transport secret");
    }
  }
  if (filled < secret.size()) return absl::InternalError("getrandom returned too few bytes");
  return secret;
}

absl::StatusOr<std::optional<std::string>> ReplacementTransportSecret(
    const std::string& cluster_secret, const std::string& topology_id, const std::string& stored) {
  if (cluster_secret.empty()) {
    if (!stored.empty()) return std::nullopt;
    ASSIGN_OR_RETURN(std::string secret, NewTransportSecret());
    return std::optional<std::string>(std::move(secret));
  }
  ASSIGN_OR_RETURN(std::string derived, net::DeriveTransportSecret(cluster_secret, topology_id));
  // Compared in constant time: `stored` may have been planted to probe.
  if (stored.size() == derived.size() &&
      net::FrameMac::Equal(reinterpret_cast<const uint8_t*>(stored.data()),
                           reinterpret_cast<const uint8_t*>(derived.data()))) {
    return std::nullopt;
  }
  return std::optional<std::string>(std::move(derived));
}

}  // namespace tempest::nimbus
