// Checks that StreamGrouper::Choose allocates nothing on the hot path, by
// counting calls to the global operator new in this test binary.
#include <atomic>
#include <cstdlib>
#include <new>

#include "common/core/grouping/stream_grouper.h"
#include "gtest/gtest.h"

namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

// GCC cannot see that these replace the global pair and warns about
// malloc/free pairing.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) std::abort();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace tempest::core {
namespace {

using api::TaskId;
using api::Value;
using api::Values;

TEST(GrouperAllocationTest, ChooseDoesNotAllocate) {
  std::vector<TaskId> targets;
  for (int i = 1; i <= 8; ++i) targets.emplace_back(i);
  absl::flat_hash_set<TaskId> local{TaskId(2), TaskId(3)};
  std::vector<std::unique_ptr<StreamGrouper>> groupers;
  for (GroupingType type : {GroupingType::kShuffle, GroupingType::kFields, GroupingType::kAll,
                            GroupingType::kGlobal, GroupingType::kNone, GroupingType::kDirect,
                            GroupingType::kLocalOrShuffle, GroupingType::kPartialKey}) {
    GroupingDef def;
    def.type = type;
    if (type == GroupingType::kFields || type == GroupingType::kPartialKey) {
      def.fields = {"key", "seq"};
    }
    GrouperOptions opts;
    opts.output_fields = api::Fields({"seq", "key", "payload"});
    opts.target_tasks = targets;
    opts.local_tasks = local;
    opts.seed = 7;
    absl::StatusOr<std::unique_ptr<StreamGrouper>> g = CreateStreamGrouper(def, opts);
    ASSERT_TRUE(g.ok()) << g.status();
    groupers.push_back(std::move(*g));
  }
  const int64_t setup_start = g_allocations.load();
  std::vector<Values> tuples;
  for (int i = 0; i < 64; ++i) {
    tuples.push_back(Values{Value(i), Value("key-" + std::to_string(i % 13)),
                            Value::OfBytes(std::string(100, 'p'))});
  }

  // The hook sees allocations (building the tuples needed some).
  ASSERT_GT(g_allocations.load() - setup_start, 64);

  int64_t routed = 0;
  const int64_t before = g_allocations.load();
  for (int round = 0; round < 100; ++round) {
    for (const Values& v : tuples) {
      for (auto& g : groupers) routed += static_cast<int64_t>(g->Choose(v).size());
      routed += static_cast<int64_t>(groupers[5]->ChooseDirect(TaskId(3)).size());
    }
  }
  const int64_t allocations = g_allocations.load() - before;
  EXPECT_EQ(allocations, 0);
  // shuffle, fields, global, none, localOrShuffle, partialKey: 1 each; all: 8; direct: 0 + 1.
  EXPECT_EQ(routed, 100 * 64 * (6 + 8 + 1));
}

}  // namespace
}  // namespace tempest::core
