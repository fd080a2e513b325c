#!/usr/bin/env bash
# Fails when production code includes across a forbidden layer boundary
# (docs/architecture.md, "Layers"). Usage: check_layers.sh [repo-root]
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../../.." && pwd)}
cd "$root" || exit 2

violations=0
# forbid <folder> <regex of forbidden include targets> <reason> [<regex of allowed exceptions>]
forbid() {
  local dir=$1 pattern=$2 reason=$3 allowed=${4:-}
  [ -d "$dir" ] || return 0
  local hits
  hits=$(grep -rnE --include='*.h' --include='*.cc' "^\s*#\s*include\s*[<\"]($pattern)" "$dir")
  if [ -n "$allowed" ] && [ -n "$hits" ]; then
    hits=$(echo "$hits" | grep -vE "$allowed" || true)
  fi
  if [ -n "$hits" ]; then
    echo "layer violation ($reason):"
    echo "$hits" | sed 's/^/  /'
    violations=$((violations + 1))
  fi
}

production="common worker spout bolts nimbus supervisor devcluster study cli"

# One owner per third-party API.
for d in $production; do
  [ "$d" = common ] && continue
  forbid "$d" 'zookeeper/' "only common/coord includes the ZooKeeper C client"
done
for d in common/api common/core common/os common/kafka common/multilang common/net; do
  forbid "$d" 'zookeeper/' "only common/coord includes the ZooKeeper C client"
done
for d in common/api common/core common/os common/multilang common/coord common/net worker spout bolts nimbus supervisor study cli; do
  forbid "$d" 'librdkafka/' "only common/kafka includes librdkafka"
done
for d in common/api common/core common/os common/kafka common/multilang common/coord worker spout bolts nimbus supervisor study cli; do
  forbid "$d" 'boost/(asio|beast)' "only common/net includes Asio/Beast"
done

# Dependency arrows point down only.
forbid common/api 'common/(core|os|kafka|multilang|coord|net)/|worker/|spout/|bolts/|nimbus/|supervisor/|cli/' \
  "common/api depends on nothing of ours"
forbid common/core 'common/(os|kafka|multilang|coord|net)/|worker/|spout/|bolts/|nimbus/|supervisor/|cli/' \
  "common/core depends only on common/api and proto"
forbid common/os 'common/(api|core|kafka|multilang|coord|net)/|worker/|spout/|bolts/|nimbus/|supervisor/|cli/' \
  "common/os depends on nothing of ours (but the header-only status macros, Abseil only)" \
  'include "common/core/status_macros\.h"'
forbid common/multilang 'common/(kafka|coord|net)/|worker/|spout/|bolts/|nimbus/|supervisor/|cli/' \
  "common/multilang depends only on common/api, common/core and common/os"
forbid common/coord 'common/(kafka|net|multilang)/|worker/|spout/|bolts/|nimbus/|supervisor/|cli/' \
  "common/coord sits below the services"
forbid common/net 'common/(kafka|coord|multilang)/|worker/|spout/|bolts/|nimbus/|supervisor/|cli/' \
  "common/net sits below the services"
forbid common/kafka 'common/(multilang|coord|net)/|worker/|spout/|bolts/|nimbus/|supervisor/|devcluster/|study/|cli/' \
  "common/kafka depends only on common/api, common/core and common/os"
forbid spout 'worker/|bolts/|nimbus/|supervisor/|cli/' "spout/ sits below worker/"
forbid bolts 'worker/|spout/|nimbus/|supervisor/|cli/' "bolts/ sits below worker/"
forbid worker 'nimbus/|supervisor/|cli/' "worker/ sits below the daemons and the CLI"
forbid nimbus 'supervisor/|study/|cli/' "nimbus/ sits below the CLI"
forbid supervisor 'nimbus/|study/|cli/' "supervisor/ sits below the CLI"
forbid study 'worker/|nimbus/|cli/' "study/ drives daemons as processes and sits below the CLI"
forbid devcluster 'worker/|nimbus/|supervisor/|study/|cli/|librdkafka/|boost/(asio|beast)' "devcluster/ drives daemons as processes and sits below study/ and the CLI"
for d in $production; do
  forbid "$d" 'tests/' "production code never includes test support"
done

# Inside common/core: flux/ -> topology/ -> config/, grouping/ -> topology/; the
# folder's own files (clock, metrics, logs, YAML) include no subfolder.
forbid_flat() {  # like forbid, for the files of a folder but not its subfolders
  local dir=$1 pattern=$2 reason=$3
  [ -d "$dir" ] || return 0
  local hits
  hits=$(find "$dir" -maxdepth 1 \( -name '*.h' -o -name '*.cc' \) -print0 |
    xargs -0 -r grep -nE "^\s*#\s*include\s*[<\"]($pattern)")
  if [ -n "$hits" ]; then
    echo "layer violation ($reason):"
    echo "$hits" | sed 's/^/  /'
    violations=$((violations + 1))
  fi
}
forbid common/core/config 'common/core/(flux|topology|grouping)/' "common/core/config/ sits below the topology model"
forbid common/core/topology 'common/core/(flux|grouping)/' "common/core/topology/ sits below Flux and the groupings"
forbid common/core/grouping 'common/core/flux/' "common/core/grouping/ does not read Flux"
forbid_flat common/core 'common/core/(flux|topology|grouping|config)/' "common/core's own helpers sit below its subfolders"

# spout/: the simple spouts -> kafka/ -> kafka/offsets/; the offset stores never
# see the spout that uses them. The operator's tools of cli/offsets/ and
# cli/migrate/ are the CLI's alone.
forbid spout/kafka/offsets 'spout/(kafka/[a-z_]+\.h|[a-z_]+\.h)' "spout/kafka/offsets/ sits below the KafkaSpout runtime"
forbid_flat spout/kafka 'spout/[a-z_]+\.h' "spout/kafka/ sits below the registry of built-in spouts"
for d in common worker spout bolts nimbus supervisor devcluster study; do
  forbid "$d" 'cli/' "only the CLI includes cli/ (its offset and migration tools included)"
done

if [ "$violations" -gt 0 ]; then
  echo "$violations layer rule(s) violated"
  exit 1
fi
echo "layers OK"
