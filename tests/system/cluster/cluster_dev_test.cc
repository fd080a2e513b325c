// `tempest dev` as a user runs it: a whole local cluster from one command,
// then `tempest submit` of the cluster example across two supervisors and
// two worker processes, `tempest list`, and a clean `tempest kill -w` that
// leaves a verifier report with nothing missing and nothing duplicated.
// Then the security rule that submitted code never runs as root: a multilang
// command `sh -c id` submitted to a cluster started by root runs as its
// slot's own uid in the group of supervisor.worker.user (nobody by default),
// and what topology code logs reaches the worker log escaped. And the REST API
// token `tempest dev` generates: a 0600 token-file= that raw HTTP writes
// need, that the CLI finds through the discovery file under $HOME or through
// TEMPEST_TOKEN_FILE, and that a token file of the user's own config replaces.

#include <pwd.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/net/http_auth.h"
#include "common/net/http_client.h"
#include "common/os/child_process.h"
#include "supervisor/supervisor_options.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tempest_dev.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// `tempest dev --supervisors N` in `dir`, as a user starts it (ui.port=0,
// then `extra_args`, with `env` added to its environment): waits for "ready"
// and reads nimbus's address. Failures are fatal.
void StartDev(const TempDir& dir, int supervisors, std::unique_ptr<os::ChildProcess>& dev,
              std::optional<std::string>& nimbus, const std::vector<std::string>& extra_args = {},
              const std::map<std::string, std::string>& env = {}) {
  auto started = StartTempestDev(dir, {supervisors, extra_args, env});
  ASSERT_TRUE(started.ok()) << started.status();
  dev = *std::move(started);
  nimbus = WaitForLineWithPrefix(dir.File("dev.out"), "nimbus=", seconds(1));
  ASSERT_TRUE(nimbus.has_value());
}

