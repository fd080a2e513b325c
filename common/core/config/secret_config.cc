#include "common/core/config/secret_config.h"

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace tempest::core {

bool IsSecretConfigKey(std::string_view key) {
  // tempest.zookeeper.auth.file only names the cluster's password file, but a
  // component has no use for it and a worker must never try to read it.
  static constexpr std::array<std::string_view, 4> kPrefixes = {
      "storm.zookeeper.auth.", "storm.zookeeper.topology.auth.", "tempest.zookeeper.auth.",
      "tempest.api.token"};
  for (std::string_view prefix : kPrefixes) {
    if (absl::StartsWithIgnoreCase(absl::string_view(key.data(), key.size()),
                                   absl::string_view(prefix.data(), prefix.size()))) {
      return true;
    }
  }
  const std::string lower = absl::AsciiStrToLower(absl::string_view(key.data(), key.size()));
  for (std::string_view word : {"password", "secret", "payload", "token"}) {
    if (absl::StrContains(lower, absl::string_view(word.data(), word.size()))) return true;
  }
  return false;
}

api::Config WithoutSecrets(const api::Config& config) {
  api::Config out;
  for (const auto& [key, value] : config.entries()) {
    if (!IsSecretConfigKey(key)) out.Set(key, value);
  }
  return out;
}

}  // namespace tempest::core
