// README.md's "A five-minute tour" as users run it: deploy/tour.sh, whose
// blocks are the README's blocks, against the built binary. The script
// checks each step itself and exits non-zero at the first that fails; this
// test also checks the key lines each step prints, that the README and the
// script still hold the same commands, and that no process the tour started
// outlives it.

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

// A process as /proc shows it.
struct ProcessInfo {
  pid_t ppid = 0;
  char state = '?';
  std::string cmdline;  // NULs as spaces
  std::string cwd;
};

// Every process /proc lists now (those that vanish while it is read are skipped).
std::map<pid_t, ProcessInfo> Processes() {
  std::map<pid_t, ProcessInfo> out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    int pid = 0;
    if (!absl::SimpleAtoi(it->path().filename().string(), &pid)) continue;
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
    const std::string stat = ReadFile(it->path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 4 >= stat.size()) continue;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
    ProcessInfo info;
    info.state = fields[0].empty() ? '?' : fields[0][0];
    if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &info.ppid)) continue;
    info.cmdline = ReadFile(it->path().string() + "/cmdline");
    std::replace(info.cmdline.begin(), info.cmdline.end(), '\0', ' ');
    std::error_code cwd_ec;
    info.cwd = std::filesystem::read_symlink(it->path() / "cwd", cwd_ec).string();
    out[pid] = std::move(info);
  }
  return out;
}

// The live processes the tour left, each with what it runs: this process's
// descendants (as the child subreaper, it inherits every orphan the tour
// makes, daemons and setsid() included) and anything that runs in or names
// `dir`. Reaps the orphans that already exited.
std::map<pid_t, std::string> LeftBehind(const std::string& dir) {
  const pid_t self = ::getpid();
  const std::map<pid_t, ProcessInfo> all = Processes();
  std::map<pid_t, std::string> left;
  for (const auto& [pid, info] : all) {
    if (pid == self) continue;
    if (info.state == 'Z' || info.state == 'X') {
      if (info.ppid == self) ::waitpid(pid, nullptr, WNOHANG);
      continue;
    }
    bool descendant = false;
    pid_t up = info.ppid;
    for (int depth = 0; depth < 64 && up > 1 && !descendant; ++depth) {
      descendant = up == self;
      auto parent = all.find(up);
      up = parent == all.end() ? 0 : parent->second.ppid;
    }
    if (descendant || absl::StrContains(info.cmdline, dir) || absl::StartsWith(info.cwd, dir)) {
      left[pid] = absl::StrCat("pid ", pid, " (parent ", info.ppid, ", cwd ", info.cwd,
                               "): ", info.cmdline);
    }
  }
  return left;
}

// SIGKILLs and reaps what LeftBehind finds, so that a failing run does not
// leave it to the tests after it.
void KillLeftBehind(const std::string& dir) {
  testing::Eventually(
      std::chrono::seconds(10),
      [&] {
        const std::map<pid_t, std::string> left = LeftBehind(dir);
        for (const auto& entry : left) ::kill(entry.first, SIGKILL);
        return left.empty();
      },
      std::chrono::milliseconds(100));
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

// The data lines `tempest monitor` printed after its header: how many
// showed a component that emitted something in its interval.
int MonitorLinesWithTraffic(const std::string& out) {
  const size_t header = out.find("emitted/s");
  if (header == std::string::npos) return 0;
  int with_traffic = 0;
  const size_t from = out.find('\n', header);
  for (const std::string& line : Lines(from == std::string::npos ? "" : out.substr(from + 1))) {
    // "HH:MM:SS  TIME-DIFF-MS  EMITTED  EMITTED/S  ACKED/S  FAILED/S"
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() != 6 || f[0].size() != 8 || f[0][2] != ':') break;
    int64_t emitted = 0;
    if (absl::SimpleAtoi(f[2], &emitted) && emitted > 0) ++with_traffic;
  }
  return with_traffic;
}

TEST(TourTest, TourRunsAsWritten) {
  testing::TempDir dir("tempest-tour");
  // Orphans of the tour (daemons, their workers, anything its trap missed)
  // become this process's children instead of init's, so that the check
  // below finds them all.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  // mktemp -d in the script lands in TMPDIR: the run's files stay in `dir`.
  testing::CommandRun run =
      testing::RunCommand({"bash", SourceDir() + "/deploy/tour.sh"}, dir.File("tour"),
                          std::chrono::minutes(12), {{"TMPDIR", dir.path()}});

  // Nothing the tour started runs on once it has ended: each step stops what
  // it started (its trap only covers a failed step). Processes that are
  // still exiting get 60 s.
  std::map<pid_t, std::string> left;
  const bool none_left = testing::Eventually(
      milliseconds(60000), [&] { return (left = LeftBehind(dir.path())).empty(); },
      milliseconds(200));
  std::vector<std::string> named;
  for (const auto& entry : left) named.push_back(entry.second);
  EXPECT_TRUE(none_left) << "still running after the tour:\n" << absl::StrJoin(named, "\n");
  KillLeftBehind(dir.path());
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);

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
  EXPECT_NE(out.find("unique:     10000\n"), std::string::npos) << out;
  // Step 4: real offsets, committed by the transform's spout, at the log end;
  // then steps 1 and 2 stop.
  EXPECT_NE(out.find("LAST-COMMIT-BY"), std::string::npos) << out;
  EXPECT_GE(Count(out, "\nsentences "), 1u) << out;
  EXPECT_NE(out.find("tour: ok: step 4: the ZooKeeper and Kafka of steps 1 and 2 stopped"),
            std::string::npos)
      << out;
  // Step 5: the monitor shows the topology at work, list --workers its
  // workers; the killed worker comes back; the cluster stops.
  EXPECT_GE(MonitorLinesWithTraffic(out), 2) << "tempest monitor saw no traffic:\n" << out;
  EXPECT_GE(Count(out, "Pid"), 2u) << out;
  EXPECT_NE(out.find("Restarts"), std::string::npos) << out;
  EXPECT_NE(out.find("tour: ok: step 5: the killed worker came back"), std::string::npos) << out;
  EXPECT_NE(out.find("tour: ok: step 5: the cluster stopped"), std::string::npos) << out;

  // The ZooKeeper of step 1 no longer serves.
  const size_t at = out.find("ZooKeeper at 127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << out;
  int port = 0;
  const std::string rest = out.substr(at + std::string("ZooKeeper at 127.0.0.1:").size());
  ASSERT_TRUE(absl::SimpleAtoi(rest.substr(0, rest.find('\n')), &port)) << rest;
  EXPECT_FALSE(os::TcpPortAccepts("127.0.0.1", port, milliseconds(500)))
      << "the tour's ZooKeeper still serves after the script exited";
}

}  // namespace
}  // namespace tempest
