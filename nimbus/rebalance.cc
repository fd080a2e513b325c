#include "nimbus/rebalance.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/component_registry.h"
#include "common/api/string_view_compat.h"
#include "common/core/log_text.h"
#include "common/core/flux/stored_topology.h"
#include "common/core/status_macros.h"
#include "common/core/topology/task_layout.h"
#include "common/core/topology/topology_limits.h"
#include "nimbus/topology_state.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {
namespace {

// The executors one worker would run after the rebalance, against the
// topology's tempest.limits.max.executors.per.worker (the default when the
// stored definition cannot be read).
absl::Status CheckRebalancedThreads(const v1::StormBase& base, const RebalanceRequest& request) {
  int64_t executors = 0;
  for (const v1::ComponentSummary& c : base.components()) {
    auto it = request.executors.find(c.id());
    executors += it != request.executors.end() ? it->second : c.executors();
  }
  absl::StatusOr<core::TopologyDef> def = core::LoadStoredTopology(base);
  const core::TopologyLimits limits =
      def.ok() ? core::TopologyLimits::FromConfig(def->config, nullptr) : core::TopologyLimits{};
  return core::CheckExecutorsPerWorker(executors, request.num_workers.value_or(base.num_workers()),
                                       limits.max_executors_per_worker);
}

}  // namespace

namespace {

// The limits the topology was submitted under (its tempest.limits.* keys,
// else the defaults), so a rebalance cannot reach what a submission may not.
core::TopologyLimits LimitsOf(const v1::StormBase& base) {
  absl::StatusOr<core::TopologyDef> def = core::LoadStoredTopology(base);
  return def.ok() ? core::TopologyLimits::FromConfig(def->config, nullptr) : core::TopologyLimits{};
}

// "topology 'T' has no component 'cnt'; did you mean 'count'? (its
// components: ...)": a rebalance names components by hand.
absl::Status UnknownComponent(const v1::StormBase& base, const std::string& component) {
  std::vector<std::string> names;
  for (const v1::ComponentSummary& c : base.components()) {
    if (!c.id().starts_with("__")) names.push_back(c.id());
  }
  const std::vector<std::string_view> views(names.begin(), names.end());
  const std::optional<std::string> closest = api::ClosestName(component, views);
  return absl::InvalidArgumentError(absl::StrCat(
      "topology '", base.name(), "' has no component '", component, "'",
      closest ? absl::StrCat("; did you mean '", *closest, "'?") : std::string(),
      " (its components: ", absl::StrJoin(names, ", "), ")"));
}

}  // namespace

absl::Status ValidateRebalance(const v1::StormBase& base, const RebalanceRequest& request) {
  if (request.wait_secs && *request.wait_secs < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("wait must not be negative, not ", *request.wait_secs));
  }
  if (request.num_workers && *request.num_workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the number of workers must be at least 1, not ", *request.num_workers));
  }
  if (!request.num_workers && request.executors.empty()) return absl::OkStatus();
  const core::TopologyLimits limits = LimitsOf(base);
  if (request.num_workers && *request.num_workers > limits.max_workers) {
    return absl::InvalidArgumentError(
        absl::StrCat("the number of workers ", *request.num_workers, " is above the limit of ",
                     limits.max_workers, " (", api::Sv(core::kTempestLimitsMaxWorkers), ")"));
  }
  for (const auto& [component, executors] : request.executors) {
    const v1::ComponentSummary* found = nullptr;
    for (const v1::ComponentSummary& c : base.components()) {
      if (c.id() == component && !component.starts_with("__")) found = &c;
    }
    if (found == nullptr) return UnknownComponent(base, component);
    if (executors < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "component '", component, "' needs at least 1 executor, not ", executors));
    }
    if (executors > limits.max_parallelism) {
      return absl::InvalidArgumentError(
          absl::StrCat("component '", component, "': ", executors,
                       " executors is above the limit of ", limits.max_parallelism, " (",
                       api::Sv(core::kTempestLimitsMaxParallelism), ")"));
    }
    if (executors > found->tasks()) {
      return absl::InvalidArgumentError(
          absl::StrCat("component '", component, "' has ", core::Counted(found->tasks(), "task"),
                       ", so it cannot have ", core::Counted(executors, "executor")));
    }
  }
  return CheckRebalancedThreads(base, request);
}

