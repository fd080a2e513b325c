// README.md's "A five-minute tour" as users run it: deploy/tour.sh, whose
// blocks are the README's blocks, against the built binary. The script
// checks each step itself and exits non-zero at the first that fails; this
// test also checks the key lines each step prints, that the README and the
// script still hold the same commands, and that nothing the tour started in
// the background outlives it.

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/os/loopback.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest {
namespace {

using std::chrono::milliseconds;

std::string SourceDir() {
  const char* s = std::getenv("TEMPEST_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n');
}

// The ```sh blocks of README.md's tour section, each without the list
// item's indentation.
std::vector<std::string> ReadmeTourBlocks(const std::string& readme) {
  std::vector<std::string> blocks;
  bool in_tour = false;
  bool in_block = false;
  size_t indent = 0;
  std::vector<std::string> block;
  for (const std::string& line : Lines(readme)) {
    if (!in_block && absl::StartsWith(line, "## ")) {
      in_tour = line == "## A five-minute tour";
      continue;
    }
    if (!in_tour) continue;
    const size_t first = line.find_first_not_of(' ');
    const std::string_view trimmed =
        first == std::string::npos ? std::string_view() : std::string_view(line).substr(first);
    if (!in_block && trimmed == "```sh") {
      in_block = true;
      indent = first;
      block.clear();
    } else if (in_block && trimmed == "```") {
      in_block = false;
      blocks.push_back(absl::StrJoin(block, "\n"));
    } else if (in_block) {
      block.push_back(line.size() >= indent ? line.substr(indent) : std::string());
    }
  }
  return blocks;
}

// The blocks of deploy/tour.sh between "# >>> tour" and "# <<< tour" lines.
std::vector<std::string> ScriptTourBlocks(const std::string& script) {
  std::vector<std::string> blocks;
  bool in_block = false;
  std::vector<std::string> block;
  for (const std::string& line : Lines(script)) {
    if (!in_block && absl::StartsWith(line, "# >>> tour")) {
      in_block = true;
      block.clear();
    } else if (in_block && line == "# <<< tour") {
      in_block = false;
      blocks.push_back(absl::StrJoin(block, "\n"));
    } else if (in_block) {
      block.push_back(line);
    }
  }
  EXPECT_FALSE(in_block) << "deploy/tour.sh: a '# >>> tour' block is not closed";
  return blocks;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

// The README shows exactly the commands the script runs, block for block.
TEST(TourTest, ReadmeBlocksAreTheScriptsBlocks) {
  const std::string readme = ReadFile(SourceDir() + "/README.md");
  const std::string script = ReadFile(SourceDir() + "/deploy/tour.sh");
  ASSERT_FALSE(readme.empty());
  ASSERT_FALSE(script.empty());
  const std::vector<std::string> in_readme = ReadmeTourBlocks(readme);
  const std::vector<std::string> in_script = ScriptTourBlocks(script);
  ASSERT_GE(in_readme.size(), 5u) << "README.md has no tour section with ```sh blocks";
  ASSERT_EQ(in_readme.size(), in_script.size())
      << "README.md's tour and deploy/tour.sh hold different numbers of blocks";
  for (size_t i = 0; i < in_readme.size(); ++i) {
    EXPECT_EQ(in_readme[i], in_script[i]) << "block " << i + 1 << " differs";
  }
}

TEST(TourTest, TourRunsAsWritten) {
  testing::TempDir dir("tempest-tour");
  // mktemp -d in the script lands in TMPDIR: the run's files stay in `dir`.
  testing::CommandRun run =
      testing::RunCommand({"bash", SourceDir() + "/deploy/tour.sh"}, dir.File("tour"),
                          std::chrono::minutes(12), {{"TMPDIR", dir.path()}});
  ASSERT_TRUE(run.finished) << "the tour did not end within 12 minutes; stdout:\n" << run.out;
  ASSERT_EQ(run.exit_code, 0) << "stdout:\n" << run.out << "\nstderr:\n" << run.err;
  const std::string& out = run.out;
  EXPECT_NE(out.find("tour: complete"), std::string::npos) << out;
  for (const char* step :
       {"step 1:", "step 2:", "step 3:", "step 4:", "step 5:", "step 7:", "step 8:"}) {
    EXPECT_NE(out.find(std::string("tour: ok: ") + step), std::string::npos) << step << "\n" << out;
  }
  EXPECT_NE(out.find("tour: binary "), std::string::npos);
  EXPECT_NE(out.find("output in " + dir.path() + "/tempest-tour-"), std::string::npos)
      << "the tour's output directory is not a fresh one under TMPDIR:\n" << out;
  // Step 2: kcat reads back what it produced.
  EXPECT_NE(out.find("\n10000\n"), std::string::npos) << out;
  // Steps 3 and 4 run to completion in local mode; steps 3 and 5 verify.
  EXPECT_GE(Count(out, "done: complete"), 2u) << out;
  EXPECT_GE(Count(out, "missing:    0\n"), 2u) << out;
  EXPECT_GE(Count(out, "result:     complete"), 2u) << out;
  EXPECT_NE(out.find("unique:     100000\n"), std::string::npos) << out;
  EXPECT_NE(out.find("unique:     200000\n"), std::string::npos) << out;
  // Step 4: real offsets, committed by the transform's spout, at the log end.
  EXPECT_NE(out.find("LAST-COMMIT-BY"), std::string::npos) << out;
  EXPECT_GE(Count(out, "\nsentences "), 1u) << out;
  // Step 5: the report after the rebalance and kill.
  EXPECT_NE(out.find("\"missing\":0,"), std::string::npos) << out;

  // The trap stopped the ZooKeeper of step 1 (and everything else).
  const size_t at = out.find("ZooKeeper at 127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << out;
  int port = 0;
  const std::string rest = out.substr(at + std::string("ZooKeeper at 127.0.0.1:").size());
  ASSERT_TRUE(absl::SimpleAtoi(rest.substr(0, rest.find('\n')), &port)) << rest;
  EXPECT_TRUE(testing::Eventually(milliseconds(30000), [&] {
    return !os::TcpPortAccepts("127.0.0.1", port, milliseconds(500));
  })) << "the tour's ZooKeeper still serves after the script exited";
}

}  // namespace
}  // namespace tempest
