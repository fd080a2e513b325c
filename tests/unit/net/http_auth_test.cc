// Bearer-token checks of the REST API: token files, the header, the
// comparison, the policy from config and the 401/403 replies.

#include "common/net/http_auth.h"

#include <sys/stat.h>

#include <fstream>

#include "common/core/config/config_loader.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"

namespace tempest::net {
namespace {

using tempest::testing::TempDir;

std::string WriteFile(const TempDir& dir, const std::string& name, const std::string& text,
                      mode_t mode) {
  const std::string path = dir.File(name);
  std::ofstream(path, std::ios::binary) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

HttpRequest Request(const std::string& method, const std::string& authorization = "") {
  HttpRequest r;
  r.method = method;
  r.path = r.target = "/api/v1/topology";
  if (!authorization.empty()) r.headers["authorization"] = authorization;
  return r;
}

TEST(HttpAuthTest, LoadsTheFirstLineOfAPrivateTokenFile) {
  TempDir dir("http-auth");
  auto token = LoadTokenFile(WriteFile(dir, "t", "  s3cret-token \n# ignored\n", 0600), "k");
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(token->token, "s3cret-token");
  EXPECT_FALSE(token->warning.has_value());
}

TEST(HttpAuthTest, WarnsAboutAReadableTokenFileAndRefusesUnusableOnes) {
  TempDir dir("http-auth");
  auto open = LoadTokenFile(WriteFile(dir, "open", "abc\n", 0644), "tempest.api.token.file");
  ASSERT_TRUE(open.ok()) << open.status();
  ASSERT_TRUE(open->warning.has_value());
  EXPECT_NE(open->warning->find("0644"), std::string::npos) << *open->warning;
  EXPECT_NE(open->warning->find("chmod 600"), std::string::npos) << *open->warning;

  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"empty", "  \n"}, {"space", "ab cd\n"}, {"big", std::string(5000, 'x')}}) {
    auto bad = LoadTokenFile(WriteFile(dir, name, text, 0600), "tempest.api.token.file");
    ASSERT_FALSE(bad.ok()) << name;
    EXPECT_NE(bad.status().message().find("tempest.api.token.file"), std::string::npos)
        << bad.status();
  }
  auto missing = LoadTokenFile(dir.File("nope"), "tempest.api.token.file");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir.File("nope")), std::string::npos);
}

TEST(HttpAuthTest, WritesPrivateRandomTokens) {
  TempDir dir("http-auth");
  const std::string a = NewRandomToken();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, NewRandomToken());
  const std::string path = dir.File("api.token");
  ASSERT_TRUE(WriteTokenFile(path, a).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto loaded = LoadTokenFile(path, "k");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->token, a);
  EXPECT_FALSE(loaded->warning.has_value());
}

TEST(HttpAuthTest, ParsesBearerHeadersAndComparesWholeTokens) {
  EXPECT_EQ(ParseBearer("Bearer abc").value_or(""), "abc");
  EXPECT_EQ(ParseBearer("  bearer   abc  ").value_or(""), "abc");
  EXPECT_FALSE(ParseBearer("Basic YWJj").has_value());
  EXPECT_FALSE(ParseBearer("Bearer").has_value());
  EXPECT_FALSE(ParseBearer("Bearer ").has_value());
  EXPECT_FALSE(ParseBearer("Bearerabc").has_value());
  EXPECT_TRUE(TokensEqual("abc", "abc"));
  EXPECT_FALSE(TokensEqual("abc", "abd"));
  EXPECT_FALSE(TokensEqual("abc", "abcd"));
  EXPECT_FALSE(TokensEqual("", "abc"));
}

