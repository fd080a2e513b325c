// A stand-in for `tempest worker` in the supervisor's integration tests (the
// real worker process is built separately). It follows the supervisor/worker
// contract of supervisor/README.md: the same command line, a heartbeat file
// written atomically every `-c heartbeat.worker.interval.ms=N` (default 1000) ms, a
// clean exit 0 on SIGTERM. Tests steer one incarnation through files in its
// worker (scratch) directory:
//   stop-beating.<pid>  stop writing heartbeats (a hung worker)
//   exit.<pid>          exit at once with the code written in the file
// and, since that directory is made afresh for each launch, through its
// environment: HEARTBEAT_WORKER_IGNORE_TERM_PORT=<port> makes the worker of
// that port ignore SIGTERM (checks the SIGKILL escalation).
// It prints its command line to stdout (the worker.log) at start.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tempest/v1/cluster.pb.h"

namespace {

std::atomic<bool> g_term{false};

void OnTerm(int) { g_term = true; }

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

int64_t NowSecs() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string line = "heartbeat_worker argv:";
  for (int i = 0; i < argc; ++i) line += std::string(" ") + argv[i];
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);

  std::string topology, supervisor, dir;
  int port = 0;
  int interval_ms = 1000;
  int i = 1;
  while (i < argc && std::string(argv[i]) != "worker") ++i;
  if (i == argc) {
    std::fprintf(stderr, "heartbeat_worker: expected the 'worker' subcommand\n");
    return 2;
  }
  for (++i; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--topology-id") topology = value;
    if (key == "--supervisor-id") supervisor = value;
    if (key == "--port") port = std::atoi(value.c_str());
    if (key == "--worker-dir") dir = value;
    // A worker gets only an allowlisted environment, so the test passes its
    // beat interval as a config override; other global options are unused.
    const std::string interval_key = "heartbeat.worker.interval.ms=";
    if (key == "-c" && value.rfind(interval_key, 0) == 0) {
      interval_ms = std::atoi(value.c_str() + interval_key.size());
    }
  }
  if (topology.empty() || supervisor.empty() || port <= 0 || dir.empty()) {
    std::fprintf(stderr,
                 "heartbeat_worker: missing --topology-id/--supervisor-id/--port/--worker-dir\n");
    return 2;
  }
  const char* ignore_term = std::getenv("HEARTBEAT_WORKER_IGNORE_TERM_PORT");
  if (ignore_term != nullptr && std::atoi(ignore_term) == port) {
    ::signal(SIGTERM, SIG_IGN);
  } else {
    ::signal(SIGTERM, OnTerm);
  }
  const pid_t pid = ::getpid();
  const int64_t started = NowSecs();
  const std::string stop_beating = dir + "/stop-beating." + std::to_string(pid);
  const std::string exit_file = dir + "/exit." + std::to_string(pid);

  while (!g_term) {
    if (Exists(exit_file)) {
      std::ifstream in(exit_file);
      int code = 0;
      in >> code;
      std::printf("heartbeat_worker: exiting with %d as asked\n", code);
      return code;
    }
    if (!Exists(stop_beating)) {
      tempest::v1::WorkerHeartbeat beat;
      beat.set_topology_id(topology);
      beat.set_supervisor_id(supervisor);
      beat.set_port(port);
      beat.set_time_secs(NowSecs());
      beat.set_uptime_secs(NowSecs() - started);
      beat.set_pid(pid);
      const std::string tmp = dir + "/heartbeat.tmp";
      {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << beat.SerializeAsString();
      }
      std::rename(tmp.c_str(), (dir + "/heartbeat").c_str());
    }
    for (int waited = 0; waited < interval_ms && !g_term; waited += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::printf("heartbeat_worker: SIGTERM, exiting\n");
  return 0;
}
