#include "common/coord/zk_auth.h"

#include "absl/strings/str_cat.h"
#include "common/api/config.h"
#include "common/api/string_view_compat.h"
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
  absl::StatusOr<os::LoadedSecret> loaded =
      os::LoadSecretFile(path, key, {"user:password line", "the ZooKeeper password"});
  if (!loaded.ok()) return loaded.status();
  if (loaded->warning.has_value()) spdlog::warn("{}", *loaded->warning);
  return std::move(loaded->value);
}

absl::Status CheckPayload(const std::string& payload, std::string_view source) {
  const size_t colon = payload.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == payload.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        api::Sv(source),
        " must be 'user:password' (both parts non-empty) when storm.zookeeper.auth.scheme is "
        "digest"));
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
  if (access == ZkNodeAccess::kLegacyReadable && legacy_world_readable) {
    return CreatorAllWorldReadAcl();
  }
  return CreatorAllAcl();
}

std::string ZkAuthConfig::Identity() const {
  return absl::StrCat(scheme, ":", payload.substr(0, payload.find(':')));
}

absl::StatusOr<ZkAuthConfig> ZkAuthConfig::FromConfig(const api::Config& config) {
  ZkAuthConfig c;
  absl::StatusOr<std::string> scheme = OptionalString(config, kZkAuthSchemeKey);
  if (!scheme.ok()) return scheme.status();
  absl::StatusOr<std::string> payload = OptionalString(config, kZkAuthPayloadKey);
  if (!payload.ok()) return payload.status();
  if (const api::Value* v = config.Find(kZkOffsetsWorldReadableKey);
      v != nullptr && !v->is_nil()) {
    const std::optional<bool> b = v->TryBool();
    if (!b.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          api::Sv(kZkOffsetsWorldReadableKey), " must be true or false"));
    }
    c.offsets_world_readable = *b;
  }
  absl::StatusOr<std::string> file = OptionalString(config, kZkAuthFileKey);
  if (!file.ok()) return file.status();
  std::string source(kZkAuthPayloadKey);
  if (!file->empty()) {
    if (!payload->empty()) {
      return absl::InvalidArgumentError(
          "set storm.zookeeper.auth.payload or tempest.zookeeper.auth.file, not both");
    }
    absl::StatusOr<std::string> from_file = ReadAuthFile(*file, kZkAuthFileKey);
    if (!from_file.ok()) return from_file.status();
    *payload = *std::move(from_file);
    if (scheme->empty()) *scheme = "digest";
    source = absl::StrCat(api::Sv(kZkAuthFileKey), " ", *file);
  }
  if (scheme->empty() && payload->empty()) return c;
  if (scheme->empty()) {
    return absl::InvalidArgumentError(
        "storm.zookeeper.auth.payload is set but storm.zookeeper.auth.scheme is not (use digest)");
  }
  if (*scheme != "digest") {
    return absl::InvalidArgumentError(absl::StrCat(
        "storm.zookeeper.auth.scheme: only 'digest' is supported, not '", *scheme, "'"));
  }
  if (absl::Status s = CheckPayload(*payload, source); !s.ok()) return s;
  c.scheme = *scheme;
  c.payload = *payload;
  return c;
}

absl::StatusOr<ZkAuthConfig> ZkAuthConfig::FromFile(const std::string& path,
                                                    std::string_view source) {
  absl::StatusOr<std::string> payload = ReadAuthFile(path, source);
  if (!payload.ok()) return payload.status();
  if (absl::Status s = CheckPayload(*payload, absl::StrCat(api::Sv(source), " ", path));
      !s.ok()) {
    return s;
  }
  ZkAuthConfig c;
  c.scheme = "digest";
  c.payload = *std::move(payload);
  return c;
}

}  // namespace tempest::coord
