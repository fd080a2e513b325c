// Transport secrets derived from the cluster secret: HKDF-SHA256 as RFC 5869
// defines it, one distinct 32-byte key per topology and per cluster secret,
// and the checks on the cluster secret file.

#include "common/net/transport_secret.h"

#include <sys/stat.h>

#include <fstream>
#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::net {
namespace {

using tempest::testing::TempDir;

constexpr char kClusterSecret[] = "0123456789abcdef0123456789abcdef0123456789abcdef";

std::string WriteFile(const TempDir& dir, const std::string& name, const std::string& text,
                      mode_t mode) {
  const std::string path = dir.File(name);
  std::ofstream(path, std::ios::binary) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(TransportSecretTest, HkdfMatchesRfc5869TestCase1) {
  const std::string ikm(22, '\x0b');
  const std::string salt = absl::HexStringToBytes("000102030405060708090a0b0c");
  const std::string info = absl::HexStringToBytes("f0f1f2f3f4f5f6f7f8f9");
  absl::StatusOr<std::string> okm = HkdfSha256(ikm, salt, info, 42);
  ASSERT_TRUE(okm.ok()) << okm.status();
  EXPECT_EQ(absl::BytesToHexString(*okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

TEST(TransportSecretTest, HkdfRefusesWhatItCannotDerive) {
  EXPECT_FALSE(HkdfSha256("", "salt", "info", 32).ok());
  EXPECT_FALSE(HkdfSha256("key", "salt", "info", 0).ok());
  EXPECT_FALSE(HkdfSha256("key", "salt", "info", 255 * 32 + 1).ok());
}

TEST(TransportSecretTest, EachTopologyGetsItsOwnStableSecret) {
  std::set<std::string> seen;
  for (const char* id : {"words-1-1700000000", "words-2-1700000100", "other-3-1700000200"}) {
    absl::StatusOr<std::string> a = DeriveTransportSecret(kClusterSecret, id);
    absl::StatusOr<std::string> b = DeriveTransportSecret(kClusterSecret, id);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->size(), kTransportSecretBytes);
    EXPECT_EQ(*a, *b) << id;  // every nimbus, every time: the same key
    EXPECT_EQ(a->find(kClusterSecret), std::string::npos);
    seen.insert(*a);
  }
  EXPECT_EQ(seen.size(), 3u);
  // Another cluster secret, the same topology id: another key.
  absl::StatusOr<std::string> other =
      DeriveTransportSecret("fedcba9876543210fedcba9876543210", "words-1-1700000000");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(seen.count(*other), 0u);
  EXPECT_FALSE(DeriveTransportSecret(kClusterSecret, "").ok());
}

TEST(TransportSecretTest, ClusterSecretFileIsCheckedLikeTheTokenFile) {
  TempDir dir("cluster-secret");
  absl::StatusOr<std::string> good =
      LoadClusterSecret(WriteFile(dir, "ok", std::string(kClusterSecret) + "\n", 0600));
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(*good, kClusterSecret);
  // Group- or world-readable still loads (nimbus logs a warning).
  EXPECT_TRUE(LoadClusterSecret(WriteFile(dir, "open", kClusterSecret, 0644)).ok());

  struct Bad {
    std::string path;
    std::string says;
  };
  const Bad bad[] = {
      {dir.File("missing"), "No such file"},
      {WriteFile(dir, "empty", "\n  \n", 0600), "is empty"},
      {WriteFile(dir, "huge", std::string(5000, 'a'), 0600), "larger than 4 KiB"},
      {WriteFile(dir, "short", "abc123\n", 0600), "use at least 32"},
      {WriteFile(dir, "space", "0123456789abcdef 0123456789abcdef\n", 0600), "space"},
  };
  for (const Bad& b : bad) {
    absl::StatusOr<std::string> loaded = LoadClusterSecret(b.path);
    ASSERT_FALSE(loaded.ok()) << b.path;
    const std::string message(loaded.status().message());
    EXPECT_EQ(message.rfind(std::string(kClusterSecretFileKey) + " " + b.path, 0), 0u) << message;
    EXPECT_NE(message.find(b.says), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tempest::net
