// `tempest upgrade OLD NEW.yaml [--wait SECS] [--resources DIR] [--filter F]
// [--env-filter] [--until-running-timeout S] [-c k=v]...`: replaces the
// running Kafka topology OLD by NEW (another name: blue/green; rolling back
// is the same command the other way) with one owner per partition at every
// moment. NEW is submitted inactive and waits with its workers up; OLD is
// killed with its message timeout as the wait (its spouts deactivate and
// commit, its in-flight trees finish, its spouts' Close commits what
// completed) and is waited out until removed; OLD's committed offsets are
// carried to where NEW keeps them if that differs (ZooKeeper and consumer
// groups, either way: upgrade_pairing.h); then NEW is activated and
// reads on from OLD's commits. Records OLD had not committed are read again
// by NEW: none is lost, at most what was in flight is read twice.
//
// Each step prints one line; a failed step says in which state it left the
// cluster and what to do. Exit 1 for a failure, 2 for usage errors.
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/nimbus_client.h"
#include "cli/offsets/offset_carry.h"
#include "cli/offsets/offset_migration.h"
#include "cli/offsets/offsets_command.h"
#include "cli/topology_submit.h"
#include "cli/upgrade_pairing.h"
#include "common/api/component_registry.h"
#include "common/core/flux/stored_topology.h"
#include "common/core/log_text.h"
#include "common/core/status_macros.h"
#include "common/kafka/group_offsets_admin.h"
#include "nlohmann/json.hpp"
#include "spout/kafka/kafka_lag.h"
#include "spout/kafka/offsets/offset_admin.h"

namespace tempest::cli {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct UpgradeArgs {
  std::string old_name;
  SubmitOptions submit;  // NEW: always inactive, waited for until running
  int wait_secs = -1;    // -1: OLD's topology.message.timeout.secs
};

// OLD's, from its topology page (kafkaSpouts).
absl::StatusOr<std::vector<SpoutSite>> SitesOfPage(const json& page) {
  std::vector<SpoutSite> out;
  for (const json& s : page.value("kafkaSpouts", json::array())) {
    SpoutSite site;
    site.component = s.value("spoutId", "");
    if (s.contains("errorInfo")) {
      return absl::FailedPreconditionError(
          absl::StrCat("its spout ", site.component, " does not load: ", s.value("errorInfo", "")));
    }
    for (const json& t : s.value("topics", json::array())) site.topics.insert(t.get<std::string>());
    site.in_kafka = s.value("offsetsIn", "") == "kafka";
    site.zk_connect = s.value("zkConnect", "");
    site.zk_root = s.value("zkRoot", "");
    site.id = s.value("id", "");
    site.group = s.value("groupId", "");
    site.bootstrap = s.value("bootstrapServers", "");
    out.push_back(std::move(site));
  }
  return out;
}

// NEW's, from its definition as checked here.
absl::StatusOr<std::vector<SpoutSite>> SitesOfDefinition(const v1::StormBase& base) {
  ASSIGN_OR_RETURN(core::TopologyDef def, core::LoadStoredTopology(base));
  std::vector<SpoutSite> out;
  for (const spout::SpoutLagTarget& t : spout::KafkaSpoutsOf(def)) {
    const spout::KafkaSpoutConfig& c = t.config;
    // A ZooKeeper the file leaves to the cluster does not resolve here; only
    // the root and id are compared.
    if (!t.status.ok() && c.topics.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("its spout ", t.component, ": ", t.status.message()));
    }
    SpoutSite site{t.component,
                   {c.topics.begin(), c.topics.end()},
                   c.offsets_in_kafka(),
                   t.zk_connect,
                   c.zk_root,
                   c.id,
                   c.group_id,
                   c.bootstrap_servers,
                   /*ignores_commits=*/"",
                   /*starts_at_latest=*/false};
    if (c.ignore_zk_offsets) {
      site.starts_at_latest = c.start_offset_time == -1;
      site.ignores_commits =
          c.offsets_in_kafka()
              ? absl::StrCat("firstPollOffsetStrategy ",
                             site.starts_at_latest ? "LATEST" : "EARLIEST")
              : std::string("ignoreZkOffsets: true");
    }
    out.push_back(std::move(site));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<kafka::GroupOffsetsAdmin>> GroupAdmin(const std::string& bootstrap) {
  kafka::GroupOffsetsAdminOptions options;
  options.bootstrap_servers = bootstrap;
  options.client_id = "tempest-upgrade";
  return kafka::GroupOffsetsAdmin::Create(options);
}

// Dev Kafka refuses commits from outside a group any member ever joined, and
// Kafka while one is in it: checked before anything changes.
absl::Status CheckGroupsOpen(const std::vector<SpoutPair>& pairs) {
  for (const SpoutPair& p : pairs) {
    if (!p.carry() || !p.new_site.in_kafka) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<kafka::GroupOffsetsAdmin> admin,
                     GroupAdmin(p.new_site.bootstrap));
    ASSIGN_OR_RETURN(kafka::ConsumerGroupMembers members, admin->Members(p.new_site.group));
    if (members.InUse()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "consumer group ", p.new_site.group, " of NEW has members (or had, on dev Kafka), ",
          "so it would refuse OLD's offsets: give NEW a group.id no consumer has used"));
    }
  }
  return absl::OkStatus();
}

