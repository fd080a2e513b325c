#include "nimbus/rest_api.h"

#include <cctype>
#include <cinttypes>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "nimbus/nimbus.h"
#include "nimbus/prometheus_view.h"
#include "nimbus/rest_cluster_views.h"
#include "nimbus/rest_read_cache.h"
#include "nimbus/rest_views.h"
#include "nimbus/topology_state.h"
#include "nimbus/web_ui.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {
namespace {

using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

std::string ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Internal Server Error";
  }
}

HttpResponse ErrorResponse(Nimbus& nimbus, const absl::Status& status) {
  const int code = HttpStatusFor(status);
  json body = {{"error", ReasonPhrase(code)}, {"errorMessage", std::string(status.message())}};
  if (absl::IsUnavailable(status) && !nimbus.IsLeader()) {
    absl::StatusOr<std::string> leader = nimbus.Leader();
    if (leader.ok()) body["leader"] = *leader;
  }
  // A message may quote request bytes that are not UTF-8: replaced, never
  // thrown from the JSON writer.
  return HttpResponse::Json(code, body.dump(-1, ' ', false, json::error_handler_t::replace));
}

HttpResponse Ok(const json& body) { return HttpResponse::Json(200, body.dump()); }

int64_t NowSecs(Nimbus& nimbus) { return nimbus.clock().WallMillis() / 1000; }

// What the cluster views read, in the order the reads happen: the
// topologies, the supervisors (`with_supervisors`), then each topology's
// assignment and (`with_beats`) its workerbeats.
absl::StatusOr<ClusterView> ReadClusterView(Nimbus& nimbus, bool with_supervisors,
                                            bool with_beats) {
  absl::StatusOr<std::vector<StoredTopology>> topologies = nimbus.Topologies();
  RETURN_IF_ERROR(topologies.status());
  ClusterView view;
  if (with_supervisors) {
    absl::StatusOr<std::vector<v1::SupervisorInfo>> supervisors = nimbus.Supervisors();
    RETURN_IF_ERROR(supervisors.status());
    view.supervisors = *std::move(supervisors);
  }
  for (StoredTopology& t : *topologies) {
    ASSIGN_OR_RETURN(std::optional<v1::Assignment> a, nimbus.AssignmentOf(t.id));
    TopologyView topology;
    topology.topology = std::move(t);
    topology.assignment = std::move(a);
    if (with_beats) {
      absl::StatusOr<std::vector<StoredBeat>> beats = nimbus.WorkerBeats(topology.topology.id);
      RETURN_IF_ERROR(beats.status());
      topology.beats = *std::move(beats);
      absl::StatusOr<std::vector<StoredWorkerFailure>> failures =
          nimbus.WorkerFailures(topology.topology.id);
      RETURN_IF_ERROR(failures.status());
      topology.failures = *std::move(failures);
    }
    view.topologies.push_back(std::move(topology));
  }
  view.now_secs = NowSecs(nimbus);
  view.leader = nimbus.IsLeader();
  return view;
}

// The record, its assignment (if any) and every workerbeat of one topology.
absl::StatusOr<TopologyView> ReadTopologyView(Nimbus& nimbus, const std::string& id) {
  ASSIGN_OR_RETURN(StoredTopology t, nimbus.Topology(id));
  ASSIGN_OR_RETURN(std::optional<v1::Assignment> a, nimbus.AssignmentOf(id));
  absl::StatusOr<std::vector<StoredBeat>> beats = nimbus.WorkerBeats(id);
  RETURN_IF_ERROR(beats.status());
  absl::StatusOr<std::vector<StoredError>> errors = nimbus.Errors(id);
  RETURN_IF_ERROR(errors.status());
  absl::StatusOr<std::vector<StoredWorkerFailure>> failures = nimbus.WorkerFailures(id);
  RETURN_IF_ERROR(failures.status());
  TopologyView view;
  view.topology = std::move(t);
  view.assignment = std::move(a);
  view.beats = *std::move(beats);
  view.errors = *std::move(errors);
  view.failures = *std::move(failures);
  AddWorkerFailureErrors(view);
  return view;
}

