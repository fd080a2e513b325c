#ifndef TEMPEST_STUDY_ZK_ACL_OPERATOR_H_
#define TEMPEST_STUDY_ZK_ACL_OPERATOR_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace tempest::study {

// ZooKeeper's digest identity of "user:password": "user:" followed by the
// base64 of the SHA-1 of "user:password", as an ACL names it. Pure.
std::string DigestIdentity(std::string_view user_password);

// An operator changing ACLs by hand, as one would with zkCli.sh: ZooKeeper's
// own command-line client (org.apache.zookeeper.ZooKeeperMain, run by java,
// or $TEMPEST_JAVA, from the Debian zookeeper package), a client entirely
// independent of Tempest's, holding two digest credentials: the spouts'
// identity (which may change the ACL of the nodes they created) and the
// operator's own. Blocks while the client runs (a few seconds at most);
// main thread.
class ZkAclOperator {
 public:
  ZkAclOperator(std::string connect, std::string spout_credentials,
                std::string operator_credentials, std::string work_dir)
      : connect_(std::move(connect)),
        spout_(std::move(spout_credentials)),
        operator_(std::move(operator_credentials)),
        work_dir_(std::move(work_dir)) {}

  // Every node in `paths` becomes readable (only readable) by the spouts'
  // identity and fully the operator's, so that only the operator can give
  // write access back. The error names each node whose ACL did not change.
  // `previous` gets each node's ACL as it was (zkCli's setAcl form), for
  // Restore: with per-topology identities the spouts' workers are not the
  // identity this operator knows by name.
  absl::Status RevokeWrite(const std::vector<std::string>& paths,
                           std::vector<std::string>* previous);
  // Every node in `paths` gets back the ACL `previous` holds for it (what
  // RevokeWrite found): whoever created it may write it again.
  absl::Status Restore(const std::vector<std::string>& paths,
                       const std::vector<std::string>& previous);

 private:
  // Runs the client with `commands` (one per line), then reads back each
  // path's ACL; an error names each path whose ACL is not `expected`
  // (identity -> permissions, e.g. "r" or "cdrwa").
  // `seen`, if given, gets each path's ACL as read back, as a
  // setAcl argument ("digest:user:hash:cdrwa,..."); `expected` empty: none
  // is checked.
  absl::Status Run(const std::vector<std::string>& commands, const std::vector<std::string>& paths,
                   const std::vector<std::pair<std::string, std::string>>& expected,
                   const std::string& label, std::vector<std::string>* seen = nullptr);

  std::string connect_;
  std::string spout_;
  std::string operator_;
  std::string work_dir_;
  int runs_ = 0;
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_ZK_ACL_OPERATOR_H_