TEST(HttpAuthTest, WritesNeedTheTokenAndReadsOnlyWhenConfigured) {
  HttpAuthPolicy policy{"tok", false, false};
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH"}) {
    std::optional<HttpResponse> none = CheckAuth(policy, Request(method));
    ASSERT_TRUE(none.has_value()) << method;
    EXPECT_EQ(none->status, 401);
    ASSERT_EQ(none->headers.size(), 1u);
    EXPECT_EQ(none->headers[0].first, "WWW-Authenticate");
    EXPECT_EQ(none->headers[0].second.rfind("Bearer", 0), 0u);
    auto body = nlohmann::json::parse(none->body);
    EXPECT_EQ(body["error"], "Unauthorized");
    EXPECT_NE(body["errorMessage"].get<std::string>().find("authentication required"),
              std::string::npos);
    // A wrong token is told apart from none, and the answer shows nothing of the token.
    std::optional<HttpResponse> wrong = CheckAuth(policy, Request(method, "Bearer nope"));
    ASSERT_TRUE(wrong.has_value());
    EXPECT_EQ(wrong->status, 401);
    EXPECT_EQ(nlohmann::json::parse(wrong->body)["errorMessage"],
              "the token was rejected: it is not this cluster's API token");
    // Another scheme is no bearer token at all.
    std::optional<HttpResponse> basic = CheckAuth(policy, Request(method, "Basic dG9r"));
    ASSERT_TRUE(basic.has_value());
    EXPECT_EQ(basic->status, 401);
    EXPECT_NE(basic->body.find("authentication required"), std::string::npos);
    EXPECT_FALSE(CheckAuth(policy, Request(method, "Bearer tok")).has_value());
  }
  EXPECT_FALSE(CheckAuth(policy, Request("GET")).has_value());
  policy.protect_reads = true;
  EXPECT_EQ(CheckAuth(policy, Request("GET"))->status, 401);
  EXPECT_FALSE(CheckAuth(policy, Request("GET", "Bearer tok")).has_value());
  // No token configured: nothing is checked.
  EXPECT_FALSE(CheckAuth(HttpAuthPolicy{}, Request("POST")).has_value());
  // DenyAuthorizer: a valid token reads, but changes nothing.
  HttpAuthPolicy deny{"tok", false, true};
  EXPECT_EQ(CheckAuth(deny, Request("POST", "Bearer tok"))->status, 403);
  EXPECT_EQ(CheckAuth(deny, Request("POST"))->status, 401);
  EXPECT_FALSE(CheckAuth(deny, Request("GET")).has_value());
  // The wrapper calls the handler only when allowed.
  int calls = 0;
  HttpHandler h = RequireAuth(HttpAuthPolicy{"tok"}, [&](const HttpRequest&) {
    ++calls;
    return HttpResponse::Json(200, "{}");
  });
  EXPECT_EQ(h(Request("POST")).status, 401);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(h(Request("POST", "Bearer tok")).status, 200);
  EXPECT_EQ(calls, 1);
}

TEST(HttpAuthTest, PolicyFromConfigMapsStormsAuthorizerKey) {
  TempDir dir("http-auth");
  const std::string file = WriteFile(dir, "t", "tok\n", 0600);
  auto config = [&](std::vector<std::string> kvs) {
    api::Config c = core::ConfigLoader::Defaults();
    for (const std::string& kv : kvs) EXPECT_TRUE(core::ConfigLoader::ApplyOverride(c, kv).ok());
    return c;
  };
  auto open = HttpAuthPolicyFromConfig(config({}));
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_FALSE(open->enabled());

  auto tok = HttpAuthPolicyFromConfig(config({"tempest.api.token.file=" + file,
                                              "tempest.api.auth.reads=true"}));
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->token, "tok");
  EXPECT_TRUE(tok->protect_reads);
  EXPECT_FALSE(tok->deny_writes);

  auto named = HttpAuthPolicyFromConfig(
      config({"tempest.api.token.file=" + file, "nimbus.authorizer=tempest.BearerTokenAuthorizer"}));
  ASSERT_TRUE(named.ok()) << named.status();
  auto noop = HttpAuthPolicyFromConfig(config(
      {"nimbus.authorizer=org.apache.storm.security.auth.authorizer.NoopAuthorizer"}));
  ASSERT_TRUE(noop.ok()) << noop.status();
  EXPECT_FALSE(noop->enabled());
  auto deny = HttpAuthPolicyFromConfig(config(
      {"nimbus.authorizer=org.apache.storm.security.auth.authorizer.DenyAuthorizer"}));
  ASSERT_TRUE(deny.ok()) << deny.status();
  EXPECT_TRUE(deny->deny_writes);

  auto without_file =
      HttpAuthPolicyFromConfig(config({"nimbus.authorizer=tempest.BearerTokenAuthorizer"}));
  ASSERT_FALSE(without_file.ok());
  EXPECT_NE(without_file.status().message().find("tempest.api.token.file"), std::string::npos);
  auto acl = HttpAuthPolicyFromConfig(config(
      {"nimbus.authorizer=org.apache.storm.security.auth.authorizer.SimpleACLAuthorizer"}));
  ASSERT_FALSE(acl.ok());
  EXPECT_NE(acl.status().message().find("not supported"), std::string::npos) << acl.status();
  auto missing = HttpAuthPolicyFromConfig(config({"tempest.api.token.file=" + dir.File("x")}));
  EXPECT_FALSE(missing.ok());
}

