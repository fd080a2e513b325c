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
  absl::Status RevokeWrite(const std::vector<std::string>& paths);
  // Every node in `paths` gets the ACL the spouts created it with back:
  // all permissions for their identity only.
  absl::Status Restore(const std::vector<std::string>& paths);

 private:
  // Runs the client with `commands` (one per line), then reads back each
  // path's ACL; an error names each path whose ACL is not `expected`
  // (identity -> permissions, e.g. "r" or "cdrwa").
  absl::Status Run(const std::vector<std::string>& commands, const std::vector<std::string>& paths,
                   const std::vector<std::pair<std::string, std::string>>& expected,
                   const std::string& label);

  std::string connect_;
  std::string spout_;
  std::string operator_;
  std::string work_dir_;
  int runs_ = 0;
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_ZK_ACL_OPERATOR_H_
