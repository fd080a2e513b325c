#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/core/grouping/direct_grouper.h"
#include "common/core/grouping/fields_grouper.h"
#include "common/core/grouping/java_hash.h"
#include "common/core/grouping/local_or_shuffle_grouper.h"
#include "common/core/grouping/partial_key_grouper.h"
#include "common/core/grouping/stream_grouper.h"
#include "gtest/gtest.h"

namespace tempest::core {
namespace {

using api::Fields;
using api::TaskId;
using api::Value;
using api::Values;

std::vector<TaskId> Tasks(std::initializer_list<int> ids) {
  std::vector<TaskId> out;
  for (int i : ids) out.emplace_back(i);
  return out;
}

std::unique_ptr<StreamGrouper> Make(GroupingType type, std::vector<TaskId> targets,
                                    std::vector<std::string> fields = {},
                                    absl::flat_hash_set<TaskId> local = {}) {
  GroupingDef def;
  def.type = type;
  def.fields = std::move(fields);
  GrouperOptions opts;
  opts.source_task = TaskId(100);
  opts.output_fields = Fields({"word", "count"});
  opts.target_tasks = std::move(targets);
  opts.local_tasks = std::move(local);
  opts.seed = 42;
  absl::StatusOr<std::unique_ptr<StreamGrouper>> g = CreateStreamGrouper(def, std::move(opts));
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : nullptr;
}

TEST(FieldsGrouperTest, EqualKeysGoToTheSameTask) {
  auto g = Make(GroupingType::kFields, Tasks({5, 6, 7, 8, 9}), {"word"});
  std::map<std::string, TaskId> first_choice;
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 200; ++k) {
      std::string key = absl::StrCat("key-", k);
      auto chosen = g->Choose(Values{Value(key), Value(round)});  // count differs per round
      ASSERT_EQ(chosen.size(), 1u);
      auto [it, inserted] = first_choice.emplace(key, chosen[0]);
      EXPECT_EQ(it->second, chosen[0]) << key;
    }
  }
  // Several distinct tasks are used.
  std::set<TaskId> used;
  for (const auto& [k, t] : first_choice) used.insert(t);
  EXPECT_EQ(used.size(), 5u);
}

TEST(FieldsGrouperTest, PlacementMatchesStorm) {
  // Storm: floorMod(Arrays.deepHashCode(["hello"]), 4) = floorMod(99162353, 4) = 1.
  auto g = Make(GroupingType::kFields, Tasks({10, 11, 12, 13}), {"word"});
  EXPECT_EQ(g->Choose(Values{Value("hello"), Value(1)})[0], TaskId(11));
  // A key whose hash is negative still maps into range (floorMod, not %).
  auto g3 = Make(GroupingType::kFields, Tasks({1, 2, 3}), {"word"});
  EXPECT_EQ(g3->Choose(Values{Value("polygenelubricants"), Value(0)})[0], TaskId(3));
  // Targets are sorted before indexing, whatever order they came in.
  auto unsorted = Make(GroupingType::kFields, Tasks({13, 10, 12, 11}), {"word"});
  EXPECT_EQ(unsorted->Choose(Values{Value("hello"), Value(1)})[0], TaskId(11));
}

TEST(FieldsGrouperTest, MultipleFieldsHashInGroupingOrder) {
  FieldsGrouper g(Tasks({1, 2, 3, 4, 5, 6, 7}), {1, 0});
  // deepHashCode([1L, "hello"]) = (31 + 1) * 31 + 99162322.
  int32_t expected = FloorMod(static_cast<int32_t>((31 + 1) * 31 + 99162322), 7);
  EXPECT_EQ(g.ChooseIndex(Values{Value("hello"), Value(1)}), expected);
}

TEST(FieldsGrouperTest, UnknownFieldIsAnError) {
  GroupingDef def{GroupingType::kFields, {"nope"}, {}};
  GrouperOptions opts;
  opts.output_fields = Fields({"word"});
  opts.target_tasks = Tasks({1});
  auto g = CreateStreamGrouper(def, opts);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "FIELDS grouping on stream 'default': field 'nope' is not in [word]");
}

TEST(ShuffleGrouperTest, BalancedWithinFivePercentOverAMillion) {
  auto g = Make(GroupingType::kShuffle, Tasks({1, 2, 3, 4, 5, 6, 7}));
  std::map<TaskId, int64_t> counts;
  Values v{Value("x"), Value(1)};
  constexpr int kTuples = 1'000'000;
  for (int i = 0; i < kTuples; ++i) {
    auto chosen = g->Choose(v);
    ASSERT_EQ(chosen.size(), 1u);
    ++counts[chosen[0]];
  }
  ASSERT_EQ(counts.size(), 7u);
  const double expected = kTuples / 7.0;
  for (const auto& [task, n] : counts) {
    EXPECT_NEAR(n, expected, expected * 0.05) << "task " << task;
  }
}

TEST(ShuffleGrouperTest, SeedChangesOrderButNotBalance) {
  GroupingDef def{GroupingType::kShuffle, {}, {}};
  std::vector<std::vector<TaskId>> orders;
  for (uint64_t seed : {1, 2, 3, 4}) {
    GrouperOptions opts;
    opts.target_tasks = Tasks({1, 2, 3, 4, 5, 6, 7, 8});
    opts.seed = seed;
    auto g = *CreateStreamGrouper(def, opts);
    std::vector<TaskId> order;
    for (int i = 0; i < 8; ++i) order.push_back(g->Choose({})[0]);
    std::vector<TaskId> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, Tasks({1, 2, 3, 4, 5, 6, 7, 8}));  // each once per round
    orders.push_back(order);
  }
  EXPECT_TRUE(orders[0] != orders[1] || orders[1] != orders[2] || orders[2] != orders[3]);
}