TEST(HttpAuthTest, ReadsSettingIsStrict) {
  auto config = [](const std::string& kv) {
    api::Config c = core::ConfigLoader::Defaults();
    // Set without the loader's check: the policy checks again by itself.
    const size_t eq = kv.find('=');
    c.Set(kv.substr(0, eq), api::Value(kv.substr(eq + 1)));
    return c;
  };
  for (const char* bad : {"tempest.api.auth.reads=maybe", "tempest.api.auth.reads=1",
                          "tempest.api.auth.reads="}) {
    auto policy = HttpAuthPolicyFromConfig(config(bad));
    ASSERT_FALSE(policy.ok()) << bad;
    EXPECT_NE(policy.status().message().find("tempest.api.auth.reads must be true or false"),
              std::string::npos)
        << policy.status();
  }
  api::Config one = core::ConfigLoader::Defaults();
  one.Set(kApiAuthReadsKey, api::Value(int64_t{1}));
  EXPECT_FALSE(HttpAuthPolicyFromConfig(one).ok());
  auto yes = HttpAuthPolicyFromConfig(config("tempest.api.auth.reads=TRUE"));
  ASSERT_TRUE(yes.ok()) << yes.status();
  EXPECT_TRUE(yes->protect_reads);
  api::Config listed = core::ConfigLoader::Defaults();
  listed.Set(kApiTokenFileKey, api::Value(api::ValueList{"a"}));
  EXPECT_FALSE(HttpAuthPolicyFromConfig(listed).ok());
}

TEST(HttpAuthTest, HostNamesAcceptedWhileReadsAreOpen) {
  const std::vector<std::string> allowed = {"nimbus.example.org"};
  for (const char* host : {"127.0.0.1", "127.0.0.1:8080", "10.1.2.3:80", "[::1]:8080", "[::1]",
                           "localhost", "LOCALHOST:8080", "localhost.", "nimbus.example.org:1",
                           "Nimbus.Example.Org"}) {
    EXPECT_TRUE(HostAllowed(host, allowed)) << host;
  }
  for (const char* host : {"evil.example", "evil.example:8080", "127.0.0.1.evil.example",
                           "localhost.evil.example", "nimbus.example.org.evil", "", ":8080",
                           "[::1", "[::1]x", "localhost:80x", "[evil.example]:80"}) {
    EXPECT_FALSE(HostAllowed(host, allowed)) << host;
  }
  HttpRequest evil = Request("GET");
  evil.headers["host"] = "evil.example:8080";
  std::optional<HttpResponse> refused = CheckHost(HttpAuthPolicy{}, evil);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 403);
  EXPECT_NE(refused->body.find("tempest.api.allowed.hosts"), std::string::npos);
  // Token required for reads too: a rebinding page has no token to send.
  HttpAuthPolicy closed{"tok", true, false};
  EXPECT_FALSE(CheckHost(closed, evil).has_value());
  // No Host header at all (HTTP/1.0): nothing to check.
  EXPECT_FALSE(CheckHost(HttpAuthPolicy{}, Request("GET")).has_value());

  api::Config c = core::ConfigLoader::Defaults();
  ASSERT_TRUE(core::ConfigLoader::ApplyOverride(c, "tempest.api.allowed.hosts=[Api.Example]").ok());
  ASSERT_TRUE(core::ConfigLoader::ApplyOverride(c, "ui.host=nimbus-1").ok());
  auto policy = HttpAuthPolicyFromConfig(c);
  ASSERT_TRUE(policy.ok()) << policy.status();
  for (const char* host : {"api.example:8080", "nimbus-1:8080"}) {
    evil.headers["host"] = host;
    EXPECT_FALSE(CheckHost(*policy, evil).has_value()) << host;
  }
  EXPECT_FALSE(core::ConfigLoader::ApplyOverride(c, "tempest.api.allowed.hosts=evil").ok());
}

}  // namespace
}  // namespace tempest::net
