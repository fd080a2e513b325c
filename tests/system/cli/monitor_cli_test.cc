// `tempest monitor` (Storm's monitor) against a real cluster: a paced
// topology's bolt shows a non-zero rate line by line, --count ends it,
// Ctrl-C ends it cleanly, and every mistake (unknown topology, component or
// stream, no -m, bad flags, no nimbus, a topology removed while watched) is
// one clear line on stderr with its exit code.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/os/child_process.h"
#include "common/os/loopback.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// An unbounded spout paced at 200 tuples/s, a relay and a sink.
constexpr char kPaced[] = R"(name: paced
config:
  topology.workers: 1
spouts:
  - id: numbers
    className: tempest.SequenceSpout
    properties:
      - name: count
        value: -1
      - name: rate
        value: 200
bolts:
  - id: relay
    className: tempest.IdentityBolt
  - id: sink
    className: tempest.IdentityBolt
streams:
  - from: numbers
    to: relay
    grouping:
      type: SHUFFLE
  - from: relay
    to: sink
    grouping:
      type: SHUFFLE
)";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipEmpty())) out.emplace_back(l);
  return out;
}

// A data row of the table: time, time-diff ms, delta, rate, acked/s, failed/s.
struct Row {
  std::string time;
  int64_t elapsed_ms = 0;
  int64_t delta = 0;
  double rate = 0;
  double acked_rate = 0;
  double failed_rate = 0;
};

bool ParseRow(const std::string& line, Row* row) {
  std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (f.size() != 6 || f[0].size() != 8 || f[0][2] != ':' || f[0][5] != ':') return false;
  row->time = f[0];
  return absl::SimpleAtoi(f[1], &row->elapsed_ms) && absl::SimpleAtoi(f[2], &row->delta) &&
         absl::SimpleAtod(f[3], &row->rate) && absl::SimpleAtod(f[4], &row->acked_rate) &&
         absl::SimpleAtod(f[5], &row->failed_rate);
}

class MonitorCliTest : public ClusterFixture {
 protected:
  // Submits kPaced and waits until nimbus reports what `relay` emitted.
  void SubmitPaced() {
    std::ofstream(dir_.File("paced.yaml")) << kPaced;
    CommandRun submit = Tempest({"submit", dir_.File("paced.yaml"), "--until-running"});
    ASSERT_EQ(submit.exit_code, 0) << submit.err;
    id_ = submit.out.substr(0, submit.out.find('\n'));
    json page;
    ASSERT_TRUE(Eventually(
        seconds(60),
        [&] {
          page = RestGet("/api/v1/topology/" + id_ + "/component/relay");
          for (const json& row : page.value("outputStats", json::array())) {
            if (row.value("stream", "") == "default" && row.value("emitted", 0) > 0) return true;
          }
          return false;
        },
        milliseconds(500)))
        << "nimbus shows no emitted count for relay: " << page.dump();
  }

  std::string id_;
};

