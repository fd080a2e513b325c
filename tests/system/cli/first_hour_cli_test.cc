// What a new user meets in the first hour with the `tempest` binary: the
// exports `tempest dev` prints (its API token file among them), TEMPEST_NIMBUS, `submit` waiting for a
// nimbus that starts late, `--until-running`'s reason and timeout, readable
// range errors, quiet ZooKeeper client logging, defaults in --help, aligned
// `list` output, worker process titles, and a nimbus restarted after
// `kill -9` that leads at once.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/os/child_process.h"
#include "common/os/loopback.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string SourceDir() {
  const char* s = std::getenv("TEMPEST_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

// One worker, a paced unbounded spout into an identity bolt.
std::string SmallTopology(const std::string& name) {
  return absl::StrCat("name: ", name, R"(
config:
  topology.workers: 1
spouts:
  - id: gen
    className: tempest.SequenceSpout
    parallelism: 1
    properties:
      - name: rate
        value: 10
bolts:
  - id: sink
    className: tempest.IdentityBolt
    parallelism: 1
streams:
  - from: gen
    to: sink
    grouping:
      type: SHUFFLE
)");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipEmpty())) out.emplace_back(l);
  return out;
}

int ExitCodeOf(std::optional<int> status) {
  if (!status.has_value() || !WIFEXITED(*status)) return -1;
  return WEXITSTATUS(*status);
}

class CliTest : public ::testing::Test {
 protected:
  CommandRun Tempest(std::vector<std::string> args,
                     const std::map<std::string, std::string>& env = {},
                     milliseconds timeout = milliseconds(60000)) {
    std::vector<std::string> argv = {TempestBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandRun r = RunCommand(argv, dir_.File(absl::StrCat("cmd-", ++commands_)), timeout, env);
    EXPECT_TRUE(r.finished) << args[0] << " did not finish";
    return r;
  }

  TempDir dir_{"tempest-first-hour"};
  int commands_ = 0;
};

// --- no cluster needed -----------------------------------------------------

TEST_F(CliTest, HelpShowsDefaultsAndDaemonsListTheirOptions) {
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> expected;  // substrings of one line each
  };
  const std::vector<Case> cases = {
      {{"--help"}, {"--token-file", "tempest.api.token.file", "$TEMPEST_TOKEN_FILE",
                    "$TEMPEST_TOKEN"}},
      {{"dev", "--help"}, {"--supervisors", "=2", "--slots"}},
      {{"dev-kafka", "--help"}, {"--brokers", "=1"}},
      {{"study", "--help"}, {"--records", "=20000", "--rate", "=2000", "--out", "=tempest-study",
                             "--settle-timeout", "=90"}},
      {{"submit", "--help"}, {"--wait-for-nimbus", "=30", "--until-running-timeout", "=120"}},
      {{"nimbus", "--help"}, {"--config", "-c"}},
      {{"supervisor", "--help"}, {"--config", "-c"}},
  };
  for (const Case& c : cases) {
    CommandRun r = Tempest(c.args);
    EXPECT_EQ(r.exit_code, 0) << c.args[0] << ": " << r.err;
    for (const std::string& e : c.expected) {
      EXPECT_NE(r.out.find(e), std::string::npos) << c.args[0] << " --help lacks " << e << ":\n"
                                                  << r.out;
    }
  }
  // A default per line, next to its option.
  CommandRun dev = Tempest({"dev", "--help"});
  bool supervisors_default = false;
  for (const std::string& line : Lines(dev.out)) {
    if (absl::StrContains(line, "--supervisors") && absl::StrContains(line, "=2")) {
      supervisors_default = true;
    }
  }
  EXPECT_TRUE(supervisors_default) << dev.out;
}

TEST_F(CliTest, OutOfRangeValuesAreOneReadableLine) {
  const std::string flux = SourceDir() + "/examples/generator-verifier.yaml";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"local", flux, "--duration", "-3"}, "--duration: must be between 0 and 31536000 (got -3)"},
      {{"dev", "--supervisors", "0"}, "--supervisors: must be between 1 and 16 (got 0)"},
      {{"study", "--rate", "0"}, "--rate: must be between 1 and 1000000 (got 0)"},
      {{"kill", "x", "-w", "-1"}, "must be between 0 and 31536000 (got -1)"},
      {{"rebalance", "x", "-n", "0"}, "must be between 1 and 100000 (got 0)"},
      {{"submit", flux, "--wait-for-nimbus", "x"}, "--wait-for-nimbus: must be between 0 and"},
  };
  for (const Case& c : cases) {
    CommandRun r = Tempest(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(Lines(r.err).size(), 1u) << r.err;
    EXPECT_LT(r.err.size(), 200u) << r.err;
  }
}

