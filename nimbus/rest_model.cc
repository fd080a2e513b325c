#include "nimbus/rest_model.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tempest::nimbus {
namespace {

using SlotKey = std::pair<std::string, int>;  // supervisor id, port

std::set<std::pair<std::string, int>> AssignedSlots(const TopologyView& view) {
  std::set<std::pair<std::string, int>> slots;
  if (view.assignment.has_value()) {
    for (const auto& e : view.assignment->executors()) slots.insert({e.node(), e.port()});
  }
  return slots;
}

}  // namespace

int AssignedWorkers(const std::optional<v1::Assignment>& a) {
  if (!a.has_value()) return 0;
  std::set<SlotKey> slots;
  for (const auto& e : a->executors()) slots.insert({e.node(), e.port()});
  return static_cast<int>(slots.size());
}

std::vector<const StoredBeat*> CurrentBeats(const TopologyView& view) {
  std::set<SlotKey> slots;
  if (view.assignment.has_value()) {
    for (const auto& e : view.assignment->executors()) slots.insert({e.node(), e.port()});
  }
  std::vector<const StoredBeat*> out;
  for (const StoredBeat& b : view.beats) {
    if (b.parsed && slots.contains({b.slot.node, b.slot.port})) out.push_back(&b);
  }
  return out;
}

void Totals::Add(const v1::WorkerHeartbeat& b) {
  emitted += b.emitted();
  transferred += b.transferred();
  acked += b.acked();
  failed += b.failed();
  restarts += b.restarts();
  p99_us = std::max(p99_us, b.complete_latency_p99_us());
  ++workers;
}

Totals TotalsOf(const std::vector<const StoredBeat*>& beats) {
  Totals t;
  for (const StoredBeat* b : beats) t.Add(b->beat);
  return t;
}

std::vector<const StoredWorkerFailure*> CurrentFailures(const TopologyView& view) {
  const auto slots = AssignedSlots(view);
  std::vector<const StoredWorkerFailure*> out;
  for (const StoredWorkerFailure& f : view.failures) {
    if (slots.contains({f.node, f.port})) out.push_back(&f);
  }
  return out;
}

std::map<std::string, int64_t> RestartsBySlot(const TopologyView& view) {
  std::map<std::string, int64_t> out;
  for (const auto& [node, port] : AssignedSlots(view)) out[absl::StrCat(node, "-", port)] = 0;
  for (const StoredBeat* b : CurrentBeats(view)) {
    int64_t& n = out[absl::StrCat(b->slot.node, "-", b->slot.port)];
    n = std::max(n, b->beat.restarts());
  }
  for (const StoredWorkerFailure* f : CurrentFailures(view)) {
    int64_t& n = out[absl::StrCat(f->node, "-", f->port)];
    n = std::max(n, f->restarts);
  }
  return out;
}

int64_t TopologyRestarts(const TopologyView& view) {
  int64_t sum = 0;
  for (const auto& [slot, n] : RestartsBySlot(view)) sum += n;
  return sum;
}

std::string FailureReason(const StoredWorkerFailure& f) {
  std::string reason = absl::StrCat(f.status.empty() ? "failed" : f.status, " (", f.restarts,
                                    f.restarts == 1 ? " restart)" : " restarts)");
  if (!f.output.empty()) absl::StrAppend(&reason, ": ", f.output.back());
  return reason;
}

void AddWorkerFailureErrors(TopologyView& view) {
  if (!view.assignment.has_value()) return;
  bool added = false;
  for (const StoredWorkerFailure* f : CurrentFailures(view)) {
    if (!f->failing) continue;
    // One error per component on the slot, at its first task there.
    std::map<std::string, int> first_task;
    for (const auto& e : view.assignment->executors()) {
      if (e.node() != f->node || e.port() != f->port) continue;
      for (const v1::ExecutorRange& r : view.topology.base.executors()) {
        if (r.start_task() != e.start_task() || r.end_task() != e.end_task()) continue;
        auto [it, fresh] = first_task.emplace(r.component(), r.start_task());
        if (!fresh) it->second = std::min(it->second, r.start_task());
      }
    }
    for (const auto& [component, task] : first_task) {
      StoredError e;
      e.component = component;
      e.time_secs = f->exit_time_ms / 1000;
      e.node = f->node;
      e.port = f->port;
      e.task = task;
      e.message = absl::StrCat("worker ", FailureReason(*f));
      view.errors.push_back(std::move(e));
      added = true;
    }
  }
  if (!added) return;
  std::stable_sort(
      view.errors.begin(), view.errors.end(),
      [](const StoredError& a, const StoredError& b) { return a.time_secs < b.time_secs; });
}

}  // namespace tempest::nimbus
