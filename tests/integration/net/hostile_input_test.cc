// Hostile network input against the HTTP server and the transport:
//
// * HttpLimitsTest: an HttpServer in this process with short limits
//   (request deadline, connection cap, handler pool) over loopback TCP.
// * HostileClusterTest: a real cluster (ZooKeeper, `tempest nimbus`, a
//   supervisor and its two `tempest worker` processes) running a paced
//   topology, attacked on nimbus's REST port and a worker's transport port.
//   After every attack nimbus answers a healthy request, the workers are the
//   same processes, and at the end every tuple arrived (0 missing).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/net/event_loop.h"
#include "common/net/http_client.h"
#include "common/net/http_router.h"
#include "common/net/http_server.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/integration/net/hostile_peer.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string ChunkedWithTrailer(size_t trailer_bytes) {
  return absl::StrCat("POST /api/v1/topology HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n",
                      "Content-Type: application/json\r\n\r\n", "2\r\n{}\r\n0\r\n",
                      "X-Pad: ", std::string(trailer_bytes, 'a'), "\r\n\r\n");
}

std::string DeepJsonPost(size_t depth) {
  const std::string body =
      absl::StrCat("{\"flux\": \"x\", \"config\": {\"k\": ", std::string(depth, '['),
                   std::string(depth, ']'), "}}");
  return absl::StrCat(
      "POST /api/v1/topology HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
      "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
}

// ---------------------------------------------------------------------------
// In-process HttpServer with short limits.

class HttpLimitsTest : public ::testing::Test {
 protected:
  void Start(net::HttpServerOptions options) {
    auto loop = net::EventLoop::Create("http-limits");
    ASSERT_TRUE(loop.ok());
    loop_ = *std::move(loop);
    net::HttpRouter router;
    ASSERT_TRUE(router
                    .Add("GET", "/fast",
                         [](const net::HttpRequest&) {
                           return net::HttpResponse::Json(200, "{\"ok\":true}");
                         })
                    .ok());
    ASSERT_TRUE(router
                    .Add("POST", "/slow",
                         [this](const net::HttpRequest&) {
                           slow_started_.set_value();
                           release_.wait();
                           return net::HttpResponse::Json(200, "{\"slow\":true}");
                         })
                    .ok());
    auto server = net::HttpServer::Create(*loop_, std::move(options), std::move(router));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  void TearDown() override {
    if (!released_) release_promise_.set_value();
    server_.reset();
    loop_.reset();
  }
  bool Healthy() {
    auto r = net::HttpClient("127.0.0.1", server_->port(), seconds(5)).Get("/fast");
    return r.ok() && r->status == 200;
  }

  std::unique_ptr<net::EventLoop> loop_;
  std::unique_ptr<net::HttpServer> server_;
  std::promise<void> slow_started_;
  std::promise<void> release_promise_;
  std::shared_future<void> release_ = release_promise_.get_future().share();
  bool released_ = false;
};

TEST_F(HttpLimitsTest, SlowRequestIsClosedAtItsDeadline) {
  net::HttpServerOptions o;
  o.request_timeout = milliseconds(300);
  Start(o);
  RawConn slow(server_->port());
  ASSERT_TRUE(slow.connected());
  // Slowloris: a head that never ends, a byte now and then.
  ASSERT_TRUE(slow.Send("GET /fast HTTP/1.1\r\nHost: x\r\n"));
  bool closed = false;
  for (int i = 0; i < 50 && !closed; ++i) {
    slow.Send("X");
    closed = slow.ReadUntilClosed(milliseconds(100));
  }
  EXPECT_TRUE(closed) << "a request trickling in was not closed";
  EXPECT_TRUE(Healthy());
}

TEST_F(HttpLimitsTest, ConnectionsBeyondTheCapAreAnswered503WhileAllAreBusy) {
  net::HttpServerOptions o;
  o.max_connections = 4;
  Start(o);
  // Busy: each has begun a request (idle ones would make room instead).
  std::vector<std::unique_ptr<RawConn>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<RawConn>(server_->port()));
    ASSERT_TRUE(idle.back()->connected());
    ASSERT_TRUE(idle.back()->Send("GET /fast HTTP/1.1\r\n"));
  }
  // The server accepts asynchronously: wait until all four are its sessions,
  // i.e. until one more is refused.
  int status = 0;
  ASSERT_TRUE(Eventually(seconds(10), [&] {
    status =
        RawStatus(server_->port(), "GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    return status == 503;
  })) << status;
  idle.clear();
  EXPECT_TRUE(Eventually(seconds(10), [&] { return Healthy(); }));
}

TEST_F(HttpLimitsTest, IdleConnectionsMakeRoomForNewRequests) {
  net::HttpServerOptions o;
  o.max_connections = 4;
  Start(o);
  std::vector<std::unique_ptr<RawConn>> first, second;
  for (int i = 0; i < 4; ++i) first.push_back(std::make_unique<RawConn>(server_->port()));
  // Four more idle sockets close the first four, oldest first, instead of
  // being refused...
  for (int i = 0; i < 4; ++i) second.push_back(std::make_unique<RawConn>(server_->port()));
  int closed = 0;
  for (auto& c : first) closed += c->ReadUntilClosed(seconds(10)) ? 1 : 0;
  EXPECT_EQ(closed, 4);
  // ... and a request is answered, not 503, with all four places idle.
  EXPECT_TRUE(Healthy());
  EXPECT_TRUE(second[0]->ReadUntilClosed(seconds(10))) << "the oldest idle one made room";
}

TEST_F(HttpLimitsTest, OneAddressIsCappedAndOthersAreNot) {
  net::HttpServerOptions o;
  o.limits.max_per_peer = 3;
  Start(o);
  // Three busy connections from 127.0.0.2 (a request begun on each).
  std::vector<std::unique_ptr<RawConn>> busy;
  for (int i = 0; i < 3; ++i) {
    busy.push_back(std::make_unique<RawConn>(server_->port(), "127.0.0.2"));
    ASSERT_TRUE(busy.back()->connected());
    ASSERT_TRUE(busy.back()->Send("GET /fast HTTP/1.1\r\n"));
  }
  // A fourth from there is closed without an answer, once the server has
  // taken the first three; 127.0.0.1 is served meanwhile.
  std::string reply;
  ASSERT_TRUE(Eventually(seconds(10), [&] {
    RawConn fourth(server_->port(), "127.0.0.2");
    reply.clear();
    return fourth.connected() && fourth.ReadUntilClosed(seconds(5), &reply) && reply.empty();
  }));
  EXPECT_TRUE(Healthy());
  for (auto& c : busy) EXPECT_FALSE(c->ClosedByPeer()) << "a busy connection was closed";
}

TEST_F(HttpLimitsTest, ASlowHandlerDoesNotHoldUpOtherRequests) {
  net::HttpServerOptions o;
  o.handler_threads = 2;
  Start(o);
  auto slow = std::async(std::launch::async, [this] {
    return net::HttpClient("127.0.0.1", server_->port(), seconds(30)).Post("/slow", "{}");
  });
  slow_started_.get_future().wait();
  // The slow handler is running and blocked: others are still answered.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Healthy());
  release_promise_.set_value();
  released_ = true;
  auto r = slow.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpLimitsTest, HugeTrailerAndDeepJsonAreRefusedAndTheServerStaysUp) {
  Start({});
  EXPECT_EQ(RawStatus(server_->port(), ChunkedWithTrailer(70 << 10)), 431);
  EXPECT_EQ(RawStatus(server_->port(), DeepJsonPost(100000)), 400);
  EXPECT_TRUE(Healthy());
}

// ---------------------------------------------------------------------------
// A real cluster.

int64_t StatusField(pid_t pid, const std::string& name) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) return std::atoll(line.c_str() + name.size() + 1);
  }
  return -1;
}