// A ZooKeeper location NEW will read from must not be read by a running
// spout already (another topology): checked before anything changes where
// the file names NEW's ZooKeeper (one left to the cluster is checked at the
// carry).
absl::Status CheckZkTargetsFree(const std::vector<SpoutPair>& pairs, const GlobalOptions& globals) {
  for (const SpoutPair& p : pairs) {
    if (!p.carry() || p.new_site.in_kafka || p.new_site.zk_connect.empty()) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<coord::ZkSession> zk,
                     ConnectOffsetsZookeeper(p.new_site.zk_connect, globals));
    RETURN_IF_ERROR(CheckZkUnowned({zk.get(), p.new_site.zk_root, p.new_site.id}));
  }
  return absl::OkStatus();
}

// Step 4 for a pair from ZooKeeper into a group: planned, written and read
// back as `tempest migrate offsets --execute` does.
absl::StatusOr<int> CarryZkToGroup(const SpoutPair& p, coord::ZkSession& zk,
                                   kafka::GroupOffsetsAdmin& admin) {
  OffsetMigrationRequest request;
  request.zk_root = p.old_site.zk_root;
  request.spout_id = p.old_site.id;
  request.bootstrap_servers = p.new_site.bootstrap;
  request.group = p.new_site.group;
  request.topics = {p.old_site.topics.begin(), p.old_site.topics.end()};
  absl::StatusOr<OffsetMigrationPlan> plan = PlanOffsetMigration(zk, admin, request);
  if (absl::IsNotFound(plan.status())) return 0;  // OLD never committed: nothing to carry
  RETURN_IF_ERROR(plan.status());
  if (!plan->refusals.empty()) {
    return absl::FailedPreconditionError(absl::StrJoin(plan->refusals, "; "));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> problems, ExecuteOffsetMigration(zk, admin, *plan));
  if (!problems.empty()) {
    return absl::DataLossError(absl::StrCat("read back differs: ", absl::StrJoin(problems, "; ")));
  }
  return plan->Writes();
}

// Step 4 for one pair: OLD's committed offsets where NEW reads them, by the
// carry the pair needs (cli/offsets/offset_carry.h beside `migrate offsets`).
absl::StatusOr<int> CarryOffsets(const SpoutPair& p, const GlobalOptions& globals) {
  const std::vector<std::string> topics(p.old_site.topics.begin(), p.old_site.topics.end());
  std::unique_ptr<coord::ZkSession> old_zk, new_zk;
  std::unique_ptr<kafka::GroupOffsetsAdmin> old_admin, new_admin;
  if (!p.old_site.in_kafka) {
    ASSIGN_OR_RETURN(old_zk, ConnectOffsetsZookeeper(p.old_site.zk_connect, globals));
  } else {
    ASSIGN_OR_RETURN(old_admin, GroupAdmin(p.old_site.bootstrap));
  }
  if (!p.new_site.in_kafka) {
    ASSIGN_OR_RETURN(new_zk, ConnectOffsetsZookeeper(p.new_site.zk_connect, globals));
  } else {
    ASSIGN_OR_RETURN(new_admin, GroupAdmin(p.new_site.bootstrap));
  }
  const ZkOffsetsSite old_zk_site{old_zk.get(), p.old_site.zk_root, p.old_site.id};
  const ZkOffsetsSite new_zk_site{new_zk.get(), p.new_site.zk_root, p.new_site.id};
  const GroupOffsetsSite old_group{old_admin.get(), p.old_site.bootstrap, p.old_site.group};
  const GroupOffsetsSite new_group{new_admin.get(), p.new_site.bootstrap, p.new_site.group};
  switch (p.carry_kind()) {
    case OffsetCarry::kNone:
      return 0;
    case OffsetCarry::kZkToGroup:
      return CarryZkToGroup(p, *old_zk, *new_admin);
    case OffsetCarry::kGroupToZk:
      return CarryGroupToZk(old_group, new_zk_site, topics);
    case OffsetCarry::kZkToZk:
      return CarryZkToZk(old_zk_site, new_zk_site, topics);
    case OffsetCarry::kGroupToGroup:
      return CarryGroupToGroup(old_group, new_group, topics);
  }
  return absl::InternalError("unknown carry");
}

