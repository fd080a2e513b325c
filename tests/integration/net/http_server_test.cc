// HttpServer and HttpClient over real loopback TCP (plus raw sockets for
// requests no well-behaved client would send).

#include "common/net/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/core/metrics_registry.h"
#include "common/net/event_loop.h"
#include "common/net/http_client.h"
#include "common/net/http_router.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"

namespace tempest::net {
namespace {

using std::chrono::milliseconds;

// Sends raw bytes and collects the reply until `done(reply)` or EOF or a
// bounded wait.
std::string RawExchange(int port, const std::string& request,
                        const std::function<bool(const std::string&)>& done) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    for (int i = 0; i < 1000 && !done(reply); ++i) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10000) <= 0) break;
      char buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return reply;
}

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = EventLoop::Create("http-test");
    ASSERT_TRUE(loop.ok());
    loop_ = *std::move(loop);

    std::filesystem::create_directories(dir_.File("ui/js"));
    std::ofstream(dir_.File("ui/index.html")) << "<html>tempest ui</html>";
    std::ofstream(dir_.File("ui/js/app.js")) << "let x = 1;";
    std::ofstream(dir_.File("secret.txt")) << "do not serve";

    HttpRouter router;
    ASSERT_TRUE(router
                    .Add("GET", "/api/v1/topology/:id",
                         [](const HttpRequest& r) {
                           nlohmann::json j;
                           j["id"] = r.params.at("id");
                           j["window"] = r.QueryParam("window");
                           return HttpResponse::Json(200, j.dump());
                         })
                    .ok());
    ASSERT_TRUE(router
                    .Add("POST", "/api/v1/topology/:id/kill/:wait",
                         [](const HttpRequest& r) {
                           nlohmann::json j;
                           j["topologyOperation"] = "kill";
                           j["topologyId"] = r.params.at("id");
                           j["wait"] = r.params.at("wait");
                           j["body"] = r.body;
                           j["contentType"] =
                               r.headers.count("content-type") ? r.headers.at("content-type") : "";
                           return HttpResponse::Json(200, j.dump());
                         })
                    .ok());
    ASSERT_TRUE(router
                    .Add("GET", "/boom",
                         [](const HttpRequest&) -> HttpResponse {
                           throw std::runtime_error("handler exploded");
                         })
                    .ok());
    ASSERT_TRUE(router
                    .Add("GET", "/text/:word",
                         [](const HttpRequest& r) {
                           HttpResponse response;
                           response.content_type = "text/plain";
                           response.body = "word=" + r.params.at("word");
                           return response;
                         })
                    .ok());

    HttpServerOptions options;
    options.body_limit_bytes = 1024;
    options.static_dir = dir_.File("ui");
    options.metrics = &metrics_;
    auto server = HttpServer::Create(*loop_, options, std::move(router));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_GT(server_->port(), 0);
  }

  HttpClient Client() const {
    return HttpClient("127.0.0.1", server_->port(), milliseconds(10000));
  }

  static nlohmann::json Json(const HttpClientResponse& r) {
    return nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  }

  core::MetricsRegistry metrics_;
  testing::TempDir dir_{"net-http"};
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, RoutesWithParamsQueryAndBody) {
  auto get = Client().Get("/api/v1/topology/wordcount-1-17?window=600");
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->content_type, "application/json");
  EXPECT_EQ(Json(*get)["id"], "wordcount-1-17");
  EXPECT_EQ(Json(*get)["window"], "600");

  auto post = Client().Post("/api/v1/topology/wordcount-1-17/kill/30", "{\"x\":1}");
  ASSERT_TRUE(post.ok()) << post.status();
  EXPECT_EQ(post->status, 200);
  const auto j = Json(*post);
  EXPECT_EQ(j["topologyId"], "wordcount-1-17");
  EXPECT_EQ(j["wait"], "30");
  EXPECT_EQ(j["body"], "{\"x\":1}");
  EXPECT_EQ(j["contentType"], "application/json");
}

