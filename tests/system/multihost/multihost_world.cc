#include "tests/system/multihost/multihost_world.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/os/loopback.h"
#include "tests/support/eventually.h"
#include "tests/support/run_command.h"

namespace tempest::testing {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;


absl::StatusOr<std::unique_ptr<MultiHostWorld>> MultiHostWorld::Start(const std::string& dir,
                                                                      const std::string& binary) {
  auto world = std::unique_ptr<MultiHostWorld>(new MultiHostWorld(dir, binary));
  devcluster::NetnsCluster::Options o;
  o.dir = dir;
  o.binary = binary;
  o.zookeepers = 3;
  o.nimbuses = 2;
  o.supervisors = kSupervisors;
  o.slots_per_supervisor = 2;
  for (const char* topic : kKafkaTopics) o.kafka_topics.push_back(absl::StrCat(topic, ":3"));
  // As deploy/tempest.yaml has it: nimbus on every interface, advertising
  // storm.local.hostname (the unset case is a unit test of NimbusOptions).
  o.extra_config = {"ui.host: \"0.0.0.0\""};
  absl::StatusOr<std::unique_ptr<devcluster::NetnsCluster>> cluster =
      devcluster::NetnsCluster::Start(o);
  if (!cluster.ok()) return cluster.status();
  world->cluster_ = *std::move(cluster);
  json summary;
  if (!Eventually(seconds(60), [&] {
        summary = world->RestGet("/api/v1/supervisor/summary");
        return summary.is_object() && summary.contains("supervisors") &&
               static_cast<int>(summary["supervisors"].size()) == kSupervisors;
      }, milliseconds(250))) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the supervisors did not all register: ", summary.dump(), "\n", world->LogTails()));
  }
  return world;
}

MultiHostWorld::~MultiHostWorld() = default;

json MultiHostWorld::RestGet(const std::string& path, const std::string& only) const {
  const std::vector<std::string> addresses =
      only.empty() ? cluster_->NimbusAddresses() : std::vector<std::string>{only};
  for (const std::string& address : addresses) {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) continue;
    const std::string host = address.substr(0, colon);
    const int port = std::stoi(address.substr(colon + 1));
    absl::StatusOr<std::string> response = os::TcpRequest(
        host, port,
        absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", address, "\r\nConnection: close\r\n\r\n"),
        milliseconds(5000));
    if (!response.ok()) continue;
    const size_t body = response->find("\r\n\r\n");
    if (body == std::string::npos) continue;
    json j = json::parse(response->substr(body + 4), nullptr, false);
    if (!j.is_discarded()) return j;
  }
  return json();
}

std::string MultiHostWorld::Leader(const std::string& address) const {
  json summary = RestGet("/api/v1/nimbus/summary", address);
  if (!summary.is_object() || !summary.contains("nimbuses")) return "";
  for (const json& n : summary["nimbuses"]) {
    if (n.value("status", "") == "Leader") {
      return absl::StrCat(n.value("host", ""), ":", n.value("port", 0));
    }
  }
  return "";
}

std::vector<std::string> MultiHostWorld::WorkerHosts(const std::string& topology_id) const {
  std::vector<std::string> out;
  json t = RestGet("/api/v1/topology/" + topology_id);
  if (!t.is_object() || !t.contains("workers") || !t["workers"].is_array()) return out;
  for (const json& w : t["workers"]) {
    if (w.is_object() && w.contains("host") && w["host"].is_string()) {
      out.push_back(w["host"].get<std::string>());
    }
  }
  return out;
}

absl::StatusOr<std::string> MultiHostWorld::Tempest(const std::vector<std::string>& args,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& nimbus) const {
  std::vector<std::string> argv = {binary_};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--nimbus", nimbus.empty() ? cluster_->NimbusAddresses().at(0) : nimbus});
  static int runs = 0;
  CommandRun r = RunCommand(cluster_->ClientCommand(argv),
                            absl::StrCat(dir_, "/cmd-", ++runs), timeout);
  if (!r.finished || r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("`tempest ", absl::StrJoin(args, " "), "` ",
                                            r.finished ? "failed" : "did not finish", ": ", r.out,
                                            r.err));
  }
  return r.out;
}

absl::StatusOr<std::string> MultiHostWorld::TempestWithSeeds(
    const std::vector<std::string>& args, const std::vector<std::string>& seeds,
    std::chrono::milliseconds timeout) const {
  static int configs = 0;
  const std::string config = absl::StrCat(dir_, "/client-", ++configs, ".yaml");
  std::vector<std::string> quoted;
  for (const std::string& seed : seeds) quoted.push_back(absl::StrCat("\"", seed, "\""));
  std::ofstream(config) << "nimbus.seeds: [" << absl::StrJoin(quoted, ", ") << "]\n"
                        << "ui.port: " << kUiPort << "\n";
  std::vector<std::string> argv = {binary_};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--config", config});
  CommandRun r = RunCommand(cluster_->ClientCommand(argv),
                            absl::StrCat(dir_, "/seeds-cmd-", configs), timeout);
  if (!r.finished || r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("`tempest ", absl::StrJoin(args, " "), "` ",
                                            r.finished ? "failed" : "did not finish", ": ", r.out,
                                            r.err));
  }
  return r.out;
}


}  // namespace tempest::testing
