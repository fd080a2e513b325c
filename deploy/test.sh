#!/usr/bin/env bash
# Installs dependencies (when missing), builds incrementally, and runs the
# whole test suite: unit, integration and system tests (ctest prints its
# summary), then the fuzz targets for a few seconds each (tests/fuzz/run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh
[ -f build/release/CMakeCache.txt ] || cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)"
# Integration tests start real ZooKeeper JVMs; those that start ensembles are
# marked RUN_SERIAL, the rest share the cores.
ctest --test-dir build/release --output-on-failure -j"$(nproc)" "$@"
# Fuzz targets (tests/fuzz, the `fuzz` preset): replay every stored input,
# then fuzz each target for a few seconds; any crash fails the run.
./tests/fuzz/run.sh "${TEMPEST_FUZZ_SECONDS:-5}"
