#!/usr/bin/python3
"""Changes a running topology and measures the output from outside, with kafka-python.

Starts `tempest dev` (2 supervisors, 2 slots each; a test cluster's short timeouts), and for
each scenario submits the Flux file FLUX below (KafkaSpout with offsets in ZooKeeper ->
IdentityBolt -> KafkaBolt, acked), produces a numbered stream `SEQ:SEND_MS` at --rate records/s to a new input
topic, reads the output topic from the beginning, changes the topology a third of the way
through the stream, and counts from the output alone:

  rebalance        `tempest rebalance NAME -w 0 -e identity=2` (identity: 1 executor, 4 tasks)
  add-worker       `tempest rebalance NAME -w 0 -n 3` (from 2 workers): one process starts,
                   none restarts
  word-count       WORD_COUNT_FLUX below (KafkaSpout -> WordCountBolt emitting every tuple ->
                   KafkaBolt writing COUNT keyed by WORD), fed WORDS words in turn, then
                   `tempest rebalance NAME -w 0 -e count=2`: the counts must carry on from where
                   they were (no count goes down, each word's last count is how often it was sent)
  worker-kill      SIGKILL of the worker that does not run the spout
  supervisor-kill  SIGKILL of a supervisor and its workers
  upgrade          `tempest upgrade NAME NEW.yaml --wait 2`: NEW_FLUX below, the same pipeline
                   with storm-kafka-client's spout (offsets in a consumer group); while it runs an
                   independent watcher (kazoo on the spout's ZooKeeper owner nodes, kafka-python
                   on the group's committed offsets, every 20 ms) checks that no partition's group
                   offset moves while an old owner holds it

Prints one JSON line per scenario: records; rate_sent (the rate the producers kept up); lost
(sent, never in the output); replays (output records beyond the first of each number); gap_ms
(the longest pause between output records as the consumer received them) and gap_ts_ms (the
same by the output records' timestamps); workers_restarted / workers_kept (the topology's
workers whose pid changed / stayed); for worker-kill recovered_ms (how long after the kill the
last record sent before it reached the output). `ok` is false, with `problems`, when a
correctness check fails: a record lost, a worker restarted that the change does not touch (for
the rebalance: any worker, since the bolt's worker regroups it in place), a wait that ran out, two
owners of a partition. Nothing is timed in the checks. Exit 0 when every scenario is ok. upgrade
adds owner_overlaps (partitions whose group offset moved while the watcher saw an old owner) and
handover_ms (per partition, from the last sight of an old owner to the group's first offset).
word-count reports counts_reset (outputs whose count went below the word's previous one),
counts_short (words whose last count is below how often they were sent) and replays (outputs
repeating a word's count); lost is the number of counts never seen.
--producers P splits the rate over P kafka-python processes (one kept up < 20,000/s here).

Everything it makes (the cluster, its topics, its ZooKeeper data, the working directory) goes
away when it ends; every wait is bounded.

Usage: live_change_driver.py --tempest BIN [--rate R] [--seconds S] [--producers P] [--runs N]
                             [--scenario NAME]... [--dir DIR] [--keep]
"""

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

# In this order on one cluster: the upgrade needs all 4 slots (OLD and NEW side by side), and
# supervisor-kill leaves its supervisor dead.
SCENARIOS = ("rebalance", "word-count", "add-worker", "worker-kill", "upgrade", "supervisor-kill")

# The word-count scenario's stream: WORDS distinct words, sent in turn.
WORDS = 40

def kafka_bolt(field, key_field=None):
    """The topologies' sink, in Flux: tempest.KafkaBolt writing `field` (keyed by `key_field`) to
    the output topic ${ENV-LC_OUT}."""
    key = ("      - name: keyField\n        value: %s\n" % key_field) if key_field else ""
    return """\
  - id: out
    className: tempest.KafkaBolt
    parallelism: 1
    properties:
      - name: bootstrap.servers
        value: "${ENV-BOOTSTRAP}"
      - name: topic
        value: "${ENV-LC_OUT}"
      - name: field
        value: %s
%s      - name: linger.ms
        value: 5
""" % (field, key)


