// What a process running topology code inherits: the allowlist only.
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "common/os/child_process.h"

namespace tempest::os {
namespace {

TEST(AllowlistedEnvironmentTest, KeepsTheAllowlistAndDropsEverythingElse) {
  ::setenv("TEMPEST_TOKEN", "not-for-children", 1);
  ::setenv("TEMPEST_TEST_SECRET", "not-for-children", 1);
  ::setenv("LC_TEMPEST_TEST", "kept", 1);
  ::setenv("TZ", "UTC", 1);
  ::setenv("HOME", "/somewhere/else", 1);
  const std::map<std::string, std::string> env = AllowlistedEnvironment();
  EXPECT_FALSE(env.contains("TEMPEST_TOKEN"));
  EXPECT_FALSE(env.contains("TEMPEST_TEST_SECRET"));
  EXPECT_EQ(env.at("LC_TEMPEST_TEST"), "kept");
  EXPECT_EQ(env.at("TZ"), "UTC");
  if (const char* path = std::getenv("PATH")) {
    EXPECT_EQ(env.at("PATH"), path);
  }
  // HOME is the effective account's, never the one inherited.
  const struct passwd* me = ::getpwuid(::geteuid());
  if (me != nullptr && me->pw_dir != nullptr && me->pw_dir[0] != '\0') {
    EXPECT_EQ(env.at("HOME"), me->pw_dir);
  } else {
    EXPECT_FALSE(env.contains("HOME"));
  }
  ::unsetenv("TEMPEST_TOKEN");
  ::unsetenv("TEMPEST_TEST_SECRET");
  ::unsetenv("LC_TEMPEST_TEST");
}

TEST(AllowlistedEnvironmentTest, AChildWithoutInheritanceSeesOnlyWhatItIsGiven) {
  ::setenv("TEMPEST_TEST_SECRET", "not-for-children", 1);
  char dir_template[] = "/tmp/tempest-env-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string out = std::string(dir_template) + "/env.txt";
  ChildProcess::Options o;
  o.argv = {"/usr/bin/env"};
  o.stdout_path = out;
  o.inherit_env = false;
  o.env = {{"ONLY", "this"}};
  auto child = ChildProcess::Start(o);
  ASSERT_TRUE(child.ok()) << child.status();
  auto status = (*child)->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value());
  FILE* f = std::fopen(out.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buffer[512];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), f)) text.append(buffer, n);
  std::fclose(f);
  EXPECT_EQ(text, "ONLY=this\n");
  ::unlink(out.c_str());
  ::rmdir(dir_template);
  ::unsetenv("TEMPEST_TEST_SECRET");
}

}  // namespace
}  // namespace tempest::os
