#ifndef TEMPEST_NIMBUS_REST_API_H_
#define TEMPEST_NIMBUS_REST_API_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/net/http_router.h"

namespace tempest::nimbus {

class Nimbus;

// The nimbus REST API (shaped like Storm UI's /api/v1):
//   GET  /api/v1/cluster/summary, /api/v1/nimbus/summary,
//        /api/v1/supervisor/summary, /api/v1/topology/summary,
//        /api/v1/topology/:id, /api/v1/topology/:id/component/:component
//        /api/v1/supervisor?id=|host=, /api/v1/history/summary,
//        /api/v1/owner-resources[/:owner], /api/v1/topology-workers/:id,
//        /api/v1/topology/:id/metrics (rest_cluster_views.h)
//   GET  /metrics                              Prometheus text
//   POST /api/v1/topology                      submit (JSON body, below)
//   POST /api/v1/topology/:id/activate, /deactivate, /kill/:wait, /kill,
//        /rebalance/:wait, /rebalance
// Rebalance body (all optional, Storm UI's): {"rebalanceOptions":
// {"numWorkers": N, "executors": {"component": N}}}; counts may be numbers
// or strings of digits.
// Submit body: {"flux": "<Flux YAML>", "fileName": "x.yaml", "name": "...",
// "config": {"key": value, ...}, "inactive": false}; only "flux" is required.
// Errors are {"error": ..., "errorMessage": ...} with 400 (bad request or
// invalid topology), 404 (unknown id), 409 (name taken, or a transition
// the state machine does not allow), 503 (not the leader; the body also has
// "leader") or 500/504.
//
// With nimbus.api_auth() set, every route but the UI page "/" is behind
// net::RequireAuth: writes (and reads with protect_reads) without the
// bearer token get 401 {"error": "Unauthorized", ...} and
// `WWW-Authenticate: Bearer`.
//
// The handlers call `nimbus` synchronously, so they block the HTTP event
// loop for at most the nimbus's op timeout; the nimbus gives the server a
// loop of its own. `nimbus` must outlive the router.
absl::StatusOr<net::HttpRouter> MakeNimbusRouter(Nimbus& nimbus);

// HTTP status for an absl::Status code (the mapping above).
int HttpStatusFor(const absl::Status& status);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REST_API_H_