// GET handlers: read the model, then render it (errors as ErrorResponse).
HttpResponse ClusterPage(Nimbus& nimbus, bool with_supervisors, bool with_beats,
                         std::string (*render)(const ClusterView&)) {
  absl::StatusOr<ClusterView> view = ReadClusterView(nimbus, with_supervisors, with_beats);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  return HttpResponse::Json(200, render(*view));
}

HttpResponse ClusterSummary(Nimbus& nimbus) {
  return ClusterPage(nimbus, /*with_supervisors=*/true, /*with_beats=*/false, RenderClusterSummary);
}

HttpResponse TopologySummary(Nimbus& nimbus) {
  absl::StatusOr<ClusterView> view =
      ReadClusterView(nimbus, /*with_supervisors=*/false, /*with_beats=*/true);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  // replicationCount: every live nimbus reads the code from ZooKeeper.
  absl::StatusOr<std::vector<NimbusPeer>> peers = nimbus.Nimbuses();
  if (!peers.ok()) return ErrorResponse(nimbus, peers.status());
  view->nimbuses = static_cast<int>(peers->size());
  return HttpResponse::Json(200, RenderTopologySummary(*view));
}

HttpResponse NimbusSummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<NimbusPeer>> peers = nimbus.Nimbuses();
  if (!peers.ok()) return ErrorResponse(nimbus, peers.status());
  return HttpResponse::Json(200, RenderNimbusSummary(*peers, NowSecs(nimbus)));
}

HttpResponse SupervisorSummary(Nimbus& nimbus) {
  absl::StatusOr<ClusterView> view =
      ReadClusterView(nimbus, /*with_supervisors=*/true, /*with_beats=*/false);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  return HttpResponse::Json(200, RenderSupervisorSummary(*view));
}

HttpResponse TopologyPage(Nimbus& nimbus, const std::string& id,
                          const std::function<HttpResponse(const TopologyView&)>& render) {
  absl::StatusOr<TopologyView> view = ReadTopologyView(nimbus, id);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  return render(*view);
}

// A page with statistics: the `window` query parameter chosen, what the
// workers report now recorded into the nimbus's history, and every window's
// executor statistics read back into the view before it is rendered.
HttpResponse StatsPage(Nimbus& nimbus, const HttpRequest& req, const std::string& id,
                       const std::function<HttpResponse(const TopologyView&)>& render) {
  const std::string window_text = req.QueryParam("window");
  const std::optional<int64_t> window = ParseStatsWindow(window_text);
  if (!window.has_value()) {
    return HttpResponse::Error(
        400, "Bad Request",
        absl::StrCat("window must be 600, 10800, 86400 or :all-time, not '", window_text, "'"));
  }
  return TopologyPage(nimbus, id, [&](const TopologyView& read) {
    TopologyView view = read;
    const int64_t now = NowSecs(nimbus);
    StatsHistory& history = nimbus.stats_history();
    history.RecordTopology(view.topology, view.assignment, view.beats, now);
    for (int64_t w : kStatsWindows) {
      view.stats[w] =
          history.Window(view.topology.id, w, now, view.topology.base.launch_time_secs());
    }
    view.window_secs = *window;
    if (absl::StatusOr<std::vector<NimbusPeer>> peers = nimbus.Nimbuses(); peers.ok()) {
      view.nimbuses = static_cast<int>(peers->size());
    }
    return render(view);
  });
}

// Storm UI's key -> value answer, or with ?origin=1 that answer beside
// where each value came from.
HttpResponse ClusterConfiguration(const Nimbus& nimbus, const HttpRequest& req) {
  if (req.QueryParam("origin") == "1") {
    return HttpResponse::Json(
        200, RenderClusterConfigurationWithOrigins(nimbus.config(), nimbus.config_origins()));
  }
  return HttpResponse::Json(200, RenderClusterConfiguration(nimbus.config()));
}

