#ifndef TEMPEST_COMMON_NET_HTTP_AUTH_H_
#define TEMPEST_COMMON_NET_HTTP_AUTH_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/net/http_router.h"

namespace tempest::net {

// The configuration keys (tempest.yaml) of the REST API's authentication.
inline constexpr char kApiTokenFileKey[] = "tempest.api.token.file";
inline constexpr char kApiAuthReadsKey[] = "tempest.api.auth.reads";
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

  bool enabled() const { return !token.empty() || deny_writes; }
};

// The policy nimbus serves with, from tempest.api.token.file,
// tempest.api.auth.reads and nimbus.authorizer (unset, NoopAuthorizer,
// tempest.BearerTokenAuthorizer, which needs the token file, or
// DenyAuthorizer). Logs a warning for a group- or world-readable token
// file. InvalidArgument for an unusable file or an authorizer Tempest
// does not implement.
absl::StatusOr<HttpAuthPolicy> HttpAuthPolicyFromConfig(const api::Config& config);

// nullopt when `request` may proceed; otherwise the 401 or 403 reply.
// GET and HEAD are reads; every other method is a write.
std::optional<HttpResponse> CheckAuth(const HttpAuthPolicy& policy, const HttpRequest& request);

// `handler` behind CheckAuth. `policy` is copied.
HttpHandler RequireAuth(HttpAuthPolicy policy, HttpHandler handler);

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_HTTP_AUTH_H_
