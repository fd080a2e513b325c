#ifndef TEMPEST_COMMON_NET_HTTP_AUTH_H_
#define TEMPEST_COMMON_NET_HTTP_AUTH_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/net/http_router.h"

namespace tempest::net {

// The configuration keys (tempest.yaml) of the REST API's authentication.
inline constexpr char kApiTokenFileKey[] = "tempest.api.token.file";
inline constexpr char kApiAuthReadsKey[] = "tempest.api.auth.reads";
// Host names (besides IP literals, localhost and nimbus's own names) a
// request's Host header may carry while reads need no token.
inline constexpr char kApiAllowedHostsKey[] = "tempest.api.allowed.hosts";
// Storm's key; what Tempest accepts is in docs/security.md.
inline constexpr char kNimbusAuthorizerKey[] = "nimbus.authorizer";

// Bearer-token authentication for the REST API: loading the token file,
// parsing the Authorization header, comparing in constant time, and a
// handler wrapper that answers 401 (with `WWW-Authenticate: Bearer`) when
// the token is missing or wrong. Pure values and functions; safe from any
// thread.

// A token read from a file: the first line, surrounding whitespace removed.
struct LoadedToken {
  std::string token;
  // Set when the file is readable by its group or by everyone (the token
  // still works; callers log this once).
  std::optional<std::string> warning;
};

// Reads the token file `path` (named by `key` in errors, e.g.
// "tempest.api.token.file"). InvalidArgument for a missing, unreadable,
// empty or oversized (> 4 KiB) file, or a token with inner whitespace or
// control characters; the message names the key and the path.
absl::StatusOr<LoadedToken> LoadTokenFile(const std::string& path, std::string_view key);

// A new random token (64 hex characters from 32 bytes of OpenSSL's CSPRNG).
std::string NewRandomToken();

// Writes `token` and a newline to `path`, created (or truncated) with mode
// 0600 and left at 0600 whatever the umask.
absl::Status WriteTokenFile(const std::string& path, const std::string& token);

// The credentials of an "Authorization: Bearer <token>" header value; the
// scheme is matched case-insensitively. nullopt for any other scheme or an
// empty token.
std::optional<std::string_view> ParseBearer(std::string_view authorization);

// Whether `a` equals `b`, in time independent of where they differ (both
// are hashed with SHA-256 and the digests compared with CRYPTO_memcmp).
bool TokensEqual(std::string_view a, std::string_view b);

// Who must present the token. With an empty `token` nothing is checked.
struct HttpAuthPolicy {
  std::string token;
  // Also require it for GET requests (the UI page "/" stays open so that a
  // browser can load the page that asks for the token).
  bool protect_reads = false;
  // Refuse every state-changing request with 403 whatever the token
  // (Storm's DenyAuthorizer).
  bool deny_writes = false;

  // Host names a request may be addressed to while reads need no token
  // (lower case, no port); IP literals and "localhost" always may. Guards
  // open reads against DNS rebinding: a page from another site whose name
  // now resolves to nimbus reads nothing, as its Host header is its own name.
  std::vector<std::string> allowed_hosts{};

  bool enabled() const { return !token.empty() || deny_writes; }
  bool reads_open() const { return token.empty() || !protect_reads; }
};

// The policy nimbus serves with, from tempest.api.token.file,
// tempest.api.auth.reads and nimbus.authorizer (unset, NoopAuthorizer,
// tempest.BearerTokenAuthorizer, which needs the token file, or
// DenyAuthorizer). Logs a warning for a group- or world-readable token
// file. InvalidArgument for an unusable file or an authorizer Tempest
// does not implement.
//
// Every key is read strictly (core::CheckConfigValue): tempest.api.auth.reads
// takes true or false only; anything else is InvalidArgument naming the key
// and the value. allowed_hosts: tempest.api.allowed.hosts plus ui.host,
// storm.local.hostname and nimbus.seeds (the names clients reach nimbus by).
absl::StatusOr<HttpAuthPolicy> HttpAuthPolicyFromConfig(const api::Config& config);

// Whether `host` (a Host header value, with or without ":port") names an IP
// literal, localhost, or one of `allowed` (compared case-insensitively).
bool HostAllowed(std::string_view host, const std::vector<std::string>& allowed);

// nullopt when `request` may proceed; otherwise 403 for a Host header that
// HostAllowed refuses while reads need no token (policy.reads_open()). A
// request without a Host header (HTTP/1.0) proceeds.
std::optional<HttpResponse> CheckHost(const HttpAuthPolicy& policy, const HttpRequest& request);

// nullopt when `request` may proceed; otherwise the 401 or 403 reply.
// GET and HEAD are reads; every other method is a write.
std::optional<HttpResponse> CheckAuth(const HttpAuthPolicy& policy, const HttpRequest& request);

// `handler` behind CheckAuth. `policy` is copied.
HttpHandler RequireAuth(HttpAuthPolicy policy, HttpHandler handler);

// `handler` behind CheckHost. `policy` is copied.
HttpHandler RequireAllowedHost(HttpAuthPolicy policy, HttpHandler handler);

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_HTTP_AUTH_H_
