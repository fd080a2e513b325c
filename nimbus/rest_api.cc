#include "nimbus/rest_api.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "nimbus/nimbus.h"
#include "nimbus/topology_state.h"
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
  return HttpResponse::Json(code, body.dump());
}

HttpResponse Ok(const json& body) { return HttpResponse::Json(200, body.dump()); }

// Storm UI's uptime spelling: "1d 2h 3m 4s" (leading zero units left out).
std::string PrettyUptime(int64_t secs) {
  if (secs < 0) secs = 0;
  const int64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
  std::string out;
  if (d > 0) absl::StrAppend(&out, d, "d ");
  if (d > 0 || h > 0) absl::StrAppend(&out, h, "h ");
  if (d > 0 || h > 0 || m > 0) absl::StrAppend(&out, m, "m ");
  absl::StrAppend(&out, s, "s");
  return out;
}

int64_t NowSecs(Nimbus& nimbus) { return nimbus.clock().WallMillis() / 1000; }

int AssignedWorkers(const std::optional<v1::Assignment>& a) {
  if (!a.has_value()) return 0;
  std::set<std::pair<std::string, int>> slots;
  for (const auto& e : a->executors()) slots.insert({e.node(), e.port()});
  return static_cast<int>(slots.size());
}

json TopologySummaryJson(Nimbus& nimbus, const StoredTopology& t,
                         const std::optional<v1::Assignment>& assignment) {
  const int64_t uptime = NowSecs(nimbus) - t.base.launch_time_secs();
  return json{{"id", t.id},
              {"name", t.base.name()},
              {"status", std::string(TopologyStatusName(t.base.status()))},
              {"uptime", PrettyUptime(uptime)},
              {"uptimeSeconds", uptime},
              {"tasksTotal", t.base.num_tasks()},
              {"executorsTotal", t.base.num_executors()},
              {"workersTotal", AssignedWorkers(assignment)},
              {"requestedWorkers", t.base.num_workers()},
              {"assignedExecutors", assignment.has_value() ? assignment->executors_size() : 0},
              {"owner", t.base.owner()}};
}

HttpResponse ClusterSummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<StoredTopology>> topologies = nimbus.Topologies();
  if (!topologies.ok()) return ErrorResponse(nimbus, topologies.status());
  absl::StatusOr<std::vector<v1::SupervisorInfo>> supervisors = nimbus.Supervisors();
  if (!supervisors.ok()) return ErrorResponse(nimbus, supervisors.status());
  int64_t slots_total = 0, slots_used = 0, executors = 0, tasks = 0;
  for (const v1::SupervisorInfo& s : *supervisors) slots_total += s.slot_ports_size();
  for (const StoredTopology& t : *topologies) {
    executors += t.base.num_executors();
    tasks += t.base.num_tasks();
    absl::StatusOr<std::optional<v1::Assignment>> a = nimbus.AssignmentOf(t.id);
    if (!a.ok()) return ErrorResponse(nimbus, a.status());
    slots_used += AssignedWorkers(*a);
  }
  return Ok(json{{"stormVersion", "tempest-0.1.0"},
                 {"supervisors", supervisors->size()},
                 {"topologies", topologies->size()},
                 {"slotsTotal", slots_total},
                 {"slotsUsed", slots_used},
                 {"slotsFree", slots_total - slots_used},
                 {"executorsTotal", executors},
                 {"tasksTotal", tasks}});
}

HttpResponse NimbusSummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<NimbusPeer>> peers = nimbus.Nimbuses();
  if (!peers.ok()) return ErrorResponse(nimbus, peers.status());
  json list = json::array();
  for (const NimbusPeer& p : *peers) {
    const int64_t uptime = NowSecs(nimbus) - p.summary.launch_time_secs();
    list.push_back(json{{"host", p.summary.host()},
                        {"port", p.summary.port()},
                        {"id", p.id},
                        {"status", p.leader ? "Leader" : "Not a Leader"},
                        {"version", p.summary.version()},
                        {"nimbusUpTime", PrettyUptime(uptime)},
                        {"nimbusUpTimeSeconds", uptime}});
  }
  return Ok(json{{"nimbuses", list}});
}

HttpResponse SupervisorSummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<v1::SupervisorInfo>> supervisors = nimbus.Supervisors();
  if (!supervisors.ok()) return ErrorResponse(nimbus, supervisors.status());
  json list = json::array();
  for (const v1::SupervisorInfo& s : *supervisors) {
    list.push_back(json{{"id", s.supervisor_id()},
                        {"host", s.hostname()},
                        {"uptime", PrettyUptime(s.uptime_secs())},
                        {"uptimeSeconds", s.uptime_secs()},
                        {"slotsTotal", s.slot_ports_size()},
                        {"slotsUsed", s.used_ports_size()},
                        {"version", s.version()}});
  }
  return Ok(json{{"supervisors", list}});
}