// utime + stime of a process, in clock ticks.
int64_t CpuTicks(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(paren + 2));
  std::string f;
  int64_t ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::atoll(f.c_str());
  }
  return ticks;
}

struct ExhaustionOutcome {
  bool limited = false;
  int64_t cpu_ticks = -1;  // used by the process while out of descriptors
  // Used in the 3 s just before: a worker moving tuples is never idle.
  int64_t baseline_ticks = -1;
  int accepted_after = 0;  // connections answered once descriptors were back
};

// Lowers `pid`'s descriptor limit to what it uses plus a few, opens
// connections to `port` until it cannot accept any more, keeps that up for
// 3 s, closes them and restores the limit.
ExhaustionOutcome ExhaustDescriptors(pid_t pid, int port) {
  ExhaustionOutcome out;
  const int64_t start = CpuTicks(pid);
  std::this_thread::sleep_for(seconds(3));
  out.baseline_ticks = CpuTicks(pid) - start;
  rlimit old{};
  if (!NoFileLimit(pid, nullptr, &old)) return out;
  rlimit low = old;
  low.rlim_cur = static_cast<rlim_t>(OpenFds(pid) + 6);
  if (!NoFileLimit(pid, &low, nullptr)) return out;
  out.limited = true;
  std::vector<std::unique_ptr<RawConn>> conns;
  for (int i = 0; i < 40; ++i) conns.push_back(std::make_unique<RawConn>(port));
  std::this_thread::sleep_for(milliseconds(200));
  const int64_t before = CpuTicks(pid);
  std::this_thread::sleep_for(seconds(3));
  out.cpu_ticks = CpuTicks(pid) - before;
  conns.clear();
  NoFileLimit(pid, &old, nullptr);
  return out;
}