void Step(int n, const std::string& text) {
  std::printf("upgrade %d/5: %s\n", n, text.c_str());
  std::fflush(stdout);
}

// A failed step: what went wrong, the state it leaves, what to do.
int StepFailed(int n, const absl::Status& why, const std::string& state) {
  return Fail(absl::StrCat("upgrade step ", n, " failed: ", why.message(), ". ", state));
}

// What step 1 found, for the steps after it.
struct UpgradePlan {
  std::string new_name;
  std::string old_id;
  int wait_secs = 0;
  std::vector<SpoutPair> pairs;
  nimbus::SubmitRequest request;
};

// Step 1: NEW checked here as submit checks it, OLD's spouts read from
// nimbus, the two paired. Changes nothing.
absl::StatusOr<UpgradePlan> PlanUpgrade(const UpgradeArgs& args, nimbus::SubmitRequest request,
                                        const NimbusClient& client, const GlobalOptions& globals) {
  UpgradePlan plan;
  plan.request = std::move(request);
  RETURN_IF_ERROR(MakeSelfContained(args.submit, plan.request));
  ASSIGN_OR_RETURN(
      const v1::StormBase base,
      nimbus::TopologyStore::Prepare(plan.request, api::ComponentRegistry::Global(), 0));
  plan.new_name = base.name();
  if (plan.new_name == args.old_name) {
    return absl::InvalidArgumentError(
        absl::StrCat("NEW is called ", plan.new_name,
                     " as OLD is: give it another name (--name, or the "
                     "Flux name), e.g. ",
                     plan.new_name, "-v2"));
  }
  ASSIGN_OR_RETURN(plan.old_id, client.IdOf(args.old_name));
  ASSIGN_OR_RETURN(const json page, client.Get(absl::StrCat("/api/v1/topology/", plan.old_id)));
  if (page.value("status", "") == "KILLED") {
    return absl::FailedPreconditionError(absl::StrCat(args.old_name, " is being killed already"));
  }
  ASSIGN_OR_RETURN(const std::vector<SpoutSite> old_sites, SitesOfPage(page));
  ASSIGN_OR_RETURN(const std::vector<SpoutSite> new_sites, SitesOfDefinition(base));
  ASSIGN_OR_RETURN(plan.pairs, PairSpouts(old_sites, new_sites));
  RETURN_IF_ERROR(CheckGroupsOpen(plan.pairs));
  RETURN_IF_ERROR(CheckZkTargetsFree(plan.pairs, globals));
  plan.wait_secs = args.wait_secs >= 0 ? args.wait_secs : page.value("msgTimeout", 30);
  return plan;
}

std::string PairsText(const std::vector<SpoutPair>& pairs) {
  std::vector<std::string> parts;
  for (const SpoutPair& p : pairs) parts.push_back(p.Text());
  return absl::StrJoin(parts, "; ");
}