HttpResponse TopologySummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<StoredTopology>> topologies = nimbus.Topologies();
  if (!topologies.ok()) return ErrorResponse(nimbus, topologies.status());
  json list = json::array();
  for (const StoredTopology& t : *topologies) {
    absl::StatusOr<std::optional<v1::Assignment>> a = nimbus.AssignmentOf(t.id);
    if (!a.ok()) return ErrorResponse(nimbus, a.status());
    list.push_back(TopologySummaryJson(nimbus, t, *a));
  }
  return Ok(json{{"topologies", list}});
}

HttpResponse TopologyDetail(Nimbus& nimbus, const std::string& id) {
  absl::StatusOr<StoredTopology> t = nimbus.Topology(id);
  if (!t.ok()) return ErrorResponse(nimbus, t.status());
  absl::StatusOr<std::optional<v1::Assignment>> a = nimbus.AssignmentOf(id);
  if (!a.ok()) return ErrorResponse(nimbus, a.status());
  json body = TopologySummaryJson(nimbus, *t, *a);
  body["msgTimeout"] = t->base.message_timeout_secs();
  json spouts = json::array(), bolts = json::array();
  for (const v1::ComponentSummary& c : t->base.components()) {
    json entry = {{"executors", c.executors()}, {"tasks", c.tasks()}};
    if (c.spout()) {
      entry["spoutId"] = c.id();
      spouts.push_back(entry);
    } else {
      entry["boltId"] = c.id();
      bolts.push_back(entry);
    }
  }
  body["spouts"] = spouts;
  body["bolts"] = bolts;
  // Executors and the worker slots they are assigned to (none until a
  // supervisor offers slots).
  std::map<std::pair<int, int>, const v1::ExecutorAssignment*> placed;
  if (a->has_value()) {
    for (const auto& e : (*a)->executors()) placed[{e.start_task(), e.end_task()}] = &e;
  }
  json executors = json::array();
  for (const v1::ExecutorRange& e : t->base.executors()) {
    json entry = {{"id", absl::StrCat("[", e.start_task(), "-", e.end_task(), "]")},
                  {"component", e.component()}};
    auto it = placed.find({e.start_task(), e.end_task()});
    if (it != placed.end()) {
      entry["supervisorId"] = it->second->node();
      entry["host"] = (*a)->node_host().contains(it->second->node())
                          ? (*a)->node_host().at(it->second->node())
                          : "";
      entry["port"] = it->second->port();
    }
    executors.push_back(entry);
  }
  body["executorStats"] = executors;
  json overrides = json::object();
  for (const auto& [k, v] : t->base.config_overrides()) overrides[k] = v;
  body["configOverrides"] = overrides;
  if (t->base.status() == v1::KILLED) body["removeInSeconds"] =
      std::max<int64_t>(0, t->base.remove_at_secs() - NowSecs(nimbus));
  return Ok(body);
}

HttpResponse Operation(Nimbus& nimbus, std::string_view op, const std::string& id,
                       const absl::StatusOr<v1::StormBase>& result) {
  if (!result.ok()) return ErrorResponse(nimbus, result.status());
  return Ok(json{{"topologyOperation", std::string(op)},
                 {"topologyId", id},
                 {"status", "success"},
                 {"topologyStatus", std::string(TopologyStatusName(result->status()))}});
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
    return HttpResponse::Error(400, "Bad Request", "\"fileName\", \"name\" and \"owner\" are strings");
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
  absl::StatusOr<std::string> id = nimbus.Submit(request);
  if (!id.ok()) return ErrorResponse(nimbus, id.status());
  absl::StatusOr<StoredTopology> t = nimbus.Topology(*id);
  return Ok(json{{"topologyOperation", "submit"},
                 {"topologyId", *id},
                 {"topologyName", t.ok() ? t->base.name() : ""},
                 {"status", "success"}});
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
  struct Route {
    const char* method;
    const char* pattern;
    net::HttpHandler handler;
  };
  const Route routes[] = {
      {"GET", "/api/v1/cluster/summary", [n](const HttpRequest&) { return ClusterSummary(*n); }},
      {"GET", "/api/v1/nimbus/summary", [n](const HttpRequest&) { return NimbusSummary(*n); }},
      {"GET", "/api/v1/supervisor/summary",
       [n](const HttpRequest&) { return SupervisorSummary(*n); }},
      {"GET", "/api/v1/topology/summary",
       [n](const HttpRequest&) { return TopologySummary(*n); }},
      {"GET", "/api/v1/topology/:id",
       [n](const HttpRequest& r) { return TopologyDetail(*n, r.params.at("id")); }},
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
         int wait = 0;
         if (!absl::SimpleAtoi(r.params.at("wait"), &wait) || wait < 0) {
           return HttpResponse::Error(
               400, "Bad Request",
               absl::StrCat("wait must be a whole number of seconds, not '", r.params.at("wait"),
                            "'"));
         }
         return Operation(*n, "kill", id, n->Kill(id, wait));
       }},
  };
  for (const Route& route : routes) {
    if (absl::Status s = router.Add(route.method, route.pattern, route.handler); !s.ok()) return s;
  }
  return router;
}

}  // namespace tempest::nimbus
