// Mistakes a newcomer makes in a Flux file written from the docs, caught by
// the real `tempest local` before anything runs: one clear error with the
// file:line, and no topology started. And the default that used to need a
// `fields` property: an IdentityBolt passes its input's fields through.

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest {
namespace {

using std::chrono::seconds;

class TopologyValidationTest : public ::testing::Test {
 protected:
  // Writes `yaml` as NAME.yaml and runs `tempest local` on it.
  testing::CommandRun RunLocal(const std::string& name, const std::string& yaml) {
    const std::string path = dir_.File(name + ".yaml");
    std::ofstream(path) << yaml;
    return testing::RunCommand({testing::TempestBinary(), "local", path, "--until-complete", "--duration", "60"},
                               dir_.File(name), seconds(90));
  }

  static bool Contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  testing::TempDir dir_{"topology-validation"};
};

constexpr char kSpoutHeader[] = R"(name: validation
spouts:
  - id: numbers
    className: tempest.SequenceSpout
    properties:
      - name: count
        value: 1000
      - name: reliable
        value: true
)";

TEST_F(TopologyValidationTest, AMisspeltPropertyIsRejectedWithASuggestion) {
  const testing::CommandRun run = RunLocal("typo", R"(name: typo
spouts:
  - id: numbers
    className: tempest.SequenceSpout
    properties:
      - name: cuont
        value: 1000
bolts:
  - id: log
    className: tempest.LogBolt
streams:
  - from: numbers
    to: log
    grouping:
      type: SHUFFLE
)");
  ASSERT_TRUE(run.finished);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_TRUE(Contains(run.err, "typo.yaml:3:")) << run.err;  // the spout's line
  EXPECT_TRUE(Contains(run.err, "unknown property 'cuont' (did you mean 'count'?)")) << run.err;
  EXPECT_FALSE(Contains(run.err, "running")) << "the topology must not start:\n" << run.err;
}

TEST_F(TopologyValidationTest, AnIdentityBoltWhoseFieldsCannotMatchItsInputIsRejected) {
  const testing::CommandRun run = RunLocal("width", std::string(kSpoutHeader) + R"(bolts:
  - id: rename
    className: tempest.IdentityBolt
    properties:
      - name: fields
        value: [n, payload]
  - id: log
    className: tempest.LogBolt
streams:
  - from: numbers
    to: rename
    grouping:
      type: SHUFFLE
  - from: rename
    to: log
    grouping:
      type: SHUFFLE
)");
  ASSERT_TRUE(run.finished);
  EXPECT_NE(run.exit_code, 0);
  // The stream's line, the bolt, both widths and the fix.
  EXPECT_TRUE(Contains(run.err, "width.yaml:19:")) << run.err;
  EXPECT_TRUE(Contains(run.err, "bolt 'rename' (tempest.IdentityBolt) declares 2 output fields"))
      << run.err;
  EXPECT_TRUE(Contains(run.err, "carries 3 [seq, key, payload]")) << run.err;
  EXPECT_TRUE(Contains(run.err, "set its 'fields' property")) << run.err;
  EXPECT_FALSE(Contains(run.err, "running")) << run.err;
}

TEST_F(TopologyValidationTest, ASinkReadingAFieldItsInputLacksIsRejected) {
  const testing::CommandRun run = RunLocal("sinkfield", std::string(kSpoutHeader) + R"(bolts:
  - id: sink
    className: tempest.VerifierBolt
    properties:
      - name: logPath
        value: ")" + dir_.File("never.log") + R"("
      - name: field
        value: value
streams:
  - from: numbers
    to: sink
    grouping:
      type: GLOBAL
)");
  ASSERT_TRUE(run.finished);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_TRUE(Contains(run.err, "sinkfield.yaml:19:")) << run.err;
  EXPECT_TRUE(Contains(run.err, "reads field 'value', which stream 'default' of 'numbers' does "
                                "not carry [seq, key, payload]"))
      << run.err;
}

TEST_F(TopologyValidationTest, AnIdentityBoltWithoutFieldsPassesItsInputThrough) {
  const std::string log = dir_.File("sink.log");
  const testing::CommandRun run = RunLocal("passthrough", std::string(kSpoutHeader) + R"(bolts:
  - id: identity
    className: tempest.IdentityBolt
  - id: sink
    className: tempest.VerifierBolt
    properties:
      - name: logPath
        value: ")" + log + R"("
      - name: expected
        value: 1000
streams:
  - from: numbers
    to: identity
    grouping:
      type: SHUFFLE
  - from: identity
    to: sink
    grouping:
      type: GLOBAL
)");
  ASSERT_TRUE(run.finished);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // The sink read `seq` through the identity bolt: every value, once.
  std::ifstream in(log);
  std::vector<bool> seen(1000, false);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const int v = std::stoi(line);
    ASSERT_TRUE(v >= 0 && v < 1000) << line;
    seen[v] = true;
  }
  EXPECT_EQ(lines, 1000);
  for (int v = 0; v < 1000; ++v) EXPECT_TRUE(seen[v]) << v;
}

}  // namespace
}  // namespace tempest