# What a user writes from docs/user-guide.md: tempest.KafkaSpout (offsets in ZooKeeper),
# tempest.IdentityBolt, tempest.KafkaBolt; addresses and names through --env-filter.
FLUX = """\
name: live-change

config:
  topology.workers: ${ENV-LC_WORKERS}
  topology.acker.executors: 1
  topology.message.timeout.secs: 30
  topology.max.spout.pending: 2000

spouts:
  - id: numbers
    className: tempest.KafkaSpout
    parallelism: 1
    properties:
      - name: bootstrap.servers
        value: "${ENV-BOOTSTRAP}"
      - name: topics
        value: "${ENV-LC_IN}"
      - name: zkServers
        value: "${ENV-TEMPEST_ZK}"
      - name: zkRoot
        value: /kafkaspout
      - name: id
        value: "${ENV-LC_IN}"
      - name: startOffsetTime
        value: -2
      - name: stateUpdateIntervalMs
        value: 500

bolts:
  - id: identity
    className: tempest.IdentityBolt
    parallelism: 1
    numTasks: 4

""" + kafka_bolt("value") + """\

streams:
  - from: numbers
    to: identity
    grouping:
      type: SHUFFLE
  - from: identity
    to: out
    grouping:
      type: SHUFFLE
"""


# The upgrade's NEW: FLUX with Storm 2.x's storm-kafka-client spout, offsets in the consumer group
# ${ENV-LC_GROUP}, read from where the old spout's ZooKeeper offsets are carried.
NEW_FLUX = FLUX.split("spouts:")[0] + """\
components:
  - id: spoutConfigBuilder
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder"
    constructorArgs:
      - "${ENV-BOOTSTRAP}"
      - ["${ENV-LC_IN}"]
    properties:
      - name: firstPollOffsetStrategy
        value: UNCOMMITTED_EARLIEST
    configMethods:
      - name: setProp
        args:
          - {"group.id": "${ENV-LC_GROUP}"}
      - name: setOffsetCommitPeriodMs
        args: [500]
  - id: spoutConfig
    className: org.apache.storm.kafka.spout.KafkaSpoutConfig
    constructorArgs:
      - ref: spoutConfigBuilder

spouts:
  - id: numbers
    className: org.apache.storm.kafka.spout.KafkaSpout
    constructorArgs:
      - ref: spoutConfig
""" + "\nbolts:" + FLUX.split("bolts:")[1]

# The word-count scenario: a user's stateful pipeline from docs/user-guide.md, counting Kafka
# records by value with tempest.WordCountBolt (4 tasks in 1 executor, each word owned by one task
# through the fields grouping) and writing each new count keyed by its word.
WORD_COUNT_FLUX = FLUX.split("bolts:")[0] + """\
bolts:
  - id: count
    className: tempest.WordCountBolt
    parallelism: 1
    numTasks: 4
    properties:
      - name: field
        value: value
      - name: emitEvery
        value: tuple

""" + kafka_bolt("count", "word") + """\

streams:
  - from: numbers
    to: count
    grouping:
      type: FIELDS
      args: [value]
  - from: count
    to: out
    grouping:
      type: SHUFFLE
"""


def now_ms():
    return time.time() * 1000.0


