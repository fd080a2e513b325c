#!/usr/bin/env bash
# Runs the demo against an already built `tempest` binary (argument 1), from
# any directory: its files go to a new directory under TMPDIR (default /tmp),
# removed when the demo succeeds and kept, with its path printed, when it
# fails. Runs as root or as any user.
set -euo pipefail
TEMPEST=$(realpath "$1")
cd "$(dirname "$0")/../.."  # the repository: examples/ and its data
work=$(mktemp -d -t tempest-demo-XXXXXX)
pids=()
output=  # the folder `tempest dev` makes for its workers' output (below)
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$status" -eq 0 ]; then
    rm -rf "$work" ${output:+"$output"}
  else
    echo "demo: failed (exit $status); its files are kept in $work" >&2
    echo "demo: daemon output in $work/*.err, the cluster's logs in $work/cluster" >&2
    [ -n "$output" ] && echo "demo: the cluster topology's output is in $output" >&2
  fi
}
trap cleanup EXIT

wait_for_line() {  # file prefix -> prints the value after the prefix
  for _ in $(seq 1 600); do
    if line=$(grep -m1 "^$2" "$1" 2>/dev/null); then echo "${line#"$2"}"; return 0; fi
    sleep 0.1
  done
  echo "demo: timed out waiting for '$2' in $1" >&2
  return 1
}

echo "== starting a real ZooKeeper (tempest dev-zookeeper)"
"$TEMPEST" dev-zookeeper --dir "$work/zk" >"$work/zk.out" 2>"$work/zk.err" &
pids+=($!)
zk=$(wait_for_line "$work/zk.out" "zookeeper=")
echo "   zookeeper=$zk"

echo "== starting a 3-broker Kafka-protocol dev cluster (tempest dev-kafka)"
"$TEMPEST" dev-kafka --brokers 3 --topic events:4 --topic words:2 \
  --topic sentences:2 --topic sentence-words:2 --zk "$zk" \
  >"$work/kafka.out" 2>"$work/kafka.err" &
pids+=($!)
bootstrap=$(wait_for_line "$work/kafka.out" "bootstrap.servers=")
echo "   bootstrap.servers=$bootstrap"

echo "== producing 10000 records to 'events' with kcat, consuming them back"
seq 0 9999 | sed 's/^/event-/' | kcat -P -b "$bootstrap" -t events -X log_level=3
got=$(kcat -C -b "$bootstrap" -t events -o beginning -e -q -X log_level=3 | sort -u | wc -l)
echo "   consumed $got distinct records"

echo "== writing a storm-kafka offset node with an independent client (kazoo)"
/usr/bin/python3 - "$zk" <<'PY'
import json, sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start(timeout=30)
path = "/kafkaspout/demo/partition_0"
doc = {"topology": {"id": "demo-1-1700000000", "name": "demo"}, "offset": 10000,
       "partition": 0, "broker": {"host": "127.0.0.1", "port": 9092}, "topic": "events"}
zk.ensure_path("/kafkaspout/demo")
if zk.exists(path): zk.set(path, json.dumps(doc).encode())
else: zk.create(path, json.dumps(doc).encode())
data, stat = zk.get(path)
print("   " + path + " = " + data.decode())
zk.stop()
PY
echo "== running a topology in local mode: examples/generator-verifier.yaml"
echo "   SequenceSpout (100k seqs) -> IdentityBolt failing 5% -> VerifierBolt, with XOR acking"
sed "s#\${ENV-OUT}/generator-verifier#$work/gv#g" examples/generator-verifier.yaml >"$work/gv.yaml"
"$TEMPEST" local "$work/gv.yaml" --until-complete
echo "   verifier report: $(cat "$work/gv/report.json")"
"$TEMPEST" verify "$work/gv/verifier.log" --expected 100000

