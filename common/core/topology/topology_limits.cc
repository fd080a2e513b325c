#include "common/core/topology/topology_limits.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/log_text.h"
#include "common/core/topology/task_layout.h"

namespace tempest::core {
namespace {

using api::Sv;

// A name as it may be quoted in a message: escaped, at most 40 characters.
std::string Shown(std::string_view name) {
  constexpr size_t kShown = 40;
  std::string shown = absl::CHexEscape(Sv(name.substr(0, kShown)));
  if (name.size() > kShown) absl::StrAppend(&shown, "... (", name.size(), " bytes)");
  return shown;
}

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

absl::Status CheckName(std::string_view what, std::string_view name, std::string_view extra) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(Sv(what), " is empty"));
  if (name.size() > TopologyLimits::kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), " '", Shown(name), "' is longer than ",
                                                   TopologyLimits::kMaxNameLength, " characters"));
  }
  for (char c : name) {
    if (IsAsciiAlnum(c) || c == '-' || c == '_' || extra.find(c) != std::string_view::npos) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(what), " '", Shown(name), "' may hold only ASCII letters, digits, '-', '_'",
        extra.empty() ? "" : absl::StrCat(" and '", Sv(extra), "'"), " (not '",
        absl::CHexEscape(std::string(1, c)), "')"));
  }
  return absl::OkStatus();
}

// `key` of `config` as a limit in 1..ceiling, or `fallback` when absent.
int64_t ReadLimit(const api::Config& config, std::string_view key, int64_t fallback,
                  int64_t ceiling, std::vector<std::string>* errors) {
  const api::Value* v = config.Find(key);
  if (v == nullptr || v->is_nil()) return fallback;
  absl::StatusOr<int64_t> i = v->CoerceInt();
  if (!i.ok() || *i < 1 || *i > ceiling) {
    if (errors != nullptr) {
      errors->push_back(absl::StrCat("config ", Sv(key), " must be an integer from 1 to ",
                                     ceiling, ", got ", v->DebugString()));
    }
    return fallback;
  }
  return *i;
}

// "the topology has 12 tasks; at most 10 are allowed (key)", after `top`.
std::string TooMany(std::string_view top, std::string_view what, int64_t n, int64_t max,
                    std::string_view key) {
  return absl::StrCat(Sv(top), "the topology has ", n, " ", Sv(what), "; at most ", max,
                      " are allowed (", Sv(key), ")");
}

}  // namespace

TopologyLimits TopologyLimits::FromConfig(const api::Config& config,
                                          std::vector<std::string>* errors) {
  TopologyLimits l;
  l.max_parallelism = ReadLimit(config, kTempestLimitsMaxParallelism, l.max_parallelism,
                                kHardMaxParallelism, errors);
  l.max_tasks = ReadLimit(config, kTempestLimitsMaxTasks, l.max_tasks, kHardMaxTasks, errors);
  l.max_components = ReadLimit(config, kTempestLimitsMaxComponents, l.max_components,
                               kHardMaxComponents, errors);
  l.max_streams =
      ReadLimit(config, kTempestLimitsMaxStreams, l.max_streams, kHardMaxStreams, errors);
  l.max_workers =
      ReadLimit(config, kTempestLimitsMaxWorkers, l.max_workers, kHardMaxWorkers, errors);
  l.max_ackers = ReadLimit(config, kTempestLimitsMaxAckers, l.max_ackers, kHardMaxAckers, errors);
  l.max_executors_per_worker =
      ReadLimit(config, kTempestLimitsMaxExecutorsPerWorker, l.max_executors_per_worker,
                kHardMaxExecutorsPerWorker, errors);
  return l;
}

int64_t ExecutorsPerWorker(int64_t executors, int64_t workers) {
  workers = std::max<int64_t>(workers, 1);
  return (std::max<int64_t>(executors, 0) + workers - 1) / workers;
}

absl::Status CheckExecutorsPerWorker(int64_t executors, int64_t workers, int64_t max) {
  const int64_t per_worker = ExecutorsPerWorker(executors, workers);
  if (per_worker <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      Counted(executors, "executor"), " over ", Counted(std::max<int64_t>(workers, 1), "worker"),
      " make ", Counted(per_worker, "executor thread"), " in one worker; at most ", max,
      " are allowed (",
      Sv(kTempestLimitsMaxExecutorsPerWorker), ", at most ",
      TopologyLimits::kHardMaxExecutorsPerWorker, "): add workers or lower parallelism"));
}

