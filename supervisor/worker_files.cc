#include "supervisor/worker_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "nlohmann/json.hpp"

namespace tempest::supervisor {
namespace {

using api::Sv;

}  // namespace

std::string WorkerDir(std::string_view local_dir, int port) {
  return absl::StrCat(Sv(local_dir), "/workers/", port);
}
std::string SlotRecordsDir(std::string_view local_dir, int port) {
  return absl::StrCat(Sv(local_dir), "/supervisor/workers/", port);
}
std::string WorkerJsonPath(std::string_view records_dir) {
  return absl::StrCat(Sv(records_dir), "/", kWorkerJsonFile);
}
std::string WorkerLogPath(std::string_view records_dir) {
  return absl::StrCat(Sv(records_dir), "/", kWorkerLogFile);
}
std::string HeartbeatPath(std::string_view worker_dir) {
  return absl::StrCat(Sv(worker_dir), "/", kHeartbeatFile);
}
std::string PreviousHeartbeatPath(std::string_view worker_dir) {
  return absl::StrCat(Sv(worker_dir), "/", kPreviousHeartbeatFile);
}
std::string SupervisorIdPath(std::string_view local_dir) {
  return absl::StrCat(Sv(local_dir), "/supervisor/id");
}

std::string EncodeWorkerJson(const WorkerLaunchRecord& record) {
  nlohmann::ordered_json j;
  j["pid"] = record.pid;
  j["topologyId"] = record.topology_id;
  j["port"] = record.port;
  j["supervisorId"] = record.supervisor_id;
  j["launchedAtSecs"] = record.launched_at_secs;
  // Ids come from znode names; never let a stray byte make dump() throw.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

absl::StatusOr<WorkerLaunchRecord> ParseWorkerJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("worker.json is not JSON");
  if (!j.is_object()) return absl::InvalidArgumentError("worker.json is not a JSON object");
  auto integer = [&j](const char* key) -> std::optional<int64_t> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  auto string = [&j](const char* key) -> std::optional<std::string> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const std::optional<int64_t> pid = integer("pid");
  const std::optional<int64_t> port = integer("port");
  const std::optional<std::string> topology = string("topologyId");
  if (!pid || *pid <= 0 || *pid > INT32_MAX) {
    return absl::InvalidArgumentError("worker.json: \"pid\" must be a positive integer");
  }
  if (!port || *port <= 0 || *port > 65535) {
    return absl::InvalidArgumentError("worker.json: \"port\" must be an integer in 1..65535");
  }
  if (!topology || topology->empty()) {
    return absl::InvalidArgumentError("worker.json: \"topologyId\" must be a non-empty string");
  }
  WorkerLaunchRecord r;
  r.pid = static_cast<pid_t>(*pid);
  r.port = static_cast<int>(*port);
  r.topology_id = *topology;
  r.supervisor_id = string("supervisorId").value_or("");
  r.launched_at_secs = integer("launchedAtSecs").value_or(0);
  return r;
}

absl::StatusOr<v1::WorkerHeartbeat> ParseWorkerHeartbeat(std::string_view bytes) {
  v1::WorkerHeartbeat beat;
  if (bytes.empty()) return absl::InvalidArgumentError("heartbeat file is empty");
  if (!beat.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("heartbeat file does not parse as a WorkerHeartbeat");
  }
  // Protobuf accepts many byte strings; require what a real beat always has.
  if (beat.topology_id().empty() || beat.port() <= 0 || beat.time_secs() <= 0) {
    return absl::InvalidArgumentError("heartbeat lacks a topology id, port or time");
  }
  return beat;
}

bool HeartbeatBelongsTo(const v1::WorkerHeartbeat& beat, std::string_view topology_id, int port,
                        pid_t pid) {
  if (beat.topology_id() != topology_id || beat.port() != port) return false;
  return beat.pid() == 0 || beat.pid() == pid;
}

absl::Status ValidateSupervisorId(std::string_view id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("supervisor id '", Sv(id), "' must be 1-128 characters, not . or .."));
  }
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return absl::InvalidArgumentError(absl::StrCat(
          "supervisor id '", Sv(id), "' may only contain letters, digits, '.', '_' and '-'"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> LoadOrCreateSupervisorId(std::string_view local_dir) {
  const std::string path = SupervisorIdPath(local_dir);
  absl::StatusOr<std::string> text = ReadSmallFile(path, 4096);
  if (text.ok()) {
    const std::string id(absl::StripAsciiWhitespace(*text));
    if (absl::Status s = ValidateSupervisorId(id); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": ", s.message(), " (remove the file to give this supervisor a new id)"));
    }
    return id;
  }
  if (!absl::IsNotFound(text.status())) return text.status();
  std::random_device rd;
  std::string id;
  constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 8; ++i) {
    uint32_t word = rd();
    for (int j = 0; j < 4; ++j, word >>= 4) id.push_back(kHex[word & 0xf]);
  }
  RETURN_IF_ERROR(MakeDirs(absl::StrCat(Sv(local_dir), "/supervisor")));
  RETURN_IF_ERROR(WriteFileAtomically(path, id + "\n"));
  return id;
}

}  // namespace tempest::supervisor