absl::StatusOr<v1::StormBase> BeginRebalance(const v1::StormBase& base,
                                             const RebalanceRequest& request, int64_t now_secs) {
  RETURN_IF_ERROR(ValidateRebalance(base, request));
  ASSIGN_OR_RETURN(v1::TopologyStatus next,
                   NextTopologyStatus(base.status(), TopologyEvent::kRebalance));
  v1::StormBase out = base;
  out.set_prev_status(base.status());
  out.set_status(next);
  out.set_rebalance_at_secs(now_secs + request.wait_secs.value_or(base.message_timeout_secs()));
  out.set_rebalance_num_workers(request.num_workers.value_or(0));
  if (!request.executors.empty()) {
    nlohmann::json pending = nlohmann::json::object();
    for (const auto& [component, executors] : request.executors) pending[component] = executors;
    (*out.mutable_config_overrides())[kPendingExecutorsKey] = pending.dump();
  }
  return out;
}

absl::Status RecomputeLayout(const core::TopologyDef& def, v1::StormBase& base) {
  ASSIGN_OR_RETURN(core::TaskLayout layout,
                   core::TaskLayout::Create(def, core::TaskLayout::AckerExecutors(def.config)));
  base.set_num_tasks(layout.num_tasks());
  base.set_num_executors(static_cast<int>(layout.executors().size()));
  base.clear_executors();
  base.clear_components();
  std::map<std::string, int> executors_of;
  for (const core::ExecutorInfo& e : layout.executors()) {
    ++executors_of[e.component.value()];
    v1::ExecutorRange* r = base.add_executors();
    r->set_start_task(e.start.value());
    r->set_end_task(e.end.value());
    r->set_component(e.component.value());
  }
  for (const auto& [component, tasks] : layout.component_tasks()) {
    v1::ComponentSummary* c = base.add_components();
    c->set_id(component.value());
    const core::ComponentDef* cd = def.FindComponent(component);
    c->set_spout(cd != nullptr && cd->kind == core::ComponentDef::Kind::kSpout);
    c->set_executors(executors_of[component.value()]);
    c->set_tasks(static_cast<int>(tasks.size()));
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<std::map<std::string, int>> ParsePending(const v1::StormBase& base) {
  std::map<std::string, int> out;
  auto it = base.config_overrides().find(kPendingExecutorsKey);
  if (it == base.config_overrides().end()) return out;
  nlohmann::json j = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError(absl::StrCat(kPendingExecutorsKey, " is not a JSON object"));
  }
  for (const auto& [component, count] : j.items()) {
    if (!count.is_number_integer()) {
      return absl::DataLossError(absl::StrCat(kPendingExecutorsKey, ": '", component,
                                              "' is not a whole number"));
    }
    out[component] = count.get<int>();
  }
  return out;
}

}  // namespace

std::map<std::string, int> PendingExecutors(const v1::StormBase& base) {
  absl::StatusOr<std::map<std::string, int>> p = ParsePending(base);
  return p.ok() ? *p : std::map<std::string, int>{};
}

absl::StatusOr<v1::StormBase> FinishRebalance(const v1::StormBase& base) {
  if (base.status() != v1::REBALANCING) {
    return absl::FailedPreconditionError(
        absl::StrCat("topology '", base.name(), "' is ",
                     api::Sv(TopologyStatusName(base.status())), ", not REBALANCING"));
  }
  std::map<std::string, int> pending;
  ASSIGN_OR_RETURN(pending, ParsePending(base));
  v1::StormBase out = base;
  out.mutable_config_overrides()->erase(kPendingExecutorsKey);
  for (const auto& [component, executors] : pending) {
    (*out.mutable_component_executors())[component] = executors;
  }
  ASSIGN_OR_RETURN(core::TopologyDef def, core::LoadStoredTopology(out));
  RETURN_IF_ERROR(RecomputeLayout(def, out));
  if (base.rebalance_num_workers() > 0) out.set_num_workers(base.rebalance_num_workers());
  // A record written before prev_status existed goes back to ACTIVE.
  out.set_status(base.prev_status() == v1::INACTIVE ? v1::INACTIVE : v1::ACTIVE);
  out.set_prev_status(v1::TOPOLOGY_STATUS_UNSPECIFIED);
  out.set_rebalance_at_secs(0);
  out.set_rebalance_num_workers(0);
  return out;
}

}  // namespace tempest::nimbus
