#!/usr/bin/env bash
# Resident memory of idle `tempest worker` processes in a real cluster.
#
#   bench/idle_worker_rss.sh build/release/cli/tempest [SETTLE_SECS]
#
# Starts `tempest dev` (2 supervisors), submits the cluster example INACTIVE
# (workers start, open their components and connect, spouts do not emit),
# waits SETTLE_SECS (default 10) and prints each worker's VmRSS from
# /proc/PID/status, then the same for a worker after it has carried 200k
# tuples and gone idle again. Everything runs on 127.0.0.1 and is stopped at
# the end.
set -euo pipefail
TEMPEST=$(realpath "$1")
settle=${2:-10}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d -t tempest-rss-XXXXXX)
dev_pid=
gv=
cleanup() {
  [ -n "$dev_pid" ] && kill "$dev_pid" 2>/dev/null && wait "$dev_pid" 2>/dev/null
  rm -rf "$work" ${gv:+"$(dirname "$gv")"}
}
trap cleanup EXIT

wait_for_line() {  # file prefix
  for _ in $(seq 1 1200); do
    if line=$(grep -m1 "^$2" "$1" 2>/dev/null); then echo "${line#"$2"}"; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1" >&2
  return 1
}
worker_rss() {  # prints "pid rss_kib" per live worker
  for json in "$work"/cluster/supervisor-*/supervisor/workers/*/worker.json; do
    [ -f "$json" ] || continue
    pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$json")
    [ -n "$pid" ] && [ -r "/proc/$pid/status" ] || continue
    echo "$pid $(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")"
  done
}

"$TEMPEST" dev --supervisors 2 --dir "$work/cluster" -c ui.port=0 >"$work/dev.out" 2>"$work/dev.err" &
dev_pid=$!
wait_for_line "$work/dev.out" "ready" >/dev/null
nimbus=$(wait_for_line "$work/dev.out" "nimbus=")
# Workers run as accounts of their own: they write where `tempest dev` lets them.
gv="$(wait_for_line "$work/dev.out" "output=")/cluster-gv"
sed "s#\${ENV-OUT}/cluster-gv#$gv#g" "$src/examples/cluster-generator-verifier.yaml" >"$work/gv.yaml"
"$TEMPEST" submit "$work/gv.yaml" --inactive --until-running --nimbus "$nimbus" >/dev/null
sleep "$settle"
echo "idle workers (topology INACTIVE, ${settle} s after start):"
worker_rss | while read -r pid rss; do echo "  worker pid $pid: VmRSS $((rss / 1024)) MiB ($rss KiB)"; done

"$TEMPEST" activate cluster-generator-verifier --nimbus "$nimbus" >/dev/null
for _ in $(seq 1 600); do
  unique=$("$TEMPEST" verify "$gv/verifier.log" --expected 200000 --json 2>/dev/null |
    sed -n 's/.*"unique":\([0-9]*\).*/\1/p')
  [ "${unique:-0}" -ge 200000 ] && break
  sleep 0.5
done
sleep "$settle"
echo "workers idle again after carrying 200k tuples (${settle} s later):"
worker_rss | while read -r pid rss; do echo "  worker pid $pid: VmRSS $((rss / 1024)) MiB ($rss KiB)"; done
