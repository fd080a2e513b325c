#include "common/core/plugin_loader.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tempest::core {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

TEST(PluginLoaderTest, LoadsPluginClassesIntoRegistry) {
  api::ComponentRegistry registry;
  PluginLoader loader(registry);
  absl::StatusOr<std::vector<std::string>> added = loader.Load(TEMPEST_TEST_PLUGIN);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_THAT(*added, UnorderedElementsAre("plugin.TestSpout", "plugin.TestBolt"));
  EXPECT_TRUE(registry.HasSpout("plugin.TestSpout"));
  EXPECT_TRUE(registry.HasBolt("plugin.TestBolt"));

  api::ComponentArgs args;
  args.class_name = "plugin.TestSpout";
  absl::StatusOr<std::unique_ptr<api::Spout>> spout = registry.CreateSpout(args);
  ASSERT_TRUE(spout.ok()) << spout.status();
  api::OutputFieldsDeclarer declarer;
  (*spout)->DeclareOutputFields(declarer);
  EXPECT_EQ(declarer.streams().at(api::DefaultStreamId()).fields, api::Fields({"plugin_field"}));

  // Loading into a registry that already has the names reports the clash.
  absl::StatusOr<std::vector<std::string>> again = loader.Load(TEMPEST_TEST_PLUGIN);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
}

TEST(PluginLoaderTest, MissingLibraryIsNotFound) {
  api::ComponentRegistry registry;
  absl::StatusOr<std::vector<std::string>> added =
      PluginLoader(registry).Load("/nonexistent/libnothing.so");
  EXPECT_EQ(added.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(added.status().message(), HasSubstr("cannot load plugin /nonexistent/libnothing.so"));
}

}  // namespace
}  // namespace tempest::core