echo "== a legacy storm-kafka topology (examples/storm-kafka-legacy.yaml) reading Kafka"
echo "   KafkaSpout (SpoutConfig/ZkHosts, StringScheme) -> VerifierBolt; offsets go to ZooKeeper"
seq 0 99 | kcat -P -b "$bootstrap" -t words -p 0 -X log_level=3
seq 100 199 | kcat -P -b "$bootstrap" -t words -p 1 -X log_level=3
sed "s#\${ENV-OUT}/storm-kafka-legacy#$work/legacy#g" examples/storm-kafka-legacy.yaml >"$work/legacy.yaml"
ZK="$zk" ZK_PORT="${zk##*:}" BOOTSTRAP="$bootstrap" \
  "$TEMPEST" local "$work/legacy.yaml" --env-filter --until-complete
echo "   verifier report: $(cat "$work/legacy/report.json")"
echo "== committed offsets, where storm-kafka keeps them (tempest offsets show)"
"$TEMPEST" offsets show --zk "$zk" --root /kafkaspout --id legacy --bootstrap "$bootstrap"

echo "== Kafka -> transform -> Kafka (examples/kafka-transform.yaml)"
echo "   KafkaSpout('sentences') -> SplitSentenceBolt -> KafkaBolt('sentence-words'), acked on delivery"
for _ in 1 2 3 4 5; do cat examples/data/sentences.txt; done |
  kcat -P -b "$bootstrap" -t sentences -X log_level=3
expected=$((5 * $(wc -w <examples/data/sentences.txt)))
ZK="$zk" BOOTSTRAP="$bootstrap" \
  "$TEMPEST" local examples/kafka-transform.yaml --env-filter --until-complete
written=$(kcat -C -b "$bootstrap" -t sentence-words -o beginning -e -q -X log_level=3 | wc -l)
echo "   'sentence-words' holds $written records for $expected words ($((written - expected)) duplicates from replays)"
if [ "$written" -lt "$expected" ]; then
  echo "demo: 'sentence-words' is missing records" >&2
  exit 1
fi
echo "== the transform's committed input offsets (tempest offsets show)"
"$TEMPEST" offsets show --zk "$zk" --root /kafkaspout --id kafka-transform --bootstrap "$bootstrap"

echo "== a whole cluster: tempest dev (ZooKeeper, Kafka, nimbus, 2 supervisors as processes)"
"$TEMPEST" dev --supervisors 2 --dir "$work/cluster" -c ui.port=0 >"$work/dev.out" 2>"$work/dev.err" &
pids+=($!)
wait_for_line "$work/dev.out" "ready" >/dev/null
nimbus=$(wait_for_line "$work/dev.out" "nimbus=")
echo "   nimbus=$nimbus"
# Cluster workers run as accounts of their own (a uid per slot under root):
# the topology writes into the folder `tempest dev` made for them.
output=$(wait_for_line "$work/dev.out" "output=")
cgv="$output/cluster-gv"
sed "s#\${ENV-OUT}/cluster-gv#$cgv#g" examples/cluster-generator-verifier.yaml >"$work/cgv.yaml"
echo "   submitting examples/cluster-generator-verifier.yaml (2 workers, one per supervisor)"
"$TEMPEST" submit "$work/cgv.yaml" --until-running --nimbus "$nimbus"
"$TEMPEST" list --nimbus "$nimbus"
for _ in $(seq 1 240); do
  unique=$("$TEMPEST" verify "$cgv/verifier.log" --expected 200000 --json 2>/dev/null |
    sed -n 's/.*"unique":\([0-9]*\).*/\1/p')
  [ "${unique:-0}" -ge 200000 ] && break
  sleep 0.5
done
"$TEMPEST" kill cluster-generator-verifier -w 2 --until-removed --nimbus "$nimbus"
for _ in $(seq 1 100); do [ -s "$cgv/report.json" ] && break; sleep 0.2; done
echo "   verifier report after a clean kill: $(cat "$cgv/report.json")"
grep -q '"missing":0' "$cgv/report.json"

echo "== demo complete"
