// Where the leader's assignments get their transport secret: with a cluster
// secret (tempest.cluster.secret.file) each topology's is derived from it
// and the topology id, and an assignment holding any other secret (written
// before the file was set, or planted in ZooKeeper) is corrected at the next
// round; without one each topology keeps the random secret it was given.

#include "absl/strings/str_cat.h"
#include "common/net/transport_secret.h"
#include "nimbus/nimbus.h"
#include "tests/integration/nimbus/nimbus_fixture.h"
#include "tests/support/eventually.h"

namespace tempest::nimbus::testing {
namespace {

using tempest::testing::Eventually;

constexpr milliseconds kWait(30000);
constexpr char kClusterSecret[] = "c1d2e3f40a1b2c3d4e5f60718293a4b5c6d7e8f9";

class TransportSecretsTest : public NimbusTest {
 protected:
  std::string DerivedFor(const std::string& id) {
    absl::StatusOr<std::string> derived = net::DeriveTransportSecret(kClusterSecret, id);
    EXPECT_TRUE(derived.ok());
    return derived.value_or("");
  }
};

TEST_F(TransportSecretsTest, WithAClusterSecretEachAssignmentCarriesItsDerivedSecret) {
  NimbusOptions o = Options();
  o.cluster_secret = kClusterSecret;
  auto n = Nimbus::Create(std::move(o));
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_TRUE(Eventually(kWait, [&] { return (*n)->IsLeader(); }));
  AddSupervisor("sup-a", {6700, 6701, 6702, 6703});
  auto first = (*n)->Submit(Demo());
  auto second = (*n)->Submit(Demo("other"));
  ASSERT_TRUE(first.ok() && second.ok());
  for (const std::string& id : {*first, *second}) {
    ASSERT_TRUE(Eventually(kWait, [&] {
      auto a = StoredAssignment(id);
      return a && a->transport_secret() == DerivedFor(id);
    })) << id;
  }
  EXPECT_NE(StoredAssignment(*first)->transport_secret(),
            StoredAssignment(*second)->transport_secret());

  // Someone with write access plants a secret of their own: the next round
  // puts the derived one back.
  v1::Assignment planted = *StoredAssignment(*first);
  planted.set_transport_secret(std::string(32, 'x'));
  ASSERT_TRUE(
      zk().Set(absl::StrCat(root_, "/assignments/", *first), planted.SerializeAsString()).ok());
  ASSERT_TRUE((*n)->ReconcileNow().ok());
  EXPECT_TRUE(Eventually(kWait, [&] {
    auto a = StoredAssignment(*first);
    return a && a->transport_secret() == DerivedFor(*first);
  }));
}

TEST_F(TransportSecretsTest, WithoutAClusterSecretEachTopologyKeepsARandomSecret) {
  auto n = StartNimbus();
  ASSERT_NE(n, nullptr);
  ASSERT_TRUE(Eventually(kWait, [&] { return n->IsLeader(); }));
  AddSupervisor("sup-a", {6700, 6701});
  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok());
  std::optional<v1::Assignment> a;
  ASSERT_TRUE(Eventually(kWait, [&] {
    a = StoredAssignment(*id);
    return a.has_value() && a->transport_secret().size() == 32;
  }));
  EXPECT_NE(a->transport_secret(), DerivedFor(*id));
  ASSERT_TRUE(n->ReconcileNow().ok());
  EXPECT_EQ(StoredAssignment(*id)->transport_secret(), a->transport_secret());
}

}  // namespace
}  // namespace tempest::nimbus::testing
