#include "common/core/topology/topology_validator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/core/test_components.h"

namespace tempest::core {
namespace {

using ::testing::HasSubstr;

ComponentDef Component(ComponentDef::Kind kind, std::string id, std::string cls, int line) {
  ComponentDef c;
  c.kind = kind;
  c.id = api::ComponentId(id);
  c.args.class_name = std::move(cls);
  c.args.id = c.id;
  c.location = SourceLocation{"t.yaml", line};
  return c;
}

StreamDef Stream(std::string from, std::string to, GroupingType type, int line,
                 std::vector<std::string> fields = {}, std::string stream = "default") {
  StreamDef s;
  s.from = api::ComponentId(from);
  s.to = api::ComponentId(to);
  s.stream = api::StreamId(stream);
  s.grouping.type = type;
  s.grouping.fields = std::move(fields);
  s.location = SourceLocation{"t.yaml", line};
  return s;
}

TopologyDef Valid() {
  TopologyDef def;
  def.name = "t";
  def.location = SourceLocation{"t.yaml", 0};
  def.spouts.push_back(Component(ComponentDef::Kind::kSpout, "words", "test.WordSpout", 1));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "count", "test.CountBolt", 2));
  def.streams.push_back(Stream("words", "count", GroupingType::kFields, 3, {"word"}));
  return def;
}

class TopologyValidatorTest : public ::testing::Test {
 protected:
  std::unique_ptr<api::ComponentRegistry> registry_ = testing::MakeTestRegistry();
  TopologyValidator validator_{*registry_};
};

TEST_F(TopologyValidatorTest, ValidTopologyReturnsDeclaredStreams) {
  absl::StatusOr<ComponentStreams> streams = validator_.Validate(Valid());
  ASSERT_TRUE(streams.ok()) << streams.status();
  const auto& words = streams->at(api::ComponentId("words"));
  EXPECT_EQ(words.size(), 3u);
  EXPECT_TRUE(words.at(api::StreamId("direct")).direct);
  EXPECT_EQ(words.at(api::DefaultStreamId()).fields, api::Fields({"word", "n"}));
}

TEST_F(TopologyValidatorTest, WrongKindFailingFactoryAndReservedIds) {
  TopologyDef def = Valid();
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "w", "test.WordSpout", 5));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "f", "test.FailingBolt", 6));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "__acker", "test.SinkBolt", 7));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "n", "", 8));
  ValidationReport r = validator_.Check(def);
  EXPECT_THAT(r.errors, ::testing::ElementsAre(
                            "t.yaml:5: class 'test.WordSpout' of 'w' is not a bolt",
                            "t.yaml:6: bolt 'f' (test.FailingBolt): missing property 'path'",
                            HasSubstr("t.yaml:7: bolt id '__acker' is reserved"),
                            "t.yaml:8: bolt 'n' has no className"));
}

TEST_F(TopologyValidatorTest, StreamEndpointChecks) {
  TopologyDef def = Valid();
  def.streams.push_back(Stream("", "count", GroupingType::kShuffle, 10));
  def.streams.push_back(Stream("words", "words", GroupingType::kShuffle, 11));
  def.streams.push_back(Stream("nobody", "count", GroupingType::kShuffle, 12));
  ValidationReport r = validator_.Check(def);
  EXPECT_THAT(r.errors, ::testing::ElementsAre(
                            "t.yaml:10: stream is missing 'from'",
                            "t.yaml:11: stream to 'words': a spout cannot consume a stream",
                            "t.yaml:12: stream from unknown component 'nobody'"));
}

