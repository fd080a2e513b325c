// Looking up the account workers run as: uid 0 is refused whatever it is
// called, and an unknown name is a clear NotFound.

#include "common/os/privileges.h"

#include <pwd.h>

#include "gtest/gtest.h"

namespace tempest::os {
namespace {

TEST(PrivilegesTest, RootIsNeverAnUnprivilegedUser) {
  absl::StatusOr<UnixUser> by_name = LookUpUnprivilegedUser("root");
  EXPECT_TRUE(absl::IsInvalidArgument(by_name.status())) << by_name.status();
  EXPECT_NE(by_name.status().message().find("never run as root"), std::string_view::npos);
  absl::StatusOr<UnixUser> by_uid = LookUpUnprivilegedUser("0");
  EXPECT_TRUE(absl::IsInvalidArgument(by_uid.status())) << by_uid.status();
}

TEST(PrivilegesTest, UnknownUserIsNotFound) {
  absl::StatusOr<UnixUser> user = LookUpUnprivilegedUser("no-such-tempest-user");
  EXPECT_TRUE(absl::IsNotFound(user.status())) << user.status();
  EXPECT_NE(user.status().message().find("no-such-tempest-user"), std::string_view::npos);
  EXPECT_TRUE(absl::IsInvalidArgument(LookUpUnprivilegedUser("").status()));
}

TEST(PrivilegesTest, NobodyResolvesByNameAndByUid) {
  const struct passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr) << "Debian always has 'nobody'";
  absl::StatusOr<UnixUser> user = LookUpUnprivilegedUser("nobody");
  ASSERT_TRUE(user.ok()) << user.status();
  EXPECT_EQ(user->uid, nobody->pw_uid);
  EXPECT_EQ(user->gid, nobody->pw_gid);
  absl::StatusOr<UnixUser> by_uid = LookUpUnprivilegedUser(std::to_string(nobody->pw_uid));
  ASSERT_TRUE(by_uid.ok()) << by_uid.status();
  EXPECT_EQ(by_uid->name, "nobody");
}

}  // namespace
}  // namespace tempest::os
