#ifndef TEMPEST_NIMBUS_TRANSPORT_SECRETS_H_
#define TEMPEST_NIMBUS_TRANSPORT_SECRETS_H_

// Where each topology's transport secret (the HMAC key of its workers'
// frames, stored in its assignment) comes from
// (docs/adr/0022-cluster-secret-file.md). With a cluster secret
// (tempest.cluster.secret.file) it is derived from that secret and the
// topology id, so it is the same on every nimbus and after ZooKeeper lost
// it; without one it is 32 random bytes, made once per topology and kept
// by every later assignment. Functions only; safe from any thread.

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace tempest::nimbus {

// 32 bytes from the kernel's CSPRNG (getrandom(2)).
absl::StatusOr<std::string> NewTransportSecret();

// The secret topology `topology_id` must have when it now has `stored`
// (empty: none yet), or nullopt to keep `stored`. With a `cluster_secret`:
// the derived secret unless `stored` already is it (an assignment written
// before the file was configured, or by another hand, is corrected); without:
// a new random secret only when there is none.
absl::StatusOr<std::optional<std::string>> ReplacementTransportSecret(
    const std::string& cluster_secret, const std::string& topology_id, const std::string& stored);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_TRANSPORT_SECRETS_H_
