#!/usr/bin/env bash
# The five-minute tour in one command: installs dependencies (when missing),
# builds incrementally, then starts a real ZooKeeper and a Kafka-protocol dev
# cluster on 127.0.0.1 and exercises both end to end.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh
[ -f build/release/CMakeCache.txt ] || cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)" --target tempest
exec ./deploy/scripts/demo-run.sh build/release/cli/tempest
