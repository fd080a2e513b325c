// The REST API and web UI a nimbus serves: its HTTP server on a loop of
// its own, routed by rest_api.h.

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/net/event_loop.h"
#include "common/net/http_server.h"
#include "nimbus/nimbus.h"
#include "nimbus/rest_api.h"

namespace tempest::nimbus {

absl::Status Nimbus::StartHttp() {
  ASSIGN_OR_RETURN(loop_, net::EventLoop::Create("nimbus-http"));
  ASSIGN_OR_RETURN(net::HttpRouter router, MakeNimbusRouter(*this));
  net::HttpServerOptions ho;
  ho.bind_address = options_.bind_host;
  ho.port = options_.port;
  ho.body_limit_bytes = options_.api_max_body_bytes;
  ho.header_limit_bytes = options_.api_max_header_bytes;
  ho.request_timeout = options_.api_request_timeout;
  // Handlers run on a small pool, so a submission waiting on ZooKeeper (up
  // to op_timeout) holds one thread while reads are answered on the others.
  // Reads are thread-safe (TopologyStore, ZkSession); writes still run one
  // at a time on the control thread.
  ho.handler_threads = 4;
  RETURN_IF_ERROR(net::ApplyApiLimits(options_.config, ho));
  absl::StatusOr<std::unique_ptr<net::HttpServer>> http =
      net::HttpServer::Create(*loop_, std::move(ho), std::move(router));
  if (!http.ok()) {
    // Name the keys: the port is the one setting a user picks and the first
    // thing another program on the machine may hold.
    return absl::Status(http.status().code(),
                        absl::StrCat("the REST API and web UI (ui.host ", options_.bind_host,
                                     ", ui.port ", options_.port, "): ", http.status().message(),
                                     absl::IsUnavailable(http.status())
                                         ? "; another process holds the port: stop it or set "
                                           "another ui.port (-c ui.port=N)"
                                         : ""));
  }
  http_ = *std::move(http);
  return absl::OkStatus();
}

}  // namespace tempest::nimbus
