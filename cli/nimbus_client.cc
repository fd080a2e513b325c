#include "cli/nimbus_client.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/dev_token.h"
#include "common/api/string_view_compat.h"
#include "common/core/config/config_loader.h"
#include "common/core/status_macros.h"
#include "common/net/http_auth.h"
#include "common/net/http_client.h"
#include "common/os/loopback.h"

namespace tempest::cli {
namespace {

using json = nlohmann::json;

// HOST:PORT, or the same as an http:// URL (what a browser shows for the
// web UI), with an optional "/" after it; IPv6 hosts in brackets.
absl::Status ParseHostPort(const std::string& text, std::string* host, int* port,
                           const char* source = "--nimbus") {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, " takes HOST:PORT or http://HOST:PORT, not '", text, "'", why));
  };
  std::string rest = text;
  if (absl::StartsWithIgnoreCase(rest, "https://")) {
    return bad(": nimbus's REST API is plain HTTP");
  }
  if (absl::StartsWithIgnoreCase(rest, "http://")) {
    rest = rest.substr(7);
    if (absl::EndsWith(rest, "/")) rest.pop_back();
    if (rest.find('/') != std::string::npos) return bad(" (no path after the port)");
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(rest.substr(colon + 1), port) || *port <= 0 || *port > 65535) {
    return bad("");
  }
  *host = rest.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return absl::OkStatus();
}

// The API token and where it came from (named in a refusal, never the
// token itself).
struct ResolvedToken {
  std::string token;
  std::string source;
};

// The token from --token-file, else tempest.api.token.file, else the file
// $TEMPEST_TOKEN_FILE names, else $TEMPEST_TOKEN; empty if none is set (an
// empty variable counts as unset).
absl::StatusOr<ResolvedToken> ResolveToken(const GlobalOptions& globals,
                                           const api::Config& config) {
  std::string file = globals.token_file;
  std::string source = "--token-file";
  if (file.empty()) {
    file = config.GetString(net::kApiTokenFileKey, "");
    source = net::kApiTokenFileKey;
  }
  if (file.empty()) {
    const char* env = std::getenv(kTokenFileEnv);
    file = env != nullptr ? env : "";
    source = kTokenFileEnv;
  }
  if (!file.empty()) {
    ASSIGN_OR_RETURN(const net::LoadedToken token, net::LoadTokenFile(file, source));
    return ResolvedToken{token.token, absl::StrCat(source, " ", file)};
  }
  const char* env = std::getenv(kTokenEnv);
  return ResolvedToken{env != nullptr ? env : "", kTokenEnv};
}

// The token of a `tempest dev` cluster at HOST:PORT, found through the
// discovery file it keeps under $HOME; empty if there is none or the token
// file it names cannot be read.
ResolvedToken DiscoveredDevToken(const std::string& host, int port) {
  const char* home = std::getenv("HOME");
  std::optional<std::string> file =
      FindDevTokenFile(DevTokenDir(home != nullptr ? home : ""), host, port);
  if (!file.has_value()) return {};
  absl::StatusOr<net::LoadedToken> token = net::LoadTokenFile(*file, "tempest dev's token file");
  if (!token.ok()) return {};
  return ResolvedToken{token->token, absl::StrCat("tempest dev's token file ", *file)};
}

