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
echo '#include <zookeeper/zookeeper.h>' > "$scratch/common/core/bad.cc"
if "$here/check_layers.sh" "$scratch" >/dev/null; then
  echo "common/core including zookeeper.h was not caught"
  exit 1
fi
rm "$scratch/common/core/bad.cc"
mkdir -p "$scratch/common/multilang"
echo '#include "spout/shell_spout.h"' > "$scratch/common/multilang/bad.cc"
if "$here/check_layers.sh" "$scratch" >/dev/null; then
  echo "common/multilang including spout/ was not caught"
  exit 1
fi
rm "$scratch/common/multilang/bad.cc"
echo '#include <librdkafka/rdkafka.h>' > "$scratch/spout/bad.cc"
if "$here/check_layers.sh" "$scratch" >/dev/null; then
  echo "spout/ including librdkafka was not caught"
  exit 1
fi
rm "$scratch/spout/bad.cc"
echo '#include "common/coord/zk_session.h"' > "$scratch/common/kafka/bad.cc"
if "$here/check_layers.sh" "$scratch" >/dev/null; then
  echo "common/kafka including common/coord was not caught"
  exit 1
fi
rm "$scratch/common/kafka/bad.cc"
# The folders inside common/core and spout/.
mkdir -p "$scratch/common/core/config" "$scratch/spout/kafka/offsets"
echo '#include "common/core/flux/flux_loader.h"' > "$scratch/common/core/config/bad.cc"
if "$here/check_layers.sh" "$scratch" >/dev/null; then
  echo "common/core/config including common/core/flux was not caught"
  exit 1
fi
rm "$scratch/common/core/config/bad.cc"
echo '#include "common/core/topology/topology_def.h"' > "$scratch/common/core/bad.cc"
if "$here/check_layers.sh" "$scratch" >/dev/null; then
  echo "a file of common/core including its topology/ subfolder was not caught"
  exit 1
fi
rm "$scratch/common/core/bad.cc"
echo '#include "spout/kafka/kafka_spout.h"' > "$scratch/spout/kafka/offsets/bad.cc"
if "$here/check_layers.sh" "$scratch" >/dev/null; then
  echo "spout/kafka/offsets including the KafkaSpout runtime was not caught"
  exit 1
fi
rm "$scratch/spout/kafka/offsets/bad.cc"
echo '#include "cli/offsets/offset_migration.h"' > "$scratch/spout/bad.cc"
if "$here/check_layers.sh" "$scratch" >/dev/null; then
  echo "spout/ including cli/offsets was not caught"
  exit 1
fi
echo "checker catches violations"
