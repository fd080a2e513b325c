// The REST API's reads while ZooKeeper is unreachable (RestReadCache), the
// web UI's Content-Security-Policy and the owner check of a submission,
// without ZooKeeper.

#include <atomic>
#include <string>

#include "absl/strings/escaping.h"
#include "bolts/builtin_bolts.h"
#include "gtest/gtest.h"
#include "nimbus/rest_read_cache.h"
#include "nimbus/topology_store.h"
#include "nimbus/web_ui.h"
#include "nlohmann/json.hpp"
#include "openssl/sha.h"
#include "spout/builtin_spouts.h"
#include "tests/support/demo_flux.h"

namespace tempest::nimbus {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpRequest Get(const std::string& target) {
  HttpRequest r;
  r.method = "GET";
  r.target = r.path = target;
  return r;
}

class RestReadCacheTest : public ::testing::Test {
 protected:
  RestReadCache cache_{[this] { return reachable_.load(); }, [this] { return now_ms_.load(); },
                       /*max_entries=*/2};
  std::atomic<bool> reachable_{true};
  std::atomic<int64_t> now_ms_{1'700'000'000'000};
  int calls_ = 0;
  int status_ = 200;
  net::HttpHandler handler_ = [this](const HttpRequest& r) {
    ++calls_;
    if (status_ != 200) return HttpResponse::Error(status_, "e", "ZooKeeper timed out");
    return HttpResponse::Json(200, nlohmann::json{{"target", r.target}, {"n", calls_}}.dump());
  };
};

TEST_F(RestReadCacheTest, FreshAnswersPassThroughUnchanged) {
  HttpResponse r = cache_.Serve(Get("/a"), handler_);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"n":1,"target":"/a"})");
  EXPECT_TRUE(r.headers.empty());
}

TEST_F(RestReadCacheTest, UnreachableZooKeeperServesTheLastAnswerMarkedStale) {
  ASSERT_EQ(cache_.Serve(Get("/a?window=600"), handler_).status, 200);
  reachable_ = false;
  now_ms_ += 42'000;
  HttpResponse r = cache_.Serve(Get("/a?window=600"), handler_);
  EXPECT_EQ(calls_, 1) << "ZooKeeper was asked while unreachable";
  EXPECT_EQ(r.status, 200);
  nlohmann::json body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["n"], 1);
  EXPECT_EQ(body["stale"], true);
  EXPECT_EQ(body["asOf"], 1'700'000'000);
  EXPECT_EQ(body["staleSinceSecs"], 42);
  ASSERT_EQ(r.headers.size(), 2u);
  EXPECT_EQ(r.headers[0], std::make_pair(std::string("X-Tempest-Stale"), std::string("true")));
  EXPECT_EQ(r.headers[1], std::make_pair(std::string("Age"), std::string("42")));
  // Another query is another read: never answered, so 503 at once.
  HttpResponse unseen = cache_.Serve(Get("/a?window=10800"), handler_);
  EXPECT_EQ(unseen.status, 503);
  EXPECT_NE(unseen.body.find("ZooKeeper is unreachable"), std::string::npos);
  EXPECT_EQ(calls_, 1);
}

TEST_F(RestReadCacheTest, AFailedReadFallsBackButAClientErrorIsTheAnswer) {
  ASSERT_EQ(cache_.Serve(Get("/a"), handler_).status, 200);
  status_ = 504;
  HttpResponse r = cache_.Serve(Get("/a"), handler_);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(nlohmann::json::parse(r.body)["stale"], true);
  status_ = 404;
  EXPECT_EQ(cache_.Serve(Get("/a"), handler_).status, 404);
  status_ = 200;
  HttpResponse again = cache_.Serve(Get("/a"), handler_);
  EXPECT_FALSE(nlohmann::json::parse(again.body).contains("stale"));
}

TEST_F(RestReadCacheTest, HoldsAtMostItsBoundDroppingTheOldest) {
  for (const char* t : {"/a", "/b", "/c"}) {
    now_ms_ += 1000;
    ASSERT_EQ(cache_.Serve(Get(t), handler_).status, 200);
  }
  reachable_ = false;
  EXPECT_EQ(cache_.Serve(Get("/a"), handler_).status, 503);
  EXPECT_EQ(cache_.Serve(Get("/b"), handler_).status, 200);
  EXPECT_EQ(cache_.Serve(Get("/c"), handler_).status, 200);
}

std::string Sha256Base64(std::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

TEST(WebUiPolicyTest, AllowsOnlyThePagesOwnScriptAndStyle) {
  const std::string html = "<html><style>b{}</style><script>go()</script></html>";
  EXPECT_EQ(WebUiContentSecurityPolicy(html),
            "default-src 'none'; script-src 'sha256-" + Sha256Base64("go()") +
                "'; style-src 'sha256-" + Sha256Base64("b{}") +
                "'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
                "frame-ancestors 'none'");
  EXPECT_NE(WebUiContentSecurityPolicy("<p>x</p>").find("script-src 'none'"), std::string::npos);
  // The served page: one script, one style, and no inline handler that the
  // policy would block.
  const std::string_view page = WebUiIndexHtml();
  const std::string& policy = WebUiContentSecurityPolicy();
  EXPECT_EQ(policy.find("unsafe"), std::string::npos);
  EXPECT_NE(policy.find("script-src 'sha256-"), std::string::npos) << policy;
  for (const char* inline_handler :
       {" onclick=", " onchange=", " onload=", " oninput=", "javascript:", " style=\""}) {
    EXPECT_EQ(page.find(inline_handler), std::string_view::npos) << inline_handler;
  }
}

TEST(SubmitOwnerTest, ControlCharactersInTheOwnerAreRefused) {
  api::ComponentRegistry registry;
  ASSERT_TRUE(spout::RegisterBuiltinSpouts(registry).ok());
  ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry).ok());
  SubmitRequest r;
  r.flux_text = testing::kGenSinkFlux;
  for (const std::string& owner :
       {std::string("a\x1b[2J"), std::string("a\nb"), std::string("nul\0", 4),
        std::string("c1 \xc2\x9b"), std::string(200, 'o')}) {
    r.owner = owner;
    absl::StatusOr<v1::StormBase> base = TopologyStore::Prepare(r, registry, 1000);
    ASSERT_FALSE(base.ok()) << owner;
    EXPECT_TRUE(absl::IsInvalidArgument(base.status()));
    EXPECT_NE(base.status().message().find("owner"), std::string::npos) << base.status();
    EXPECT_EQ(base.status().message().find('\x1b'), std::string::npos) << base.status();
  }
  for (const std::string owner : {"", "alice", "DOMAIN\\bob", "\xc3\xa9lodie"}) {
    r.owner = owner;
    EXPECT_TRUE(TopologyStore::Prepare(r, registry, 1000).ok()) << owner;
  }
}

}  // namespace
}  // namespace tempest::nimbus