TEST_F(TopologyValidatorTest, DirectGroupingMustMatchDeclaration) {
  TopologyDef def = Valid();
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "d", "test.SinkBolt", 4));
  def.streams.push_back(Stream("words", "d", GroupingType::kDirect, 20, {}, "direct"));
  EXPECT_TRUE(validator_.Check(def).ok());
  def.streams.push_back(Stream("words", "d", GroupingType::kDirect, 21, {}, "errors"));
  def.streams.push_back(Stream("words", "d", GroupingType::kShuffle, 22, {}, "direct"));
  ValidationReport r = validator_.Check(def);
  EXPECT_THAT(r.errors,
              ::testing::ElementsAre("t.yaml:21: DIRECT grouping on stream 'errors' of 'words', "
                                     "which is not declared direct",
                                     "t.yaml:22: stream 'direct' of 'words' is direct; its "
                                     "consumers must use DIRECT grouping, not SHUFFLE"));
}

TEST_F(TopologyValidatorTest, CustomGroupingClassIsChecked) {
  TopologyDef def = Valid();
  StreamDef s = Stream("words", "count", GroupingType::kCustom, 30);
  s.grouping.custom.class_name = "test.EvenGrouping";
  def.streams.push_back(s);
  EXPECT_TRUE(validator_.Check(def).ok());
  def.streams.back().grouping.custom.class_name = "test.Nope";
  EXPECT_THAT(validator_.Check(def).errors,
              ::testing::ElementsAre("t.yaml:30: unknown grouping class 'test.Nope'"));
}

TEST_F(TopologyValidatorTest, ConfigValuesAreChecked) {
  TopologyDef def = Valid();
  def.config.Set(api::kTopologyWorkers, 0);
  def.config.Set(api::kTopologyMaxSpoutPending, "lots");
  def.config.Set(api::kTopologyAckerExecutors, nullptr);  // null is fine
  def.config.Set(api::kTopologyDebug, "maybe");
  ValidationReport r = validator_.Check(def);
  EXPECT_THAT(r.errors, ::testing::UnorderedElementsAre(
                            "t.yaml: config topology.workers must be an integer from 1 to "
                            "2147483647, got 0",
                            "t.yaml: config topology.max.spout.pending must be an integer from 1 "
                            "to 2147483647 or null, got \"lots\"",
                            "t.yaml: config topology.debug must be a boolean, got \"maybe\""));
}

TEST_F(TopologyValidatorTest, NoSpoutsAndIdleBoltWarning) {
  TopologyDef def;
  def.name = "empty";
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "idle", "test.SinkBolt", 3));
  ValidationReport r = validator_.Check(def);
  EXPECT_THAT(r.errors, ::testing::ElementsAre("topology has no spouts"));
  EXPECT_THAT(r.warnings, ::testing::ElementsAre("t.yaml:3: bolt 'idle' consumes no stream"));
}

// test.WordSpout -> a -> b -> sink, where a and b pass their input through.
TEST_F(TopologyValidatorTest, PassThroughStreamsTakeTheirInputsFieldsUpstreamFirst) {
  TopologyDef def = Valid();
  // Listed downstream-first, so resolution must not depend on file order.
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "b", "test.PassThroughBolt", 5));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "a", "test.PassThroughBolt", 6));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "sink", "test.ReadsWordBolt", 7));
  def.streams.push_back(Stream("b", "sink", GroupingType::kFields, 8, {"word"}));
  def.streams.push_back(Stream("a", "b", GroupingType::kShuffle, 9));
  def.streams.push_back(Stream("words", "a", GroupingType::kShuffle, 10));
  absl::StatusOr<ComponentStreams> streams = validator_.Validate(def);
  ASSERT_TRUE(streams.ok()) << streams.status();
  EXPECT_EQ(streams->at(api::ComponentId("a")).at(api::DefaultStreamId()).fields,
            api::Fields({"word", "n"}));
  EXPECT_EQ(streams->at(api::ComponentId("b")).at(api::DefaultStreamId()).fields,
            api::Fields({"word", "n"}));
}

