#!/usr/bin/env bash
# Installs every Debian 12 package Tempest needs to build, test and run.
# Idempotent: packages already installed are skipped, and when nothing is
# missing the script does not touch the network (a second run takes seconds).
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake pkg-config
  # ZooKeeper client and a real server for dev mode and integration tests
  libzookeeper-mt-dev zookeeper default-jre-headless
  # Kafka client; ships rdkafka_mock.h, the dev/test broker
  librdkafka-dev
  # serialization
  libprotobuf-dev protobuf-compiler
  # networking and HTTP (Asio, Beast)
  libboost-dev
  libssl-dev  # transport frame MAC (docs/adr/0002-openssl-for-frame-mac.md)
  # Status/StatusOr, hash maps
  libabsl-dev
  # YAML, JSON, logging, CLI parsing
  libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libcli11-dev
  # the allocator of the tempest binary (docs/adr/0009-jemalloc.md)
  libjemalloc-dev
  # libFuzzer targets of tests/fuzz (the `fuzz` preset)
  clang libclang-rt-14-dev libfuzzer-14-dev
  # tests and benchmarks (ctags measures function sizes for tests/unit/conventions)
  libgtest-dev libgmock-dev libbenchmark-dev universal-ctags
  # independent peer clients used by tests to check our formats
  kcat python3-kazoo python3-kafka
  # charts of `tempest study` (study/report.cc runs gnuplot)
  gnuplot-nox
  # promtool: tests lint nimbus's /metrics with `promtool check metrics`
  prometheus
  # tests/system/ui drives the web UI in headless Chromium (DevTools protocol over a pipe)
  chromium
  # tests/system/multihost cuts links between network-namespace hosts with nft rules
  nftables iproute2
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-deps: missing packages (${missing[*]}) and not running as root" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