TEST_F(CliTest, StormVerbsWithoutACounterpartExplainThemselvesWhateverFollows) {
  // As an operator types them from Storm's documentation.
  const std::vector<std::vector<std::string>> typed = {
      {"blobstore", "list"},
      {"jar", "topology.jar", "com.example.Main", "--name", "x"},
      {"heartbeats", "list", "/"},
      {"sql", "query.sql", "name"},
      {"kill_workers"},
  };
  for (const std::vector<std::string>& args : typed) {
    CommandRun r = Tempest(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("'" + args[0] + "' is a Storm command with no counterpart"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(Lines(r.err).size(), 1u) << r.err;
  }
}

TEST_F(CliTest, OffsetsShowAgainstAnUnreachableZooKeeperPrintsOneLine) {
  absl::StatusOr<int> port = os::FindFreeLoopbackPort();  // nothing listens there
  ASSERT_TRUE(port.ok());
  const std::string zk = absl::StrCat("127.0.0.1:", *port);
  CommandRun quiet = Tempest({"offsets", "show", "--zk", zk, "--root", "/kafkaspout", "--id", "x"});
  EXPECT_EQ(quiet.exit_code, 1) << quiet.err;
  EXPECT_EQ(Lines(quiet.err).size(), 1u) << quiet.err;
  EXPECT_NE(quiet.err.find("tempest: cannot reach ZooKeeper at " + zk), std::string::npos)
      << quiet.err;

  CommandRun verbose =
      Tempest({"offsets", "show", "--zk", zk, "--root", "/kafkaspout", "--id", "x", "--verbose"});
  EXPECT_EQ(verbose.exit_code, 1) << verbose.err;
  EXPECT_GT(Lines(verbose.err).size(), 1u) << verbose.err;  // the client's own lines are back
}

// --- one nimbus against a real ZooKeeper ------------------------------------

class NimbusLifecycleTest : public CliTest {
 protected:
  void SetUp() override {
    // Ticks of 2 s let sessions last up to 40 s (the default test ensemble
    // caps them at 5 s), so the 30 s below is what ZooKeeper grants.
    ZkEnsemble::Options zk_options;
    zk_options.tick_ms = 2000;
    auto zk = ZkEnsemble::Start(zk_options);
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = *std::move(zk);
    absl::StatusOr<int> port = os::FindFreeLoopbackPort();
    ASSERT_TRUE(port.ok());
    address_ = absl::StrCat("127.0.0.1:", *port);
    // A session long enough that a dead nimbus's nodes outlive the test's
    // steps: only a nimbus that removes them itself leads at once.
    std::ofstream(dir_.File("tempest.yaml"))
        << "storm.zookeeper.servers: [\"" << zk_->ConnectString() << "\"]\n"
        << "storm.zookeeper.root: /tempest-first-hour\n"
        << "storm.zookeeper.session.timeout: 30000\n"
        << "ui.host: 127.0.0.1\n"
        << "ui.port: " << *port << "\n"
        << "nimbus.monitor.freq.secs: 1\n";
    std::ofstream(dir_.File("demo.yaml")) << SmallTopology("demo");
  }

  void TearDown() override {
    if (nimbus_ != nullptr) nimbus_->Stop(milliseconds(20000));
  }

  // Starts `tempest nimbus` (the n-th time) and waits for its nimbus= line.
  void StartNimbus() {
    ++starts_;
    const std::string out = dir_.File(absl::StrCat("nimbus-", starts_, ".out"));
    os::ChildProcess::Options options;
    options.argv = {TempestBinary(), "nimbus", "--config", dir_.File("tempest.yaml")};
    options.stdout_path = out;
    options.stderr_path = dir_.File(absl::StrCat("nimbus-", starts_, ".err"));
    auto child = os::ChildProcess::Start(options);
    ASSERT_TRUE(child.ok()) << child.status();
    nimbus_ = *std::move(child);
    auto address = WaitForLineWithPrefix(out, "nimbus=", seconds(60));
    ASSERT_TRUE(address.has_value()) << ReadFileOrEmpty(options.stderr_path);
    ASSERT_EQ(*address, address_);
  }

  std::string NimbusErr() const {
    return ReadFileOrEmpty(dir_.File(absl::StrCat("nimbus-", starts_, ".err")));
  }

  std::unique_ptr<ZkEnsemble> zk_;
  std::unique_ptr<os::ChildProcess> nimbus_;
  std::string address_;
  int starts_ = 0;
};

TEST_F(NimbusLifecycleTest, SubmitWaitsForANimbusThatStartsLateAndVerbsReadTempestNimbus) {
  // `tempest dev ... &` then `submit` at once: nothing listens yet.
  os::ChildProcess::Options options;
  options.argv = {TempestBinary(), "submit", dir_.File("demo.yaml")};
  options.env = {{"TEMPEST_NIMBUS", address_}};
  options.stdout_path = dir_.File("submit.out");
  options.stderr_path = dir_.File("submit.err");
  auto submit = os::ChildProcess::Start(options);
  ASSERT_TRUE(submit.ok()) << submit.status();
  auto waiting = WaitForLineWithPrefix(dir_.File("submit.err"), "tempest: waiting up to 30 s",
                                       seconds(30));
  ASSERT_TRUE(waiting.has_value()) << ReadFileOrEmpty(dir_.File("submit.err"));
  EXPECT_NE(waiting->find(address_), std::string::npos) << *waiting;
  StartNimbus();
  EXPECT_EQ(ExitCodeOf((*submit)->WaitFor(seconds(60))), 0)
      << ReadFileOrEmpty(dir_.File("submit.err"));
  EXPECT_EQ(ReadFileOrEmpty(dir_.File("submit.out")).rfind("demo-", 0), 0u);
  // One line said it waited, however long it took.
  EXPECT_EQ(Lines(ReadFileOrEmpty(dir_.File("submit.err"))).size(), 1u)
      << ReadFileOrEmpty(dir_.File("submit.err"));

  // Every client verb reads TEMPEST_NIMBUS; --nimbus wins over it.
  const std::map<std::string, std::string> env = {{"TEMPEST_NIMBUS", address_}};
  CommandRun list = Tempest({"list"}, env);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("demo"), std::string::npos) << list.out;
  EXPECT_EQ(Tempest({"deactivate", "demo"}, env).exit_code, 0);
  EXPECT_EQ(Tempest({"activate", "demo"}, env).exit_code, 0);
  absl::StatusOr<int> unused = os::FindFreeLoopbackPort();
  ASSERT_TRUE(unused.ok());
  const std::string nowhere = absl::StrCat("127.0.0.1:", *unused);
  CommandRun elsewhere = Tempest({"list", "--nimbus", nowhere}, env);
  EXPECT_EQ(elsewhere.exit_code, 1);
  EXPECT_NE(elsewhere.err.find("cannot reach nimbus at " + nowhere), std::string::npos)
      << elsewhere.err;
  CommandRun malformed = Tempest({"list"}, {{"TEMPEST_NIMBUS", "nocolon"}});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("TEMPEST_NIMBUS takes HOST:PORT or http://HOST:PORT, not"),
            std::string::npos)
      << malformed.err;
  EXPECT_EQ(Tempest({"kill", "demo", "-w", "0"}, env).exit_code, 0);
}