// HOST:PORT of nimbus: --nimbus, else $TEMPEST_NIMBUS, else the first of the
// config's nimbus.seeds that accepts a connection on ui.port.
absl::Status ResolveAddress(const GlobalOptions& globals, const api::Config& config,
                            std::string* host, int* port) {
  if (!globals.nimbus.empty()) return ParseHostPort(globals.nimbus, host, port);
  // `tempest dev` prints `export TEMPEST_NIMBUS=H:P`; an empty value counts
  // as unset, as in most shells' idiom `TEMPEST_NIMBUS= tempest list`.
  if (const char* env = std::getenv(kNimbusEnv); env != nullptr && env[0] != '\0') {
    return ParseHostPort(env, host, port, kNimbusEnv);
  }
  *host = "127.0.0.1";
  *port = static_cast<int>(config.GetInt("ui.port", 8080));
  std::vector<std::string> candidates;
  if (const api::Value* seeds = config.Find(api::kNimbusSeeds)) {
    if (const api::ValueList* list = seeds->TryList(); list != nullptr) {
      for (const api::Value& seed : *list) {
        if (const std::string* name = seed.TryString(); name != nullptr && !name->empty()) {
          candidates.push_back(*name);
        }
      }
    } else if (const std::string* one = seeds->TryString(); one != nullptr && !one->empty()) {
      candidates.push_back(*one);
    }
  }
  if (candidates.empty()) return absl::OkStatus();
  *host = candidates.front();
  // Several seeds are several machines: one that is down or cut off must
  // not make the cluster unreachable, so take the first that accepts.
  if (candidates.size() > 1) {
    for (const std::string& seed : candidates) {
      if (os::TcpPortAccepts(seed, *port, std::chrono::seconds(2))) {
        *host = seed;
        break;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

NimbusClient::NimbusClient(std::string host, int port, std::string token,
                           std::string token_source)
    : host_(std::move(host)),
      port_(port),
      address_(absl::StrCat(host_, ":", port_)),
      token_(std::move(token)),
      token_source_(std::move(token_source)) {}

absl::StatusOr<NimbusClient> NimbusClient::FromGlobals(const GlobalOptions& globals) {
  ASSIGN_OR_RETURN(const api::Config config, LoadDaemonConfig(globals));
  ASSIGN_OR_RETURN(ResolvedToken token, ResolveToken(globals, config));
  std::string host;
  int port = 0;
  RETURN_IF_ERROR(ResolveAddress(globals, config, &host, &port));
  if (token.token.empty()) token = DiscoveredDevToken(host, port);
  return NimbusClient(host, port, std::move(token.token), std::move(token.source));
}

absl::StatusOr<json> NimbusClient::Get(std::string_view path) const {
  return Call("GET", path, "", /*follow_leader=*/false);
}

absl::StatusOr<json> NimbusClient::Post(std::string_view path, const json& body) const {
  return Call("POST", path, body.dump(), /*follow_leader=*/true);
}

absl::StatusOr<json> NimbusClient::Call(std::string_view method, std::string_view path,
                                        const std::string& body, bool follow_leader) const {
  net::HttpClient http(host_, port_, std::chrono::seconds(30));
  if (!token_.empty()) http.set_header("Authorization", absl::StrCat("Bearer ", token_));
  absl::StatusOr<net::HttpClientResponse> response =
      http.Request(method, path, body, "application/json");
  if (!response.ok()) {
    if (absl::IsDataLoss(response.status())) {
      return absl::FailedPreconditionError(
          absl::StrCat(address_, " answered but is not a Tempest nimbus (not HTTP: ",
                       response.status().message(), ")"));
    }
    absl::Status s(response.status().code(), absl::StrCat("cannot reach nimbus at ", address_,
                                                          ": ", response.status().message()));
    // A failed connect sent nothing: nimbus is not listening (yet).
    if (absl::StartsWith(response.status().message(), "connect")) MarkNotReady(s);
    return s;
  }
  if (absl::Status s = NotANimbus(path, response->status, response->body); !s.ok()) return s;
  json doc = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (response->status >= 200 && response->status < 300) return doc;
  std::string message = absl::StrCat("nimbus answered HTTP ", response->status);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("errorMessage") &&
      doc["errorMessage"].is_string()) {
    message = doc["errorMessage"].get<std::string>();
  }
  if (response->status == 503 && follow_leader && !doc.is_discarded() && doc.is_object() &&
      doc.contains("leader") && doc["leader"].is_string()) {
    std::string host;
    int port = 0;
    if (ParseHostPort(doc["leader"].get<std::string>(), &host, &port).ok()) {
      return NimbusClient(host, port, token_, token_source_)
          .Call(method, path, body, /*follow_leader=*/false);
    }
  }
  if (response->status == 401) {
    if (token_.empty()) {
      return absl::UnauthenticatedError(
          absl::StrCat("nimbus at ", address_, " ", kTokenNeededMessage));
    }
    return absl::UnauthenticatedError(absl::StrCat(
        "nimbus at ", address_, " rejected the API token from ", token_source_,
        ": the token was rejected (it is not this nimbus's token; check tempest.api.token.file "
        "in nimbus's config)"));
  }
  const absl::StatusCode code = response->status == 404   ? absl::StatusCode::kNotFound
                                : response->status == 400 ? absl::StatusCode::kInvalidArgument
                                : response->status == 409 ? absl::StatusCode::kFailedPrecondition
                                : response->status == 403 ? absl::StatusCode::kPermissionDenied
                                : response->status == 503 ? absl::StatusCode::kUnavailable
                                                          : absl::StatusCode::kInternal;
  absl::Status s(code, message);
  // 503: a nimbus that refuses writes until it leads (or knows a leader)
  // did nothing with the request.
  if (response->status == 503) MarkNotReady(s);
  return s;
}

absl::Status NimbusClient::NotANimbus(std::string_view path, int status,
                                      const std::string& body) const {
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string why;
  const bool success = status >= 200 && status < 300;
  if (doc.is_discarded() || (!success && !doc.is_object())) {
    // Every answer of nimbus's REST API is JSON, each error an object.
    why = absl::StrCat("HTTP ", status, " with a body that is not nimbus's JSON: '",
                       body.substr(0, 60), body.size() > 60 ? "...'" : "'");
  } else if (status == 404 && absl::StartsWith(doc.value("errorMessage", ""), "no route for ")) {
    // Any HTTP server of Tempest answers so for a path it does not serve; a
    // nimbus serves its cluster summary.
    if (path == "/api/v1/cluster/summary") {
      why = absl::StrCat("HTTP 404: ", doc.value("errorMessage", ""));
    } else {
      net::HttpClient http(host_, port_, std::chrono::seconds(10));
      absl::StatusOr<net::HttpClientResponse> probe = http.Get("/api/v1/cluster/summary");
      const bool nimbus = probe.ok() && probe->status == 200 &&
                          json::parse(probe->body, nullptr, false).is_object();
      if (!nimbus) why = absl::StrCat("HTTP 404: ", doc.value("errorMessage", ""));
    }
  }
  if (why.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      address_, " answered but is not a Tempest nimbus (", why,
      "); --nimbus takes nimbus's REST address, its ui.port (tempest dev prints it as nimbus=)"));
}

bool NimbusClient::NotReady(const absl::Status& status) {
  return status.GetPayload(kNotReadyPayload).has_value();
}

void NimbusClient::MarkNotReady(absl::Status& status) {
  status.SetPayload(kNotReadyPayload, absl::Cord("1"));
}

absl::StatusOr<std::optional<std::string>> NimbusClient::ListedId(const std::string& name) const {
  ASSIGN_OR_RETURN(const json summary, Get("/api/v1/topology/summary"));
  if (summary.contains("topologies") && summary["topologies"].is_array()) {
    for (const json& t : summary["topologies"]) {
      if (t.value("name", "") == name) return std::optional<std::string>(t.value("id", ""));
    }
  }
  return std::optional<std::string>();
}

absl::StatusOr<std::string> NimbusClient::IdOf(const std::string& name) const {
  ASSIGN_OR_RETURN(const std::optional<std::string> id, ListedId(name));
  if (id.has_value()) return *id;
  // A nimbus that has just rejoined the cluster (after a partition or a
  // restart) answers reads from a view that may still be catching up; the
  // leader's is the one a kill or rebalance acts on, so a name this one
  // does not list is looked up there before it is called unknown.
  absl::StatusOr<json> nimbuses = Get("/api/v1/nimbus/summary");
  if (nimbuses.ok() && nimbuses->contains("nimbuses") && (*nimbuses)["nimbuses"].is_array()) {
    for (const json& n : (*nimbuses)["nimbuses"]) {
      if (!n.is_object() || n.value("status", "") != "Leader") continue;
      const std::string host = n.value("host", "");
      const int port = n.value("port", 0);
      if (host.empty() || port <= 0 || absl::StrCat(host, ":", port) == address_) break;
      absl::StatusOr<std::optional<std::string>> at_leader =
          NimbusClient(host, port, token_, token_source_).ListedId(name);
      if (at_leader.ok() && at_leader->has_value()) return **at_leader;
      break;
    }
  }
  return absl::NotFoundError(absl::StrCat("no topology named '", name, "' on nimbus ", address_));
}

}  // namespace tempest::cli
