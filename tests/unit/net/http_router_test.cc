#include "common/net/http_router.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tempest::net {
namespace {

HttpHandler Named(std::string name) {
  return [name](const HttpRequest&) { return HttpResponse::Json(200, name); };
}

TEST(HttpRouterTest, BindsParamsAndPrefersLiteralSegments) {
  HttpRouter router;
  ASSERT_TRUE(router.Add("POST", "/api/v1/topology/:id/kill/:wait", Named("kill")).ok());
  ASSERT_TRUE(router.Add("GET", "/api/v1/topology/:id", Named("topology")).ok());
  ASSERT_TRUE(router.Add("GET", "/api/v1/topology/summary", Named("summary")).ok());

  auto m = router.Route("POST", "/api/v1/topology/wc-1-1700000000/kill/30");
  ASSERT_EQ(m.kind, HttpRouter::MatchKind::kFound);
  EXPECT_EQ((*m.handler)(HttpRequest{}).body, "kill");
  EXPECT_EQ(m.params.at("id"), "wc-1-1700000000");
  EXPECT_EQ(m.params.at("wait"), "30");

  m = router.Route("GET", "/api/v1/topology/summary");
  ASSERT_EQ(m.kind, HttpRouter::MatchKind::kFound);
  EXPECT_EQ((*m.handler)(HttpRequest{}).body, "summary");
  EXPECT_TRUE(m.params.empty());

  m = router.Route("GET", "/api/v1/topology/my%20topo/");  // trailing slash ignored
  ASSERT_EQ(m.kind, HttpRouter::MatchKind::kFound);
  EXPECT_EQ(m.params.at("id"), "my topo");
}

TEST(HttpRouterTest, UnknownPathAndWrongMethod) {
  HttpRouter router;
  ASSERT_TRUE(router.Add("GET", "/api/v1/cluster/summary", Named("c")).ok());
  EXPECT_EQ(router.Route("GET", "/api/v1/nope").kind, HttpRouter::MatchKind::kNotFound);
  EXPECT_EQ(router.Route("GET", "/api/v1/cluster/summary/extra").kind,
            HttpRouter::MatchKind::kNotFound);
  auto m = router.Route("DELETE", "/api/v1/cluster/summary");
  EXPECT_EQ(m.kind, HttpRouter::MatchKind::kMethodNotAllowed);
  EXPECT_EQ(m.allowed_methods, std::vector<std::string>{"GET"});
  // A parameter with a malformed escape does not match.
  ASSERT_TRUE(router.Add("GET", "/t/:id", Named("t")).ok());
  EXPECT_EQ(router.Route("GET", "/t/%zz").kind, HttpRouter::MatchKind::kNotFound);
}

TEST(HttpRouterTest, RejectsBadAndDuplicateRoutes) {
  HttpRouter router;
  EXPECT_FALSE(router.Add("GET", "no-slash", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a/:", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a", nullptr).ok());
  ASSERT_TRUE(router.Add("GET", "/a/:id", Named("x")).ok());
  EXPECT_EQ(router.Add("GET", "/a/:other", Named("y")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(router.Add("PUT", "/a/:id", Named("z")).ok());
}

TEST(HttpRouterTest, ErrorBodyIsStormUiShapedJson) {
  const HttpResponse r = HttpResponse::Error(404, "Not Found", "no \"route\" \xff here");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.content_type, "application/json");
  const auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j.at("error"), "Not Found");
  EXPECT_NE(j.at("errorMessage").get<std::string>().find("\"route\""), std::string::npos);
}

TEST(HttpRouterTest, QueryParamsAndPercentDecoding) {
  HttpRequest request;
  request.query = "window=600&sys=true&name=a%20b+c&empty";
  EXPECT_EQ(request.QueryParam("window"), "600");
  EXPECT_EQ(request.QueryParam("name"), "a b c");
  EXPECT_EQ(request.QueryParam("empty"), "");
  EXPECT_EQ(request.QueryParam("missing"), "");
  std::string out;
  EXPECT_FALSE(HttpRouter::PercentDecode("%4", &out));
  EXPECT_FALSE(HttpRouter::PercentDecode("%g0", &out));
  EXPECT_TRUE(HttpRouter::PercentDecode("%2e%2E", &out));
  EXPECT_EQ(out, "..");
}

}  // namespace
}  // namespace tempest::net