TEST_F(NimbusLifecycleTest, SubmitGivesUpOnAnAbsentNimbusWithOneError) {
  CommandRun r = Tempest({"submit", dir_.File("demo.yaml"), "--wait-for-nimbus", "1", "--nimbus",
                          address_});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::vector<std::string> lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;  // "waiting up to 1 s", then the error
  EXPECT_NE(lines[0].find("waiting up to 1 s for nimbus at " + address_), std::string::npos);
  EXPECT_NE(lines[1].find("is not ready after 1 s (--wait-for-nimbus)"), std::string::npos)
      << lines[1];

  CommandRun at_once =
      Tempest({"submit", dir_.File("demo.yaml"), "--wait-for-nimbus", "0", "--nimbus", address_});
  EXPECT_EQ(at_once.exit_code, 1);
  EXPECT_EQ(Lines(at_once.err).size(), 1u) << at_once.err;
  EXPECT_NE(at_once.err.find("cannot reach nimbus at " + address_), std::string::npos);
}

TEST_F(NimbusLifecycleTest, UntilRunningSaysWhyItWaitsAndTimesOut) {
  StartNimbus();
  CommandRun r = Tempest({"submit", dir_.File("demo.yaml"), "--nimbus", address_,
                          "--until-running", "--until-running-timeout", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("demo-", 0), 0u) << r.out;
  // No supervisor: said once, not every poll; then one error line.
  const std::vector<std::string> lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_NE(lines[0].find("no supervisor is registered; waiting"), std::string::npos) << r.err;
  EXPECT_NE(lines[1].find("is not running after 2 s (--until-running-timeout): no supervisor is "
                          "registered"),
            std::string::npos)
      << r.err;
}

TEST_F(NimbusLifecycleTest, NimbusRestartedAfterKill9OnTheSameAddressLeadsAtOnce) {
  StartNimbus();
  CommandRun first = Tempest({"submit", dir_.File("demo.yaml"), "--nimbus", address_});
  ASSERT_EQ(first.exit_code, 0) << first.err << NimbusErr();
  nimbus_->Kill();  // SIGKILL: its ZooKeeper session lives on for 30 s
  StartNimbus();
  std::ofstream(dir_.File("second.yaml")) << SmallTopology("second");
  // No waiting allowed: the first answer must be a success, not "this
  // nimbus (X) is not the leader; the leader is X".
  CommandRun second = Tempest(
      {"submit", dir_.File("second.yaml"), "--nimbus", address_, "--wait-for-nimbus", "0"});
  EXPECT_EQ(second.exit_code, 0) << second.err << NimbusErr();
  EXPECT_EQ(second.err.find("is not the leader"), std::string::npos) << second.err;
  EXPECT_NE(NimbusErr().find("left by an earlier session of this id"), std::string::npos)
      << NimbusErr();
  CommandRun list = Tempest({"list", "--nimbus", address_});
  EXPECT_NE(list.out.find("demo"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("second"), std::string::npos) << list.out;
}

// --- tempest dev ------------------------------------------------------------

// The NUL-separated words of /proc/PID/cmdline, trailing NULs dropped.
std::vector<std::string> CommandLineOf(const std::filesystem::path& proc) {
  std::string text = ReadFileOrEmpty((proc / "cmdline").string());
  std::vector<std::string> words;
  for (absl::string_view w : absl::StrSplit(text, '\0', absl::SkipEmpty())) words.emplace_back(w);
  return words;
}

TEST_F(CliTest, DevPrintsExportsListAlignsAndWorkersShowTheirTopology) {
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(), "dev", "--supervisors", "1", "--slots", "1", "--dir",
            dir_.File("cluster"), "-c", "ui.port=0"};
  o.stdout_path = dir_.File("dev.out");
  o.stderr_path = dir_.File("dev.err");
  auto dev = os::ChildProcess::Start(o);
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_TRUE(WaitForLineWithPrefix(dir_.File("dev.out"), "ready", seconds(180)).has_value())
      << ReadFileOrEmpty(dir_.File("dev.out")) << ReadFileOrEmpty(dir_.File("dev.err"));

  // The machine lines stay, and each export repeats one of them, before `ready`.
  std::map<std::string, std::string> values, exports;
  bool exports_before_ready = false;
  for (const std::string& line : Lines(ReadFileOrEmpty(dir_.File("dev.out")))) {
    if (line == "ready") {
      exports_before_ready = exports.size() == 5;
      break;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    if (absl::StartsWith(line, "export ")) {
      exports[line.substr(7, eq - 7)] = line.substr(eq + 1);
    } else {
      values[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  EXPECT_TRUE(exports_before_ready) << ReadFileOrEmpty(dir_.File("dev.out"));
  EXPECT_EQ(exports["TEMPEST_NIMBUS"], values["nimbus"]);
  EXPECT_EQ(exports["BOOTSTRAP"], values["bootstrap.servers"]);
  EXPECT_EQ(exports["TEMPEST_ZK"], values["zookeeper"]);
  EXPECT_EQ(exports["TEMPEST_TOKEN_FILE"], values["token-file"]);
  EXPECT_EQ(exports["TEMPEST_ZK_AUTH_FILE"], values["zk-auth-file"]);
  ASSERT_FALSE(exports["TEMPEST_ZK_AUTH_FILE"].empty());
  EXPECT_EQ(values["ui"].rfind("http://" + values["nimbus"] + "/#token=", 0), 0u) << values["ui"];
  ASSERT_FALSE(exports["TEMPEST_NIMBUS"].empty());
  ASSERT_FALSE(exports["TEMPEST_TOKEN_FILE"].empty());
  // What `eval "$(grep ^export dev.out)"` sets.
  const std::map<std::string, std::string> env = {
      {"TEMPEST_NIMBUS", exports["TEMPEST_NIMBUS"]},
      {"TEMPEST_TOKEN_FILE", exports["TEMPEST_TOKEN_FILE"]}};

  // A name longer than the old fixed 24-character column.
  const std::string long_name = "a-topology-name-well-past-twenty-four-characters";
  std::ofstream(dir_.File("long.yaml")) << SmallTopology("long");
  CommandRun submit = Tempest({"submit", dir_.File("long.yaml"), "--name", long_name,
                               "--until-running", "--until-running-timeout", "150"},
                              env, milliseconds(200000));
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::string id = Lines(submit.out).at(0);
  std::ofstream(dir_.File("short.yaml")) << SmallTopology("short");
  // The only slot is taken: --until-running says so, then gives up.
  CommandRun full = Tempest({"submit", dir_.File("short.yaml"), "--until-running",
                             "--until-running-timeout", "3"},
                            env);
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_NE(full.err.find("0 free slots of 1; waiting"), std::string::npos) << full.err;
  EXPECT_NE(full.err.find("is not running after 3 s (--until-running-timeout): 0 free slots of 1"),
            std::string::npos)
      << full.err;

  CommandRun list = Tempest({"list"}, env);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const std::vector<std::string> rows = Lines(list.out);
  ASSERT_EQ(rows.size(), 4u) << list.out;  // header, rule, two topologies
  const size_t status_col = rows[0].find("Status");
  const size_t id_col = rows[0].find("Topology_Id");
  ASSERT_GT(status_col, long_name.size()) << list.out;
  for (size_t i = 2; i < rows.size(); ++i) {
    EXPECT_NE(rows[i][status_col], ' ') << list.out;
    EXPECT_EQ(rows[i][status_col - 1], ' ') << list.out;
    EXPECT_EQ(rows[i].find_first_not_of(' ', id_col), id_col) << list.out;
    EXPECT_EQ(rows[i][id_col - 1], ' ') << list.out;
  }

  // The worker shows as `tempest worker TOPOLOGY:PORT` in ps.
  std::vector<std::string> title;
  std::string comm;
  EXPECT_TRUE(Eventually(seconds(30), [&] {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
      std::vector<std::string> words = CommandLineOf(e.path());
      if (words.size() >= 3 && words[0] == "tempest" && words[1] == "worker" &&
          absl::StartsWith(words[2], id + ":")) {
        title = words;
        comm = ReadFileOrEmpty((e.path() / "comm").string());
        return true;
      }
    }
    return false;
  })) << "no process titled tempest worker " << id;
  EXPECT_EQ(comm, "tempest worker\n");

  EXPECT_EQ(Tempest({"kill", long_name, "-w", "0"}, env).exit_code, 0);
  EXPECT_EQ(Tempest({"kill", "short", "-w", "0"}, env).exit_code, 0);
  (*dev)->Stop(seconds(60));
  if (HasFailure()) {
    std::cerr << ReadFileOrEmpty(dir_.File("dev.out")) << ReadFileOrEmpty(dir_.File("dev.err"));
  }
}

}  // namespace
}  // namespace tempest::testing
