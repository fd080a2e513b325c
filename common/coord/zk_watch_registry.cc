#include "common/coord/zk_watch_registry.h"

#include <algorithm>
#include <utility>

namespace tempest::coord {

uint64_t ZkWatchRegistry::Register(Kind kind, const std::string& path, ZkWatchFn fn) {
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  WatchesOf(kind)[path].push_back(Registration{id, std::move(fn)});
  return id;
}

void ZkWatchRegistry::Unregister(Kind kind, const std::string& path, uint64_t id) {
  absl::MutexLock lock(&mu_);
  ByPath& watches = WatchesOf(kind);
  auto it = watches.find(path);
  if (it == watches.end()) return;
  auto& regs = it->second;
  regs.erase(
      std::remove_if(regs.begin(), regs.end(), [id](const Registration& r) { return r.id == id; }),
      regs.end());
  if (regs.empty()) watches.erase(it);
}

void ZkWatchRegistry::Fire(const ZkWatchEvent& event) {
  std::vector<Registration> fire;
  {
    absl::MutexLock lock(&mu_);
    auto take = [&](ByPath& watches) {
      auto it = watches.find(event.path);
      if (it == watches.end()) return;
      for (auto& r : it->second) fire.push_back(std::move(r));
      watches.erase(it);
    };
    switch (event.type) {
      case ZkWatchEventType::kCreated:
      case ZkWatchEventType::kChanged:
        take(data_);
        break;
      case ZkWatchEventType::kDeleted:
        take(data_);
        take(child_);
        break;
      case ZkWatchEventType::kChildren:
        take(child_);
        break;
      case ZkWatchEventType::kSessionLost:
        return;
    }
  }
  for (auto& r : fire) r.fn(event);
}

void ZkWatchRegistry::DropAll() {
  std::vector<std::pair<std::string, Registration>> fire;
  {
    absl::MutexLock lock(&mu_);
    for (ByPath* watches : {&data_, &child_}) {
      for (auto& [path, regs] : *watches) {
        for (auto& r : regs) fire.emplace_back(path, std::move(r));
      }
      watches->clear();
    }
  }
  for (auto& [path, r] : fire) r.fn(ZkWatchEvent{ZkWatchEventType::kSessionLost, path});
}

}  // namespace tempest::coord
