#ifndef TEMPEST_COMMON_COORD_ZK_ACL_CHECK_H_
#define TEMPEST_COMMON_COORD_ZK_ACL_CHECK_H_

// Whether a znode Tempest writes under is owned: nobody but the identities
// ZkAclPolicy itself would put on it may write, create children in, delete
// children of or re-ACL it. ZooKeeper ACLs are per node and are only set at
// create time, so a node that another client created first (open, or
// read-only) walks around every ACL Tempest sets below it: whoever holds
// CREATE on a parent plants children, whoever holds DELETE removes them.
// Daemons and spouts check their roots and every parent they create
// children in, repair what they may (setACL) and refuse the rest.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/cluster_paths.h"
#include "common/coord/zk_auth.h"
#include "common/coord/zk_session.h"

namespace tempest::coord {

// The id ZooKeeper's digest scheme gives the credential "user:password":
// "user:" + base64(sha1("user:password")), what getACL returns for an `auth`
// entry created by such a session.
std::string DigestId(std::string_view user_password);

// Permissions as zkCli spells them, e.g. "cdrwa", "r".
std::string PermLetters(int perms);
// "world:anyone (cdrwa), digest:tempest (cdrwa)": for messages. Digest ids
// are shown by user name only (the hash is the password's).
std::string DescribeAcl(const ZkAcl& acl);

// A node's ACL judged against the ACL the policy gives it.
struct ZkAclFindings {
  // Entries granting WRITE, CREATE, DELETE or ADMIN to an identity the
  // policy's ACL does not name.
  ZkAcl others;
  // What this session may do on the node (its own ids and world:anyone).
  int own_perms = 0;
  // Whether any identity the policy names appears on the node at all.
  bool trusted_present = false;
};

// `policy_acl` is ZkAclPolicy::For for the node; its `auth` entries stand for
// `session_ids` (ZkSession::Identities), every other entry for itself. The
// trusted identities are always derived from the policy, so an identity the
// policy adds is trusted here without a second list.
ZkAclFindings InspectAcl(const ZkAcl& actual, const ZkAcl& policy_acl,
                         const std::vector<ZkAclEntry>& session_ids);

enum class ZkOwnership {
  kOwned,       // nothing to do
  kRepaired,    // its ACL was open (or read-only) and is now the policy's
  kNotChecked,  // the session has no credentials: there is no identity to own it
};
struct ZkOwnershipResult {
  ZkOwnership outcome = ZkOwnership::kOwned;
  std::string detail;  // kRepaired: "ZooKeeper node P was ...; its ACL is now ..."
};

// The rule for a node Tempest writes or creates children in (a root or a
// parent). Owned when no other identity may write, create, delete or
// re-ACL it and this session holds `needed` permissions on it. Otherwise,
// with ADMIN on it (e.g. a node left open before credentials were
// configured), sets the policy's ACL for `access` and reports kRepaired;
// without ADMIN, FailedPrecondition, one line naming the path, its ACL and
// the fix. NotFound when the node is absent. `before_repair`, when given,
// runs before a repair and vetoes it with an error (which is returned).
absl::StatusOr<ZkOwnershipResult> EnsureOwnedNode(
    ZkSession& session, const std::string& path, ZkNodeAccess access, int needed,
    const ZkCall& call = {}, const std::function<absl::Status()>& before_repair = nullptr);

// For a node whose content Tempest trusts because Tempest wrote it (an offset
// node, an ownership node): FailedPrecondition naming the path and ACL when
// an identity outside the policy may change it or no identity of the policy
// appears on it (another client made it). Never repaired: its content came
// from someone else. `what` names it in the message ("offset node").
absl::Status CheckNotForeign(const ZkSession& session, const std::string& path, const ZkAcl& actual,
                             ZkNodeAccess access, std::string_view what);

// What nimbus and the supervisors run at start, after creating their
// directories: ClusterPaths::OwnedDirectories must be owned (EnsureOwnedNode,
// private, read/create/delete needed). A directory that had to be repaired
// was open to others until now, so its children are checked (CheckNotForeign)
// before the repair, which a planted record vetoes (the directory stays as
// it was, so the next start checks them again), and once more after it.
// `on_repair` gets one line per repair as it happens (for the caller's log,
// also when a later node is refused); FailedPrecondition (one line) on a
// refusal. Nothing is checked without credentials.
absl::Status EnsureClusterTreeOwned(ZkSession& session, const ClusterPaths& paths,
                                    const std::function<void(const std::string&)>& on_repair,
                                    const ZkCall& call = {});

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_ACL_CHECK_H_
