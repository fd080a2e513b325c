#!/usr/bin/env bash
# README.md's "A five-minute tour", run as written. Each block between a
# "# >>> tour" line and the next "# <<< tour" line is one of the README's
# code blocks, verbatim and in order (tests/system/tour checks that they
# match). The lines between the blocks check that each step printed or wrote
# what the README says it does; the script exits non-zero at the first step
# that did not. Run it from anywhere once `tempest` is built:
#
#   deploy/tour.sh
#
# TEMPEST_BINARY, when set, is the binary to tour instead of the one in
# build/release (the system test sets it to the build it tests).
set -euo pipefail
cd "$(dirname "$0")/.."

tour_fail() {
  echo "tour: FAILED: $*" >&2
  exit 1
}
tour_ok() { echo "tour: ok: $*"; }
# verify_field LOG EXPECTED FIELD: one number from `tempest verify --json`.
verify_field() {
  tempest verify "$1" --expected "$2" --json | sed -n "s/.*\"$3\":\([0-9]*\).*/\1/p"
}

# >>> tour setup
export PATH="$PWD/build/release/cli:$PATH"   # run from the repository root
OUT=$(mktemp -d -t tempest-tour-XXXXXX)      # this run's files; a new one every time
chmod 1777 "$OUT"    # as root, cluster workers run as slot uids and write here too
export OUT
# await FILE PREFIX: print the rest of FILE's first line that starts with PREFIX (90 s at most)
await() {
  local line
  for _ in $(seq 450); do
    if line=$(grep -m1 "^$2" "$1" 2>/dev/null); then echo "${line#"$2"}"; return 0; fi
    sleep 0.2
  done
  echo "no '$2' line in $1 after 90 s" >&2
  return 1
}
# Each step stops what it started; if a step fails, this stops what is left when the shell
# exits (kill -9 after 30 s).
stop_background() {
  local pids
  pids=$(jobs -p)
  [ -n "$pids" ] || return 0
  kill $pids 2>/dev/null || true
  for _ in $(seq 150); do
    kill -0 $pids 2>/dev/null || return 0
    sleep 0.2
  done
  kill -9 $pids 2>/dev/null || true
}
trap stop_background EXIT
# <<< tour

# A command that fails ends the script (set -e); say which.
trap 'rc=$?; echo "tour: FAILED: line $LINENO: $BASH_COMMAND exited $rc" >&2' ERR

if [ -n "${TEMPEST_BINARY:-}" ]; then
  PATH="$(dirname "$(realpath "$TEMPEST_BINARY")"):$PATH"
fi
command -v tempest >/dev/null || tour_fail "no tempest binary on PATH; build it first (./deploy/demo.sh)"
[ -d "$OUT" ] || tour_fail "mktemp made no directory"
echo "tour: binary $(command -v tempest), output in $OUT"

# >>> tour 1
tempest dev-zookeeper --dir "$OUT/zk" >"$OUT/zk.out" 2>&1 &
ZK_PID=$!    # step 4 ends with kill "$ZK_PID"
ZK=$(await "$OUT/zk.out" zookeeper=)
export ZK
echo "ZooKeeper at $ZK"
# <<< tour

[[ "$ZK" == 127.0.0.1:* ]] || tour_fail "step 1: dev-zookeeper printed zookeeper=$ZK"
tour_ok "step 1: ZooKeeper serves at $ZK"

# >>> tour 2
tempest dev-kafka --brokers 3 --topic events:8 --topic sentences:2 --topic sentence-words:2 \
    >"$OUT/kafka.out" 2>&1 &
KAFKA_PID=$!    # step 4 ends with kill "$KAFKA_PID"
BOOTSTRAP=$(await "$OUT/kafka.out" bootstrap.servers=)
export BOOTSTRAP
seq 1 10000 | kcat -P -b "$BOOTSTRAP" -t events
kcat -C -b "$BOOTSTRAP" -t events -o beginning -e -q | wc -l    # 10000
# <<< tour

[[ "$BOOTSTRAP" == 127.0.0.1:* ]] || tour_fail "step 2: dev-kafka printed bootstrap.servers=$BOOTSTRAP"
events=$(kcat -C -b "$BOOTSTRAP" -t events -o beginning -e -q | sort -u | wc -l)
[ "$events" -eq 10000 ] || tour_fail "step 2: topic events holds $events distinct records, not 10000"
tour_ok "step 2: topic events holds the 10000 records produced"