TEST(GlobalGrouperTest, PicksLowestTaskId) {
  auto g = Make(GroupingType::kGlobal, Tasks({9, 4, 7}));
  for (int i = 0; i < 10; ++i) {
    auto chosen = g->Choose(Values{Value(i), Value(i)});
    ASSERT_EQ(chosen.size(), 1u);
    EXPECT_EQ(chosen[0], TaskId(4));
  }
  // Storm: fields grouping with an empty field list is global.
  auto f = Make(GroupingType::kFields, Tasks({9, 4, 7}));
  EXPECT_EQ(f->Choose(Values{Value("a"), Value(1)})[0], TaskId(4));
}

TEST(AllGrouperTest, SendsToEveryTask) {
  auto g = Make(GroupingType::kAll, Tasks({3, 1, 2}));
  auto chosen = g->Choose({});
  EXPECT_EQ(std::vector<TaskId>(chosen.begin(), chosen.end()), Tasks({1, 2, 3}));
}

TEST(NoneGrouperTest, PicksOneTargetAndUsesThemAll) {
  auto g = Make(GroupingType::kNone, Tasks({1, 2, 3}));
  std::set<TaskId> seen;
  for (int i = 0; i < 300; ++i) {
    auto chosen = g->Choose({});
    ASSERT_EQ(chosen.size(), 1u);
    seen.insert(chosen[0]);
  }
  EXPECT_EQ(seen.size(), 3u);
}

TEST(LocalOrShuffleGrouperTest, PrefersLocalTasks) {
  auto g = Make(GroupingType::kLocalOrShuffle, Tasks({1, 2, 3, 4, 5, 6}), {},
                {TaskId(2), TaskId(5), TaskId(99)});
  std::map<TaskId, int> counts;
  for (int i = 0; i < 1000; ++i) ++counts[g->Choose({})[0]];
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[TaskId(2)], 500);
  EXPECT_EQ(counts[TaskId(5)], 500);
}

TEST(LocalOrShuffleGrouperTest, FallsBackToAllWhenNoneLocal) {
  LocalOrShuffleGrouper g(Tasks({1, 2, 3}), {TaskId(50)}, 1);
  EXPECT_EQ(g.candidates(), Tasks({1, 2, 3}));
  std::set<TaskId> seen;
  for (int i = 0; i < 3; ++i) seen.insert(g.Choose({})[0]);
  EXPECT_EQ(seen.size(), 3u);
}

TEST(DirectGrouperTest, AcceptsOnlyConsumerTasks) {
  auto g = Make(GroupingType::kDirect, Tasks({4, 6}));
  EXPECT_TRUE(g->is_direct());
  EXPECT_TRUE(g->Choose(Values{Value("a"), Value(1)}).empty());  // needs EmitDirect
  ASSERT_EQ(g->ChooseDirect(TaskId(6)).size(), 1u);
  EXPECT_EQ(g->ChooseDirect(TaskId(6))[0], TaskId(6));
  EXPECT_TRUE(g->ChooseDirect(TaskId(5)).empty());
  // Non-direct groupers refuse direct emits.
  auto s = Make(GroupingType::kShuffle, Tasks({4, 6}));
  EXPECT_FALSE(s->is_direct());
  EXPECT_TRUE(s->ChooseDirect(TaskId(4)).empty());
}

TEST(PartialKeyGrouperTest, TwoCandidatesPerKeyBalancedBySender) {
  PartialKeyGrouper g(Tasks({1, 2, 3, 4, 5}), {0});
  Values hot{Value("hot-key"), Value(0)};
  std::array<int, 2> c = g.Candidates(hot);
  EXPECT_NE(c[0], c[1]);
  std::map<TaskId, int> counts;
  for (int i = 0; i < 1000; ++i) ++counts[g.Choose(hot)[0]];
  // A single hot key is split evenly over exactly its two candidates.
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[TaskId(c[0] + 1)], 500);
  EXPECT_EQ(counts[TaskId(c[1] + 1)], 500);
  // Deterministic: another sender computes the same candidates.
  PartialKeyGrouper other(Tasks({1, 2, 3, 4, 5}), {0});
  EXPECT_EQ(other.Candidates(hot), c);
}

TEST(PartialKeyGrouperTest, SingleTargetAndFirstValueKey) {
  auto g = Make(GroupingType::kPartialKey, Tasks({8}));
  EXPECT_EQ(g->Choose(Values{Value("k"), Value(1)})[0], TaskId(8));
  PartialKeyGrouper by_text(Tasks({1, 2, 3}), {});
  std::array<int, 2> c = by_text.Candidates(Values{Value("k")});
  EXPECT_NE(c[0], c[1]);
}

TEST(StreamGrouperTest, EmptyTargetsRejected) {
  GrouperOptions opts;
  auto g = CreateStreamGrouper(GroupingDef{}, opts);
  EXPECT_FALSE(g.ok());
}

}  // namespace
}  // namespace tempest::core