// Lines of `log` saying that descriptors ran short: a failed accept, a
// connection refused or an idle one closed to keep the descriptor reserve.
int RefusalLines(const std::string& log) {
  return CountLines(log, "accept failed") + CountLines(log, "refusing a connection") +
         CountLines(log, "closing the oldest idle connection");
}

// Descriptor exhaustion of `who` (pid, listening on `port`, logging to
// `log`): its accept loop refuses what it cannot take (the descriptor
// reserve) or backs off, reports it a few times, and never spins a core.
void ExpectAcceptBacksOff(const std::string& who, pid_t pid, int port, const std::string& log) {
  const int lines_before = RefusalLines(log);
  const ExhaustionOutcome ex = ExhaustDescriptors(pid, port);
  ASSERT_TRUE(ex.limited) << "cannot lower the RLIMIT_NOFILE of " << who;
  const int lines = RefusalLines(log) - lines_before;
  std::printf(
      "%s out of descriptors for 3 s: %lld CPU ticks (%lld in the 3 s before), %d log "
      "lines\n",
      who.c_str(), static_cast<long long>(ex.cpu_ticks), static_cast<long long>(ex.baseline_ticks),
      lines);
  EXPECT_GE(lines, 1) << who << ": the accept failures were not reported at all";
  EXPECT_LE(lines, 8) << who << ": accept failures flood the log";
  // A spinning accept loop burns a whole core (3 s of CPU in 3 s); what the
  // process does anyway is measured just before and allowed.
  EXPECT_LT(ex.cpu_ticks - ex.baseline_ticks, sysconf(_SC_CLK_TCK))
      << who << " spun while out of descriptors";
}

class HostileClusterTest : public ClusterFixture {
 protected:
  bool NimbusHealthy() {
    json s = RestGet("/api/v1/cluster/summary");
    return s.is_object() && s.contains("supervisors");
  }
  int NimbusPort() {
    const std::string a = NimbusAddress(0);
    return std::stoi(a.substr(a.rfind(':') + 1));
  }
  std::vector<pid_t> WorkerPids(const std::string& id) {
    std::vector<pid_t> pids;
    for (const WorkerSlot& w : WorkersOf(id)) pids.push_back(w.pid);
    std::sort(pids.begin(), pids.end());
    return pids;
  }
  // POSTs `body` to nimbus's submit endpoint; the status and errorMessage.
  std::pair<int, std::string> PostSubmit(const std::string& body) {
    const std::string a = NimbusAddress(0);
    net::HttpClient client(a.substr(0, a.rfind(':')), NimbusPort(), seconds(30));
    auto reply = client.Post("/api/v1/topology", body, "application/json");
    if (!reply.ok()) return {0, std::string(reply.status().message())};
    json j = json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
    return {reply->status, j.is_object() ? j.value("errorMessage", reply->body) : reply->body};
  }
  void AttackNimbus();
  void SubmitHostileTopologies();
  void AttackWorker(const WorkerSlot& worker);
};