TEST(ClusterDevTest, SubmitRunsAcrossTwoSupervisorsAndCleanKillLosesNothing) {
  TempDir dir("tempest-dev-cluster");
  std::unique_ptr<os::ChildProcess> dev;
  std::optional<std::string> nimbus;
  StartDev(dir, 2, dev, nimbus);
  ASSERT_FALSE(HasFatalFailure());
  int commands = 0;
  auto tempest = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {TempestBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--nimbus");
    argv.push_back(*nimbus);
    return RunCommand(argv, dir.File(absl::StrCat("cmd-", ++commands)), milliseconds(60000));
  };

  const std::string out = dir.File("gv");
  std::ofstream(dir.File("topology.yaml")) << ExampleWithPaths(
      SourceDir() + "/examples/cluster-generator-verifier.yaml", "${ENV-OUT}/cluster-gv", out);
  CommandRun submit = tempest({"submit", dir.File("topology.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_EQ(submit.out.rfind("cluster-generator-verifier-", 0), 0u) << submit.out;

  CommandRun list = tempest({"list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("cluster-generator-verifier"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("ACTIVE"), std::string::npos) << list.out;

  // Two worker processes, one on each supervisor (Storm's even scheduler
  // interleaves the supervisors' slots).
  std::set<std::string> supervisors_with_workers;
  EXPECT_TRUE(Eventually(seconds(60),
                         [&] {
                           supervisors_with_workers.clear();
                           for (int s = 1; s <= 2; ++s) {
                             const auto workers = std::filesystem::path(dir.File("cluster")) /
                                                  absl::StrCat("supervisor-", s) / "workers";
                             std::error_code ec;
                             for (const auto& slot :
                                  std::filesystem::directory_iterator(workers, ec)) {
                               if (std::filesystem::exists(slot.path() / "heartbeat")) {
                                 supervisors_with_workers.insert(absl::StrCat(s));
                               }
                             }
                           }
                           return supervisors_with_workers.size() == 2;
                         }))
      << "workers on " << supervisors_with_workers.size() << " supervisors";

  // Every seq arrives (the spout paces itself with max.spout.pending).
  json verified;
  EXPECT_TRUE(Eventually(
      seconds(240),
      [&] {
        CommandRun v = RunCommand(
            {TempestBinary(), "verify", out + "/verifier.log", "--expected", "200000", "--json"},
            dir.File(absl::StrCat("verify-", ++commands)), milliseconds(60000));
        verified = json::parse(v.out, nullptr, false);
        return !verified.is_discarded() && verified.value("unique", 0) == 200000;
      },
      milliseconds(2000)))
      << verified.dump();

  CommandRun kill = tempest({"kill", "cluster-generator-verifier", "-w", "3"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
  // The verifier writes its report when its worker closes it, after the
  // kill's wait, when nimbus removes the assignment.
  ASSERT_TRUE(Eventually(seconds(90), [&] {
    return std::filesystem::exists(out + "/report.json");
  })) << "no report";
  json report;
  ASSERT_TRUE(Eventually(seconds(10), [&] {
    report = json::parse(ReadFileOrEmpty(out + "/report.json"), nullptr, false);
    return !report.is_discarded() && report.contains("missing");
  }));
  std::printf("clean run across 2 supervisors: %s\n", report.dump().c_str());
  EXPECT_EQ(report["received"], 200000) << report.dump();
  EXPECT_EQ(report["missing"], 0) << report.dump();
  EXPECT_EQ(report["duplicated"], 0) << report.dump();

  EXPECT_TRUE(Eventually(seconds(60), [&] {
    CommandRun l = tempest({"list"});
    return l.out.find("cluster-generator-verifier") == std::string::npos;
  }));
  dev->Stop(seconds(60));
  if (HasFailure()) {
    std::cerr << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.File("cluster"))) {
      if (e.path().extension() == ".log") {
        std::string text = ReadFileOrEmpty(e.path().string());
        if (text.size() > 5000) text = text.substr(text.size() - 5000);
        std::cerr << "==== " << e.path().string() << "\n" << text << "\n";
      }
    }
  }
}

// Whether `uid` is one a submitted command may run as: under root, a slot
// uid (tempest.supervisor.worker.slot.uid.base plus a port: no account's,
// never root's), else the user who started the cluster.
bool IsWorkerUid(uid_t uid) {
  if (::geteuid() != 0) return uid == ::geteuid();
  // tempest dev draws its clusters' base from the default upwards, below 2^31.
  return uid > supervisor::kDefaultSlotUidBase && uid <= 0x7fffffff && ::getpwuid(uid) == nullptr;
}

// The group a submitted command runs in under root: that of the default
// supervisor.worker.user.
gid_t ExpectedWorkerGid() {
  if (::geteuid() != 0) return ::getegid();
  const struct passwd* nobody = ::getpwnam("nobody");
  return nobody != nullptr ? nobody->pw_gid : 0;
}

// Real uid of a running process, from /proc/PID/status ("Uid: real eff ...").
std::optional<uid_t> ProcessUid(const std::string& pid) {
  std::ifstream status("/proc/" + pid + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Uid:", 0) == 0) return static_cast<uid_t>(std::stoul(line.substr(4)));
  }
  return std::nullopt;
}

TEST(ClusterDevTest, SubmittedMultilangCommandNeverRunsAsRoot) {
  ASSERT_TRUE(::geteuid() != 0 || ::getpwnam("nobody") != nullptr)
      << "this host has no 'nobody' account to run workers as";
  TempDir dir("tempest-dev-uid");
  std::unique_ptr<os::ChildProcess> dev;
  std::optional<std::string> nimbus;
  StartDev(dir, 1, dev, nimbus);
  ASSERT_FALSE(HasFatalFailure());

  // The hostile submission: a "bolt" that is a shell command reporting who
  // it runs as, and then never speaks the protocol.
  const std::string id_file = dir.File("id.txt");
  std::ofstream(dir.File("topology.yaml")) << R"(name: who-am-i
spouts:
  - id: seq
    className: tempest.SequenceSpout
bolts:
  - id: shell
    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
    constructorArgs:
      - ["sh", "-c", "id > )" << id_file << R"(.tmp && mv )"
                                           << id_file << ".tmp " << id_file << R"(; exec sleep 30"]
      - ["out"]
streams:
  - from: seq
    to: shell
    grouping: {type: SHUFFLE}
)";
  CommandRun submit =
      RunCommand({TempestBinary(), "submit", dir.File("topology.yaml"), "--nimbus", *nimbus},
                 dir.File("submit"), milliseconds(60000));
  ASSERT_EQ(submit.exit_code, 0) << submit.err;

  ASSERT_TRUE(Eventually(seconds(120), [&] { return std::filesystem::exists(id_file); }))
      << "the submitted command never ran";
  // "uid=N(name) gid=G(group) ...": a slot uid has no name.
  const std::string id = ReadFileOrEmpty(id_file);
  uid_t uid = 0;
  gid_t gid = 0;
  const size_t gid_at = id.find(" gid=");
  ASSERT_NE(gid_at, std::string::npos) << id;
  ASSERT_EQ(std::sscanf(id.c_str(), "uid=%u", &uid), 1) << id;
  ASSERT_EQ(std::sscanf(id.c_str() + gid_at, " gid=%u", &gid), 1) << id;
  EXPECT_TRUE(IsWorkerUid(uid)) << id;
  EXPECT_NE(uid, 0u) << id;
  EXPECT_EQ(gid, ExpectedWorkerGid()) << id;

  // The worker process itself (plugins run in it) is not root either.
  int workers = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = ReadFileOrEmpty("/proc/" + pid + "/cmdline");
    if (cmdline.find("who-am-i") == std::string::npos ||
        cmdline.find("--supervisor-id") == std::string::npos) {
      continue;
    }
    ++workers;
    EXPECT_EQ(ProcessUid(pid), std::optional<uid_t>(uid)) << cmdline;
  }
  EXPECT_GT(workers, 0) << "no worker process of who-am-i found";

  RunCommand({TempestBinary(), "kill", "who-am-i", "-w", "0", "--nimbus", *nimbus},
             dir.File("kill"), milliseconds(60000));
  dev->Stop(seconds(60));
  if (HasFailure()) {
    std::cerr << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
  }
}

// Every worker.log line of the cluster `tempest dev` runs in `dir`.
std::string AllWorkerLogs(const TempDir& dir) {
  std::string all;
  std::error_code ec;
  const std::filesystem::path cluster(dir.File("cluster"));
  for (const auto& sup : std::filesystem::directory_iterator(cluster, ec)) {
    for (const auto& slot :
         std::filesystem::directory_iterator(sup.path() / "supervisor" / "workers", ec)) {
      all += ReadFileOrEmpty((slot.path() / "worker.log").string());
    }
  }
  return all;
}

TEST(ClusterDevTest, TextTopologyCodeLogsReachesTheWorkerLogEscaped) {
  TempDir dir("tempest-dev-escape");
  std::unique_ptr<os::ChildProcess> dev;
  std::optional<std::string> nimbus;
  StartDev(dir, 1, dev, nimbus);
  ASSERT_FALSE(HasFatalFailure());

  // A multilang child that answers the handshake, then logs through the
  // protocol and on its stderr a colour escape and a line of its own.
  std::ofstream(dir.File("child.sh"))
      << R"(while IFS= read -r line; do [ "$line" = end ] && break; done
printf '{"pid": %d}\nend\n' $$
printf '{"command": "log", "msg": "from-log:\\u001b[31mred\\nforged-log-line #"}\nend\n'
printf 'from-stderr:\033[31mred\nforged-stderr-line #\n' >&2
exec sleep 60
)";
  std::ofstream(dir.File("topology.yaml")) << R"(name: log-escape
spouts:
  - id: seq
    className: tempest.SequenceSpout
bolts:
  - id: shell
    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
    constructorArgs:
      - ["/bin/sh", ")" << dir.File("child.sh") << R"("]
      - ["out"]
streams:
  - from: seq
    to: shell
    grouping: {type: SHUFFLE}
)";
  CommandRun submit =
      RunCommand({TempestBinary(), "submit", dir.File("topology.yaml"), "--nimbus", *nimbus},
                 dir.File("submit"), milliseconds(60000));
  ASSERT_EQ(submit.exit_code, 0) << submit.err;

  std::string logs;
  ASSERT_TRUE(Eventually(seconds(120), [&] {
    logs = AllWorkerLogs(dir);
    return absl::StrContains(logs, "forged-log-line") &&
           absl::StrContains(logs, "forged-stderr-line");
  })) << logs;
  // Shown escaped, on the line of the message that carried it.
  EXPECT_TRUE(absl::StrContains(logs, "from-log:\\x1b[31mred\\nforged-log-line #")) << logs;
  EXPECT_TRUE(absl::StrContains(logs, "stderr: from-stderr:\\x1b[31mred")) << logs;
  EXPECT_TRUE(absl::StrContains(logs, "stderr: forged-stderr-line #")) << logs;
  // No raw escape byte, and no line that topology code began.
  EXPECT_FALSE(absl::StrContains(logs, "\x1b")) << logs;
  for (absl::string_view line : absl::StrSplit(logs, '\n')) {
    EXPECT_FALSE(absl::StartsWith(line, "forged")) << line;
  }

  RunCommand({TempestBinary(), "kill", "log-escape", "-w", "0", "--nimbus", *nimbus},
             dir.File("kill"), milliseconds(60000));
  dev->Stop(seconds(60));
  if (HasFailure()) {
    std::cerr << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
  }
}

// --- the REST API token ------------------------------------------------------

// The `key=value` lines `tempest dev` printed before `ready`, in order.
std::vector<std::pair<std::string, std::string>> DevLines(const std::string& out) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (absl::string_view l : absl::StrSplit(ReadFileOrEmpty(out), '\n', absl::SkipEmpty())) {
    const std::string line(l);
    if (line == "ready") break;
    const size_t eq = line.find('=');
    if (eq != std::string::npos) lines.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return lines;
}

std::string Value(const std::vector<std::pair<std::string, std::string>>& lines,
                  const std::string& key) {
  for (const auto& [k, v] : lines) {
    if (k == key) return v;
  }
  return "";
}

// Where `key` first appears; lines.size() if it does not.
size_t IndexOf(const std::vector<std::pair<std::string, std::string>>& lines,
               const std::string& key) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].first == key) return i;
  }
  return lines.size();
}