// What the user runs by hand for one pair's carry when step 4 could not.
std::string CarryByHand(const SpoutPair& p) {
  const SpoutSite& o = p.old_site;
  const SpoutSite& n = p.new_site;
  switch (p.carry_kind()) {
    case OffsetCarry::kNone:
      return "";
    case OffsetCarry::kZkToGroup:
      return absl::StrCat("tempest migrate offsets --zk ", o.zk_connect, " --root ", o.zk_root,
                          " --id ", o.id, " --bootstrap ", n.bootstrap, " --group ", n.group,
                          " --execute");
    case OffsetCarry::kGroupToZk:
    case OffsetCarry::kZkToZk:
      return absl::StrCat("tempest offsets set --zk ", n.zk_connect, " --root ", n.zk_root,
                          " --id ", n.id, " --from-file F --execute (F: the ",
                          "topic,partition,offset rows of ", o.Location(), ")");
    case OffsetCarry::kGroupToGroup:
      return absl::StrCat("kafka-consumer-groups --reset-offsets --group ", n.group,
                          " --from-file F --execute (F: the committed offsets of ", o.Location(),
                          ")");
  }
  return "";
}

// What the user runs by hand when step 4 could not: the carries, then activate.
std::string ByHand(const UpgradePlan& plan) {
  std::vector<std::string> commands;
  for (const SpoutPair& p : plan.pairs) {
    if (p.carry()) commands.push_back(CarryByHand(p));
  }
  commands.push_back(absl::StrCat("tempest activate ", plan.new_name));
  return absl::StrJoin(commands, ", then ");
}

// NEW's ZooKeeper as nimbus resolved it (its file may leave it to the
// cluster), from NEW's topology page, for the carries that write there.
absl::Status ResolveNewZookeeper(UpgradePlan& plan, const std::string& new_id,
                                 const NimbusClient& client) {
  ASSIGN_OR_RETURN(const json page, client.Get(absl::StrCat("/api/v1/topology/", new_id)));
  ASSIGN_OR_RETURN(const std::vector<SpoutSite> sites, SitesOfPage(page));
  for (SpoutPair& p : plan.pairs) {
    for (const SpoutSite& s : sites) {
      if (s.component == p.new_site.component) p.new_site.zk_connect = s.zk_connect;
    }
    if (!p.new_site.in_kafka && p.carry() && p.new_site.zk_connect.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "nimbus does not say which ZooKeeper NEW's spout ", p.new_site.component, " uses"));
    }
  }
  return absl::OkStatus();
}

// Step 3: OLD killed with the wait and waited out until nimbus removed it
// and its workers stopped (their spouts' Close committed what completed).
absl::Status StopOld(const UpgradePlan& plan, const std::string& old_name,
                     const NimbusClient& client) {
  RETURN_IF_ERROR(
      client
          .Post(absl::StrCat("/api/v1/topology/", plan.old_id, "/kill/", plan.wait_secs),
                json::object())
          .status());
  const auto timeout = std::chrono::seconds(plan.wait_secs + 120);
  return WaitWithProgress(timeout, [&]() -> absl::StatusOr<WaitPoll> {
    absl::StatusOr<json> t = client.Get(absl::StrCat("/api/v1/topology/", plan.old_id));
    WaitPoll p;
    p.done = absl::IsNotFound(t.status());
    if (p.done) return p;
    RETURN_IF_ERROR(t.status());
    p.progress =
        absl::StrCat(old_name, ": KILLED, removed in ", t->value("removeInSeconds", 0), " s");
    return p;
  });
}

// One of OLD's ZooKeeper spouts: waits until no partition has an owner.
absl::Status WaitZkUnowned(const SpoutPair& p, const GlobalOptions& globals,
                           std::chrono::seconds timeout) {
  ASSIGN_OR_RETURN(std::unique_ptr<coord::ZkSession> zk,
                   ConnectOffsetsZookeeper(p.old_site.zk_connect, globals));
  return WaitWithProgress(timeout, [&]() -> absl::StatusOr<WaitPoll> {
    absl::StatusOr<std::vector<spout::StoredPartitionOffset>> stored =
        spout::ListStoredOffsets(*zk, p.old_site.zk_root, p.old_site.id);
    WaitPoll poll;
    poll.done = absl::IsNotFound(stored.status());
    if (poll.done) return poll;
    RETURN_IF_ERROR(stored.status());
    int owned = 0;
    for (const spout::StoredPartitionOffset& o : *stored) owned += o.owner.empty() ? 0 : 1;
    poll.done = owned == 0;
    poll.progress = absl::StrCat(p.old_site.component, ": ", core::Counted(owned, "partition"),
                                 " still owned by a stopping worker");
    return poll;
  });
}

