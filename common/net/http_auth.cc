#include "common/net/http_auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/net/frame_mac.h"
#include "common/os/secret_file.h"
#include "spdlog/spdlog.h"

namespace tempest::net {
namespace {

using api::StdSv;
using api::Sv;

std::string Sha256(std::string_view text) {
  std::string digest(SHA256_DIGEST_LENGTH, '\0');
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
         reinterpret_cast<unsigned char*>(digest.data()));
  return digest;
}

HttpResponse Unauthorized(std::string_view message) {
  HttpResponse r = HttpResponse::Error(401, "Unauthorized", message);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tempest\"");
  return r;
}

}  // namespace

absl::StatusOr<LoadedToken> LoadTokenFile(const std::string& path, std::string_view key) {
  absl::StatusOr<os::LoadedSecret> loaded = os::LoadSecretFile(path, key);
  if (!loaded.ok()) return loaded.status();
  return LoadedToken{std::move(loaded->value), std::move(loaded->warning)};
}

std::string NewRandomToken() { return absl::BytesToHexString(FrameMac::RandomBytes(32)); }

absl::Status WriteTokenFile(const std::string& path, const std::string& token) {
  return os::WriteSecretFile(path, token);
}

std::optional<std::string_view> ParseBearer(std::string_view authorization) {
  authorization = StdSv(absl::StripAsciiWhitespace(Sv(authorization)));
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(Sv(authorization.substr(0, kScheme.size())), Sv(kScheme)) ||
      (authorization[kScheme.size()] != ' ' && authorization[kScheme.size()] != '\t')) {
    return std::nullopt;
  }
  std::string_view token =
      StdSv(absl::StripAsciiWhitespace(Sv(authorization.substr(kScheme.size()))));
  if (token.empty()) return std::nullopt;
  return token;
}

bool TokensEqual(std::string_view a, std::string_view b) {
  const std::string da = Sha256(a);
  const std::string db = Sha256(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

absl::StatusOr<HttpAuthPolicy> HttpAuthPolicyFromConfig(const api::Config& config) {
  HttpAuthPolicy policy;
  const std::string file = config.GetString(kApiTokenFileKey, "");
  if (!file.empty()) {
    absl::StatusOr<LoadedToken> token = LoadTokenFile(file, kApiTokenFileKey);
    if (!token.ok()) return token.status();
    if (token->warning.has_value()) spdlog::warn("{}", *token->warning);
    policy.token = std::move(token->token);
  }
  policy.protect_reads = config.GetBool(kApiAuthReadsKey, false);
  constexpr std::string_view kStormAuthorizers = "org.apache.storm.security.auth.authorizer.";
  const std::string authorizer = config.GetString(kNimbusAuthorizerKey, "");
  if (authorizer.empty() || authorizer == absl::StrCat(Sv(kStormAuthorizers), "NoopAuthorizer")) {
    return policy;
  }
  if (authorizer == absl::StrCat(Sv(kStormAuthorizers), "DenyAuthorizer")) {
    policy.deny_writes = true;
    return policy;
  }
  if (authorizer == "tempest.BearerTokenAuthorizer") {
    if (policy.token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kNimbusAuthorizerKey, " tempest.BearerTokenAuthorizer needs ",
                       kApiTokenFileKey, " (a file holding the API token)"));
    }
    return policy;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      kNimbusAuthorizerKey, " '", authorizer,
      "' is not supported: Tempest has no user principals; use tempest.BearerTokenAuthorizer "
      "with ", kApiTokenFileKey, ", NoopAuthorizer or DenyAuthorizer"));
}

std::optional<HttpResponse> CheckAuth(const HttpAuthPolicy& policy, const HttpRequest& request) {
  const bool read = request.method == "GET" || request.method == "HEAD";
  if (!policy.enabled() || (read && !policy.protect_reads)) return std::nullopt;
  if (!policy.token.empty()) {
    auto header = request.headers.find("authorization");
    if (header == request.headers.end()) {
      return Unauthorized(
          "authentication required: send the API token as 'Authorization: Bearer TOKEN'");
    }
    std::optional<std::string_view> token = ParseBearer(header->second);
    if (!token.has_value() || !TokensEqual(*token, policy.token)) {
      return Unauthorized("authentication required: the bearer token is not this cluster's");
    }
  }
  if (!read && policy.deny_writes) {
    return HttpResponse::Error(403, "Forbidden",
                               "nimbus.authorizer DenyAuthorizer refuses every change");
  }
  return std::nullopt;
}

HttpHandler RequireAuth(HttpAuthPolicy policy, HttpHandler handler) {
  return [policy = std::move(policy), handler = std::move(handler)](const HttpRequest& request) {
    if (std::optional<HttpResponse> refused = CheckAuth(policy, request)) return *refused;
    return handler(request);
  };
}

}  // namespace tempest::net
