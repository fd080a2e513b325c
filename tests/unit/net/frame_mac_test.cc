// FrameMac's HMAC-SHA256 against RFC 4231's known answers, and against
// OpenSSL's own HMAC (EVP_MAC) for messages of every length up to a few
// blocks fed in uneven pieces, with keys shorter than, equal to and longer
// than SHA-256's 64-byte block.

#include "common/net/frame_mac.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <random>
#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace tempest::net {
namespace {

std::string Hex(const FrameMac::Tag& tag) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(tag.data()), tag.size()));
}

std::string MacOf(std::string_view key, std::string_view message) {
  auto mac = FrameMac::Create(key);
  EXPECT_TRUE(mac.ok()) << mac.status();
  (*mac)->Begin();
  (*mac)->Update(message.data(), message.size());
  return Hex((*mac)->Finish());
}

// What OpenSSL's provider-based HMAC says, for comparison.
std::string OpenSslMac(std::string_view key, std::string_view message) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  FrameMac::Tag tag{};
  size_t n = 0;
  EXPECT_EQ(EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                         params), 1);
  EXPECT_EQ(EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(message.data()),
                           message.size()), 1);
  EXPECT_EQ(EVP_MAC_final(ctx, tag.data(), &n, tag.size()), 1);
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return Hex(tag);
}

TEST(FrameMacTest, MatchesRfc4231KnownAnswers) {
  EXPECT_EQ(MacOf(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(MacOf("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(MacOf(std::string(20, '\xaa'), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  // Keys longer than the block are hashed first.
  EXPECT_EQ(MacOf(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(MacOf(std::string(131, '\xaa'),
                  "This is a test using a larger than block-size key and a larger than block-size "
                  "data. The key needs to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(FrameMacTest, AgreesWithOpenSslHmacForEveryLengthAndSplit) {
  std::mt19937 rng(7);
  auto bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  for (size_t key_size : {1, 20, 32, 63, 64, 65, 200}) {
    const std::string key = bytes(key_size);
    auto mac = FrameMac::Create(key);
    ASSERT_TRUE(mac.ok()) << mac.status();
    for (size_t size = 0; size <= 200; ++size) {
      const std::string message = bytes(size);
      // The same instance MACs message after message, in random pieces.
      (*mac)->Begin();
      size_t at = 0;
      while (at < size) {
        const size_t piece = std::min<size_t>(size - at, 1 + rng() % 70);
        (*mac)->Update(message.data() + at, piece);
        at += piece;
      }
      ASSERT_EQ(Hex((*mac)->Finish()), OpenSslMac(key, message))
          << "key " << key_size << " bytes, message " << size << " bytes";
    }
  }
}

TEST(FrameMacTest, BeginStartsAFreshMessage) {
  auto mac = FrameMac::Create("secret");
  ASSERT_TRUE(mac.ok());
  (*mac)->Begin();
  (*mac)->Update("abandoned", 9);
  (*mac)->Begin();
  (*mac)->Update("message", 7);
  EXPECT_EQ(Hex((*mac)->Finish()), OpenSslMac("secret", "message"));
}

TEST(FrameMacTest, RefusesAnEmptySecret) {
  EXPECT_FALSE(FrameMac::Create("").ok());
}

TEST(FrameMacTest, EqualComparesWholeTags) {
  FrameMac::Tag a{}, b{};
  a.fill(7);
  b.fill(7);
  EXPECT_TRUE(FrameMac::Equal(a.data(), b.data()));
  b[31] = 8;
  EXPECT_FALSE(FrameMac::Equal(a.data(), b.data()));
}

TEST(FrameMacTest, RandomBytesHaveTheAskedSizeAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 16; ++i) {
    const std::string r = FrameMac::RandomBytes(32);
    ASSERT_EQ(r.size(), 32u);
    seen.insert(r);
  }
  EXPECT_EQ(seen.size(), 16u);
  EXPECT_EQ(FrameMac::RandomBytes(0).size(), 0u);
  EXPECT_EQ(FrameMac::RandomBytes(1000).size(), 1000u);
}

}  // namespace
}  // namespace tempest::net