# >>> tour 3
tempest local examples/generator-verifier.yaml --env-filter --until-complete
tempest verify "$OUT/generator-verifier/verifier.log" --expected 100000 --strict
# <<< tour

log3="$OUT/generator-verifier/verifier.log"
for field in unique:100000 missing:0 duplicated:0; do
  got=$(verify_field "$log3" 100000 "${field%%:*}")
  [ "$got" = "${field#*:}" ] || tour_fail "step 3: verifier log has ${field%%:*}=$got, not ${field#*:}"
done
grep -q '"missing":0' "$OUT/generator-verifier/report.json" ||
  tour_fail "step 3: report.json does not say \"missing\":0"
tour_ok "step 3: 100000 sequence numbers, none missing, none duplicated"

# >>> tour 4
kcat -P -b "$BOOTSTRAP" -t sentences <examples/data/sentences.txt      # one message per line
tempest local examples/kafka-transform.yaml --env-filter --until-complete
kcat -C -b "$BOOTSTRAP" -t sentence-words -o beginning -e -q | wc -l    # at least 182
tempest offsets show --zk "$ZK" --root /kafkaspout --id kafka-transform --bootstrap "$BOOTSTRAP"
# <<< tour

words=$(wc -w <examples/data/sentences.txt)
sentences=$(wc -l <examples/data/sentences.txt)
[ "$words" -eq 182 ] || tour_fail "step 4: examples/data/sentences.txt has $words words; update the README"
written=$(kcat -C -b "$BOOTSTRAP" -t sentence-words -o beginning -e -q | wc -l)
[ "$written" -ge "$words" ] || tour_fail "step 4: sentence-words holds $written records for $words words"
offsets=$(tempest offsets show --zk "$ZK" --root /kafkaspout --id kafka-transform \
  --bootstrap "$BOOTSTRAP" --json)
committed=$(echo "$offsets" | grep -o '"committed_offset":[0-9]*' | awk -F: '{s += $2} END {print s}')
listed=$(echo "$offsets" | grep -o '"partition":[0-9]*' | wc -l)
at_end=$(echo "$offsets" | grep -o '"lag":0[,}]' | wc -l)
[ "$committed" = "$sentences" ] ||
  tour_fail "step 4: committed offsets add up to $committed, not the $sentences sentences produced"
[ "$listed" -ge 1 ] && [ "$at_end" -eq "$listed" ] ||
  tour_fail "step 4: not every partition of sentences has lag 0: $offsets"
tour_ok "step 4: $written words written; offsets committed up to the log end ($committed records, lag 0)"

# >>> tour 4 stop
kill "$KAFKA_PID" "$ZK_PID"    # steps 1 and 2 end here: step 5's cluster brings its own
wait "$KAFKA_PID" "$ZK_PID"
# <<< tour

if (: </dev/tcp/127.0.0.1/"${ZK##*:}") 2>/dev/null; then
  tour_fail "step 4: the ZooKeeper of step 1 still serves at $ZK after kill and wait"
fi
tour_ok "step 4: the ZooKeeper and Kafka of steps 1 and 2 stopped"

# >>> tour 5
tempest dev --supervisors 2 --dir "$OUT/cluster" -c ui.port=0 >"$OUT/dev.out" 2>&1 &
DEV_PID=$!    # step 5 ends with kill "$DEV_PID"
await "$OUT/dev.out" ready
TEMPEST_NIMBUS=$(await "$OUT/dev.out" "export TEMPEST_NIMBUS=")   # client verbs read it
export TEMPEST_NIMBUS
tempest submit examples/paced-generator-verifier.yaml --env-filter --until-running
tempest list
# <<< tour

token_file=$(await "$OUT/dev.out" token-file=)
[ "$(stat -c %a "$token_file")" = 600 ] || tour_fail "step 5: token-file=$token_file is not mode 600"
grep -qx "ui=http://$TEMPEST_NIMBUS/#token=$(cat "$token_file")" "$OUT/dev.out" ||
  tour_fail "step 5: no ui= line carrying the token of $token_file"
grep -qx "export TEMPEST_TOKEN_FILE=$token_file" "$OUT/dev.out" ||
  tour_fail "step 5: no export TEMPEST_TOKEN_FILE line"