TEST_F(HttpServerTest, UnknownRouteIs404JsonAndWrongMethodIs405) {
  auto r = Client().Get("/api/v1/nope");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->content_type, "application/json");
  const auto j = Json(*r);
  ASSERT_TRUE(j.is_object()) << r->body;
  EXPECT_EQ(j["error"], "Not Found");
  EXPECT_TRUE(j["errorMessage"].is_string());

  auto wrong = Client().Request("DELETE", "/api/v1/topology/x", "", "");
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(Json(*wrong)["error"], "Method Not Allowed");
  EXPECT_GE(metrics_.GetCounter("tempest_net_http_requests_total", {{"status", "404"}}).Value(), 1);
}

TEST_F(HttpServerTest, MalformedRequestLineIs400Json) {
  const std::string reply =
      RawExchange(server_->port(), "THIS IS NOT HTTP\r\n\r\n",
                  [](const std::string& r) { return r.find("}") != std::string::npos; });
  ASSERT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  const std::string body = reply.substr(reply.find("\r\n\r\n") + 4);
  const auto j = nlohmann::json::parse(body, nullptr, false);
  EXPECT_EQ(j["error"], "Bad Request");

  const std::string bad_version =
      RawExchange(server_->port(), "GET / HTTP/9.x\r\n\r\n",
                  [](const std::string& r) { return r.find("}") != std::string::npos; });
  EXPECT_EQ(bad_version.rfind("HTTP/1.1 400", 0), 0u) << bad_version;
}

TEST_F(HttpServerTest, OversizedBodyIs413) {
  auto r = Client().Post("/api/v1/topology/x/kill/0", std::string(64 * 1024, 'b'));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(Json(*r)["error"], "Payload Too Large");
  // The server is still fine afterwards.
  auto ok = Client().Post("/api/v1/topology/x/kill/0", std::string(100, 'b'));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);
}

TEST_F(HttpServerTest, HandlerExceptionIs500Json) {
  auto r = Client().Get("/boom");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(Json(*r)["errorMessage"], "handler exploded");
  EXPECT_EQ(Client().Get("/text/still-alive")->body, "word=still-alive");
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  const std::string two_requests =
      "GET /text/first HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /text/second HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string reply = RawExchange(server_->port(), two_requests, [](const std::string& r) {
    return r.find("word=second") != std::string::npos;
  });
  EXPECT_EQ(Count(reply, "HTTP/1.1 200"), 2) << reply;
  EXPECT_NE(reply.find("word=first"), std::string::npos);
  EXPECT_NE(reply.find("word=second"), std::string::npos);
  EXPECT_EQ(reply.find("Connection: close"), std::string::npos) << reply;
}

TEST_F(HttpServerTest, ServesStaticFilesAndRejectsTraversal) {
  auto index = Client().Get("/");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->body, "<html>tempest ui</html>");
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  auto js = Client().Get("/js/app.js");
  ASSERT_TRUE(js.ok());
  EXPECT_EQ(js->body, "let x = 1;");

  for (const char* target : {"/../secret.txt", "/js/../../secret.txt", "/%2e%2e/secret.txt",
                             "/js/..%2f..%2fsecret.txt"}) {
    auto r = Client().Get(target);
    ASSERT_TRUE(r.ok()) << target << ": " << r.status();
    EXPECT_EQ(r->status, 403) << target;
    EXPECT_EQ(r->body.find("do not serve"), std::string::npos) << target;
    EXPECT_EQ(Json(*r)["error"], "Forbidden") << target;
  }
  auto missing = Client().Get("/nope.css");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
}

TEST_F(HttpServerTest, ClientReportsUnreachableServerAndDeadline) {
  // A listener that never accepts: the handshake completes in the kernel,
  // the request is buffered, and no response ever comes.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int silent_port = ntohs(addr.sin_port);
  auto r = HttpClient("127.0.0.1", silent_port, milliseconds(300)).Get("/");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  ::close(fd);

  // Nothing listens on that port any more.
  auto refused = HttpClient("127.0.0.1", silent_port, milliseconds(2000)).Get("/");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
  EXPECT_EQ(HttpClient("127.0.0.1", silent_port).Get("relative").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(HttpServerTest, StoppedServerRefusesConnections) {
  const int port = server_->port();
  server_->Stop();
  auto r = HttpClient("127.0.0.1", port, milliseconds(2000)).Get("/");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace tempest::net