HttpResponse TopologyDetail(Nimbus& nimbus, const HttpRequest& req, const std::string& id) {
  return StatsPage(nimbus, req, id, [&nimbus](const TopologyView& read) {
    const ClusterConfigRef cluster{&nimbus.config(), &nimbus.config_origins()};
    TopologyView view = read;
    // A definition that does not load has no spouts to show.
    absl::StatusOr<std::vector<spout::SpoutLagTarget>> spouts = nimbus.KafkaSpouts(view.topology);
    if (spouts.ok()) view.kafka_spouts = *std::move(spouts);
    return HttpResponse::Json(200, RenderTopologyDetail(view, NowSecs(nimbus), cluster));
  });
}

HttpResponse Visualization(Nimbus& nimbus, const HttpRequest& req, const std::string& id) {
  return StatsPage(nimbus, req, id, [&nimbus](const TopologyView& view) {
    return HttpResponse::Json(200, RenderTopologyVisualization(view, NowSecs(nimbus)));
  });
}

HttpResponse Lag(Nimbus& nimbus, const std::string& id) {
  return TopologyPage(nimbus, id, [&nimbus](const TopologyView& read) {
    TopologyView view = read;
    absl::StatusOr<std::vector<spout::SpoutLag>> lag = nimbus.KafkaLag(view.topology);
    if (!lag.ok()) return ErrorResponse(nimbus, lag.status());
    view.kafka_lag = *std::move(lag);
    return HttpResponse::Json(200, RenderTopologyLag(view));
  });
}

HttpResponse ComponentDetail(Nimbus& nimbus, const HttpRequest& req, const std::string& id,
                             const std::string& component) {
  return StatsPage(nimbus, req, id, [&](const TopologyView& view) {
    std::optional<std::string> body = RenderComponentDetail(view, component, NowSecs(nimbus));
    if (!body.has_value()) {
      return HttpResponse::Error(
          404, "Not Found", absl::StrCat("topology ", id, " has no component '", component, "'"));
    }
    return HttpResponse::Json(200, *std::move(body));
  });
}

HttpResponse Operation(Nimbus& nimbus, std::string_view op, const std::string& id,
                       const absl::StatusOr<v1::StormBase>& result);

// GET /api/v1/supervisor?id=|host= (rest_cluster_views.h).
HttpResponse SupervisorDetail(Nimbus& nimbus, const HttpRequest& req) {
  absl::StatusOr<ClusterView> view =
      ReadClusterView(nimbus, /*with_supervisors=*/true, /*with_beats=*/true);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  const std::string id = req.QueryParam("id");
  std::optional<std::string> body = RenderSupervisorDetail(*view, id, req.QueryParam("host"));
  if (!body.has_value()) {
    return HttpResponse::Error(404, "Not Found", absl::StrCat("no supervisor has id '", id, "'"));
  }
  return HttpResponse::Json(200, *std::move(body));
}

HttpResponse OwnerResources(Nimbus& nimbus, std::optional<std::string> owner) {
  absl::StatusOr<ClusterView> view =
      ReadClusterView(nimbus, /*with_supervisors=*/false, /*with_beats=*/false);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  return HttpResponse::Json(200, RenderOwnerResources(*view, owner));
}

// GET /api/v1/topology/:id/metrics[?window=W&sys=1].
HttpResponse TopologyMetrics(Nimbus& nimbus, const HttpRequest& req, const std::string& id) {
  const bool sys = req.QueryParam("sys") == "1";
  return StatsPage(nimbus, req, id, [sys](const TopologyView& view) {
    auto stats = view.stats.find(view.window_secs);
    return HttpResponse::Json(
        200, RenderTopologyMetrics(
                 view, stats != view.stats.end() ? stats->second : std::vector<v1::ExecutorStats>{},
                 view.window_secs, sys));
  });
}

// An integer given as a JSON number or a string of digits (Storm UI sends
// executor counts either way).
bool IntField(const json& v, int* out) {
  if (v.is_number_integer()) {
    const int64_t n = v.get<int64_t>();
    if (n < INT32_MIN || n > INT32_MAX) return false;
    *out = static_cast<int>(n);
    return true;
  }
  if (v.is_string()) return absl::SimpleAtoi(v.get<std::string>(), out);
  return false;
}