unsigned ModeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
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

net::HttpClient RawClient(const std::string& address) {
  const size_t colon = address.rfind(':');
  return net::HttpClient(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
}

// The status of a raw POST of `body` to `target`, with `authorization` as
// that header unless empty; -1 if nimbus did not answer.
int RawPost(const std::string& address, const std::string& target, const std::string& body,
            const std::string& authorization = "") {
  net::HttpClient client = RawClient(address);
  if (!authorization.empty()) client.set_header("Authorization", authorization);
  auto reply = client.Post(target, body);
  return reply.ok() ? reply->status : -1;
}

// No token variable of the test's own environment reaches the CLI.
std::map<std::string, std::string> CliEnv(const std::string& home,
                                          const std::string& token_file = "") {
  return {{"HOME", home}, {"TEMPEST_TOKEN_FILE", token_file}, {"TEMPEST_TOKEN", ""},
          {"TEMPEST_NIMBUS", ""}};
}

TEST(ClusterDevTest, GeneratedTokenGuardsWritesAndTheCliFindsIt) {
  TempDir dir("tempest-dev-token");
  const std::string home = dir.File("home");
  std::filesystem::create_directories(home);
  std::unique_ptr<os::ChildProcess> dev;
  std::optional<std::string> nimbus;
  StartDev(dir, 1, dev, nimbus, {}, {{"HOME", home}});
  ASSERT_FALSE(HasFatalFailure());
  const auto lines = DevLines(dir.File("dev.out"));
  const std::string dev_out = ReadFileOrEmpty(dir.File("dev.out"));

  // token-file= after nimbus=, naming a 0600 file with a 64-hex-digit token.
  const std::string token_file = Value(lines, "token-file");
  EXPECT_EQ(token_file, dir.File("cluster") + "/api-token") << dev_out;
  EXPECT_LT(IndexOf(lines, "nimbus"), IndexOf(lines, "token-file")) << dev_out;
  EXPECT_EQ(ModeOf(token_file), 0600u) << token_file;
  absl::StatusOr<net::LoadedToken> token = net::LoadTokenFile(token_file, "token-file");
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(token->token.size(), 64u);
  EXPECT_EQ(token->token.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_FALSE(token->warning.has_value()) << *token->warning;
  EXPECT_EQ(Value(lines, "export TEMPEST_TOKEN_FILE"), token_file) << dev_out;
  EXPECT_EQ(Value(lines, "ui"), absl::StrCat("http://", *nimbus, "/#token=", token->token))
      << dev_out;

  // The discovery record names the token file, and the `tempest dev` that
  // wrote it, in a private directory.
  const std::string record = home + "/.tempest/dev/" + *nimbus + ".token-file";
  EXPECT_EQ(ReadFileOrEmpty(record), absl::StrCat(token_file, "\n", dev->pid(), "\n")) << record;
  EXPECT_EQ(ModeOf(home + "/.tempest/dev"), 0700u);

  // Raw HTTP writes without the token, or with another one, get 401; reads
  // stay open; the web UI's page is served on the same port.
  std::ofstream(dir.File("small.yaml")) << SmallTopology("small");
  const std::string submission = json{{"flux", ReadFileOrEmpty(dir.File("small.yaml"))}}.dump();
  EXPECT_EQ(RawPost(*nimbus, "/api/v1/topology", submission), 401);
  EXPECT_EQ(RawPost(*nimbus, "/api/v1/topology/ghost/kill/0", "{}"), 401);
  EXPECT_EQ(RawPost(*nimbus, "/api/v1/topology/ghost/kill/0", "{}", "Bearer not-the-token"), 401);
  EXPECT_NE(RawPost(*nimbus, "/api/v1/topology/ghost/kill/0", "{}", "Bearer " + token->token),
            401);
  auto summary = RawClient(*nimbus).Get("/api/v1/topology/summary");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->status, 200) << summary->body;
  auto page = RawClient(*nimbus).Get("/");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("#token="), std::string::npos) << "the UI does not read #token=";

  int commands = 0;
  auto tempest = [&](std::vector<std::string> args, const std::map<std::string, std::string>& env) {
    std::vector<std::string> argv = {TempestBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--nimbus", *nimbus});
    return RunCommand(argv, dir.File(absl::StrCat("cmd-", ++commands)), milliseconds(60000), env);
  };

  // Nothing exported: the CLI finds the token through the discovery record.
  const auto discovered = CliEnv(home);
  CommandRun submit = tempest({"submit", dir.File("small.yaml")}, discovered);
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  CommandRun list = tempest({"list"}, discovered);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("small"), std::string::npos) << list.out;
  CommandRun kill = tempest({"kill", "small", "-w", "0", "--until-removed"}, discovered);
  EXPECT_EQ(kill.exit_code, 0) << kill.err;

  // Another HOME has no record: refused with the one-line hint.
  const std::string elsewhere = dir.File("elsewhere");
  std::filesystem::create_directories(elsewhere);
  CommandRun anonymous = tempest({"submit", dir.File("small.yaml")}, CliEnv(elsewhere));
  EXPECT_EQ(anonymous.exit_code, 1) << anonymous.out;
  EXPECT_NE(anonymous.err.find("needs an API token for this; set TEMPEST_TOKEN_FILE"),
            std::string::npos)
      << anonymous.err;

  // TEMPEST_TOKEN_FILE, as `tempest dev` exports it, from that other HOME.
  const auto exported = CliEnv(elsewhere, token_file);
  CommandRun submit2 = tempest({"submit", dir.File("small.yaml")}, exported);
  ASSERT_EQ(submit2.exit_code, 0) << submit2.err;
  CommandRun list2 = tempest({"list"}, exported);
  EXPECT_NE(list2.out.find("small"), std::string::npos) << list2.out;
  CommandRun kill2 = tempest({"kill", "small", "-w", "0", "--until-removed"}, exported);
  EXPECT_EQ(kill2.exit_code, 0) << kill2.err;

  // Stopped, `tempest dev` takes its record away (the token file stays with
  // the logs).
  dev->Stop(seconds(60));
  EXPECT_FALSE(std::filesystem::exists(record)) << record;
  EXPECT_TRUE(std::filesystem::exists(token_file));
  if (HasFailure()) {
    std::cerr << dev_out << ReadFileOrEmpty(dir.File("dev.err"));
  }
}