// One of OLD's consumer-group spouts whose commits are carried: waits until
// the coordinator lists no member. A broker that cannot list members (dev
// Kafka) cannot be asked; there the kill wait, after which nimbus removed
// OLD, is what let its spouts commit what completed.
absl::Status WaitGroupEmpty(const SpoutPair& p, std::chrono::seconds timeout) {
  ASSIGN_OR_RETURN(std::unique_ptr<kafka::GroupOffsetsAdmin> admin,
                   GroupAdmin(p.old_site.bootstrap));
  return WaitWithProgress(timeout, [&]() -> absl::StatusOr<WaitPoll> {
    ASSIGN_OR_RETURN(const kafka::ConsumerGroupMembers members, admin->Members(p.old_site.group));
    WaitPoll poll;
    poll.done = !members.listed || members.members.empty();
    poll.progress =
        absl::StrCat(p.old_site.component, ": consumer group ", p.old_site.group, " still has ",
                     core::Counted(static_cast<int64_t>(members.members.size()), "member"));
    return poll;
  });
}

// The rest of step 3: nimbus removes OLD before its workers have stopped,
// so waits (at most `timeout` each) until none of OLD's spouts still reads:
// no ZooKeeper partition has an owner (a spout's close commits before it
// gives a partition up, so its last commits are in), and a group whose
// commits are carried has no member. A group that stays where it is needs
// no wait: its coordinator fences the old members when NEW's join.
absl::Status WaitUntilUnowned(const UpgradePlan& plan, const GlobalOptions& globals,
                              std::chrono::seconds timeout) {
  for (const SpoutPair& p : plan.pairs) {
    if (!p.old_site.in_kafka) {
      RETURN_IF_ERROR(WaitZkUnowned(p, globals, timeout));
    } else if (p.carry()) {
      RETURN_IF_ERROR(WaitGroupEmpty(p, timeout));
    }
  }
  return absl::OkStatus();
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Step 2: NEW submitted inactive and waited for until every executor runs.
// NEW's ZooKeeper, which the carries into it need, is then read from nimbus.
absl::StatusOr<std::string> SubmitNew(const UpgradeArgs& args, UpgradePlan& plan,
                                      const NimbusClient& client) {
  ASSIGN_OR_RETURN(
      const json reply,
      PostWhenNimbusReady(client, "/api/v1/topology", SubmitBody(args.submit, plan.request),
                          std::chrono::seconds(args.submit.wait_for_nimbus_secs)));
  const std::string id = reply.value("topologyId", "");
  RETURN_IF_ERROR(
      WaitUntilRunning(client, id, std::chrono::seconds(args.submit.until_running_timeout_secs)));
  RETURN_IF_ERROR(ResolveNewZookeeper(plan, id, client));
  return id;
}

// Step 4: each pair's offsets carried where they must be; how many.
absl::StatusOr<int64_t> CarryAll(const UpgradePlan& plan, const GlobalOptions& globals) {
  int64_t carried = 0;
  for (const SpoutPair& p : plan.pairs) {
    if (!p.carry()) continue;
    ASSIGN_OR_RETURN(const int n, CarryOffsets(p, globals));
    carried += n;
  }
  return carried;
}

// Steps 2 to 5, after step 1 planned them.
int CutOver(const UpgradeArgs& args, UpgradePlan& plan, const NimbusClient& client,
            const GlobalOptions& globals) {
  const std::string& old_name = args.old_name;
  const std::string& new_name = plan.new_name;
  absl::StatusOr<std::string> new_id = SubmitNew(args, plan, client);
  if (!new_id.ok()) {
    return StepFailed(2, new_id.status(),
                      absl::StrCat(old_name, " runs on untouched; ", new_name,
                                   ", if submitted, is INACTIVE (its spouts read nothing): remove "
                                   "it with `tempest kill ",
                                   new_name, " -w 0`"));
  }
  Step(2, absl::StrCat(new_name, " (", *new_id, ") submitted INACTIVE; every executor runs"));
  const Clock::time_point stop_at = Clock::now();
  absl::Status s = StopOld(plan, old_name, client);
  if (s.ok()) s = WaitUntilUnowned(plan, globals, std::chrono::seconds(plan.wait_secs + 120));
  if (!s.ok()) {
    return StepFailed(3, s,
                      absl::StrCat(old_name, " is KILLED (its spouts read nothing); ", new_name,
                                   " is INACTIVE. Once `tempest list` no longer shows ", old_name,
                                   ", run ", ByHand(plan)));
  }
  const double drain = SecondsSince(stop_at);
  Step(3, absl::StrFormat("%s killed with a %d s wait and removed; its spouts committed what "
                          "completed and own no partition (%.1f s)",
                          old_name, plan.wait_secs, drain));
  absl::StatusOr<int64_t> carried = CarryAll(plan, globals);
  if (!carried.ok()) {
    return StepFailed(4, carried.status(),
                      absl::StrCat(old_name, " is removed; ", new_name,
                                   " is INACTIVE and nothing reads the topics. Run ", ByHand(plan),
                                   "; or roll back: `tempest kill ", new_name, " -w 0` and submit ",
                                   old_name, " again"));
  }
  Step(4, *carried > 0 ? absl::StrCat(core::Counted(*carried, "committed offset"), " of ", old_name,
                                      " carried: ", PairsText(plan.pairs))
                       : absl::StrCat("no committed offset to carry: ", PairsText(plan.pairs)));
  s = client.Post(absl::StrCat("/api/v1/topology/", *new_id, "/activate"), json::object()).status();
  if (!s.ok()) {
    return StepFailed(5, s,
                      absl::StrCat(old_name, " is removed and its offsets are in place; ", new_name,
                                   " is INACTIVE: run `tempest activate ", new_name, "`"));
  }
  const double gap = SecondsSince(stop_at);
  Step(5, absl::StrFormat("%s activated; output gap %.1f s (%s's drain %.1f s, cutover %.1f s)",
                          new_name, gap, old_name, drain, gap - drain));
  return 0;
}

int RunUpgrade(UpgradeArgs& args, const GlobalOptions& globals) {
  args.submit.inactive = true;
  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  nimbus::SubmitRequest request;
  if (int rc = ReadSubmitRequest(args.submit, globals, request); rc != 0) return rc;
  absl::StatusOr<UpgradePlan> plan = PlanUpgrade(args, std::move(request), *client, globals);
  if (!plan.ok()) return StepFailed(1, plan.status(), "Nothing was changed.");
  Step(1, absl::StrCat(plan->new_name, " checked; it reads the topics ", args.old_name, " reads (",
                       PairsText(plan->pairs), ")"));
  return CutOver(args, *plan, *client, globals);
}

}  // namespace

