#include "supervisor/worker_files.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::supervisor {
namespace {

using ::testing::HasSubstr;

TEST(WorkerJsonTest, RoundTripsTheContractFields) {
  WorkerLaunchRecord r{1234, "wordcount-1-1700000000", 6701, "abc123", 1700000042};
  const std::string text = EncodeWorkerJson(r);
  EXPECT_EQ(text,
            "{\"pid\":1234,\"topologyId\":\"wordcount-1-1700000000\",\"port\":6701,"
            "\"supervisorId\":\"abc123\",\"launchedAtSecs\":1700000042}\n");
  absl::StatusOr<WorkerLaunchRecord> back = ParseWorkerJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
}

TEST(WorkerJsonTest, RejectsMalformedInputWithOneClearError) {
  for (const char* bad : {"", "not json", "[1,2]", "{\"pid\":1}",
                          "{\"pid\":\"12\",\"port\":1,"
                          "\"topologyId\":\"t\"}",
                          "{\"pid\":-5,\"port\":6700,\"topologyId\":\"t\"}",
                          "{\"pid\":5,\"port\":70000,\"topologyId\":\"t\"}",
                          "{\"pid\":5,\"port\":6700,\"topologyId\":\"\"}",
                          "{\"pid\":99999999999,\"port\":6700,\"topologyId\":\"t\"}",
                          "{\"pid\":5,\"port\":6700,\"topologyId\":\"t\"", "\xff\xfe\x00"}) {
    absl::StatusOr<WorkerLaunchRecord> r = ParseWorkerJson(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("worker.json")) << bad;
  }
  // Optional fields may be missing.
  absl::StatusOr<WorkerLaunchRecord> minimal =
      ParseWorkerJson("{\"pid\":5,\"port\":6700,\"topologyId\":\"t\"}");
  ASSERT_TRUE(minimal.ok()) << minimal.status();
  EXPECT_EQ(minimal->supervisor_id, "");
  EXPECT_EQ(minimal->launched_at_secs, 0);
}

v1::WorkerHeartbeat Beat() {
  v1::WorkerHeartbeat b;
  b.set_topology_id("t1");
  b.set_supervisor_id("sup");
  b.set_port(6700);
  b.set_time_secs(1700000000);
  b.set_pid(77);
  return b;
}

TEST(WorkerHeartbeatTest, ParsesAWorkersBeat) {
  absl::StatusOr<v1::WorkerHeartbeat> b = ParseWorkerHeartbeat(Beat().SerializeAsString());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->time_secs(), 1700000000);
  EXPECT_TRUE(HeartbeatBelongsTo(*b, "t1", 6700, 77));
}

TEST(WorkerHeartbeatTest, GarbageEmptyTornOrIncompleteIsNoHeartbeat) {
  const std::string good = Beat().SerializeAsString();
  v1::WorkerHeartbeat no_time = Beat();
  no_time.clear_time_secs();
  v1::WorkerHeartbeat no_topology = Beat();
  no_topology.clear_topology_id();
  for (const std::string& bad :
       {std::string(), std::string("garbage that is not a protobuf \xff\xff\xff\xff"),
        good.substr(0, good.size() / 2), no_time.SerializeAsString(),
        no_topology.SerializeAsString(), std::string(100, '\0')}) {
    EXPECT_EQ(ParseWorkerHeartbeat(bad).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(WorkerHeartbeatTest, ABeatOfAnotherWorkerDoesNotCount) {
  const v1::WorkerHeartbeat b = Beat();
  EXPECT_FALSE(HeartbeatBelongsTo(b, "t2", 6700, 77));
  EXPECT_FALSE(HeartbeatBelongsTo(b, "t1", 6701, 77));
  EXPECT_FALSE(HeartbeatBelongsTo(b, "t1", 6700, 78));  // its predecessor's last beat
  v1::WorkerHeartbeat no_pid = b;
  no_pid.clear_pid();
  EXPECT_TRUE(HeartbeatBelongsTo(no_pid, "t1", 6700, 78));
}

TEST(SupervisorIdTest, CreatedOnceThenReadBack) {
  testing::TempDir dir("supervisor-id");
  absl::StatusOr<std::string> first = LoadOrCreateSupervisorId(dir.path());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->size(), 32u);
  EXPECT_TRUE(ValidateSupervisorId(*first).ok());
  absl::StatusOr<std::string> again = LoadOrCreateSupervisorId(dir.path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  testing::TempDir other("supervisor-id");
  EXPECT_NE(*LoadOrCreateSupervisorId(other.path()), *first);
}

TEST(SupervisorIdTest, ABadIdFileIsOneClearErrorNamingIt) {
  testing::TempDir dir("supervisor-id");
  ASSERT_TRUE(MakeDirs(dir.path() + "/supervisor").ok());
  for (const char* bad : {"", "  \n", "../etc", "a/b", "has space", "..\n"}) {
    ASSERT_TRUE(WriteFileAtomically(SupervisorIdPath(dir.path()), bad).ok());
    absl::StatusOr<std::string> id = LoadOrCreateSupervisorId(dir.path());
    EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(id.status().message(), HasSubstr(SupervisorIdPath(dir.path())));
  }
  ASSERT_TRUE(WriteFileAtomically(SupervisorIdPath(dir.path()), "  my-host.1_a \n").ok());
  EXPECT_EQ(*LoadOrCreateSupervisorId(dir.path()), "my-host.1_a");
}

}  // namespace
}  // namespace tempest::supervisor
