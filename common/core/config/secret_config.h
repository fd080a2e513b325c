#ifndef TEMPEST_COMMON_CORE_SECRET_CONFIG_H_
#define TEMPEST_COMMON_CORE_SECRET_CONFIG_H_

// Which config keys hold credentials, so that no component, multilang child
// or log line is ever handed one (docs/security.md, "Secrets stay with the
// daemons").

#include <string_view>

#include "common/api/config.h"

namespace tempest::core {

// True for a key whose value is a credential or names one:
// storm.zookeeper.auth.*, storm.zookeeper.topology.auth.*, tempest.api.token*,
// and any key holding password, secret, payload or token in any case
// (drpc.https.keystore.password, a topology's own my.db.password, ...). The
// REST API redacts the same keys.
bool IsSecretConfigKey(std::string_view key);

// `config` without the keys IsSecretConfigKey names.
api::Config WithoutSecrets(const api::Config& config);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_SECRET_CONFIG_H_
