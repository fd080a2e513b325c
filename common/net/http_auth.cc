#include "common/net/http_auth.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/config/config_keys.h"
#include "common/core/status_macros.h"
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

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

HttpResponse Unauthorized(std::string_view message) {
  HttpResponse r = HttpResponse::Error(401, "Unauthorized", message);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tempest\"");
  return r;
}

// tempest.api.allowed.hosts and the names nimbus is reached by, lower case.
absl::StatusOr<std::vector<std::string>> AllowedHostsFromConfig(const api::Config& config) {
  std::vector<std::string> hosts;
  auto add = [&hosts](std::string name) {
    name = absl::AsciiStrToLower(name);
    if (!name.empty() && name.back() == '.') name.pop_back();
    if (!name.empty()) hosts.push_back(std::move(name));
  };
  if (const api::Value* v = config.Find(kApiAllowedHostsKey)) {
    if (absl::Status s = core::CheckConfigValue(kApiAllowedHostsKey, *v); !s.ok()) return s;
    if (v->is_list()) {
      for (const api::Value& e : v->AsList()) add(e.AsString());
    }
  }
  for (std::string_view key : {"ui.host", "storm.local.hostname"}) {
    add(config.GetString(key, ""));
  }
  if (const api::Value* seeds = config.Find("nimbus.seeds"); seeds != nullptr && seeds->is_list()) {
    for (const api::Value& e : seeds->AsList()) {
      if (e.is_string()) add(e.AsString());
    }
  }
  return hosts;
}

}  // namespace

absl::StatusOr<LoadedToken> LoadTokenFile(const std::string& path, std::string_view key) {
  ASSIGN_OR_RETURN(os::LoadedSecret loaded, os::LoadSecretFile(path, key));
  return LoadedToken{std::move(loaded.value), std::move(loaded.warning)};
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
  for (std::string_view key : {std::string_view(kApiTokenFileKey),
                               std::string_view(kNimbusAuthorizerKey)}) {
    if (const api::Value* v = config.Find(key)) {
      if (absl::Status s = core::CheckConfigValue(key, *v); !s.ok()) return s;
    }
  }
  HttpAuthPolicy policy;
  const std::string file = config.GetString(kApiTokenFileKey, "");
  if (!file.empty()) {
    ASSIGN_OR_RETURN(LoadedToken token, LoadTokenFile(file, kApiTokenFileKey));
    if (token.warning.has_value()) spdlog::warn("{}", *token.warning);
    policy.token = std::move(token.token);
  }
  ASSIGN_OR_RETURN(policy.protect_reads, core::ConfigBool(config, kApiAuthReadsKey, false));
  ASSIGN_OR_RETURN(policy.allowed_hosts, AllowedHostsFromConfig(config));
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
    // A missing token and a wrong one get different answers, so that a
    // client can say which; neither says anything about the right token.
    auto header = request.headers.find("authorization");
    std::optional<std::string_view> token;
    if (header != request.headers.end()) token = ParseBearer(header->second);
    if (!token.has_value()) {
      return Unauthorized(
          "authentication required: send the API token as 'Authorization: Bearer TOKEN'");
    }
    if (!TokensEqual(*token, policy.token)) {
      return Unauthorized("the token was rejected: it is not this cluster's API token");
    }
  }
  if (!read && policy.deny_writes) {
    return HttpResponse::Error(403, "Forbidden",
                               "nimbus.authorizer DenyAuthorizer refuses every change");
  }
  return std::nullopt;
}

bool HostAllowed(std::string_view host, const std::vector<std::string>& allowed) {
  std::string name;
  if (!host.empty() && host.front() == '[') {
    // "[v6]" or "[v6]:port": an IPv6 literal.
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !AllDigits(rest.substr(1)))) return false;
    in6_addr v6{};
    return ::inet_pton(AF_INET6, std::string(host.substr(1, close - 1)).c_str(), &v6) == 1;
  }
  const size_t colon = host.rfind(':');
  name = absl::AsciiStrToLower(Sv(host.substr(0, colon)));
  if (colon != std::string_view::npos && !AllDigits(host.substr(colon + 1))) return false;
  if (!name.empty() && name.back() == '.') name.pop_back();
  if (name.empty()) return false;
  in_addr v4{};
  if (::inet_pton(AF_INET, name.c_str(), &v4) == 1 || name == "localhost") return true;
  return std::find(allowed.begin(), allowed.end(), name) != allowed.end();
}

std::optional<HttpResponse> CheckHost(const HttpAuthPolicy& policy, const HttpRequest& request) {
  if (!policy.reads_open()) return std::nullopt;
  auto header = request.headers.find("host");
  if (header == request.headers.end() || HostAllowed(header->second, policy.allowed_hosts)) {
    return std::nullopt;
  }
  return HttpResponse::Error(
      403, "Forbidden",
      absl::StrCat("Host '", absl::CHexEscape(header->second.substr(0, 100)),
                   "' is not a name of this nimbus; while reads need no token only IP "
                   "addresses, localhost and the names in ",
                   kApiAllowedHostsKey, " are accepted"));
}

HttpHandler RequireAllowedHost(HttpAuthPolicy policy, HttpHandler handler) {
  return [policy = std::move(policy), handler = std::move(handler)](const HttpRequest& request) {
    if (std::optional<HttpResponse> refused = CheckHost(policy, request)) return *refused;
    return handler(request);
  };
}

HttpHandler RequireAuth(HttpAuthPolicy policy, HttpHandler handler) {
  return [policy = std::move(policy), handler = std::move(handler)](const HttpRequest& request) {
    if (std::optional<HttpResponse> refused = CheckAuth(policy, request)) return *refused;
    return handler(request);
  };
}

}  // namespace tempest::net
