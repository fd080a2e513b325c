#ifndef TEMPEST_COMMON_NET_HTTP_ROUTER_H_
#define TEMPEST_COMMON_NET_HTTP_ROUTER_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace tempest::net {

// A request as handlers see it (no Beast types leak out of common/net).
struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: path plus optional "?query"
  std::string path;    // target without the query
  std::string query;   // after '?', undecoded; empty if none
  // Values of ":name" segments of the matched route, percent-decoded.
  std::map<std::string, std::string> params;
  // Header fields with lower-cased names.
  std::map<std::string, std::string> headers;
  std::string body;

  // Value of a query parameter (percent-decoded, '+' as space); empty if absent.
  std::string QueryParam(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Further header fields (e.g. WWW-Authenticate), sent as given.
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse Json(int status, std::string body);
  // An error shaped like the Storm UI REST API's: {"error": ..., "errorMessage": ...}.
  static HttpResponse Error(int status, std::string_view error, std::string_view message);
};

// Must not throw; if it does anyway, HttpServer answers 500 with a JSON error.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// Maps (method, path pattern) to handlers. Patterns are '/'-separated
// segments; a segment ":name" matches any one non-empty segment and binds it
// to request.params["name"] (e.g. "/api/v1/topology/:id/kill/:wait"). Literal
// segments win over parameters when both match. A trailing '/' is ignored.
// Build it completely before handing it to HttpServer::Create; afterwards it
// is read-only and used on the event-loop thread only.
class HttpRouter {
 public:
  // InvalidArgument for a malformed pattern; AlreadyExists for a duplicate.
  absl::Status Add(std::string_view method, std::string_view pattern, HttpHandler handler);

  enum class MatchKind { kFound, kNotFound, kMethodNotAllowed };
  struct Match {
    MatchKind kind = MatchKind::kNotFound;
    const HttpHandler* handler = nullptr;
    std::map<std::string, std::string> params;
    std::vector<std::string> allowed_methods;  // kMethodNotAllowed only
  };
  Match Route(std::string_view method, std::string_view path) const;

  // Percent-decodes `in`; false on a malformed escape. Decoded '/' and NUL
  // are accepted here; callers that build file paths reject them.
  static bool PercentDecode(std::string_view in, std::string* out, bool plus_as_space = false);

 private:
  struct RouteEntry {
    std::string method;
    std::vector<std::string> segments;  // ":x" for parameters
    HttpHandler handler;
    int literal_count = 0;
  };
  std::vector<RouteEntry> routes_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_HTTP_ROUTER_H_
