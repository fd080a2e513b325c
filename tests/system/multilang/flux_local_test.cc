// `tempest local` with Storm's FluxShellBolt class in a Flux file: the real
// binary runs the example Python split bolt from the resources directory.

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

TEST(MultilangFluxLocalTest, FluxShellBoltSplitsEverySentenceUnderTempestLocal) {
  testing::TempDir dir("tempest-multilang-flux");
  const std::string sentences[] = {"the cow jumped over the moon", "snow white and the seven dwarfs",
                                   "four score and seven years ago"};
  constexpr int kRepeat = 200;
  std::map<std::string, int> expected;
  {
    std::ofstream out(dir.File("sentences.txt"));
    for (int i = 0; i < kRepeat; ++i) {
      for (const std::string& s : sentences) {
        out << s << "\n";
        std::istringstream words(s);
        for (std::string w; words >> w;) ++expected[w];
      }
    }
  }
  std::ofstream(dir.File("topology.yaml")) << R"(name: multilang-split
config:
  topology.acker.executors: 1
  topology.max.spout.pending: 200
spouts:
  - id: sentences
    className: tempest.LineSpout
    properties:
      - name: path
        value: )" << dir.File("sentences.txt") << R"(
bolts:
  - id: split
    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
    constructorArgs:
      - ["python3", "splitsentence.py"]
      - ["word"]
    parallelism: 2
  - id: sink
    className: tempest.FileSinkBolt
    properties:
      - name: path
        value: )" << dir.File("words.txt") << R"(
streams:
  - from: sentences
    to: split
    grouping: {type: SHUFFLE}
  - from: split
    to: sink
    grouping: {type: SHUFFLE}
)";
  os::ChildProcess::Options options;
  options.argv = {Env("TEMPEST_BINARY", "tempest"), "local", dir.File("topology.yaml"),
                  "--until-complete", "--resources",
                  Env("TEMPEST_SOURCE_DIR", ".") + std::string("/examples/legacy/multilang")};
  options.stdout_path = dir.File("stdout.txt");
  options.stderr_path = dir.File("stderr.txt");
  auto child = os::ChildProcess::Start(options);
  ASSERT_TRUE(child.ok()) << child.status();
  std::optional<int> status = (*child)->WaitFor(std::chrono::seconds(240));
  ASSERT_TRUE(status.has_value()) << "tempest local did not finish";
  ASSERT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << ReadFile(dir.File("stderr.txt"));
  const std::string out = ReadFile(dir.File("stdout.txt"));
  EXPECT_NE(out.find("done: complete"), std::string::npos) << out;
  std::map<std::string, int> counted;
  std::istringstream words(ReadFile(dir.File("words.txt")));
  for (std::string w; std::getline(words, w);) ++counted[w];
  EXPECT_EQ(counted, expected) << ReadFile(dir.File("stderr.txt"));
}

}  // namespace
}  // namespace tempest