def wait_for(what, pred, timeout, interval=0.5):
    """pred() until truthy (returned) or `timeout` s; raises TimeoutError naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise TimeoutError("no %s within %d s" % (what, timeout))
        time.sleep(interval)


class Cluster:
    """`tempest dev` in its own process group, stopped (and its directory removed) by close()."""

    def __init__(self, tempest, root, log):
        self.tempest, self.root, self.log = tempest, root, log
        self.dir = os.path.join(root, "cluster")
        self.out = open(os.path.join(root, "dev.out"), "w+")
        self.err = open(os.path.join(root, "dev.err"), "w+")
        self.proc = subprocess.Popen(
            [tempest, "dev", "--supervisors", "2", "--slots", "2", "--dir", self.dir,
             "-c", "ui.port=0", "-c", "storm.zookeeper.session.timeout=4000",
             "-c", "nimbus.supervisor.timeout.secs=10"],
            stdout=self.out, stderr=self.err, start_new_session=True)
        self.lines = {}
        wait_for("`tempest dev` ready line", self._ready, 180)
        self.env = dict(os.environ, TEMPEST_NIMBUS=self.lines["nimbus"],
                        TEMPEST_TOKEN_FILE=self.lines["token-file"],
                        TEMPEST_ZK=self.lines["zookeeper"],
                        TEMPEST_ZK_AUTH_FILE=self.lines["zk-auth-file"],
                        BOOTSTRAP=self.lines["bootstrap.servers"])
        self.bootstrap = self.lines["bootstrap.servers"]

    def _ready(self):
        if self.proc.poll() is not None:
            raise RuntimeError("tempest dev exited %s: %s" % (self.proc.returncode,
                                                             self._tail(self.err.name)))
        with open(self.out.name) as f:
            text = f.read()
        if "\nready" not in "\n" + text:
            return False
        for line in text.splitlines():
            if "=" in line and not line.startswith("export "):
                k, v = line.split("=", 1)
                self.lines.setdefault(k, v)
        return True

    @staticmethod
    def _tail(path, n=2000):
        try:
            with open(path) as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def run(self, *args, timeout=90):
        r = subprocess.run([self.tempest] + list(args), env=self.env, capture_output=True,
                           text=True, timeout=timeout)
        self.log("$ tempest %s -> %d %s%s" % (" ".join(args), r.returncode, r.stdout.strip(),
                                              (" / " + r.stderr.strip()) if r.stderr else ""))
        return r

    def rest(self, path):
        try:
            with urllib.request.urlopen("http://%s%s" % (self.lines["nimbus"], path),
                                        timeout=10) as r:
                return json.loads(r.read())
        except (OSError, ValueError):
            return None

    def supervisor_pgid(self, supervisor_id):
        """The process group of the supervisor with that id (a child of `tempest dev`)."""
        for n in range(1, 3):
            try:
                with open(os.path.join(self.dir, "supervisor-%d" % n, "supervisor", "id")) as f:
                    if f.read().strip() != supervisor_id:
                        continue
            except OSError:
                continue
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as f:
                        argv = f.read().split(b"\0")
                    with open("/proc/%s/stat" % pid) as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                if ppid == self.proc.pid and b"supervisor" in argv[1:2] and any(
                        ("supervisor-%d" % n).encode() in a for a in argv):
                    return os.getpgid(int(pid))
        return None

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)
        self.out.close()
        self.err.close()
        # Outside the cluster's directory when the workers cannot pass through it (user guide).
        output = self.lines.get("output", "")
        if os.path.basename(output).startswith("tempest-dev-output-"):
            shutil.rmtree(output, ignore_errors=True)


def produce(bootstrap, topic, records, rate, first, step, sent, took, words=0):
    """Sends SEQ:SEND_MS for SEQ = first, first + step, ... below `records` at `rate` per
    second (with `words`, the word wNN for NN = SEQ mod words instead); sent.value counts them,
    took.value is how long sending them all took (s)."""
    p = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, batch_size=262144,
                      max_in_flight_requests_per_connection=5)
    start = time.monotonic()
    seq = first
    while seq < records:
        due = min(records, first + step * (int((time.monotonic() - start) * rate) + 1))
        while seq < due:
            value = ("w%02d" % (seq % words)) if words else ("%d:%d" % (seq, now_ms()))
            p.send(topic, value=value.encode())
            seq += step
        sent.value = (seq - first) // step
        time.sleep(0.002)
    p.flush(60)
    took.value = time.monotonic() - start
    p.close(10)


def consume(bootstrap, topic, path, records, stop):
    """Writes `SEQ SEND_MS ARRIVAL_MS TIMESTAMP_MS` per output record to `path` until `stop` is
    set and nothing new came for 2 s (every number seen: late replays still counted) or 5 s."""
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                      fetch_max_wait_ms=20, max_poll_records=5000)
    parts = [TopicPartition(topic, p) for p in sorted(c.partitions_for_topic(topic) or [])]
    c.assign(parts)
    c.seek_to_beginning()
    seen = set()
    idle_since = time.monotonic()
    with open(path, "w") as out:
        while True:
            batch = c.poll(timeout_ms=50)
            t = now_ms()
            for msgs in batch.values():
                for m in msgs:
                    if m.key is not None:  # word-count: COUNT keyed by WORD
                        word, count = m.key.decode(), int(m.value.decode())
                        seen.add((word, count))
                        out.write("%s %d %.1f %d\n" % (word, count, t, m.timestamp))
                        continue
                    seq, send = m.value.decode().split(":")
                    seen.add(int(seq))
                    out.write("%s %s %.1f %d\n" % (seq, send, t, m.timestamp))
            if batch:
                out.flush()  # the driver reads the file to tell when the output is complete
                idle_since = time.monotonic()
            quiet = 2 if len(seen) >= records else 5
            if stop.is_set() and time.monotonic() - idle_since > quiet:
                break
    c.close()


def make_topic(bootstrap, topic):
    """The dev Kafka creates a topic (4 partitions) when a client first asks for it."""
    p = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        return wait_for("topic " + topic, lambda: p.partitions_for(topic), 30)
    finally:
        p.close(5)


def workers(cluster, topology_id):
    """{(supervisorId, port): {pid, components, version}} from the REST topology page."""
    t = cluster.rest("/api/v1/topology/" + topology_id) or {}
    out = {}
    for w in t.get("workers", []):
        out[(w.get("supervisorId"), w.get("port"))] = {
            "pid": w.get("pid"), "components": set(w.get("componentNumTasks", {})),
            "version": w.get("assignmentVersion")}
    return out, t.get("assignmentVersion")


def analyse(path, records, kill_ms=None):
    firsts, arrivals, stamps, total = {}, [], [], 0
    with open(path) as f:
        for line in f:
            seq, send, arrival, ts = line.split()
            seq, send, arrival = int(seq), int(send), float(arrival)
            total += 1
            arrivals.append(arrival)
            stamps.append(int(ts))
            if seq not in firsts:
                firsts[seq] = (send, arrival)
    def gap(xs):
        xs = sorted(xs)
        return round(max((b - a for a, b in zip(xs, xs[1:])), default=0), 1)
    r = {"records": records, "lost": records - len(firsts), "replays": total - len(firsts),
         "gap_ms": gap(arrivals), "gap_ts_ms": gap(stamps)}
    if kill_ms is not None:
        late = [a - kill_ms for s, a in firsts.values() if s < kill_ms]
        r["recovered_ms"] = round(max(late), 1) if late else None
    return r


def expected_counts(records):
    """word -> how often the word-count stream of `records` sends it."""
    return {"w%02d" % w: records // WORDS + (w < records % WORDS) for w in range(WORDS)}


def analyse_counts(path, records):
    """The word-count output (WORD COUNT ARRIVAL_MS TIMESTAMP_MS per record) against the stream:
    every count 1..N of each word seen once, never lower than the word's previous count (a
    word's outputs share a partition, so they keep their order)."""
    expected = expected_counts(records)
    last, seen, arrivals, stamps = {}, set(), [], []
    total = resets = 0
    with open(path) as f:
        for line in f:
            word, count, arrival, ts = line.split()
            count = int(count)
            total += 1
            arrivals.append(float(arrival))
            stamps.append(int(ts))
            resets += count < last.get(word, 0)
            last[word] = max(count, last.get(word, 0))
            seen.add((word, count))
    def gap(xs):
        xs = sorted(xs)
        return round(max((b - a for a, b in zip(xs, xs[1:])), default=0), 1)
    valid = {(w, c) for w, c in seen if 1 <= c <= expected.get(w, 0)}
    return {"records": records, "lost": records - len(valid), "replays": total - len(seen),
            "counts_reset": resets,
            "counts_short": sum(last.get(w, 0) < n for w, n in expected.items()),
            "counts_over": sum(last.get(w, 0) > n for w, n in expected.items()) +
                           sum(w not in expected for w in last),
            "gap_ms": gap(arrivals), "gap_ts_ms": gap(stamps)}