TEST_F(TopologyValidatorTest, PassThroughInputsWithDifferentFieldsAndCyclesAreErrors) {
  TopologyDef def = Valid();
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "mix", "test.PassThroughBolt", 5));
  def.streams.push_back(Stream("words", "mix", GroupingType::kShuffle, 6));
  def.streams.push_back(Stream("count", "mix", GroupingType::kShuffle, 7));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "p", "test.PassThroughBolt", 8));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "q", "test.PassThroughBolt", 9));
  def.streams.push_back(Stream("p", "q", GroupingType::kShuffle, 10));
  def.streams.push_back(Stream("q", "p", GroupingType::kShuffle, 11));
  ValidationReport r = validator_.Check(def);
  EXPECT_THAT(r.errors,
              ::testing::UnorderedElementsAre(
                  "t.yaml:5: bolt 'mix' (test.PassThroughBolt) passes its input through on "
                  "stream 'default', but its inputs carry different fields: [word, n] from "
                  "'words' stream 'default'; [word, count] from 'count' stream 'default'; set "
                  "its 'fields' property",
                  HasSubstr("t.yaml:8: bolt 'p' (test.PassThroughBolt) passes its input "
                            "through, but its inputs form a cycle"),
                  HasSubstr("t.yaml:9: bolt 'q' (test.PassThroughBolt) passes its input "
                            "through, but its inputs form a cycle")));
}

TEST_F(TopologyValidatorTest, InputRequirementsAreCheckedAgainstEveryConsumedStream) {
  TopologyDef def = Valid();
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "sink", "test.ReadsWordBolt", 5));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "two", "test.RenamesTwoBolt", 6));
  def.streams.push_back(Stream("words", "sink", GroupingType::kShuffle, 7));  // has word
  def.streams.push_back(Stream("words", "sink", GroupingType::kShuffle, 8, {}, "errors"));
  def.streams.push_back(Stream("words", "two", GroupingType::kShuffle, 9));            // 2 fields
  def.streams.push_back(Stream("words", "two", GroupingType::kShuffle, 10, {}, "errors"));  // 1
  ValidationReport r = validator_.Check(def);
  EXPECT_THAT(r.errors,
              ::testing::ElementsAre(
                  "t.yaml:8: bolt 'sink' (test.ReadsWordBolt) reads field 'word', which stream "
                  "'errors' of 'words' does not carry [reason]; set its 'field' property",
                  "t.yaml:10: bolt 'two' (test.RenamesTwoBolt) declares 2 output fields for the "
                  "values of its input, but stream 'errors' of 'words' carries 1 [reason]; set "
                  "its 'fields' property"));
}

TEST_F(TopologyValidatorTest, AComponentListingItsPropertiesRejectsOthersWithASuggestion) {
  TopologyDef def = Valid();
  ComponentDef listed = Component(ComponentDef::Kind::kBolt, "l", "test.ListedPropertiesBolt", 5);
  listed.args.properties = {{"cuont", 3}, {"path", "/x"}, {"zzzzzz", 1}};
  def.bolts.push_back(listed);
  def.streams.push_back(Stream("words", "l", GroupingType::kShuffle, 6));
  ValidationReport r = validator_.Check(def);
  EXPECT_THAT(r.errors, ::testing::ElementsAre(
                            "t.yaml:5: bolt 'l' (test.ListedPropertiesBolt): "
                            "test.ListedPropertiesBolt: unknown property 'cuont' (did you mean "
                            "'count'?), unknown property 'zzzzzz'; its properties are: count, "
                            "path"));
}

TEST(ClosestNameTest, SuggestsOnlyLikelyMisspellings) {
  constexpr std::string_view kNames[] = {"count", "rate", "payloadBytes", "reliable"};
  EXPECT_EQ(api::ClosestName("cuont", kNames), "count");        // a swap
  EXPECT_EQ(api::ClosestName("payloadbytes", kNames), "payloadBytes");  // case
  EXPECT_EQ(api::ClosestName("relaible", kNames), "reliable");
  EXPECT_EQ(api::ClosestName("rat", kNames), "rate");
  EXPECT_EQ(api::ClosestName("bootstrap.servers", kNames), std::nullopt);
}

}  // namespace
}  // namespace tempest::core