tour_ok "step 5: nimbus has a generated API token ($token_file); the CLI found it by itself"

# >>> tour 5 watch
tempest monitor paced-generator-verifier -m identity -i 2 --count 3   # a line every 2 s, 3 lines
tempest list --workers
# <<< tour

tour_ok "step 5: monitor and list --workers ran (the test reads what they printed)"

# >>> tour 5 kill
WORKER_PID=$(tempest list --workers |    # the Pid column of the topology's first worker
    awk '$1 == "paced-generator-verifier" && $5 != "-" { print $5; exit }')
kill -9 "$WORKER_PID"      # its supervisor starts it again: a new Pid, Restarts 1
for _ in $(seq 120); do    # replays fill the gap within about 20 s; give it 2 minutes at most
  tempest verify "$OUT/paced-gv/verifier.log" --expected 10000 --strict >/dev/null && break
  sleep 1
done
tempest list --workers
tempest verify "$OUT/paced-gv/verifier.log" --expected 10000 --strict    # missing: 0
# <<< tour

[[ "$WORKER_PID" =~ ^[0-9]+$ ]] ||
  tour_fail "step 5: list --workers gave no worker pid: '$WORKER_PID'"
# The restarted worker: two running workers again, neither the killed pid, a restart (60 s at most).
for i in $(seq 60); do
  workers=$(tempest list --workers --json)
  # (pipefail: grep finding nothing must not end the script)
  running=$(echo "$workers" | { grep -o '"state":"running"' || true; } | wc -l)
  restarts=$(echo "$workers" | { grep -o '"restarts":[0-9]*' || true; } |
    awk -F: '{ s += $2 } END { print s + 0 }')
  if [ "$running" -eq 2 ] && [ "$restarts" -ge 1 ] &&
    ! echo "$workers" | grep -q "\"pid\":$WORKER_PID[,}]"; then
    break
  fi
  [ "$i" -lt 60 ] || tour_fail "step 5: after kill -9 $WORKER_PID list --workers says: $workers"
  sleep 1
done
verify_json=$(tempest verify "$OUT/paced-gv/verifier.log" --expected 10000 --json)
[[ "$verify_json" == *'"unique":10000,'* && "$verify_json" == *'"missing":0,'* ]] ||
  tour_fail "step 5: after the kill the verifier log says $verify_json"
tour_ok "step 5: the killed worker came back (restarts: $restarts) and every seq arrived"

# >>> tour 5 stop
tempest kill paced-generator-verifier -w 1 --until-removed
kill "$DEV_PID"    # stops the supervisors (and their workers), nimbus, Kafka and ZooKeeper
wait "$DEV_PID"
# <<< tour

# Nothing of the cluster runs on: no process works in $OUT/cluster or names it (30 s at most).
# (The bracket keeps grep from finding its own command line.)
for i in $(seq 60); do
  left=$({ find /proc -maxdepth 2 -name cwd -lname "$OUT/cluster*"
           grep -la "$OUT/cluste[r]" /proc/[0-9]*/cmdline; } 2>/dev/null | cut -d/ -f3 | sort -u ||
         true)    # (grep finds nothing once all is stopped: not an error under pipefail)
  [ -z "$left" ] && break
  [ "$i" -lt 60 ] ||
    tour_fail "step 5: still running after kill $DEV_PID:$(ps -o pid,args -p "${left//$'\n'/,}")"
  sleep 0.5
done
tour_ok "step 5: the cluster stopped"

# >>> tour 7
tempest migrate check examples/legacy/word-count.yaml --storm-yaml examples/legacy/storm.yaml \
    --resources examples/legacy/multilang
tempest local examples/legacy/word-count.yaml --resources examples/legacy/multilang --duration 5
# <<< tour

tour_ok "step 7: the legacy pipeline checked and ran"

# >>> tour 8
tempest study --scenario worker-kill --scenario zk-session-expiry --records 5000 --rate 1000 \
    --out "$OUT/study"
# <<< tour

[ -s "$OUT/study/report.md" ] || tour_fail "step 8: the study wrote no report.md"
for s in worker-kill zk-session-expiry; do
  grep -q "$s" "$OUT/study/report.md" || tour_fail "step 8: report.md has no $s row"
done
tour_ok "step 8: the study ran both scenarios and wrote $OUT/study/report.md"
echo "tour: complete"
