#!/usr/bin/env bash
# Plants a forbidden include in a scratch tree and expects check_layers.sh to
# reject it, and a clean tree to pass.
set -u
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/common/core" "$scratch/common/coord"
echo '#include <zookeeper/zookeeper.h>' > "$scratch/common/coord/ok.cc"
echo '#include "common/core/clock.h"' > "$scratch/common/core/fine.cc"
mkdir -p "$scratch/common/kafka" "$scratch/spout"
echo '#include <librdkafka/rdkafka.h>' > "$scratch/common/kafka/ok.cc"
echo '#include "common/kafka/producer.h"' > "$scratch/spout/fine.cc"
"$here/check_layers.sh" "$scratch" >/dev/null || { echo "clean tree rejected"; exit 1; }

# expect_caught <file under the scratch tree> <include line> <what it is>:
# plants the line, fails unless the checker rejects the tree, then removes it.
expect_caught() {
  local file=$scratch/$1
  mkdir -p "$(dirname "$file")"
  echo "$2" > "$file"
  if "$here/check_layers.sh" "$scratch" >/dev/null; then
    echo "$3 was not caught"
    exit 1
  fi
  rm "$file"
}

expect_caught common/core/bad.cc '#include <zookeeper/zookeeper.h>' "common/core including zookeeper.h"
expect_caught common/multilang/bad.cc '#include "spout/shell_spout.h"' "common/multilang including spout/"
expect_caught spout/bad.cc '#include <librdkafka/rdkafka.h>' "spout/ including librdkafka"
expect_caught common/kafka/bad.cc '#include "common/coord/zk_session.h"' "common/kafka including common/coord"
# The folders inside common/core and spout/, and the CLI's own tools.
expect_caught common/core/config/bad.cc '#include "common/core/flux/flux_loader.h"' \
  "common/core/config including common/core/flux"
expect_caught common/core/bad.cc '#include "common/core/topology/topology_def.h"' \
  "a file of common/core including its topology/ subfolder"
expect_caught spout/kafka/offsets/bad.cc '#include "spout/kafka/kafka_spout.h"' \
  "spout/kafka/offsets including the KafkaSpout runtime"
expect_caught spout/bad.cc '#include "cli/offsets/offset_migration.h"' "spout/ including cli/offsets"
echo "checker catches violations"