TEST_F(MonitorCliTest, PrintsAPacedBoltsRateAndStopsAfterCount) {
  ClusterSpec spec;
  spec.supervisors = 1;
  StartCluster(spec);
  ASSERT_FALSE(HasFatalFailure());
  SubmitPaced();
  ASSERT_FALSE(HasFatalFailure());

  CommandRun r = Tempest({"monitor", "paced", "-m", "relay", "-i", "1", "--count", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::printf("%s", r.out.c_str());
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;  // title, header, 3 rows
  EXPECT_EQ(lines[0], "topology paced, bolt relay (1 executor), stream default: emitted every 1 s");
  EXPECT_EQ(lines[1],
            "    time  time-diff ms       emitted     emitted/s       acked/s      failed/s");
  int64_t emitted = 0;
  bool some_rate = false, some_acks = false;
  for (size_t i = 2; i < lines.size(); ++i) {
    Row row;
    ASSERT_TRUE(ParseRow(lines[i], &row)) << lines[i];
    EXPECT_EQ(lines[i].size(), lines[1].size()) << "aligned under the header: " << lines[i];
    EXPECT_GT(row.elapsed_ms, 0) << lines[i];
    EXPECT_GE(row.delta, 0) << lines[i];
    EXPECT_EQ(row.failed_rate, 0.0) << "IdentityBolt fails nothing: " << lines[i];
    emitted += row.delta;
    some_rate = some_rate || row.rate > 0;
    some_acks = some_acks || row.acked_rate > 0;
  }
  // Workers beat every second, so one interval may see no new beat; over
  // three the paced spout's tuples show.
  EXPECT_GT(emitted, 0) << r.out;
  EXPECT_TRUE(some_rate) << r.out;
  EXPECT_TRUE(some_acks) << "relay acks what it receives: " << r.out;
  EXPECT_EQ(r.err, "");

  // Storm's long forms, and the transferred count (relay has a subscriber).
  CommandRun transferred =
      Tempest({"monitor", "paced", "--component", "relay", "--stream", "default", "--watch",
               "transferred", "--interval", "1", "--count", "2"});
  ASSERT_EQ(transferred.exit_code, 0) << transferred.err;
  const std::vector<std::string> t_lines = Lines(transferred.out);
  ASSERT_EQ(t_lines.size(), 4u) << transferred.out;
  EXPECT_NE(t_lines[0].find(": transferred every 1 s"), std::string::npos) << t_lines[0];
  EXPECT_NE(t_lines[1].find("transferred/s"), std::string::npos) << t_lines[1];
  for (size_t i = 2; i < t_lines.size(); ++i) {
    Row row;
    EXPECT_TRUE(ParseRow(t_lines[i], &row)) << t_lines[i];
  }

  // Without --count it runs until Ctrl-C, which ends it cleanly.
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(), "monitor", "paced", "-m", "relay", "-i", "1", "--nimbus", AnyNimbus()};
  o.stdout_path = dir_.File("monitor-live.out");
  o.stderr_path = dir_.File("monitor-live.err");
  auto live = os::ChildProcess::Start(o);
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_TRUE(Eventually(seconds(30),
                         [&] {
                           return Lines(ReadFileOrEmpty(o.stdout_path)).size() >=
                                  4;  // title, header, 2 rows
                         }))
      << ReadFileOrEmpty(o.stdout_path) << ReadFileOrEmpty(o.stderr_path);
  ::kill((*live)->pid(), SIGINT);
  const std::optional<int> status = (*live)->WaitFor(seconds(30));
  ASSERT_TRUE(status.has_value()) << "still running after SIGINT";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  EXPECT_EQ(ReadFileOrEmpty(o.stderr_path), "");

  // The spout: its acked rate is the trees rooted on the stream.
  CommandRun spout = Tempest({"monitor", "paced", "-m", "numbers", "-i", "1", "--count", "1"});
  ASSERT_EQ(spout.exit_code, 0) << spout.err;
  ASSERT_EQ(Lines(spout.out).size(), 3u) << spout.out;
  EXPECT_EQ(Lines(spout.out)[0].rfind("topology paced, spout numbers (1 executor)", 0), 0u)
      << spout.out;
}

TEST_F(MonitorCliTest, MistakesAreOneLineWithTheirExitCode) {
  ClusterSpec spec;
  spec.supervisors = 1;
  StartCluster(spec);
  ASSERT_FALSE(HasFatalFailure());
  SubmitPaced();
  ASSERT_FALSE(HasFatalFailure());

  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::vector<std::string> expected;  // substrings of the one stderr line
  };
  const std::vector<Case> cases = {
      {{"monitor", "paced", "-m", "realy", "--count", "1"},
       1,
       {"topology 'paced' has no component 'realy'", "did you mean 'relay'?",
        "numbers, relay, sink"}},
      {{"monitor", "paced", "-m", "relay", "-s", "nope", "-i", "1", "--count", "1"},
       1,
       {"component 'relay' has no output stream 'nope'; it emits on: default"}},
      {{"monitor", "ghost", "-m", "relay"}, 1, {"no topology named 'ghost'"}},
      {{"monitor", "paced"}, 2, {"monitor needs -m COMPONENT", "numbers, relay, sink"}},
      {{"monitor", "paced", "-m", "relay", "-i", "0"}, 2, {"must be between 1 and 86400 (got 0)"}},
      {{"monitor", "paced", "-m", "relay", "-w", "acked"}, 2, {"--watch", "acked"}},
      {{"monitor", "paced", "-m", "relay", "--count", "0"}, 2, {"--count", "(got 0)"}},
  };
  for (const Case& c : cases) {
    CommandRun r = Tempest(c.args);
    const std::string what = absl::StrJoin(c.args, " ");
    EXPECT_EQ(r.exit_code, c.exit_code) << what << ": " << r.err;
    EXPECT_EQ(Lines(r.err).size(), 1u) << what << ": " << r.err;
    for (const std::string& e : c.expected) {
      EXPECT_TRUE(absl::StrContains(r.err, e)) << what << ": expected '" << e << "' in " << r.err;
    }
    EXPECT_EQ(r.out, "") << what;
  }

  // No nimbus at the address given.
  absl::StatusOr<int> unused = os::FindFreeLoopbackPort();
  ASSERT_TRUE(unused.ok());
  const std::string nowhere = absl::StrCat("127.0.0.1:", *unused);
  CommandRun r =
      RunCommand({TempestBinary(), "monitor", "paced", "-m", "relay", "--nimbus", nowhere},
                 dir_.File("monitor-nowhere"), milliseconds(60000));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(Lines(r.err).size(), 1u) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "cannot reach nimbus at " + nowhere)) << r.err;

  // A topology removed while it is watched ends the watch with one line.
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(), "monitor", "paced", "-m", "relay", "-i", "1", "--nimbus", AnyNimbus()};
  o.stdout_path = dir_.File("monitor-removed.out");
  o.stderr_path = dir_.File("monitor-removed.err");
  auto live = os::ChildProcess::Start(o);
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_TRUE(Eventually(seconds(30), [&] {
    return Lines(ReadFileOrEmpty(o.stdout_path)).size() >= 3;  // title, header, a row
  })) << ReadFileOrEmpty(o.stderr_path);
  CommandRun kill = Tempest({"kill", "paced", "-w", "0", "--until-removed"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
  const std::optional<int> status = (*live)->WaitFor(seconds(30));
  ASSERT_TRUE(status.has_value()) << "still watching a removed topology";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1) << *status;
  const std::string err = ReadFileOrEmpty(o.stderr_path);
  EXPECT_EQ(Lines(err).size(), 1u) << err;
  EXPECT_TRUE(absl::StrContains(err, "topology 'paced' (" + id_ + ") is no longer on nimbus"))
      << err;
}

}  // namespace
}  // namespace tempest::testing