void HostileClusterTest::AttackNimbus() {
  const int port = NimbusPort();
  const pid_t pid = nimbuses_[0]->pid();
  EXPECT_EQ(RawStatus(port, ChunkedWithTrailer(70 << 10)), 431) << "chunked trailer > 64 KiB";
  EXPECT_TRUE(NimbusHealthy());
  EXPECT_EQ(RawStatus(port, DeepJsonPost(100000)), 400) << "100k-deep JSON body";
  EXPECT_TRUE(NimbusHealthy());

  ExpectAcceptBacksOff("nimbus", pid, port, cluster_->nimbus(0).log);
  EXPECT_TRUE(Eventually(seconds(20), [&] { return NimbusHealthy(); })) << "no recovery";
}

// A Flux file with one spout and `bolts` bolts; `spout_extra` goes into the
// spout's entry (parallelism, numTasks).
std::string HostileFlux(const std::string& name, int bolts, const std::string& spout_extra) {
  std::string flux = absl::StrCat("name: ", name, "\nspouts:\n  - id: s\n    className: ",
                                  "tempest.SequenceSpout\n", spout_extra, "bolts:\n");
  for (int i = 0; i < bolts; ++i) {
    absl::StrAppend(&flux, "  - id: b", i, "\n    className: tempest.IdentityBolt\n");
  }
  absl::StrAppend(&flux, "streams:\n  - from: s\n    to: b0\n    grouping:\n      type: SHUFFLE\n");
  return flux;
}

// The hostile topologies of the adversarial pass, each sent to the REST API
// while a topology runs: a 400 with a message naming the problem, nimbus
// healthy after each, nothing stored.
void HostileClusterTest::SubmitHostileTopologies() {
  struct Case {
    const char* what;
    std::string body;
    const char* expect;  // in errorMessage
  };
  const auto flux_body = [](const std::string& flux, const std::string& name = "") {
    json b = {{"flux", flux}};
    if (!name.empty()) b["name"] = name;
    return b.dump();
  };
  json deep = json::object();
  json* at = &deep;
  for (int i = 0; i < 100; ++i) at = &((*at)["k"] = json::object());
  const std::vector<Case> cases = {
      {"parallelism 1e9", flux_body(HostileFlux("par", 1, "    parallelism: 1000000000\n")),
       "parallelism"},
      {"numTasks 1e9", flux_body(HostileFlux("tasks", 1, "    numTasks: 1000000000\n")),
       "numTasks"},
      {"parallelism 2^32+1", flux_body(HostileFlux("wrap", 1, "    parallelism: 4294967297\n")),
       "parallelism"},
      {"10,000 bolts", flux_body(HostileFlux("wide", 10000, "")), "at most"},
      {"a 20k-character name", flux_body(HostileFlux("n", 1, ""), std::string(20000, 'x')),
       "longer than"},
      {"a 200k-character name", flux_body(HostileFlux("n", 1, ""), std::string(200000, 'y')),
       "longer than"},
      {"an emoji name", flux_body(HostileFlux("n", 1, ""), "storm\xf0\x9f\x8c\xa9"), "name"},
      {"a duplicate YAML key", flux_body("name: dup\nname: again\n" + HostileFlux("d", 1, "")),
       "duplicate key"},
      {"invalid UTF-8", "{\"flux\": \"name: \xff\xfe\"}", "JSON"},
      {"a config 100 levels deep",
       json{{"flux", HostileFlux("deep", 1, "")}, {"config", deep}}.dump(), "deeper than"},
  };
  for (const Case& c : cases) {
    const auto [status, message] = PostSubmit(c.body);
    EXPECT_EQ(status, 400) << c.what << ": " << message.substr(0, 300);
    EXPECT_NE(message.find(c.expect), std::string::npos)
        << c.what << ": " << message.substr(0, 300);
    EXPECT_LT(message.size(), 2000u) << c.what << ": the error repeats the input";
    EXPECT_TRUE(NimbusHealthy()) << "after " << c.what;
  }
  json summary = RestGet("/api/v1/topology/summary");
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["topologies"].size(), 1u) << summary.dump().substr(0, 500);
}

