#ifndef TEMPEST_CLI_OFFSETS_COMMAND_H_
#define TEMPEST_CLI_OFFSETS_COMMAND_H_

// Pieces `tempest offsets` subcommands share (offsets_command.cc,
// offsets_set_command.cc).

#include <cstdint>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/commands.h"
#include "common/coord/zk_session.h"

namespace tempest::cli {

// A session to the offsets ZooKeeper, with the spouts' credentials.
absl::StatusOr<std::unique_ptr<coord::ZkSession>> ConnectOffsetsZookeeper(
    const std::string& hosts, const GlobalOptions& globals);

// `tempest offsets set`: dry run unless --execute.
struct OffsetsSetOptions {
  std::string zk;
  std::string root;
  std::string id;
  std::string bootstrap;
  bool json = false;
  std::string topic;
  int partition = -1;
  bool all_partitions = false;
  int64_t offset = -1;
  int64_t shift_by = 0;
  CLI::Option* shift_option = nullptr;  // given or not
  std::string to_datetime;
  bool to_earliest = false;
  bool to_latest = false;
  std::string export_file;
  std::string from_file;
  bool execute = false;
  bool force = false;
  // Also write topics and partitions the spout has not stored yet (a spout
  // that has not run); never a second topic of a one-topic spout.
  bool seed = false;
  int timeout_secs = 30;
};
void AddOffsetsSetOptions(CLI::App* sub, OffsetsSetOptions& o);
int RunOffsetsSet(const OffsetsSetOptions& o, const GlobalOptions& globals);

// "2026-01-02T03:04:05Z", "...T03:04:05.250+01:00", "...T03:04:05" (UTC),
// "2026-01-02" (midnight UTC) -> ms since the epoch.
absl::StatusOr<int64_t> ParseIsoDateTimeMs(const std::string& text);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_OFFSETS_COMMAND_H_