class OwnershipWatcher:
    """Watches one topic's partitions from outside Tempest, every 20 ms until stop(): the old
    spout's ZooKeeper owner nodes ({zk_root}/{spout_id}/@owners/partition_N, kazoo) and the new
    spout's group offsets (kafka-python; an offset fetch, which never joins the group). A
    partition has two owners if its group offset moves while an old owner node exists."""

    def __init__(self, cluster, topic, partitions, zk_root, spout_id, group):
        self.topic, self.partitions, self.group = topic, partitions, group
        self.owners_path = "%s/%s/@owners" % (zk_root, spout_id)
        with open(cluster.lines["zk-auth-file"]) as f:
            auth = f.read().strip()
        self.zk = KazooClient(hosts=cluster.lines["zookeeper"], timeout=10,
                              auth_data=[("digest", auth)] if auth else [])
        self.zk.start(30)
        self.admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        self.tps = [TopicPartition(topic, p) for p in range(partitions)]
        self.owner_last_seen = {}   # partition -> ms of the last look that found an owner node
        self.group_first_move = {}  # partition -> ms the group offset first appeared or moved
        self.overlaps = set()       # partitions whose group offset moved under an old owner
        self.looks = 0
        self.errors = []
        self._last = {}
        self._stop = False
        import threading
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _owned(self):
        try:
            return {int(c.rsplit("_", 1)[1]) for c in self.zk.get_children(self.owners_path)
                    if c.startswith("partition_")}
        except NoNodeError:
            return set()

    def _loop(self):
        deadline = time.monotonic() + 600
        while not self._stop and time.monotonic() < deadline:
            try:
                owned = self._owned()
                offsets = self.admin.list_consumer_group_offsets(self.group, partitions=self.tps)
            except Exception as e:  # a slow look is skipped, never fatal; counted below
                if len(self.errors) < 5:
                    self.errors.append("%s: %s" % (type(e).__name__, e))
                time.sleep(0.05)
                continue
            t = now_ms()
            self.looks += 1
            for p in owned:
                self.owner_last_seen[p] = t
            for tp, om in offsets.items():
                if om.offset < 0 or self._last.get(tp.partition) == om.offset:
                    continue
                self._last[tp.partition] = om.offset
                self.group_first_move.setdefault(tp.partition, t)
                if tp.partition in owned:
                    self.overlaps.add(tp.partition)
            time.sleep(0.02)

    def stop(self):
        self._stop = True
        self._thread.join(30)
        self.admin.close()
        self.zk.stop()
        self.zk.close()

    def report(self):
        handover = {p: round(self.group_first_move[p] - self.owner_last_seen.get(p, 0), 1)
                    for p in sorted(self.group_first_move) if p in self.owner_last_seen}
        return {"owner_overlaps": len(self.overlaps), "handover_ms": handover,
                "watcher_looks": self.looks, "watcher_errors": self.errors}