TEST(ClusterDevTest, TheUsersOwnAuthSettingsAreKept) {
  // A token file in the user's config: dev generates none and names that one.
  {
    TempDir dir("tempest-dev-own-token");
    const std::string home = dir.File("home");
    std::filesystem::create_directories(home);
    const std::string own = net::NewRandomToken();
    ASSERT_TRUE(net::WriteTokenFile(dir.File("own.token"), own).ok());
    std::ofstream(dir.File("tempest.yaml")) << "tempest.api.token.file: " << dir.File("own.token")
                                            << "\n";
    std::unique_ptr<os::ChildProcess> dev;
    std::optional<std::string> nimbus;
    StartDev(dir, 1, dev, nimbus, {"--config", dir.File("tempest.yaml")}, {{"HOME", home}});
    ASSERT_FALSE(HasFatalFailure());
    const auto lines = DevLines(dir.File("dev.out"));
    EXPECT_FALSE(std::filesystem::exists(dir.File("cluster") + "/api-token"));
    EXPECT_EQ(Value(lines, "token-file"), dir.File("own.token"))
        << ReadFileOrEmpty(dir.File("dev.out"));
    EXPECT_EQ(Value(lines, "ui"), absl::StrCat("http://", *nimbus, "/#token=", own));
    EXPECT_EQ(RawPost(*nimbus, "/api/v1/topology/ghost/kill/0", "{}"), 401);
    EXPECT_NE(RawPost(*nimbus, "/api/v1/topology/ghost/kill/0", "{}", "Bearer " + own), 401);
    std::ofstream(dir.File("small.yaml")) << SmallTopology("small");
    CommandRun submit = RunCommand(
        {TempestBinary(), "submit", dir.File("small.yaml"), "--nimbus", *nimbus},
        dir.File("submit"), milliseconds(60000), CliEnv(home));
    EXPECT_EQ(submit.exit_code, 0) << submit.err;
    CommandRun kill =
        RunCommand({TempestBinary(), "kill", "small", "-w", "0", "--nimbus", *nimbus},
                   dir.File("kill"), milliseconds(60000), CliEnv(home));
    EXPECT_EQ(kill.exit_code, 0) << kill.err;
    dev->Stop(seconds(60));
    EXPECT_FALSE(std::filesystem::exists(home + "/.tempest/dev/" + *nimbus + ".token-file"));
    if (HasFailure()) {
      std::cerr << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
    }
  }
  // nimbus.authorizer set (here the permissive one): auth stays as configured,
  // so no token at all.
  {
    TempDir dir("tempest-dev-own-authorizer");
    const std::string home = dir.File("home");
    std::filesystem::create_directories(home);
    std::unique_ptr<os::ChildProcess> dev;
    std::optional<std::string> nimbus;
    StartDev(dir, 1, dev, nimbus,
             {"-c", "nimbus.authorizer=org.apache.storm.security.auth.authorizer.NoopAuthorizer"},
             {{"HOME", home}});
    ASSERT_FALSE(HasFatalFailure());
    const auto lines = DevLines(dir.File("dev.out"));
    EXPECT_FALSE(std::filesystem::exists(dir.File("cluster") + "/api-token"));
    EXPECT_EQ(IndexOf(lines, "token-file"), lines.size()) << ReadFileOrEmpty(dir.File("dev.out"));
    EXPECT_EQ(IndexOf(lines, "export TEMPEST_TOKEN_FILE"), lines.size());
    EXPECT_EQ(Value(lines, "ui"), absl::StrCat("http://", *nimbus, "/"));
    EXPECT_FALSE(std::filesystem::exists(home + "/.tempest/dev/" + *nimbus + ".token-file"));
    std::ofstream(dir.File("small.yaml")) << SmallTopology("small");
    const int submitted = RawPost(*nimbus, "/api/v1/topology",
                                  json{{"flux", ReadFileOrEmpty(dir.File("small.yaml"))}}.dump());
    EXPECT_TRUE(submitted >= 200 && submitted < 300) << submitted;
    dev->Stop(seconds(60));
    if (HasFailure()) {
      std::cerr << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
    }
  }
}

}  // namespace
}  // namespace tempest::testing