absl::Status CheckOwnerName(std::string_view owner) {
  if (owner.size() > TopologyLimits::kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("owner '", Shown(owner), "' is longer than ",
                                                   TopologyLimits::kMaxNameLength, " bytes"));
  }
  for (size_t i = 0; i < owner.size(); ++i) {
    const auto c = static_cast<unsigned char>(owner[i]);
    const bool c1 = c == 0xc2 && i + 1 < owner.size() &&
                    static_cast<unsigned char>(owner[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(owner[i + 1]) <= 0x9f;
    if (c < 0x20 || c == 0x7f || c1) {
      return absl::InvalidArgumentError(
          absl::StrCat("owner '", Shown(owner), "' holds a control character (",
                       absl::CHexEscape(Sv(owner.substr(i, c1 ? 2 : 1))), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTopologyName(std::string_view name) {
  return CheckName("topology name", name, "");
}

absl::Status CheckComponentOrStreamId(std::string_view what, std::string_view id) {
  return CheckName(what, id, ".$:");
}

namespace {

// Each check below adds its findings to `errors`, prefixed with where they
// come from ("file:line: " when the topology was loaded from Flux).

// The topology's name and its counts of components and streams.
void CheckTopologyCounts(const TopologyDef& def, const TopologyLimits& limits,
                         std::vector<std::string>& errors) {
  const std::string top = def.location.Prefix();
  if (!def.name.empty()) {
    if (absl::Status s = CheckTopologyName(def.name); !s.ok()) {
      errors.push_back(absl::StrCat(top, s.message()));
    }
  }
  const int64_t components = static_cast<int64_t>(def.spouts.size() + def.bolts.size());
  if (components > limits.max_components) {
    errors.push_back(
        TooMany(top, "components", components, limits.max_components, kTempestLimitsMaxComponents));
  }
  const int64_t streams = static_cast<int64_t>(def.streams.size());
  if (streams > limits.max_streams) {
    errors.push_back(
        TooMany(top, "streams", streams, limits.max_streams, kTempestLimitsMaxStreams));
  }
}

// Each component's id, parallelism and tasks, then the topology's total of
// tasks. Returns the total of executors.
int64_t CheckComponents(const TopologyDef& def, const TopologyLimits& limits,
                        std::vector<std::string>& errors) {
  int64_t total_tasks = 0;
  int64_t total_executors = 0;
  for (const ComponentDef* c : def.AllComponents()) {
    const std::string at = c->location.Prefix();
    const std::string kind(c->KindName());
    if (!c->id.value().empty()) {
      if (absl::Status s = CheckComponentOrStreamId(absl::StrCat(kind, " id"), c->id.value());
          !s.ok()) {
        errors.push_back(absl::StrCat(at, s.message()));
      }
    }
    if (c->parallelism > limits.max_parallelism) {
      errors.push_back(absl::StrCat(at, kind, " '", Shown(c->id.value()), "': parallelism ",
                                    c->parallelism, " is above the limit of ",
                                    limits.max_parallelism, " (",
                                    Sv(kTempestLimitsMaxParallelism), ")"));
    }
    if (c->NumTasks() > limits.max_tasks) {
      errors.push_back(absl::StrCat(at, kind, " '", Shown(c->id.value()), "': numTasks ",
                                    c->NumTasks(), " is above the limit of ", limits.max_tasks,
                                    " (", Sv(kTempestLimitsMaxTasks), ")"));
    }
    total_tasks += std::max(c->NumTasks(), 0);
    total_executors += std::max(c->NumExecutors(), 0);
  }
  if (total_tasks > limits.max_tasks) {
    errors.push_back(TooMany(def.location.Prefix(), "tasks", total_tasks, limits.max_tasks,
                             kTempestLimitsMaxTasks));
  }
  return total_executors;
}

void CheckStreamIds(const TopologyDef& def, std::vector<std::string>& errors) {
  for (const StreamDef& s : def.streams) {
    if (s.stream.value().empty()) continue;  // reported by the validator
    if (absl::Status st = CheckComponentOrStreamId("stream id", s.stream.value()); !st.ok()) {
      errors.push_back(absl::StrCat(s.location.Prefix(), st.message()));
    }
  }
}

// A count the topology's config asks for (`key`, e.g. topology.workers)
// against its limit.
void CheckConfiguredCount(const TopologyDef& def, std::string_view key, int64_t max,
                          std::string_view limit_key, std::vector<std::string>& errors) {
  const api::Value* v = def.config.Find(key);
  if (v == nullptr || v->is_nil()) return;
  absl::StatusOr<int64_t> i = v->CoerceInt();
  if (i.ok() && *i > max) {
    errors.push_back(absl::StrCat(def.location.Prefix(), "config ", Sv(key), " is ", *i,
                                  "; at most ", max, " are allowed (", Sv(limit_key), ")"));
  }
}

}  // namespace

std::vector<std::string> CheckTopologyLimits(const TopologyDef& def) {
  std::vector<std::string> errors;
  const std::string top = def.location.Prefix();
  std::vector<std::string> config_errors;
  const TopologyLimits limits = TopologyLimits::FromConfig(def.config, &config_errors);
  for (const std::string& e : config_errors) errors.push_back(absl::StrCat(top, e));
  CheckTopologyCounts(def, limits, errors);
  const int64_t total_executors = CheckComponents(def, limits, errors);
  CheckStreamIds(def, errors);
  CheckConfiguredCount(def, api::kTopologyWorkers, limits.max_workers, kTempestLimitsMaxWorkers,
                       errors);
  CheckConfiguredCount(def, api::kTopologyAckerExecutors, limits.max_ackers,
                       kTempestLimitsMaxAckers, errors);
  // Only when the counts themselves are within their limits: the message
  // would otherwise repeat theirs.
  if (errors.empty()) {
    const int64_t workers = std::max<int64_t>(def.config.GetInt(api::kTopologyWorkers, 1), 1);
    const int64_t ackers = TaskLayout::AckerExecutors(def.config);
    if (absl::Status s = CheckExecutorsPerWorker(total_executors + ackers, workers,
                                                 limits.max_executors_per_worker);
        !s.ok()) {
      errors.push_back(absl::StrCat(top, s.message()));
    }
  }
  return errors;
}

}  // namespace tempest::core
