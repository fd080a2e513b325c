#!/bin/bash
# The performance report in one command: headline figures (before/after pairs
# with --before), the scaling tables and the throughput-latency plot, as
# markdown and a PNG in OUT_DIR. See bench/perf_report.py for what it runs.
#
#   bench/run_perf_report.sh [--reps N] [--before BUILD_DIR] [--after BUILD_DIR]
#                            [--quick] [--sections headline,scaling,sweep]
#                            [--update-docs-image] OUT_DIR
#
# BUILD_DIR is a release build tree holding bench/engine_bench,
# bench/cluster_bench and cli/tempest; --after defaults to this checkout's
# build/release. About 13 min at --reps 5 with --before on a 2-core machine;
# --quick (1 rep, small runs) about 2 min.
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/perf_report.py" "$@"
