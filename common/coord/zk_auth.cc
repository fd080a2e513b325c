#include "common/coord/zk_auth.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/api/config.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "common/os/secret_file.h"
#include "spdlog/spdlog.h"

namespace tempest::coord {
namespace {

absl::StatusOr<std::string> OptionalString(const api::Config& config, std::string_view key) {
  const api::Value* v = config.Find(key);
  if (v == nullptr || v->is_nil()) return std::string();
  const std::string* s = v->TryString();
  if (s == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(api::Sv(key), " must be a string"));
  }
  return *s;
}

// The digest payload in the auth file `path`; `key` names it in errors.
absl::StatusOr<std::string> ReadAuthFile(const std::string& path, std::string_view key) {
  ASSIGN_OR_RETURN(os::LoadedSecret loaded,
                   os::LoadSecretFile(path, key, {"user:password line", "the ZooKeeper password"}));
  if (loaded.warning.has_value()) spdlog::warn("{}", *loaded.warning);
  return std::move(loaded.value);
}

absl::Status CheckPayload(const std::string& payload, std::string_view source,
                          std::string_view scheme_key) {
  const size_t colon = payload.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == payload.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        api::Sv(source), " must be 'user:password' (both parts non-empty) when ",
        api::Sv(scheme_key), " is digest"));
  }
  return absl::OkStatus();
}

}  // namespace

ZkAcl OpenAcl() { return {{kZkPermAll, "world", "anyone"}}; }
ZkAcl CreatorAllAcl() { return {{kZkPermAll, "auth", ""}}; }
ZkAcl CreatorAllWorldReadAcl() {
  return {{kZkPermAll, "auth", ""}, {kZkPermRead, "world", "anyone"}};
}

ZkAcl ZkAclPolicy::For(ZkNodeAccess access) const {
  if (!authenticated) return OpenAcl();
  if (access == ZkNodeAccess::kSharedParent) {
    if (trusted_digest_ids.empty()) return For(ZkNodeAccess::kLegacyReadable);
    constexpr int kReadCreate = kZkPermRead | kZkPermCreate;
    ZkAcl acl = {{kReadCreate, "auth", ""}, {kReadCreate, "world", "anyone"}};
    for (const std::string& id : trusted_digest_ids) {
      if (!id.empty()) acl.push_back({kZkPermAll, "digest", id});
    }
    return acl;
  }
  ZkAcl acl = access == ZkNodeAccess::kLegacyReadable && legacy_world_readable
                  ? CreatorAllWorldReadAcl()
                  : CreatorAllAcl();
  for (const std::string& id : trusted_digest_ids) {
    if (!id.empty()) acl.push_back({kZkPermAll, "digest", id});
  }
  return acl;
}

ZkAcl ZkAclPolicy::ForTopology(ZkNodeAccess access, std::string_view topology_digest_id,
                               int perms) const {
  ZkAcl acl = For(access);
  if (authenticated && !topology_digest_id.empty()) {
    acl.push_back({perms, "digest", std::string(topology_digest_id)});
  }
  return acl;
}

std::string ZkDigestId(std::string_view payload) {
  unsigned char sha[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), sha);
  unsigned char b64[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(b64, sha, SHA_DIGEST_LENGTH);
  const std::string_view user = payload.substr(0, payload.find(':'));
  return absl::StrCat(api::Sv(user), ":",
                      absl::string_view(reinterpret_cast<const char*>(b64), static_cast<size_t>(n)));
}

std::string ZkAuthConfig::Identity() const {
  return absl::StrCat(scheme, ":", payload.substr(0, payload.find(':')));
}

namespace {

absl::StatusOr<ZkAuthConfig> AuthFromKeys(const api::Config& config, std::string_view scheme_key,
                                          std::string_view payload_key) {
  ZkAuthConfig c;
  ASSIGN_OR_RETURN(std::string scheme, OptionalString(config, scheme_key));
  ASSIGN_OR_RETURN(std::string payload, OptionalString(config, payload_key));
  if (const api::Value* v = config.Find(kZkOffsetsWorldReadableKey);
      v != nullptr && !v->is_nil()) {
    const std::optional<bool> b = v->TryBool();
    if (!b.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          api::Sv(kZkOffsetsWorldReadableKey), " must be true or false"));
    }
    c.offsets_world_readable = *b;
  }
  // The auth file holds the cluster's identity; a topology's identity never
  // comes from it.
  const bool cluster_keys = scheme_key == kZkAuthSchemeKey;
  ASSIGN_OR_RETURN(const std::string file,
                   cluster_keys ? OptionalString(config, kZkAuthFileKey) : std::string());
  std::string source(payload_key);
  if (!file.empty()) {
    if (!payload.empty()) {
      return absl::InvalidArgumentError(
          "set storm.zookeeper.auth.payload or tempest.zookeeper.auth.file, not both");
    }
    ASSIGN_OR_RETURN(payload, ReadAuthFile(file, kZkAuthFileKey));
    if (scheme.empty()) scheme = "digest";
    source = absl::StrCat(api::Sv(kZkAuthFileKey), " ", file);
  }
  if (scheme.empty() && payload.empty()) return c;
  if (scheme.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(api::Sv(payload_key), " is set but ",
                                                   api::Sv(scheme_key), " is not (use digest)"));
  }
  if (scheme != "digest") {
    return absl::InvalidArgumentError(absl::StrCat(
        api::Sv(scheme_key), ": only 'digest' is supported, not '", scheme, "'"));
  }
  RETURN_IF_ERROR(CheckPayload(payload, source, scheme_key));
  c.scheme = scheme;
  c.payload = payload;
  return c;
}

}  // namespace

absl::StatusOr<ZkAuthConfig> ZkAuthConfig::FromFile(const std::string& path,
                                                    std::string_view source) {
  ASSIGN_OR_RETURN(std::string payload, ReadAuthFile(path, source));
  RETURN_IF_ERROR(
      CheckPayload(payload, absl::StrCat(api::Sv(source), " ", path), kZkAuthSchemeKey));
  ZkAuthConfig c;
  c.scheme = "digest";
  c.payload = std::move(payload);
  return c;
}

absl::StatusOr<ZkAuthConfig> ZkAuthConfig::FromConfig(const api::Config& config) {
  return AuthFromKeys(config, kZkAuthSchemeKey, kZkAuthPayloadKey);
}

absl::StatusOr<ZkAuthConfig> ZkAuthConfig::TopologyFromConfig(const api::Config& config) {
  return AuthFromKeys(config, kZkTopologyAuthSchemeKey, kZkTopologyAuthPayloadKey);
}

namespace {
ABSL_CONST_INIT absl::Mutex process_auth_mu(absl::kConstInit);
ZkAuthConfig& ProcessAuth() ABSL_EXCLUSIVE_LOCKS_REQUIRED(process_auth_mu) {
  static ZkAuthConfig* auth = new ZkAuthConfig();
  return *auth;
}
}  // namespace

void SetProcessTopologyZkAuth(ZkAuthConfig auth) {
  absl::MutexLock lock(&process_auth_mu);
  ProcessAuth() = std::move(auth);
}

ZkAuthConfig ProcessTopologyZkAuth() {
  absl::MutexLock lock(&process_auth_mu);
  return ProcessAuth();
}

}  // namespace tempest::coord