def topology_id(cluster, name):
    summary = cluster.rest("/api/v1/topology/summary") or {}
    return next((t["id"] for t in summary.get("topologies", []) if t.get("name") == name), None)


class Scenario:
    def __init__(self, cluster, name, rate, seconds, producers, root, log):
        self.c, self.name, self.rate, self.log = cluster, name, rate, log
        self.producers = producers
        self.records = int(rate * seconds)
        tag = "%s-%d-%d" % (name, os.getpid(), int(time.time() * 1000) % 100000)
        self.topic_in, self.topic_out = "lc-in-" + tag, "lc-out-" + tag
        self.topology = "lc-" + tag
        self.root = root
        self.problems = []
        self.result = {"scenario": name, "rate": rate}

    def check(self, ok, problem):
        if not ok:
            self.problems.append(problem)
            self.log("PROBLEM: " + problem)

    def run(self):
        make_topic(self.c.bootstrap, self.topic_in)
        make_topic(self.c.bootstrap, self.topic_out)
        flux = os.path.join(self.root, self.topology + ".yaml")
        with open(flux, "w") as f:
            f.write(WORD_COUNT_FLUX if self.name == "word-count" else FLUX)
        env = {"LC_IN": self.topic_in, "LC_OUT": self.topic_out,
               "LC_WORKERS": "3" if self.name == "rebalance" else "2"}
        self.c.env.update(env)
        r = self.c.run("submit", flux, "--env-filter", "--name", self.topology,
                       "--until-running", "--until-running-timeout", "120", timeout=150)
        if r.returncode != 0:
            raise RuntimeError("submit failed: " + r.stderr)
        self.id = r.stdout.split()[0]
        wait_for("a beat from every worker", lambda: self._all_beat(), 60)
        try:
            self._stream()
        finally:
            self.c.run("kill", self.topology, "-w", "0")
            wait_for("the topology's removal",
                     lambda: self.c.rest("/api/v1/topology/" + self.id) is None, 60)
        self.result["ok"] = not self.problems
        self.result["problems"] = self.problems
        return self.result

    def _all_beat(self):
        ws, _ = workers(self.c, self.id)
        want = 3 if self.name == "rebalance" else 2
        return len(ws) == want and all(w["pid"] for w in ws.values())

    def _stream(self):
        n = self.producers
        sent = [multiprocessing.Value("l", 0) for _ in range(n)]
        took = [multiprocessing.Value("d", 0.0) for _ in range(n)]
        stop = multiprocessing.Event()
        out = os.path.join(self.root, self.topology + ".out")
        consumer = multiprocessing.Process(
            target=consume, args=(self.c.bootstrap, self.topic_out, out, self.records, stop))
        words = WORDS if self.name == "word-count" else 0
        producers = [multiprocessing.Process(
            target=produce, args=(self.c.bootstrap, self.topic_in, self.records, self.rate / n,
                                  i, n, sent[i], took[i], words)) for i in range(n)]
        consumer.start()
        for p in producers:
            p.start()
        kill_ms = None
        try:
            wait_for("a third of the stream sent",
                     lambda: sum(v.value for v in sent) >= self.records // 3, 120, 0.01)
            kill_ms = getattr(self, "_" + self.name.replace("-", "_"))()
            for p in producers:
                p.join(max(60, 3 * self.records / self.rate))
                self.check(p.exitcode == 0, "a producer did not finish")
            # Until every number is in the output, or a bounded wait for the last replays.
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and not self._complete(out):
                time.sleep(1)
            self._still_running()
        finally:
            stop.set()
            consumer.join(60)
            for p in producers + [consumer]:
                if p.is_alive():
                    p.kill()
                    p.join(10)
        if words:
            self.result.update(analyse_counts(out, self.records))
            self.check(self.result["counts_reset"] == 0, "%d counts went below the word's "
                       "previous count: the counting state was lost" % self.result["counts_reset"])
            self.check(self.result["counts_short"] == 0 and self.result["counts_over"] == 0,
                       "%d words ended below and %d above how often they were sent" %
                       (self.result["counts_short"], self.result["counts_over"]))
        else:
            self.result.update(analyse(out, self.records, kill_ms))
        slowest = max(v.value for v in took)
        if slowest > 0:
            self.result["rate_sent"] = round(self.records / slowest)
        self.check(self.result["lost"] == 0, "%d records lost" % self.result["lost"])
        bound = getattr(self, "pending_bound", None)
        if bound is not None:
            self.check(self.result["replays"] <= bound, "%d records read again, more than the %d "
                       "the old spout could have in flight" % (self.result["replays"], bound))

    def _complete(self, out):
        seen = set()
        with open(out) as f:
            for line in f:
                seen.add(tuple(line.split(" ", 2)[:2]) if self.name == "word-count"
                         else line.split(" ", 1)[0])
        return len(seen) >= self.records

    def _settled(self, version):
        """Every worker beats and runs assignment `version` or later."""
        ws, v = workers(self.c, self.id)
        if v is None or v < version or not ws:
            return None
        return ws if all(w["pid"] and (w["version"] or 0) >= v for w in ws.values()) else None

    def _change_in_place(self, args, workers_after=None):
        """Runs `tempest rebalance NAME -w 0 ARGS`, waits until the new assignment runs on
        `workers_after` workers (default: as many as before), and records them: a change
        applied in place restarts no process (checked now and again at the stream's end)."""
        before, version = workers(self.c, self.id)
        want = workers_after or len(before)
        r = self.c.run("rebalance", self.topology, "-w", "0", *args)
        self.check(r.returncode == 0, "rebalance refused: " + r.stderr.strip())
        after = wait_for("the rebalanced assignment running on %d workers" % want,
                         lambda: (lambda ws: ws if ws and len(ws) == want else None)(
                             self._settled((version or 0) + 1)), 60)
        self.settled, self.settled_at = after, time.monotonic()
        self._count_pids(before, after, lambda slot: False)
        return before, after

    def _rebalance(self):
        # identity's tasks stay in their worker, which regroups them in place.
        self._change_in_place(["-e", "identity=2"])

    def _word_count(self):
        # count's tasks stay in their worker, which regroups them in place, handing each task's
        # WordCountBolt (and its counts) to its new executor.
        self._change_in_place(["-e", "count=2"])

    def _add_worker(self):
        # The new worker takes bolt executors from the others, which let them leave in place:
        # one process starts.
        current, _ = workers(self.c, self.id)
        before, after = self._change_in_place(["-n", str(len(current) + 1)], len(current) + 1)
        self.result["workers_started"] = sum(
            1 for slot, w in after.items()
            if not any(b["pid"] == w["pid"] for b in before.values()))
        self.check(self.result["workers_started"] == 1,
                   "%d worker processes started, not 1" % self.result["workers_started"])

    def _still_running(self):
        """After a change applied in place, the same processes are still there at the stream's
        end, at least 12 s after the change: a supervisor that took a changed worker for a
        stranger would have replaced it by then."""
        settled = getattr(self, "settled", None)
        if settled is None:
            return
        # A supervisor gives a worker whose executors no longer match 10 s to exit by itself.
        time.sleep(max(0.0, self.settled_at + 12 - time.monotonic()))
        now, _ = workers(self.c, self.id)
        for slot, w in settled.items():
            self.check(slot in now and now[slot]["pid"] == w["pid"],
                       "worker %s:%s was replaced after the change had been applied in place" %
                       (slot[0][:8], slot[1]))

    def _count_pids(self, before, after, touched):
        """Counts kept and restarted workers; a worker `touched` does not hold is kept."""
        kept = restarted = 0
        for slot, w in before.items():
            same = slot in after and after[slot]["pid"] == w["pid"]
            kept += same
            restarted += not same
            if not touched(slot):
                self.check(same, "worker %s:%s (%s) restarted though the change did not touch "
                           "it" % (slot[0][:8], slot[1], ",".join(sorted(w["components"]))))
        self.result["workers_kept"] = kept
        self.result["workers_restarted"] = restarted

    def _worker_kill(self):
        before, version = workers(self.c, self.id)
        victims = [s for s, w in before.items() if "numbers" not in w["components"]]
        if not victims:
            raise RuntimeError("every worker runs the spout: %s" % before)
        slot = victims[0]
        kill_ms = now_ms()
        os.killpg(before[slot]["pid"], signal.SIGKILL)
        self.log("SIGKILL worker %s (pid %s: %s)" % (slot[1], before[slot]["pid"],
                                                      sorted(before[slot]["components"])))
        after = wait_for("the killed worker replaced", lambda: self._replaced(slot, before), 60)
        self._count_pids(before, after, lambda s: s == slot)
        return kill_ms

    def _replaced(self, slot, before):
        ws, _ = workers(self.c, self.id)
        return ws if (len(ws) == len(before) and all(w["pid"] for w in ws.values()) and
                      all(w["pid"] != before[slot]["pid"] for w in ws.values())) else None

    def _supervisor_kill(self):
        before, version = workers(self.c, self.id)
        by_sup = {}
        for slot, w in before.items():
            by_sup.setdefault(slot[0], []).append(slot)
        # The supervisor without the spout when the workers are spread, else the one with them.
        spout_sup = next(s[0] for s, w in before.items() if "numbers" in w["components"])
        victim = next((s for s in by_sup if s != spout_sup), spout_sup)
        pgid = self.c.supervisor_pgid(victim)
        if pgid is None:
            raise RuntimeError("no process for supervisor " + victim)
        os.killpg(pgid, signal.SIGKILL)
        for slot in by_sup[victim]:
            try:
                os.killpg(before[slot]["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.log("SIGKILL supervisor %s and its %d worker(s)" % (victim[:8], len(by_sup[victim])))
        after = wait_for("the dead supervisor's executors running elsewhere",
                         lambda: self._moved_off(victim, version), 90)
        self._count_pids(before, after, lambda s: s[0] == victim)
        return None

    def _moved_off(self, victim, version):
        ws = self._settled((version or 0) + 1)
        return ws if ws and all(s[0] != victim for s in ws) else None

    def _upgrade(self):
        new_name = self.topology + "-v2"
        flux = os.path.join(self.root, new_name + ".yaml")
        with open(flux, "w") as f:
            f.write(NEW_FLUX)
        group = "lc-group-" + self.topology
        self.c.env["LC_GROUP"] = group
        partitions = len(make_topic(self.c.bootstrap, self.topic_in))
        watcher = OwnershipWatcher(self.c, self.topic_in, partitions, "/kafkaspout",
                                   self.topic_in, group)
        try:
            r = self.c.run("upgrade", self.topology, flux, "--env-filter", "--name", new_name,
                           "--wait", "2", timeout=240)
            self.check(r.returncode == 0, "upgrade failed: " + r.stderr.strip()[-500:])
            new_id = topology_id(self.c, new_name)
            if new_id is not None:
                # From here the scenario's clean-up removes NEW.
                self.topology, self.id = new_name, new_id
            # The watcher keeps looking while NEW takes over and commits.
            time.sleep(3)
        finally:
            watcher.stop()
        report = watcher.report()
        self.result.update(report)
        self.check(report["owner_overlaps"] == 0,
                   "%d partition(s) had two owners" % report["owner_overlaps"])
        self.check(report["watcher_looks"] > 0, "the ownership watcher never looked: %s" %
                   report["watcher_errors"])
        # What the old spout had in flight when it stopped is all NEW may read again.
        self.pending_bound = 2000
        self.check(len(report["handover_ms"]) == partitions,
                   "the watcher saw %d of %d partitions change hands: %s" %
                   (len(report["handover_ms"]), partitions, report))
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tempest", required=True)
    ap.add_argument("--rate", type=int, default=5000, help="records per second produced")
    ap.add_argument("--seconds", type=float, default=12, help="length of each stream")
    ap.add_argument("--producers", type=int, default=1,
                    help="kafka-python producer processes sharing the rate")
    ap.add_argument("--runs", type=int, default=1, help="clusters, each running every scenario")
    ap.add_argument("--scenario", action="append", choices=SCENARIOS)
    ap.add_argument("--dir", help="working directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the working directory")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    a = ap.parse_args()
    # A SIGTERM (a test's timeout) unwinds through the finally blocks that stop the cluster.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    scenarios = [s for s in SCENARIOS if s in (a.scenario or SCENARIOS)]

    def log(msg):
        if not a.quiet:
            print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)

    root = a.dir or tempfile.mkdtemp(prefix="tempest-live-change-")
    os.makedirs(root, exist_ok=True)
    ok = True
    try:
        for run in range(a.runs):
            run_dir = os.path.join(root, "run-%d" % run)
            os.makedirs(run_dir)
            cluster = Cluster(a.tempest, run_dir, log)
            try:
                for name in scenarios:
                    log("run %d: %s at %d records/s" % (run, name, a.rate))
                    try:
                        result = Scenario(cluster, name, a.rate, a.seconds, a.producers, run_dir,
                                          log).run()
                    except (RuntimeError, TimeoutError, OSError,
                            subprocess.TimeoutExpired) as e:
                        result = {"scenario": name, "rate": a.rate, "ok": False,
                                  "problems": [str(e)]}
                    result["run"] = run
                    result["load"] = os.getloadavg()[0]
                    ok = ok and result["ok"]
                    print(json.dumps(result), flush=True)
            finally:
                cluster.close()
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
