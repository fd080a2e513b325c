#include "common/coord/zk_acl_check.h"

#include <openssl/sha.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/coord/zk_status.h"
#include "common/core/status_macros.h"

namespace tempest::coord {
namespace {

constexpr int kModifyPerms = kZkPermWrite | kZkPermCreate | kZkPermDelete | kZkPermAdmin;

// ZooKeeper shows a digest id's hash only to a client with ADMIN on the node
// ("user:x" otherwise), as a topology's spout sees a shared zkRoot: there the
// user name is all that can be compared.
bool SameId(const ZkAclEntry& a, const ZkAclEntry& b) {
  if (a.scheme != b.scheme) return false;
  if (a.id == b.id) return true;
  if (a.scheme != "digest") return false;
  const auto user = [](const std::string& id) { return id.substr(0, id.find(':')); };
  const auto masked = [&](const std::string& id) { return id == user(id) + ":x"; };
  return (masked(a.id) || masked(b.id)) && user(a.id) == user(b.id);
}

bool IsWorld(const ZkAclEntry& e) { return e.scheme == "world" && e.id == "anyone"; }

// The policy's ACL with `auth` entries replaced by the session's ids (what
// ZooKeeper stores when the session creates a node with it).
ZkAcl Resolved(const ZkAcl& policy_acl, const std::vector<ZkAclEntry>& session_ids) {
  ZkAcl out;
  for (const ZkAclEntry& e : policy_acl) {
    if (e.scheme != "auth") {
      out.push_back(e);
      continue;
    }
    for (const ZkAclEntry& id : session_ids) out.push_back(ZkAclEntry{e.perms, id.scheme, id.id});
  }
  return out;
}

std::string DescribeId(const ZkAclEntry& e) {
  if (e.scheme == "digest") return absl::StrCat("digest:", e.id.substr(0, e.id.find(':')));
  return absl::StrCat(e.scheme, ":", e.id);
}

std::string Who(const std::vector<ZkAclEntry>& session_ids) {
  std::vector<std::string> names;
  for (const ZkAclEntry& id : session_ids) names.push_back(DescribeId(id));
  return names.empty() ? "this client" : absl::StrJoin(names, ", ");
}

// "writable by world:anyone (cdrwa)" / "not writable by digest:tempest (its ACL: ...)".
std::string Problem(const ZkAclFindings& f, const ZkAcl& actual, int needed,
                    const std::vector<ZkAclEntry>& session_ids) {
  if (!f.others.empty()) return absl::StrCat("writable by ", DescribeAcl(f.others));
  return absl::StrCat("read-only for ", Who(session_ids), " (needs ", PermLetters(needed),
                      "; its ACL: ", DescribeAcl(actual), ")");
}

}  // namespace

std::string DigestId(std::string_view user_password) {
  unsigned char hash[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(user_password.data()), user_password.size(), hash);
  const std::string_view user = user_password.substr(0, user_password.find(':'));
  return absl::StrCat(
      absl::string_view(user.data(), user.size()), ":",
      absl::Base64Escape(absl::string_view(reinterpret_cast<const char*>(hash), sizeof(hash))));
}

std::string PermLetters(int perms) {
  std::string out;
  if (perms & kZkPermCreate) out += 'c';
  if (perms & kZkPermDelete) out += 'd';
  if (perms & kZkPermRead) out += 'r';
  if (perms & kZkPermWrite) out += 'w';
  if (perms & kZkPermAdmin) out += 'a';
  return out.empty() ? "none" : out;
}

std::string DescribeAcl(const ZkAcl& acl) {
  if (acl.empty()) return "an empty ACL";
  std::vector<std::string> parts;
  for (const ZkAclEntry& e : acl) {
    parts.push_back(absl::StrCat(DescribeId(e), " (", PermLetters(e.perms), ")"));
  }
  return absl::StrJoin(parts, ", ");
}

ZkAclFindings InspectAcl(const ZkAcl& actual, const ZkAcl& policy_acl,
                         const std::vector<ZkAclEntry>& session_ids) {
  const ZkAcl trusted = Resolved(policy_acl, session_ids);
  // What the policy lets everyone do (a shared parent: read and create) is no
  // threat when some other identity may do it too.
  int world_perms = 0;
  for (const ZkAclEntry& t : trusted) {
    if (IsWorld(t)) world_perms |= t.perms;
  }
  ZkAclFindings f;
  for (const ZkAclEntry& e : actual) {
    // Trusted only for what the policy grants that identity: world:anyone
    // with every permission is not the world read a legacy node may have.
    const bool is_trusted =
        std::any_of(trusted.begin(), trusted.end(), [&](const ZkAclEntry& t) {
          return SameId(t, e) && (e.perms & ~t.perms) == 0;
        });
    const bool is_us = IsWorld(e) || std::any_of(session_ids.begin(), session_ids.end(),
                                                 [&](const ZkAclEntry& t) { return SameId(t, e); });
    if (is_us) f.own_perms |= e.perms;
    if (is_trusted) f.trusted_present = true;
    if (!is_trusted && (e.perms & kModifyPerms & ~world_perms) != 0) f.others.push_back(e);
  }
  return f;
}

namespace {

// One read, judgement and (maybe) repair. `raced`: the ACL changed between
// the read and the repair (e.g. another daemon repaired it first).
absl::StatusOr<ZkOwnershipResult> EnsureOwnedOnce(
    ZkSession& session, const std::string& path, ZkNodeAccess access, int needed,
    const ZkCall& call, const std::function<absl::Status()>& before_repair, bool& raced) {
  const ZkAclPolicy policy = session.acl_policy();
  const std::vector<ZkAclEntry> ids = session.Identities();
  absl::StatusOr<std::pair<ZkAcl, ZkStat>> acl = session.GetAcl(path, call);
  if (absl::IsPermissionDenied(acl.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat("ZooKeeper node ", path, " does not let ", Who(ids),
                     " read its ACL (another identity made it); refusing to use it: remove it"));
  }
  RETURN_IF_ERROR(acl.status());
  const ZkAcl& actual = acl->first;
  const ZkAclFindings f = InspectAcl(actual, policy.For(access), ids);
  if (f.others.empty() && (f.own_perms & needed) == needed) {
    return ZkOwnershipResult{ZkOwnership::kOwned, ""};
  }
  const ZkAcl wanted = policy.For(access);
  const std::string wanted_text = DescribeAcl(Resolved(wanted, ids));
  const std::string problem = Problem(f, actual, needed, ids);
  if ((f.own_perms & kZkPermAdmin) == 0) {
    return absl::FailedPreconditionError(absl::StrCat("ZooKeeper node ", path, " is ", problem,
                                                      "; refusing to use it: remove it or set "
                                                      "its ACL to ",
                                                      wanted_text));
  }
  if (before_repair) {
    RETURN_IF_ERROR(before_repair());
  }
  // Version-checked: an ACL someone changed since we read it is judged again.
  if (absl::Status s = session.SetAcl(path, wanted, acl->second.aversion, call); !s.ok()) {
    raced = ZkCodeOf(s) == ZBADVERSION;
    return absl::FailedPreconditionError(absl::StrCat("ZooKeeper node ", path, " is ", problem,
                                                      "; setting its ACL to ", wanted_text,
                                                      " failed: ", s.message()));
  }
  return ZkOwnershipResult{
      ZkOwnership::kRepaired,
      absl::StrCat("ZooKeeper node ", path, " was ", problem, "; its ACL is now ", wanted_text)};
}

}  // namespace

absl::StatusOr<ZkOwnershipResult> EnsureOwnedNode(
    ZkSession& session, const std::string& path, ZkNodeAccess access, int needed,
    const ZkCall& call, const std::function<absl::Status()>& before_repair) {
  if (!session.acl_policy().authenticated) {
    return ZkOwnershipResult{ZkOwnership::kNotChecked, ""};
  }
  // Bounded: each retry means someone else changed the ACL in between.
  absl::StatusOr<ZkOwnershipResult> r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    bool raced = false;
    r = EnsureOwnedOnce(session, path, access, needed, call, before_repair, raced);
    if (!raced) break;
  }
  return r;
}

