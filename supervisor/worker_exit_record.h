#ifndef TEMPEST_SUPERVISOR_WORKER_EXIT_RECORD_H_
#define TEMPEST_SUPERVISOR_WORKER_EXIT_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tempest::supervisor {

// What a supervisor publishes about the failed workers of one slot, at
// {root}/workerfailures/{topology-id}/{supervisor-id}-{port} (docs/znode-layout.md),
// so that nimbus, the CLI and the UI see a crash loop even when no worker
// ever wrote a heartbeat.
struct WorkerExitRecord {
  std::string topology_id;
  int port = 0;
  int pid = 0;          // the worker that failed last
  std::string status;   // "exited 1", "killed by signal 9", "stopped (heartbeat timeout): …"
  std::vector<std::string> output;  // last lines of its output (OutputTailLines)
  int64_t restarts = 0;             // failures of this slot's workers for the topology
  int64_t consecutive_failures = 0;
  int64_t exit_time_ms = 0;     // supervisor's wall clock
  int64_t next_attempt_ms = 0;  // when the next worker may start
  // A later worker came up and stayed (it beat and ran past the back-off
  // cap): the record keeps the count but no longer says the slot is failing.
  bool running = false;
};

// Bounds of what a record carries: nimbus reads every record of a topology
// on each page, so one must stay small whatever the worker printed.
inline constexpr size_t kExitOutputLines = 5;
inline constexpr size_t kExitOutputLineChars = 240;
inline constexpr size_t kExitLogTailBytes = 16 * 1024;

// The last `kExitOutputLines` non-empty lines of `log_tail` (the end of a
// worker.log), each cut to `kExitOutputLineChars`, control characters and
// invalid UTF-8 bytes written as \xNN. A line that names a credential
// (password, secret, token, payload, digest) is replaced by a note: worker
// output is the topology's and may echo what must never leave the host.
std::vector<std::string> OutputTailLines(std::string_view log_tail);

// The record as the JSON the znode holds (at most a few KiB), with the
// supervisor's id and host.
std::string EncodeWorkerExitRecord(const WorkerExitRecord& record,
                                   std::string_view supervisor_id, std::string_view host);

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_WORKER_EXIT_RECORD_H_
