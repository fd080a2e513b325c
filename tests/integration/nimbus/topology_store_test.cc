// TopologyStore against a real ZooKeeper: validation, ids, duplicates,
// transitions with compare-and-set, removal.

#include "nimbus/topology_store.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "common/core/clock.h"
#include "tests/integration/nimbus/nimbus_fixture.h"

namespace tempest::nimbus::testing {
namespace {

class TopologyStoreTest : public NimbusTest {
 protected:
  void SetUp() override {
    NimbusTest::SetUp();
    store_ = std::make_unique<TopologyStore>(zk(), root_, registry_, core::RealClock());
  }
  SubmitRequest Demo() {
    SubmitRequest r;
    r.flux_text = kDemoFlux;
    r.file_name = "demo.yaml";
    return r;
  }
  std::unique_ptr<TopologyStore> store_;
};

TEST_F(TopologyStoreTest, SubmitStoresStormBaseUnderStormsWithStormsIdFormat) {
  auto id = store_->Submit(Demo());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(std::regex_match(*id, std::regex("demo-[0-9]+-[0-9]{10}"))) << *id;

  auto node = zk().Get(absl::StrCat(root_, "/storms/", *id));
  ASSERT_TRUE(node.ok()) << node.status();
  v1::StormBase base;
  ASSERT_TRUE(base.ParseFromString(node->data));
  EXPECT_EQ(base.name(), "demo");
  EXPECT_EQ(base.status(), v1::ACTIVE);
  EXPECT_EQ(base.num_workers(), 2);
  EXPECT_EQ(base.num_tasks(), 7);
  EXPECT_EQ(base.num_executors(), 7);
  EXPECT_EQ(base.flux_text(), kDemoFlux);
  // Storm's layout: components sorted by id, the acker first, tasks from 1.
  ASSERT_EQ(base.executors_size(), 7);
  EXPECT_EQ(base.executors(0).component(), "__acker");
  EXPECT_EQ(base.executors(0).start_task(), 1);
  EXPECT_EQ(base.executors(6).component(), "sink");
  EXPECT_EQ(base.executors(6).end_task(), 7);
}

TEST_F(TopologyStoreTest, DuplicateNameIsRejectedAndNothingMoreIsStored) {
  ASSERT_TRUE(store_->Submit(Demo()).ok());
  auto again = store_->Submit(Demo());
  EXPECT_TRUE(absl::IsAlreadyExists(again.status())) << again.status();
  EXPECT_NE(again.status().message().find("'demo' already exists"), std::string::npos);
  EXPECT_EQ(CountChildren(root_ + "/storms"), 1);
  // Another name is fine.
  SubmitRequest other = Demo();
  other.name = "demo2";
  EXPECT_TRUE(store_->Submit(other).ok());
  EXPECT_EQ(CountChildren(root_ + "/storms"), 2);
}

TEST_F(TopologyStoreTest, InvalidTopologiesAreRejectedWithFileAndLineAndNothingIsStored) {
  SubmitRequest bad_yaml = Demo();
  bad_yaml.flux_text = "name: x\nspouts: [\n  - id: a\n";
  auto r1 = store_->Submit(bad_yaml);
  EXPECT_TRUE(absl::IsInvalidArgument(r1.status())) << r1.status();
  EXPECT_NE(r1.status().message().find("demo.yaml:"), std::string::npos) << r1.status();

  SubmitRequest unknown = Demo();
  const std::string flux = kDemoFlux;
  unknown.flux_text = std::regex_replace(flux, std::regex("tempest.IdentityBolt"), "com.example.NoSuchBolt");
  auto r2 = store_->Submit(unknown);
  EXPECT_TRUE(absl::IsInvalidArgument(r2.status())) << r2.status();
  EXPECT_NE(r2.status().message().find("com.example.NoSuchBolt"), std::string::npos);
  EXPECT_NE(r2.status().message().find("demo.yaml:"), std::string::npos) << r2.status();

  SubmitRequest bad_name = Demo();
  bad_name.name = "a/b";
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Submit(bad_name).status()));

  SubmitRequest bad_override = Demo();
  bad_override.config_overrides["topology.workers"] = "[unclosed";
  EXPECT_FALSE(store_->Submit(bad_override).ok());

  EXPECT_EQ(CountChildren(root_ + "/storms"), 0);
}

TEST_F(TopologyStoreTest, ConfigOverridesAndInactiveApply) {
  SubmitRequest r = Demo();
  r.config_overrides["topology.workers"] = "3";
  r.config_overrides["topology.message.timeout.secs"] = "45";
  r.inactive = true;
  auto id = store_->Submit(r);
  ASSERT_TRUE(id.ok()) << id.status();
  auto t = store_->Get(*id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->base.status(), v1::INACTIVE);
  EXPECT_EQ(t->base.num_workers(), 3);
  EXPECT_EQ(t->base.message_timeout_secs(), 45);
  EXPECT_EQ(t->base.num_executors(), 8);  // one acker per worker
}

TEST_F(TopologyStoreTest, TransitionsFollowStormsStateMachine) {
  auto id = store_->Submit(Demo());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(store_->Transition(*id, TopologyEvent::kDeactivate)->status(), v1::INACTIVE);
  EXPECT_EQ(store_->Get(*id)->base.status(), v1::INACTIVE);
  EXPECT_EQ(store_->Transition(*id, TopologyEvent::kActivate)->status(), v1::ACTIVE);
  auto killed = store_->Transition(*id, TopologyEvent::kKill, 30);
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->status(), v1::KILLED);
  EXPECT_EQ(killed->prev_status(), v1::ACTIVE);
  EXPECT_EQ(killed->kill_wait_secs(), 30);
  auto activate = store_->Transition(*id, TopologyEvent::kActivate);
  EXPECT_TRUE(absl::IsFailedPrecondition(activate.status())) << activate.status();
  EXPECT_TRUE(absl::IsNotFound(store_->Transition("nope-1-1", TopologyEvent::kKill).status()));
  ASSERT_TRUE(store_->Remove(*id).ok());
  EXPECT_TRUE(absl::IsNotFound(store_->Get(*id).status()));
  EXPECT_TRUE(store_->Remove(*id).ok());  // idempotent
}

TEST_F(TopologyStoreTest, KillWithoutWaitUsesTheMessageTimeout) {
  auto id = store_->Submit(Demo());
  ASSERT_TRUE(id.ok());
  auto killed = store_->Transition(*id, TopologyEvent::kKill);
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->kill_wait_secs(), 30);
}

}  // namespace
}  // namespace tempest::nimbus::testing
