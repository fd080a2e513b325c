// Fuzzes the HTTP router and its decoding helpers with arbitrary request
// lines: "METHOD TARGET" (the first space splits them), routed against the
// REST API's patterns; the path and query are percent-decoded as handlers
// decode them. A bound parameter is always the decoding of one non-empty
// segment.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/net/http_router.h"
#include "tests/fuzz/net/routes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tempest::net::HttpRouter;
  static const HttpRouter* router = new HttpRouter(tempest::fuzz::EchoRouter());

  const std::string_view line(reinterpret_cast<const char*>(data), size);
  const size_t space = line.find(' ');
  const std::string_view method = space == std::string_view::npos ? "GET" : line.substr(0, space);
  const std::string_view target = space == std::string_view::npos ? line : line.substr(space + 1);
  const size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);

  HttpRouter::Match match = router->Route(method, path);
  if (match.kind == HttpRouter::MatchKind::kFound && match.handler == nullptr) std::abort();
  if (match.kind == HttpRouter::MatchKind::kMethodNotAllowed && match.allowed_methods.empty()) {
    std::abort();
  }

  std::string decoded;
  (void)HttpRouter::PercentDecode(path, &decoded);
  (void)HttpRouter::PercentDecode(target, &decoded, /*plus_as_space=*/true);

  tempest::net::HttpRequest request;
  request.method = std::string(method);
  request.target = std::string(target);
  request.path = std::string(path);
  if (question != std::string_view::npos) request.query = std::string(target.substr(question + 1));
  request.params = match.params;
  for (const char* name : {"wait", "id", "", "a b", "%"}) (void)request.QueryParam(name);
  if (match.kind == HttpRouter::MatchKind::kFound) (void)(*match.handler)(request);
  return 0;
}
