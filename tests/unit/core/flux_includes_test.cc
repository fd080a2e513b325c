// Flux `includes` and who may read them: the submitting client merges them
// into one self-contained text (FluxLoader::InlineIncludes); everything that
// loads a text someone else sent (FluxOptions{}: nimbus, workers) refuses a
// text that still names a file, reads nothing and quotes nothing.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/core/flux/flux_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tempest::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kTestData = TEMPEST_CORE_TESTDATA;
constexpr char kSecret[] = "TEMPEST-PLANTED-SECRET-7f3a";

std::string Data(const std::string& name) { return kTestData + "/" + name; }

// How the submitting client and `tempest local` load the user's own files.
FluxOptions ReadIncludes() {
  FluxOptions options;
  options.read_includes = true;
  return options;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A folder with files no Flux loader should ever show: a shadow-like line,
// a key: value file (a map, but no Flux keys) and one that is not UTF-8.
class PlantedFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("flux-includes-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "shadow") << "root:$6$" << kSecret << ":19000:0:99999:7:::\n";
    std::ofstream(dir_ / "settings") << "password: " << kSecret << "\nuser: admin\n";
    std::ofstream(dir_ / "binary") << "\xff\xfe" << kSecret << "\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Main() const { return (dir_ / "topology.yaml").string(); }
  static std::string Including(const std::string& file) {
    return "name: t\nincludes:\n  - file: \"" + file +
           "\"\nspouts:\n  - id: s\n    className: test.WordSpout\n";
  }

  std::filesystem::path dir_;
};

TEST_F(PlantedFiles, ByDefaultAnIncludeIsRefusedTheSameWhetherItsPathExistsOrNot) {
  const FluxLoader nimbus;  // FluxOptions{}: what nimbus and the workers use
  std::string answers[3];
  int i = 0;
  for (const std::string& file :
       {(dir_ / "shadow").string(), std::string("shadow"), (dir_ / "no-such-file").string()}) {
    absl::StatusOr<TopologyDef> def = nimbus.LoadString(Including(file), Main());
    ASSERT_FALSE(def.ok());
    EXPECT_EQ(def.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(def.status().message());
    EXPECT_THAT(message, HasSubstr(":3: include '" + file + "' refused"));
    EXPECT_THAT(message, Not(HasSubstr(kSecret)));
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 0) << message;
    // With the path taken out, every answer is the same.
    answers[i++] = message.substr(0, message.find('\'')) + message.substr(message.rfind('\''));
  }
  EXPECT_EQ(answers[0], answers[1]);
  EXPECT_EQ(answers[0], answers[2]);
}

TEST_F(PlantedFiles, AnIncludedFileThatIsNotFluxIsNamedButNeverQuoted) {
  const FluxLoader client(ReadIncludes());
  for (const char* name : {"shadow", "settings", "binary"}) {
    absl::StatusOr<TopologyDef> def = client.LoadString(Including(name), Main());
    ASSERT_FALSE(def.ok()) << name;
    const std::string message(def.status().message());
    EXPECT_THAT(message, HasSubstr(std::string("include file '") + name + "' is not a Flux file"));
    EXPECT_THAT(message, Not(HasSubstr(kSecret))) << message;
    EXPECT_THAT(message, Not(HasSubstr("admin"))) << message;
    EXPECT_THAT(message, Not(HasSubstr("password"))) << message;
  }
}

TEST(FluxIncludesTest, ResourceIncludesAreRefusedByDefaultToo) {
  absl::StatusOr<TopologyDef> def = FluxLoader().LoadString(
      "name: t\nincludes:\n  - resource: true\n    file: common_include.yaml\n", Data("x.yaml"));
  ASSERT_FALSE(def.ok());
  EXPECT_THAT(def.status().message(), HasSubstr("include 'common_include.yaml' refused"));
}

// What a TopologyDef is made of, compared field by field.
void ExpectSameDefinition(const TopologyDef& a, const TopologyDef& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.config, b.config);
  auto same_components = [](const std::vector<ComponentDef>& x,
                            const std::vector<ComponentDef>& y) {
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      SCOPED_TRACE(x[i].id.value());
      EXPECT_EQ(x[i].kind, y[i].kind);
      EXPECT_EQ(x[i].id, y[i].id);
      EXPECT_EQ(x[i].args.class_name, y[i].args.class_name);
      EXPECT_EQ(x[i].args.constructor_args, y[i].args.constructor_args);
      EXPECT_EQ(x[i].args.properties, y[i].args.properties);
      EXPECT_EQ(x[i].args.config_methods, y[i].args.config_methods);
      EXPECT_EQ(x[i].parallelism, y[i].parallelism);
      EXPECT_EQ(x[i].num_tasks, y[i].num_tasks);
      EXPECT_EQ(x[i].config, y[i].config);
    }
  };
  same_components(a.spouts, b.spouts);
  same_components(a.bolts, b.bolts);
  ASSERT_EQ(a.streams.size(), b.streams.size());
  for (size_t i = 0; i < a.streams.size(); ++i) {
    EXPECT_EQ(a.streams[i].name, b.streams[i].name);
    EXPECT_EQ(a.streams[i].from, b.streams[i].from);
    EXPECT_EQ(a.streams[i].to, b.streams[i].to);
    EXPECT_EQ(a.streams[i].stream, b.streams[i].stream);
    EXPECT_EQ(a.streams[i].grouping.type, b.streams[i].grouping.type);
    EXPECT_EQ(a.streams[i].grouping.fields, b.streams[i].grouping.fields);
    EXPECT_EQ(a.streams[i].grouping.custom.class_name, b.streams[i].grouping.custom.class_name);
    EXPECT_EQ(a.streams[i].grouping.custom.constructor_args,
              b.streams[i].grouping.custom.constructor_args);
  }
}

class InlineIncludesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InlineIncludesTest, TheMergedTextLoadsWithoutReadingToTheSameDefinition) {
  const FluxLoader client(ReadIncludes());
  const std::string path = Data(GetParam());
  const std::string text = ReadAll(path);
  absl::StatusOr<TopologyDef> original = client.LoadString(text, path);
  ASSERT_TRUE(original.ok()) << original.status();
  absl::StatusOr<std::string> merged = client.InlineIncludes(text, path);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_THAT(*merged, Not(HasSubstr("\nincludes:")));
  // Loaded the way nimbus loads it, from somewhere the includes are not.
  absl::StatusOr<TopologyDef> sent = FluxLoader().LoadString(*merged, "/nowhere/topology.yaml");
  ASSERT_TRUE(sent.ok()) << sent.status() << "\n" << *merged;
  ExpectSameDefinition(*original, *sent);
}

INSTANTIATE_TEST_SUITE_P(Files, InlineIncludesTest,
                         ::testing::Values("with_include.yaml", "with_override_include.yaml",
                                           "inline_main.yaml"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param.substr(0, info.param.find('.'));
                         });

TEST(FluxIncludesTest, ATextWithoutIncludesIsSentAsItIs) {
  const std::string text = ReadAll(Data("wordcount.yaml"));
  absl::StatusOr<std::string> merged =
      FluxLoader(ReadIncludes()).InlineIncludes(text, Data("wordcount.yaml"));
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*merged, text);
}

TEST(FluxIncludesTest, InlineIncludesReportsAMissingIncludeAgainstTheRealFile) {
  const std::string path = Data("bad/missing_include.yaml");
  absl::StatusOr<std::string> merged =
      FluxLoader(ReadIncludes()).InlineIncludes(ReadAll(path), path);
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.status().message(),
              HasSubstr("missing_include.yaml:3: include file 'no_such_file.yaml' not found"));
}

}  // namespace
}  // namespace tempest::core