// upgrade OLD NEW.yaml [--wait SECS] [--resources DIR] [--filter F] [--env-filter]
// [--until-running-timeout S]
void RegisterUpgradeCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto args = std::make_shared<UpgradeArgs>();
  CLI::App* sub = app.add_subcommand(
      "upgrade",
      "Replace a running Kafka topology by a new one (another name), one owner per partition "
      "at every moment: NEW submitted inactive, OLD drained and removed, offsets carried, NEW "
      "activated");
  sub->add_option("old", args->old_name, "name of the running topology")->required();
  sub->add_option("new", args->submit.topology, "Flux YAML file of the new topology")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--wait", args->wait_secs,
                  "seconds OLD's in-flight tuples get to finish after its spouts stop "
                  "(default: its topology.message.timeout.secs)")
      ->check(Bounded(0, kMaxSeconds))
      ->default_str("");
  sub->add_option("--name", args->submit.name, "NEW's name (default: the Flux name)");
  sub->add_option("--filter", args->submit.filter,
                  "Java .properties file whose entries replace ${key} in the Flux file")
      ->check(CLI::ExistingFile);
  sub->add_flag("--env-filter", args->submit.env_filter,
                "replace ${ENV-NAME} with environment variable NAME");
  sub->add_option("--resources", args->submit.resources, "directory shipped to every worker of NEW")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--until-running-timeout", args->submit.until_running_timeout_secs,
                  "seconds NEW's executors get to start before the upgrade gives up")
      ->check(Bounded(1, kMaxSeconds));
  set.Add(sub, [args, &globals] { return RunUpgrade(*args, globals); });
}

}  // namespace tempest::cli