absl::Status CheckNotForeign(const ZkSession& session, const std::string& path, const ZkAcl& actual,
                             ZkNodeAccess access, std::string_view what) {
  const ZkAclPolicy policy = session.acl_policy();
  if (!policy.authenticated) return absl::OkStatus();
  const std::vector<ZkAclEntry> ids = session.Identities();
  const ZkAclFindings f = InspectAcl(actual, policy.For(access), ids);
  if (f.others.empty() && f.trusted_present) return absl::OkStatus();
  const std::string why =
      !f.others.empty()
          ? absl::StrCat("is writable by ", DescribeAcl(f.others))
          : absl::StrCat("was made by another identity (its ACL: ", DescribeAcl(actual), ")");
  return absl::FailedPreconditionError(absl::StrCat(
      "ZooKeeper ", absl::string_view(what.data(), what.size()), " ", path, " ", why,
      "; refusing to use it: another client may have written it; remove it (or, if it is "
      "genuine, set its ACL to ",
      DescribeAcl(Resolved(policy.For(access), ids)), ")"));
}

absl::Status EnsureClusterTreeOwned(ZkSession& session, const ClusterPaths& paths,
                                    const std::function<void(const std::string&)>& on_repair,
                                    const ZkCall& call) {
  const std::vector<std::string> dirs = paths.OwnedDirectories();
  for (const std::string& dir : dirs) {
    const auto children_are_ours = [&]() -> absl::Status {
      ASSIGN_OR_RETURN(const std::vector<std::string> children, session.Children(dir, call));
      for (const std::string& child : children) {
        const std::string path = absl::StrCat(dir, "/", child);
        // The root's directories get their own check (and repair) next.
        if (std::find(dirs.begin(), dirs.end(), path) != dirs.end()) continue;
        absl::StatusOr<std::pair<ZkAcl, ZkStat>> acl = session.GetAcl(path, call);
        if (absl::IsNotFound(acl.status())) continue;
        RETURN_IF_ERROR(acl.status());
        RETURN_IF_ERROR(CheckNotForeign(session, path, acl->first, ZkNodeAccess::kPrivate, "node"));
      }
      return absl::OkStatus();
    };
    absl::StatusOr<ZkOwnershipResult> r =
        EnsureOwnedNode(session, dir, ZkNodeAccess::kPrivate,
                        kZkPermRead | kZkPermCreate | kZkPermDelete, call, children_are_ours);
    if (absl::IsNotFound(r.status())) continue;
    RETURN_IF_ERROR(r.status());
    if (r->outcome != ZkOwnership::kRepaired) continue;
    on_repair(r->detail);
    // A child planted between the check and the repair.
    RETURN_IF_ERROR(children_are_ours());
  }
  return absl::OkStatus();
}

}  // namespace tempest::coord
