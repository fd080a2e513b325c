// Errors that name the real cause (docs/user-guide.md, "The `tempest`
// command"): a misspelt command, subcommand or option gets the closest name
// at every level, `tempest help COMMAND` shows that command's help,
// `--nimbus` pointed at something that answers HTTP but is not a nimbus
// says so, `tempest dev` whose nimbus cannot bind its port says which port
// and why, and `tempest dev` says when Ctrl-C has stopped it.

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/net/event_loop.h"
#include "common/net/http_router.h"
#include "common/net/http_server.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using std::chrono::milliseconds;

class CliErrorsTest : public ::testing::Test {
 protected:
  CommandRun Tempest(std::vector<std::string> args, milliseconds timeout = milliseconds(60000)) {
    std::vector<std::string> argv = {TempestBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandRun r = RunCommand(argv, dir_.File(absl::StrCat("cmd-", ++commands_)), timeout);
    EXPECT_TRUE(r.finished) << args[0] << " did not finish";
    return r;
  }

  TempDir dir_{"tempest-cli-errors"};
  int commands_ = 0;
};

TEST_F(CliErrorsTest, TyposAtEveryLevelGetTheClosestName) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"lst"}, "tempest: unknown command 'lst'; did you mean 'list'? (tempest --help)"},
      {{"offsets", "shw"},
       "tempest: unknown subcommand 'shw' of 'tempest offsets'; did you mean 'show'? "
       "(tempest offsets --help)"},
      {{"offsets"}, "tempest: 'tempest offsets' needs a subcommand: show, "},
      {{"list", "--jsn"},
       "tempest: unknown option '--jsn' for 'tempest list'; did you mean '--json'? "
       "(tempest list --help)"},
      {{"offsets", "show", "--zk", "127.0.0.1:1", "--tpic", "t"},
       "tempest: unknown option '--tpic' for 'tempest offsets show'; did you mean '--topic'?"},
      {{"help", "kil"}, "tempest: unknown command 'kil'; did you mean 'kill'?"},
  };
  for (const Case& c : cases) {
    CommandRun r = Tempest(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind(c.expected, 0), 0u) << c.args[0] << ": " << r.err;
  }
}