HttpResponse Rebalance(Nimbus& nimbus, const HttpRequest& req, const std::string& id,
                       std::optional<int> wait) {
  RebalanceRequest request;
  request.wait_secs = wait;
  std::string_view text = req.body;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  if (!text.empty()) {
    json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object()) {
      return HttpResponse::Error(400, "Bad Request", "the request body is not a JSON object");
    }
    if (body.contains("rebalanceOptions")) {
      const json& o = body["rebalanceOptions"];
      if (!o.is_object()) {
        return HttpResponse::Error(400, "Bad Request", "\"rebalanceOptions\" is an object");
      }
      if (o.contains("numWorkers")) {
        int n = 0;
        if (!IntField(o["numWorkers"], &n)) {
          return HttpResponse::Error(400, "Bad Request",
                                     "\"numWorkers\" is a whole number (or a string of one)");
        }
        request.num_workers = n;
      }
      if (o.contains("executors")) {
        if (!o["executors"].is_object()) {
          return HttpResponse::Error(400, "Bad Request",
                                     "\"executors\" is an object of component: count");
        }
        for (const auto& [component, count] : o["executors"].items()) {
          int n = 0;
          if (!IntField(count, &n)) {
            return HttpResponse::Error(
                400, "Bad Request",
                absl::StrCat("the executor count of '", component,
                             "' is not a whole number (or a string of one)"));
          }
          request.executors[component] = n;
        }
      }
    }
  }
  return Operation(nimbus, "rebalance", id, nimbus.Rebalance(id, request));
}

HttpResponse Metrics(Nimbus& nimbus) {
  absl::StatusOr<ClusterView> view =
      ReadClusterView(nimbus, /*with_supervisors=*/true, /*with_beats=*/true);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  for (TopologyView& t : view->topologies) {
    if (t.topology.base.status() == v1::KILLED) continue;
    // A definition that does not load has no spouts to show.
    absl::StatusOr<std::vector<spout::SpoutLag>> lag = nimbus.KafkaLag(t.topology);
    if (lag.ok()) t.kafka_lag = *std::move(lag);
  }
  HttpResponse response;
  response.status = 200;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = RenderNimbusMetrics(*view);
  return response;
}

HttpResponse Operation(Nimbus& nimbus, std::string_view op, const std::string& id,
                       const absl::StatusOr<v1::StormBase>& result) {
  if (!result.ok()) return ErrorResponse(nimbus, result.status());
  return Ok(json{{"topologyOperation", std::string(op)},
                 {"topologyId", id},
                 {"status", "success"},
                 {"topologyStatus", std::string(TopologyStatusName(result->status()))}});
}

// The submission's "resources": [{"path": "splitsentence.py", "data":
// "<base64>", "executable": false}] into `request`; nullopt when well formed,
// else the 400 to answer.
std::optional<HttpResponse> ParseResources(const json& files, SubmitRequest& request) {
  if (!files.is_array()) {
    return HttpResponse::Error(400, "Bad Request", "\"resources\" is an array of files");
  }
  for (const json& f : files) {
    std::string decoded;
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("data") ||
        !f["data"].is_string() || (f.contains("executable") && !f["executable"].is_boolean()) ||
        !absl::Base64Unescape(f["data"].get<std::string>(), &decoded)) {
      return HttpResponse::Error(
          400, "Bad Request",
          "each resource is {\"path\": string, \"data\": base64 string, \"executable\": bool}");
    }
    v1::ResourceFile* file = request.resources.add_files();
    file->set_path(f["path"].get<std::string>());
    file->set_data(std::move(decoded));
    file->set_executable(f.value("executable", false));
  }
  return std::nullopt;
}

