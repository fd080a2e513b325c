#!/usr/bin/env bash
# Installs dependencies (when missing), builds incrementally, and runs the
# whole test suite: unit, integration and system tests. Prints ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh
[ -f build/release/CMakeCache.txt ] || cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)"
# Integration tests start real ZooKeeper JVMs; those that start ensembles are
# marked RUN_SERIAL, the rest share the cores.
ctest --test-dir build/release --output-on-failure -j"$(nproc)" "$@"
