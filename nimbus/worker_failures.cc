// The supervisors' records of failed workers, read from ZooKeeper
// (TopologyStore); what the views make of them is rest_model.h.

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "nimbus/topology_store.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {
namespace {

// A supervisor writes a few KiB; anything much larger is not its record.
constexpr size_t kMaxRecordBytes = 64 * 1024;
constexpr size_t kMaxOutputLines = 10;
constexpr size_t kMaxTextChars = 1024;

std::string StringField(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>().substr(0, kMaxTextChars)
                                            : std::string();
}

int64_t IntField(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::optional<StoredWorkerFailure> ParseWorkerFailure(const WorkerSlot& slot,
                                                      std::string_view data) {
  if (data.size() > kMaxRecordBytes) return std::nullopt;
  const nlohmann::json doc = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::nullopt;
  StoredWorkerFailure f;
  f.node = slot.node;  // the name says whose slot it is, not the content
  f.port = slot.port;
  f.host = StringField(doc, "host");
  f.pid = static_cast<int>(std::clamp<int64_t>(IntField(doc, "pid"), 0, 1 << 30));
  f.failing = StringField(doc, "state") != "running";
  f.status = StringField(doc, "status");
  if (auto out = doc.find("output"); out != doc.end() && out->is_array()) {
    for (const nlohmann::json& line : *out) {
      if (line.is_string()) f.output.push_back(line.get<std::string>().substr(0, kMaxTextChars));
    }
    if (f.output.size() > kMaxOutputLines) {
      f.output.erase(f.output.begin(), f.output.end() - kMaxOutputLines);
    }
  }
  f.restarts = std::max<int64_t>(0, IntField(doc, "restarts"));
  f.consecutive_failures = std::max<int64_t>(0, IntField(doc, "consecutiveFailures"));
  f.exit_time_ms = IntField(doc, "exitTimeMs");
  f.next_attempt_ms = IntField(doc, "nextAttemptMs");
  return f;
}

}  // namespace

absl::StatusOr<std::vector<StoredWorkerFailure>> TopologyStore::ListWorkerFailures(
    const std::string& id) {
  std::vector<StoredWorkerFailure> out;
  const std::string dir = paths_.WorkerFailuresOf(id);
  absl::StatusOr<std::vector<std::string>> names = session_.Children(dir);
  if (absl::IsNotFound(names.status())) return out;
  RETURN_IF_ERROR(names.status());
  std::sort(names->begin(), names->end());
  for (const std::string& name : *names) {
    std::optional<WorkerSlot> slot = ParseBeatName(name);
    if (!slot) continue;
    absl::StatusOr<coord::ZkNode> node = session_.Get(dir + "/" + name);
    if (!node.ok()) continue;  // removed meanwhile
    if (std::optional<StoredWorkerFailure> f = ParseWorkerFailure(*slot, node->data)) {
      out.push_back(*std::move(f));
    }
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> TopologyStore::WorkerFailureTopologies() {
  absl::StatusOr<std::vector<std::string>> ids = session_.Children(paths_.WorkerFailures());
  if (absl::IsNotFound(ids.status())) return std::vector<std::string>();
  return ids;
}

absl::Status TopologyStore::RemoveWorkerFailures(const std::string& id) {
  const std::string dir = paths_.WorkerFailuresOf(id);
  absl::StatusOr<std::vector<std::string>> names = session_.Children(dir);
  if (absl::IsNotFound(names.status())) return absl::OkStatus();
  RETURN_IF_ERROR(names.status());
  // Best effort: a record left makes the Delete of `dir` below fail, and
  // that failure is what is returned.
  for (const std::string& name : *names) (void)session_.Delete(dir + "/" + name);
  // A supervisor may add one meanwhile; the next cleanup round removes it.
  absl::Status s = session_.Delete(dir);
  return s.ok() || absl::IsNotFound(s) ? absl::OkStatus() : s;
}

}  // namespace tempest::nimbus