HttpResponse Submit(Nimbus& nimbus, const HttpRequest& req) {
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return HttpResponse::Error(400, "Bad Request", "the request body is not a JSON object");
  }
  SubmitRequest request;
  auto string_field = [&body](const char* key, std::string* out) -> bool {
    if (!body.contains(key)) return true;
    if (!body[key].is_string()) return false;
    *out = body[key].get<std::string>();
    return true;
  };
  if (!body.contains("flux") || !string_field("flux", &request.flux_text)) {
    return HttpResponse::Error(400, "Bad Request",
                               "\"flux\" (the Flux YAML text, a string) is required");
  }
  if (!string_field("fileName", &request.file_name) || !string_field("name", &request.name) ||
      !string_field("owner", &request.owner)) {
    return HttpResponse::Error(400, "Bad Request",
                               "\"fileName\", \"name\" and \"owner\" are strings");
  }
  if (body.contains("inactive")) {
    if (!body["inactive"].is_boolean()) {
      return HttpResponse::Error(400, "Bad Request", "\"inactive\" is a boolean");
    }
    request.inactive = body["inactive"].get<bool>();
  }
  if (body.contains("config")) {
    if (!body["config"].is_object()) {
      return HttpResponse::Error(400, "Bad Request", "\"config\" is an object of key: value");
    }
    for (const auto& [key, value] : body["config"].items()) {
      // JSON is YAML, so the value goes through the same parser as `-c k=v`.
      request.config_overrides[key] = value.dump();
    }
  }
  if (body.contains("resources")) {
    if (std::optional<HttpResponse> bad = ParseResources(body["resources"], request)) {
      return *std::move(bad);
    }
  }
  absl::StatusOr<std::string> id = nimbus.Submit(request);
  if (!id.ok()) return ErrorResponse(nimbus, id.status());
  absl::StatusOr<StoredTopology> t = nimbus.Topology(*id);
  return Ok(json{{"topologyOperation", "submit"},
                 {"topologyId", *id},
                 {"topologyName", t.ok() ? t->base.name() : ""},
                 {"status", "success"}});
}

// Kill and rebalance with a :wait parameter (seconds, >= 0; else a 400).
HttpResponse WithWait(const HttpRequest& r, const std::function<HttpResponse(int)>& run) {
  int wait = 0;
  if (!absl::SimpleAtoi(r.params.at("wait"), &wait) || wait < 0) {
    return HttpResponse::Error(
        400, "Bad Request",
        absl::StrCat("wait must be a whole number of seconds, not '", r.params.at("wait"), "'"));
  }
  return run(wait);
}

HttpResponse WebUi() {
  HttpResponse r;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::string(WebUiIndexHtml());
  r.headers.emplace_back("Content-Security-Policy", WebUiContentSecurityPolicy());
  return r;
}

struct Route {
  const char* method;
  const char* pattern;
  net::HttpHandler handler;
};

// The cluster and topology pages, in the order they are registered.
std::vector<Route> PageRoutes(Nimbus* n) {
  return {
      {"GET", "/api/v1/cluster/summary", [n](const HttpRequest&) { return ClusterSummary(*n); }},
      {"GET", "/api/v1/cluster/configuration",
       [n](const HttpRequest& r) { return ClusterConfiguration(*n, r); }},
      {"GET", "/api/v1/nimbus/summary", [n](const HttpRequest&) { return NimbusSummary(*n); }},
      {"GET", "/api/v1/supervisor/summary",
       [n](const HttpRequest&) { return SupervisorSummary(*n); }},
      {"GET", "/api/v1/supervisor", [n](const HttpRequest& r) { return SupervisorDetail(*n, r); }},
      {"GET", "/api/v1/history/summary",
       [n](const HttpRequest&) { return ClusterPage(*n, false, false, RenderHistorySummary); }},
      {"GET", "/api/v1/owner-resources",
       [n](const HttpRequest&) { return OwnerResources(*n, std::nullopt); }},
      {"GET", "/api/v1/owner-resources/:owner",
       [n](const HttpRequest& r) { return OwnerResources(*n, r.params.at("owner")); }},
      {"GET", "/api/v1/topology-workers/:id",
       [n](const HttpRequest& r) {
         return TopologyPage(*n, r.params.at("id"), [](const TopologyView& view) {
           return HttpResponse::Json(200, RenderTopologyWorkers(view));
         });
       }},
      {"GET", "/api/v1/topology/:id/metrics",
       [n](const HttpRequest& r) { return TopologyMetrics(*n, r, r.params.at("id")); }},
      {"GET", "/api/v1/topology/summary", [n](const HttpRequest&) { return TopologySummary(*n); }},
      {"GET", "/api/v1/topology/:id",
       [n](const HttpRequest& r) { return TopologyDetail(*n, r, r.params.at("id")); }},
      {"GET", "/api/v1/topology/:id/visualization",
       [n](const HttpRequest& r) { return Visualization(*n, r, r.params.at("id")); }},
  };
}

