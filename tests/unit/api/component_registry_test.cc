#include "common/api/component_registry.h"

#include <memory>
#include <stdexcept>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tempest::api {
namespace {

// Configured through ComponentArgs: property `count`.
class CountingSpout : public Spout {
 public:
  explicit CountingSpout(const ComponentArgs& args)
      : count_(args.IntProperty("count", 10).value_or(-2)) {}
  absl::Status Open(const Config&, const TopologyContext&, SpoutOutputCollector&) override {
    return absl::OkStatus();
  }
  void NextTuple() override {}
  void DeclareOutputFields(OutputFieldsDeclarer& d) const override { d.Declare(Fields({"n"})); }
  int64_t count() const { return count_; }

 private:
  int64_t count_;
};

// Validates its arguments through a static Create.
class CheckedBolt : public Bolt {
 public:
  static absl::StatusOr<std::unique_ptr<CheckedBolt>> Create(const ComponentArgs& args) {
    if (args.constructor_args.empty()) return absl::InvalidArgumentError("needs an argument");
    return std::make_unique<CheckedBolt>();
  }
  absl::Status Prepare(const Config&, const TopologyContext&, OutputCollector&) override {
    return absl::OkStatus();
  }
  void Execute(const Tuple&) override {}
  void DeclareOutputFields(OutputFieldsDeclarer&) const override {}
};

class ThrowingBolt : public Bolt {
 public:
  ThrowingBolt() { throw std::runtime_error("nope"); }
  absl::Status Prepare(const Config&, const TopologyContext&, OutputCollector&) override {
    return absl::OkStatus();
  }
  void Execute(const Tuple&) override {}
  void DeclareOutputFields(OutputFieldsDeclarer&) const override {}
};

class EchoBasicBolt : public BasicBolt {
 public:
  absl::Status Execute(const Tuple&, BasicOutputCollector&) override { return absl::OkStatus(); }
  void DeclareOutputFields(OutputFieldsDeclarer& d) const override { d.Declare(Fields({"e"})); }
};

TEMPEST_REGISTER_SPOUT("test.CountingSpout", CountingSpout);
TEMPEST_REGISTER_BASIC_BOLT("test.EchoBasicBolt", EchoBasicBolt);
// A second registration of a taken name is recorded, not fatal.
TEMPEST_REGISTER_BOLT("test.CountingSpout", ThrowingBolt);

TEST(ComponentRegistryTest, MacrosRegisterIntoGlobal) {
  ComponentRegistry& r = ComponentRegistry::Global();
  EXPECT_TRUE(r.HasSpout("test.CountingSpout"));
  EXPECT_TRUE(r.HasBolt("test.EchoBasicBolt"));
  EXPECT_THAT(r.registration_errors(),
              ::testing::Contains(::testing::HasSubstr(
                  "class 'test.CountingSpout' is already registered as a spout")));
  ComponentArgs args;
  args.class_name = "test.CountingSpout";
  args.properties["count"] = Value(5);
  absl::StatusOr<std::unique_ptr<Spout>> spout = r.CreateSpout(args);
  ASSERT_TRUE(spout.ok()) << spout.status();
  EXPECT_EQ(static_cast<CountingSpout&>(**spout).count(), 5);

  args.class_name = "test.EchoBasicBolt";
  absl::StatusOr<std::unique_ptr<Bolt>> bolt = r.CreateBolt(args);
  ASSERT_TRUE(bolt.ok());
  EXPECT_NE(dynamic_cast<BasicBoltRunner*>(bolt->get()), nullptr);
}

TEST(ComponentRegistryTest, UnknownAndWrongKind) {
  ComponentRegistry r;
  ASSERT_TRUE(r.RegisterSpout("s", &registry_internal::Make<Spout, CountingSpout>).ok());
  ComponentArgs args;
  args.class_name = "missing";
  EXPECT_EQ(r.CreateSpout(args).status().message(), "unknown spout class 'missing'");
  args.class_name = "s";
  EXPECT_EQ(r.CreateBolt(args).status().message(), "class 's' is a spout, not a bolt");
  EXPECT_EQ(r.KindOf("s"), ComponentRegistry::Kind::kSpout);
  EXPECT_FALSE(r.KindOf("x").has_value());
  EXPECT_EQ(r.ClassNames(ComponentRegistry::Kind::kSpout), std::vector<std::string>{"s"});
}

TEST(ComponentRegistryTest, FactoryErrorsAndThrowsBecomeStatus) {
  ComponentRegistry r;
  ASSERT_TRUE(r.RegisterBolt("checked", &registry_internal::Make<Bolt, CheckedBolt>).ok());
  ASSERT_TRUE(r.RegisterBolt("throwing", &registry_internal::Make<Bolt, ThrowingBolt>).ok());
  ComponentArgs args;
  args.class_name = "checked";
  EXPECT_EQ(r.CreateBolt(args).status().message(), "needs an argument");
  args.constructor_args.push_back(Value(1));
  EXPECT_TRUE(r.CreateBolt(args).ok());
  args.class_name = "throwing";
  absl::StatusOr<std::unique_ptr<Bolt>> b = r.CreateBolt(args);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(b.status().message(), "constructing throwing threw: nope");
}

TEST(ComponentRegistryTest, MergeCopiesFreeNamesAndReportsTaken) {
  ComponentRegistry host, plugin;
  ASSERT_TRUE(host.RegisterSpout("a", &registry_internal::Make<Spout, CountingSpout>).ok());
  ASSERT_TRUE(plugin.RegisterSpout("a", &registry_internal::Make<Spout, CountingSpout>).ok());
  ASSERT_TRUE(plugin.RegisterBolt("b", &registry_internal::Make<Bolt, CheckedBolt>).ok());
  std::vector<std::string> added;
  absl::Status s = host.MergeFrom(plugin, &added);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(added, std::vector<std::string>{"b"});
  EXPECT_TRUE(host.HasBolt("b"));
}

TEST(ComponentArgsTest, TypedPropertiesReportBadTypes) {
  ComponentArgs args;
  args.class_name = "C";
  args.properties["rate"] = Value("fast");
  args.properties["reliable"] = Value(true);
  EXPECT_EQ(args.IntProperty("absent", 3).value(), 3);
  EXPECT_TRUE(args.BoolProperty("reliable", false).value());
  absl::StatusOr<int64_t> rate = args.IntProperty("rate", 0);
  ASSERT_FALSE(rate.ok());
  EXPECT_EQ(rate.status().message(), "C property 'rate': expected an integer, got string \"fast\"");
  EXPECT_EQ(args.StringProperty("reliable", "").value(), "true");
}

}  // namespace
}  // namespace tempest::api