TEST_F(CliErrorsTest, HelpShowsACommandsHelpOrListsTheCommands) {
  CommandRun kill = Tempest({"help", "kill"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
  EXPECT_NE(kill.out.find("tempest kill"), std::string::npos) << kill.out;
  EXPECT_NE(kill.out.find("--wait-time-secs"), std::string::npos) << kill.out;
  EXPECT_EQ(kill.err.find("did you mean"), std::string::npos) << kill.err;

  CommandRun show = Tempest({"help", "offsets", "show"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("--topic"), std::string::npos) << show.out;

  CommandRun all = Tempest({"help"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  for (const char* command : {"submit", "rebalance", "offsets", "dev", "help"}) {
    EXPECT_NE(all.out.find(std::string("  ") + command), std::string::npos) << all.out;
  }
}

TEST_F(CliErrorsTest, StormVerbsPointToWhatExists) {
  CommandRun jar = Tempest({"jar", "app.jar", "Main"});
  EXPECT_EQ(jar.exit_code, 2);
  EXPECT_NE(jar.err.find("tempest submit TOPOLOGY.yaml"), std::string::npos) << jar.err;
  EXPECT_EQ(jar.err.find("--plugin"), std::string::npos) << jar.err;  // submit takes none
  CommandRun logviewer = Tempest({"logviewer"});
  EXPECT_NE(logviewer.err.find("{storm.local.dir}/supervisor/workers/PORT/worker.log"),
            std::string::npos)
      << logviewer.err;
  EXPECT_EQ(logviewer.err.find("tempest.log.dir"), std::string::npos) << logviewer.err;
}

// A supervisor's /metrics port answers HTTP (404 "no route" for the REST
// API's paths) but is not a nimbus.
TEST_F(CliErrorsTest, NimbusAtSomethingElseSaysItIsNotANimbus) {
  auto loop = net::EventLoop::Create("not-nimbus");
  ASSERT_TRUE(loop.ok()) << loop.status();
  net::HttpRouter router;
  ASSERT_TRUE(router
                  .Add("GET", "/metrics",
                       [](const net::HttpRequest&) {
                         net::HttpResponse r;
                         r.content_type = "text/plain";
                         r.body = "tempest_up 1\n";
                         return r;
                       })
                  .ok());
  auto server = net::HttpServer::Create(**loop, net::HttpServerOptions{}, std::move(router));
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = absl::StrCat("127.0.0.1:", (*server)->port());

  for (const std::string& nimbus : {address, "http://" + address}) {
    CommandRun r = Tempest({"list", "--nimbus", nimbus});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(address + " answered but is not a Tempest nimbus (HTTP 404: no route "
                                   "for GET /api/v1/topology/summary)"),
              std::string::npos)
        << nimbus << ": " << r.err;
    EXPECT_EQ(r.err.find("resolve"), std::string::npos) << r.err;
  }
  (*server)->Stop();
}

// A nimbus that has just rejoined the cluster may not list a topology yet
// that the leader runs. A verb by name sent to it finds the topology at the
// leader (and the write follows the leader's 503), instead of saying there
// is no such topology.
TEST_F(CliErrorsTest, ANameTheAskedNimbusDoesNotListYetIsLookedUpAtTheLeader) {
  auto loop = net::EventLoop::Create("two-nimbuses");
  ASSERT_TRUE(loop.ok()) << loop.status();
  std::atomic<int> deactivated{0};
  net::HttpRouter leader_routes;
  ASSERT_TRUE(leader_routes
                  .Add("GET", "/api/v1/topology/summary",
                       [](const net::HttpRequest&) {
                         return net::HttpResponse::Json(
                             200, R"({"topologies":[{"name":"wc","id":"wc-1-1"}]})");
                       })
                  .ok());
  ASSERT_TRUE(leader_routes
                  .Add("POST", "/api/v1/topology/wc-1-1/deactivate",
                       [&deactivated](const net::HttpRequest&) {
                         ++deactivated;
                         return net::HttpResponse::Json(200, R"({"status":"success"})");
                       })
                  .ok());
  auto leader = net::HttpServer::Create(**loop, net::HttpServerOptions{}, std::move(leader_routes));
  ASSERT_TRUE(leader.ok()) << leader.status();
  const int leader_port = (*leader)->port();
  net::HttpRouter rejoined_routes;
  ASSERT_TRUE(rejoined_routes
                  .Add("GET", "/api/v1/topology/summary",
                       [](const net::HttpRequest&) {
                         return net::HttpResponse::Json(200, R"({"topologies":[]})");
                       })
                  .ok());
  ASSERT_TRUE(rejoined_routes
                  .Add("GET", "/api/v1/nimbus/summary",
                       [leader_port](const net::HttpRequest&) {
                         return net::HttpResponse::Json(
                             200, absl::StrCat(R"({"nimbuses":[{"host":"127.0.0.1","port":)",
                                               leader_port, R"(,"status":"Leader"}]})"));
                       })
                  .ok());
  ASSERT_TRUE(rejoined_routes
                  .Add("POST", "/api/v1/topology/wc-1-1/deactivate",
                       [leader_port](const net::HttpRequest&) {
                         return net::HttpResponse::Json(
                             503, absl::StrCat(R"({"error":"Service Unavailable",)",
                                               R"("errorMessage":"not the leader",)",
                                               R"("leader":"127.0.0.1:)", leader_port, R"("})"));
                       })
                  .ok());
  auto rejoined =
      net::HttpServer::Create(**loop, net::HttpServerOptions{}, std::move(rejoined_routes));
  ASSERT_TRUE(rejoined.ok()) << rejoined.status();
  const std::string address = absl::StrCat("127.0.0.1:", (*rejoined)->port());

  CommandRun r = Tempest({"deactivate", "wc", "--nimbus", address});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Deactivated topology: wc"), std::string::npos) << r.out;
  EXPECT_EQ(deactivated.load(), 1);
  // A name neither knows is still one clear error naming the asked nimbus.
  CommandRun unknown = Tempest({"deactivate", "nope", "--nimbus", address});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.err;
  EXPECT_NE(unknown.err.find("no topology named 'nope' on nimbus " + address), std::string::npos)
      << unknown.err;
  (*rejoined)->Stop();
  (*leader)->Stop();
}

// Nimbus's port (ui.port) is held by another process: `tempest dev` says
// which daemon, which port and why, from the daemon's own log.
TEST_F(CliErrorsTest, DevWithItsUiPortTakenNamesThePort) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  CommandRun dev = Tempest({"dev", "--supervisors", "1", "--slots", "1", "--dir",
                            dir_.File("cluster"), "-c", absl::StrCat("ui.port=", port)},
                           milliseconds(240000));
  ::close(fd);
  EXPECT_EQ(dev.exit_code, 1) << dev.err;
  EXPECT_NE(dev.err.find("tempest: nimbus exited 1 before it was ready; the end of its log " +
                         dir_.File("cluster") + "/logs/nimbus.log:"),
            std::string::npos)
      << dev.err;
  EXPECT_NE(dev.err.find(absl::StrCat("ui.port ", port, "): cannot listen on 127.0.0.1:", port,
                                      ": Address already in use")),
            std::string::npos)
      << dev.err;
  EXPECT_EQ(dev.err.find("printing 'nimbus='"), std::string::npos) << dev.err;
}

// Ctrl-C on `tempest dev`: a line when it starts stopping, one when it is done.
TEST_F(CliErrorsTest, DevSaysWhenItStopsAndWhenItHasStopped) {
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(), "dev", "--supervisors", "1", "--slots", "1", "--dir",
            dir_.File("stopping"), "-c", "ui.port=0"};
  o.stdout_path = dir_.File("dev.out");
  o.stderr_path = dir_.File("dev.err");
  auto dev = os::ChildProcess::Start(o);
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_TRUE(WaitForLineWithPrefix(dir_.File("dev.out"), "ready", std::chrono::seconds(180))
                  .has_value())
      << ReadFileOrEmpty(dir_.File("dev.err"));
  ASSERT_TRUE((*dev)->SignalGroup(SIGINT));
  const std::optional<int> status = (*dev)->WaitFor(milliseconds(90000));
  ASSERT_TRUE(status.has_value()) << ReadFileOrEmpty(dir_.File("dev.err"));
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  const std::string err = ReadFileOrEmpty(dir_.File("dev.err"));
  const size_t stopping = err.find("tempest: stopping the local cluster");
  const size_t stopped = err.find("tempest: stopped; logs kept in " + dir_.File("stopping") +
                                  "/logs");
  EXPECT_NE(stopping, std::string::npos) << err;
  EXPECT_NE(stopped, std::string::npos) << err;
  EXPECT_LT(stopping, stopped) << err;
}

}  // namespace
}  // namespace tempest::testing