// Submit and the topology operations, the lag and component pages,
// /metrics and the web UI.
std::vector<Route> OperationRoutes(Nimbus* n) {
  return {
      {"POST", "/api/v1/topology", [n](const HttpRequest& r) { return Submit(*n, r); }},
      {"POST", "/api/v1/topology/:id/activate",
       [n](const HttpRequest& r) {
         const std::string& id = r.params.at("id");
         return Operation(*n, "activate", id, n->Activate(id));
       }},
      {"POST", "/api/v1/topology/:id/deactivate",
       [n](const HttpRequest& r) {
         const std::string& id = r.params.at("id");
         return Operation(*n, "deactivate", id, n->Deactivate(id));
       }},
      {"POST", "/api/v1/topology/:id/kill",
       [n](const HttpRequest& r) {
         const std::string& id = r.params.at("id");
         return Operation(*n, "kill", id, n->Kill(id, std::nullopt));
       }},
      {"POST", "/api/v1/topology/:id/kill/:wait",
       [n](const HttpRequest& r) {
         const std::string& id = r.params.at("id");
         return WithWait(r, [&](int wait) { return Operation(*n, "kill", id, n->Kill(id, wait)); });
       }},
      {"GET", "/api/v1/topology/:id/lag",
       [n](const HttpRequest& r) { return Lag(*n, r.params.at("id")); }},
      {"GET", "/api/v1/topology/:id/component/:component",
       [n](const HttpRequest& r) {
         return ComponentDetail(*n, r, r.params.at("id"), r.params.at("component"));
       }},
      {"POST", "/api/v1/topology/:id/rebalance",
       [n](const HttpRequest& r) { return Rebalance(*n, r, r.params.at("id"), std::nullopt); }},
      {"POST", "/api/v1/topology/:id/rebalance/:wait",
       [n](const HttpRequest& r) {
         return WithWait(r, [&](int wait) { return Rebalance(*n, r, r.params.at("id"), wait); });
       }},
      {"GET", "/metrics", [n](const HttpRequest&) { return Metrics(*n); }},
      {"GET", "/", [](const HttpRequest&) { return WebUi(); }},
  };
}

}  // namespace

int HttpStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

absl::StatusOr<net::HttpRouter> MakeNimbusRouter(Nimbus& nimbus) {
  net::HttpRouter router;
  Nimbus* n = &nimbus;
  std::vector<Route> routes = PageRoutes(n);
  for (Route& route : OperationRoutes(n)) routes.push_back(std::move(route));
  // Reads answer from the last known state while ZooKeeper is unreachable.
  auto cache = std::make_shared<RestReadCache>([n] { return n->ZooKeeperReachable(); },
                                               [n] { return n->clock().WallMillis(); });
  for (const Route& route : routes) {
    // The UI page stays open: it asks for the token when the API answers 401.
    const std::string_view pattern = route.pattern;
    const bool ui_page = pattern == "/";
    net::HttpHandler handler = route.handler;
    if (std::string_view(route.method) == "GET" && !ui_page &&
        pattern != "/api/v1/cluster/configuration") {
      handler = [cache, read = std::move(handler)](const HttpRequest& r) {
        return cache->Serve(r, read);
      };
    }
    if (!ui_page) handler = net::RequireAuth(nimbus.api_auth(), std::move(handler));
    handler = net::RequireAllowedHost(nimbus.api_auth(), std::move(handler));
    RETURN_IF_ERROR(router.Add(route.method, route.pattern, std::move(handler)));
  }
  return router;
}

}  // namespace tempest::nimbus
