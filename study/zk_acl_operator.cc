#include "study/zk_acl_operator.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/core/status_macros.h"
#include "common/os/child_process.h"
#include "common/os/files.h"
#include "common/os/unique_fd.h"

namespace tempest::study {
namespace {

// Where Debian's zookeeper package keeps the client (the servers the study
// runs come from the same package).
constexpr const char* kClasspath = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar";
constexpr auto kClientDeadline = std::chrono::seconds(60);

std::string User(std::string_view user_password) {
  return std::string(user_password.substr(0, user_password.find(':')));
}

// A node that never exists: reading it makes the client print its name,
// which separates the answers of the commands around it.
std::string Marker(int i) { return absl::StrCat("/tempest-study-acl-marker-", i); }

// "'digest,'user:hash" / ": perms" pairs of getAcl's answer.
std::map<std::string, std::string> ParseAcl(const std::vector<std::string>& lines) {
  std::map<std::string, std::string> acl;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (!absl::StartsWith(l, "'") || !absl::StartsWith(lines[i + 1], ": ")) continue;
    const size_t comma = l.find(",'");
    if (comma == std::string::npos) continue;
    acl[absl::StrCat(l.substr(1, comma - 1), ":", l.substr(comma + 2))] = lines[i + 1].substr(2);
  }
  return acl;
}

// What the client is fed: `commands`, then each path's ACL read back and
// followed by its marker, then quit.
std::string ClientScript(const std::vector<std::string>& commands,
                         const std::vector<std::string>& paths) {
  std::string script;
  for (const std::string& c : commands) absl::StrAppend(&script, c, "\n");
  for (size_t i = 0; i < paths.size(); ++i) {
    absl::StrAppend(&script, "getAcl ", paths[i], "\nget ", Marker(static_cast<int>(i)), "\n");
  }
  absl::StrAppend(&script, "quit\n");
  return script;
}

// From the client's output `text`: the paths whose ACL is not `expected`
// (none when `expected` is empty), each ACL read appended to `seen` (when
// given) as "id:perms,...".
std::vector<std::string> PathsWithOtherAcls(
    const std::string& text, const std::vector<std::string>& paths,
    const std::vector<std::pair<std::string, std::string>>& expected,
    std::vector<std::string>* seen) {
  // The answer of getAcl(paths[i]) ends at the line naming marker i.
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  std::vector<std::string> wrong;
  size_t at = 0;
  const std::map<std::string, std::string> want(expected.begin(), expected.end());
  for (size_t i = 0; i < paths.size(); ++i) {
    std::vector<std::string> answer;
    while (at < lines.size() && !absl::StrContains(lines[at], Marker(static_cast<int>(i)))) {
      answer.push_back(lines[at++]);
    }
    ++at;
    const std::map<std::string, std::string> acl = ParseAcl(answer);
    if (seen != nullptr) {
      std::vector<std::string> entries;
      for (const auto& [id, perms] : acl) entries.push_back(absl::StrCat(id, ":", perms));
      seen->push_back(absl::StrJoin(entries, ","));
    }
    if (!expected.empty() && acl != want) wrong.push_back(paths[i]);
  }
  return wrong;
}

}  // namespace

std::string DigestIdentity(std::string_view user_password) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(user_password.data()), user_password.size(), digest);
  return absl::StrCat(
      User(user_password), ":",
      absl::Base64Escape(std::string(reinterpret_cast<const char*>(digest), sizeof(digest))));
}

absl::Status ZkAclOperator::RevokeWrite(const std::vector<std::string>& paths,
                                       std::vector<std::string>* previous) {
  const std::string spout = DigestIdentity(spout_);
  const std::string op = DigestIdentity(operator_);
  // The cluster's identity has every permission on what the spouts made, so
  // it reads their ACLs whole (ZooKeeper masks digests without ADMIN).
  RETURN_IF_ERROR(Run({absl::StrCat("addauth digest ", spout_)}, paths, {}, "read", previous));
  std::vector<std::string> commands = {absl::StrCat("addauth digest ", spout_),
                                       absl::StrCat("addauth digest ", operator_)};
  for (const std::string& p : paths) {
    commands.push_back(absl::StrCat("setAcl ", p, " digest:", spout, ":r,digest:", op, ":cdrwa"));
  }
  return Run(commands, paths, {{"digest:" + spout, "r"}, {"digest:" + op, "cdrwa"}}, "revoke");
}

absl::Status ZkAclOperator::Restore(const std::vector<std::string>& paths,
                                    const std::vector<std::string>& previous) {
  if (previous.size() != paths.size()) {
    return absl::InvalidArgumentError("the ACLs to restore do not match the nodes");
  }
  std::vector<std::string> commands = {absl::StrCat("addauth digest ", operator_)};
  for (size_t i = 0; i < paths.size(); ++i) {
    commands.push_back(absl::StrCat("setAcl ", paths[i], " ", previous[i]));
  }
  // The cluster's identity is on every restored node: the read-back needs it.
  commands.push_back(absl::StrCat("addauth digest ", spout_));
  std::vector<std::string> after;
  RETURN_IF_ERROR(Run(commands, paths, {}, "restore", &after));
  for (size_t i = 0; i < paths.size(); ++i) {
    if (after[i] != previous[i]) {
      return absl::FailedPreconditionError(absl::StrCat("the ACL of ", paths[i], " is ", after[i],
                                                        " after the restore, not ", previous[i]));
    }
  }
  return absl::OkStatus();
}

absl::Status ZkAclOperator::Run(const std::vector<std::string>& commands,
                                const std::vector<std::string>& paths,
                                const std::vector<std::pair<std::string, std::string>>& expected,
                                const std::string& label, std::vector<std::string>* seen) {
  const std::filesystem::path base =
      std::filesystem::path(work_dir_) / absl::StrCat("zk-acl-", ++runs_, "-", label);
  const std::string script = ClientScript(commands, paths);
  const std::string input = base.string() + ".in";
  const std::string output = base.string() + ".out";
  {
    std::ofstream in(input);
    in << script;
    if (!in) return absl::InternalError(absl::StrCat("cannot write ", input));
  }
  const os::UniqueFd stdin_fd(::open(input.c_str(), O_RDONLY | O_CLOEXEC));
  if (!stdin_fd.valid()) return absl::InternalError(absl::StrCat("cannot open ", input));
  os::ChildProcess::Options o;
  const char* java = std::getenv("TEMPEST_JAVA");
  o.argv = {java != nullptr ? java : "java",      "-cp",     kClasspath,
            "org.apache.zookeeper.ZooKeeperMain", "-server", connect_};
  o.stdin_fd = stdin_fd.get();
  o.stdout_path = output;
  o.stderr_path = "=stdout";
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(o);
  RETURN_IF_ERROR(child);
  std::optional<int> status = (*child)->WaitFor(kClientDeadline);
  if (!status.has_value()) {
    (*child)->Kill();
    return absl::DeadlineExceededError(absl::StrCat("ZooKeeper's client did not finish within ",
                                                    kClientDeadline.count(), " s (", output, ")"));
  }
  ASSIGN_OR_RETURN(const std::string text, os::ReadSmallFile(output, 8 << 20));
  const std::vector<std::string> wrong = PathsWithOtherAcls(text, paths, expected, seen);
  if (!wrong.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the ACL of ", absl::StrJoin(wrong, ", "),
                                                      " is not as the operator set it (", label,
                                                      "; ZooKeeper's client said: ", output, ")"));
  }
  return absl::OkStatus();
}

}  // namespace tempest::study