std::string FrameHeader(uint32_t payload_bytes) {
  std::string h(48, '\0');
  h.replace(0, 4, "TMPF");
  h[4] = 1;
  for (int i = 0; i < 4; ++i) h[8 + i] = static_cast<char>((payload_bytes >> (8 * i)) & 0xff);
  return h;
}

void HostileClusterTest::AttackWorker(const WorkerSlot& worker) {
  // 16 unauthenticated headers announcing 64 MiB each: refused from the
  // header, nothing allocated.
  const int64_t rss_before = StatusField(worker.pid, "VmRSS");
  std::vector<std::unique_ptr<RawConn>> big;
  for (int i = 0; i < 16; ++i) {
    big.push_back(std::make_unique<RawConn>(worker.port));
    big.back()->Send(FrameHeader(64u << 20));
  }
  int closed = 0;
  for (auto& c : big) closed += c->ReadUntilClosed(seconds(10)) ? 1 : 0;
  const int64_t rss_after = StatusField(worker.pid, "VmRSS");
  std::printf("worker VmRSS %lld kB -> %lld kB after 16 x 64 MiB headers\n",
              static_cast<long long>(rss_before), static_cast<long long>(rss_after));
  EXPECT_EQ(closed, 16);
  EXPECT_LT(rss_after - rss_before, 8 * 1024) << "kB grown by unauthenticated headers";

  // Garbage instead of a handshake: closed.
  RawConn garbage(worker.port);
  garbage.Send(std::string(200, '\x7f'));
  EXPECT_TRUE(garbage.ReadUntilClosed(seconds(10)));

  // 200 idle connections: closed by the handshake deadline (5 s), or sooner
  // to make room for newer ones.
  std::vector<std::unique_ptr<RawConn>> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(std::make_unique<RawConn>(worker.port));
  int idle_closed = 0;
  for (auto& c : idle) idle_closed += c->ReadUntilClosed(seconds(30)) ? 1 : 0;
  EXPECT_EQ(idle_closed, 200) << "idle unauthenticated connections left open";
  idle.clear();

  // The transport server's accept loop, out of descriptors, backs off too.
  ExpectAcceptBacksOff(
      "worker", worker.pid, worker.port,
      absl::StrCat(LocalDir(worker.supervisor), "/supervisor/workers/", worker.port,
                   "/worker.log"));
  RawConn after(worker.port);
  after.Send(std::string(200, '\x7f'));
  EXPECT_TRUE(after.ReadUntilClosed(seconds(10))) << "the worker accepts no more connections";
}

TEST_F(HostileClusterTest, HostileInputLeavesNimbusAndWorkersServing) {
  ClusterSpec spec;
  spec.supervisors = 1;
  StartCluster(spec);
  ASSERT_FALSE(HasFatalFailure());
  const int64_t count = 30000;
  const std::string id = Submit(PacedExample(count, 1000), "paced.yaml");
  ASSERT_FALSE(id.empty());
  std::vector<WorkerSlot> workers;
  ASSERT_TRUE(Eventually(
      seconds(90),
      [&] {
        workers = WorkersOf(id);
        return workers.size() == 2 && workers[0].beat && workers[1].beat &&
               workers[0].beat->acked() + workers[1].beat->acked() > 0;
      },
      milliseconds(200)))
      << "the topology never acked";
  const std::vector<pid_t> pids = WorkerPids(id);

  AttackNimbus();
  SubmitHostileTopologies();
  AttackWorker(workers[0]);

  EXPECT_TRUE(NimbusHealthy());
  EXPECT_EQ(WorkerPids(id), pids) << "a worker was restarted";
  json v;
  EXPECT_TRUE(Eventually(
      seconds(120),
      [&] {
        v = Verify(VerifierLog(), count);
        return v.is_object() && v.value("missing", int64_t{-1}) == 0;
      },
      milliseconds(1000)))
      << v.dump();
  std::printf("verifier log: %s\n", v.dump().c_str());
}

}  // namespace
}  // namespace tempest::testing
