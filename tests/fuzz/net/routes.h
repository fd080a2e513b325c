// The REST API's route patterns (nimbus/rest_api.cc), registered on a router
// whose handlers echo what they were given, for the HTTP fuzz targets.
#ifndef TEMPEST_TESTS_FUZZ_NET_ROUTES_H_
#define TEMPEST_TESTS_FUZZ_NET_ROUTES_H_

#include <cstdlib>
#include <string>
#include <utility>

#include "common/net/http_router.h"

namespace tempest::fuzz {

inline net::HttpRouter EchoRouter() {
  static const std::pair<const char*, const char*> kRoutes[] = {
      {"GET", "/api/v1/cluster/summary"},
      {"GET", "/api/v1/nimbus/summary"},
      {"GET", "/api/v1/supervisor/summary"},
      {"GET", "/api/v1/topology/summary"},
      {"GET", "/api/v1/topology/:id"},
      {"POST", "/api/v1/topology"},
      {"POST", "/api/v1/topology/:id/activate"},
      {"POST", "/api/v1/topology/:id/deactivate"},
      {"POST", "/api/v1/topology/:id/kill"},
      {"POST", "/api/v1/topology/:id/kill/:wait"},
      {"GET", "/api/v1/topology/:id/lag"},
      {"GET", "/api/v1/topology/:id/component/:component"},
      {"POST", "/api/v1/topology/:id/rebalance"},
      {"POST", "/api/v1/topology/:id/rebalance/:wait"},
  };
  net::HttpRouter router;
  for (const auto& [method, pattern] : kRoutes) {
    absl::Status added = router.Add(method, pattern, [](const net::HttpRequest& r) {
      std::string body = r.method + " " + r.path + " " + r.QueryParam("wait");
      for (const auto& [name, value] : r.params) body += " " + name + "=" + value;
      return net::HttpResponse::Json(200, "{\"echo\":" + std::to_string(body.size()) + "}");
    });
    if (!added.ok()) std::abort();
  }
  return router;
}

}  // namespace tempest::fuzz

#endif  // TEMPEST_TESTS_FUZZ_NET_ROUTES_H_
