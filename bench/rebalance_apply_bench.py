#!/usr/bin/python3
"""How long a rebalance takes to apply, in place and by restart.

Starts `tempest dev` (2 supervisors x 2 slots) in a new directory, submits
examples/cluster-generator-verifier.yaml paced at --rate tuples/s with
IdentityBolt as one executor over --tasks tasks (so `-e identity=N` regroups
its tasks), and runs `tempest rebalance ... -w 0 -e identity=N` for N in
--executors, one every --interval seconds. From the daemons' logs it reads,
per rebalance:

  notice:    nimbus wrote the new assignment -> a worker whose own executors
             stay applied it in place ("applied assignment version V in place")
  in place:  the worker's own time to apply it (the log line's "in N us")
  restart:   a worker whose executors changed: "stopping: assignment changed"
             -> its successor's "started with" line

and prints one line per rebalance and the medians. Nothing here asserts on
time; the figures go to docs/benchmarks.md. Everything it starts is stopped
and its directory removed (--keep keeps it).

  bench/rebalance_apply_bench.py --tempest build/release/cli/tempest \\
      [--executors 2,4,8,1,2,4,8,1] [--rate 4000] [--tasks 8] [--interval 6]
"""

import argparse
import glob
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STAMP = r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\]"
ASSIGNED = re.compile(STAMP + r".*assigned \S+ \(version (\d+), rebalance\)", re.M)
IN_PLACE = re.compile(STAMP + r".*applied assignment version (\d+) in place in (\d+) us", re.M)
STOPPING = re.compile(STAMP + r".*(\S+:\d+) stopping: assignment changed", re.M)
STARTED = re.compile(STAMP + r".*(\S+:\d+) started with", re.M)
DEV_LIMIT_SECS = 60


def stamp_secs(text):
    return time.mktime(time.strptime(text[:19], "%Y-%m-%d %H:%M:%S")) + int(text[20:]) / 1000.0


def start_dev(tempest, workdir):
    out = open(os.path.join(workdir, "dev.out"), "w")
    proc = subprocess.Popen([tempest, "dev", "--dir", os.path.join(workdir, "dev"), "-c",
                             "ui.port=0"], stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + DEV_LIMIT_SECS
    env = {}
    while time.monotonic() < deadline:
        text = open(os.path.join(workdir, "dev.out")).read()
        for line in text.splitlines():
            if line.startswith("export "):
                key, value = line[len("export "):].split("=", 1)
                env[key] = value
        if "\nready" in text and "TEMPEST_NIMBUS" in env:
            return proc, env
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    stop_dev(proc)
    sys.exit("rebalance_apply_bench: tempest dev did not become ready:\n" + text)


def stop_dev(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def topology(rate, tasks):
    with open(os.path.join(HERE, "..", "examples", "cluster-generator-verifier.yaml")) as f:
        text = f.read()
    text = text.replace("value: 0          # unlimited", "value: %d   # paced" % rate)
    text = text.replace("value: 200000", "value: 100000000")
    return text.replace("className: tempest.IdentityBolt\n    parallelism: 4",
                        "className: tempest.IdentityBolt\n    parallelism: 1\n"
                        "    numTasks: %d" % tasks)


def tempest_cmd(tempest, env, args):
    full = dict(os.environ, **env)
    full["OUT"] = os.path.join(os.path.dirname(env["TEMPEST_TOKEN_FILE"]), "output")
    return subprocess.run([tempest] + args, env=full, capture_output=True, text=True,
                          timeout=180, check=False)


def read_logs(dev_dir):
    text = ""
    for path in glob.glob(os.path.join(dev_dir, "logs", "nimbus.log")) + glob.glob(
            os.path.join(dev_dir, "supervisor-*", "supervisor", "workers", "*", "worker.log")):
        with open(path, errors="replace") as f:
            text += f.read() + "\n"
    return text


def measure(text):
    """Per assignment version: (notice ms, in-place us, restart ms), each a list."""
    assigned = {int(v): stamp_secs(t) for t, v in ASSIGNED.findall(text)}
    rows = {}
    for t, v, us in IN_PLACE.findall(text):
        v = int(v)
        if v in assigned:
            row = rows.setdefault(v, ([], [], []))
            row[0].append((stamp_secs(t) - assigned[v]) * 1000)
            row[1].append(int(us))
    starts = sorted((stamp_secs(t), slot) for t, slot in STARTED.findall(text))
    for t, slot in STOPPING.findall(text):
        stopped = stamp_secs(t)
        later = [s for s, sl in starts if sl == slot and s >= stopped]
        version = max((v for v, at in assigned.items() if at <= stopped + 0.001), default=None)
        if later and version is not None:
            rows.setdefault(version, ([], [], []))[2].append((later[0] - stopped) * 1000)
    return rows


def median_of(rows, i):
    values = [x for row in rows.values() for x in row[i]]
    return (statistics.median(values), min(values), max(values), len(values)) if values else None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tempest", default=os.path.join(HERE, "..", "build", "release", "cli",
                                                     "tempest"))
    p.add_argument("--executors", default="2,4,8,1,2,4,8,1")
    p.add_argument("--rate", type=int, default=4000)
    p.add_argument("--tasks", type=int, default=8)
    p.add_argument("--interval", type=float, default=6.0)
    p.add_argument("--keep", action="store_true")
    a = p.parse_args()
    counts = [int(x) for x in a.executors.split(",")]
    if any(c < 1 or c > a.tasks for c in counts):
        sys.exit("rebalance_apply_bench: --executors must be within 1..--tasks")
    workdir = tempfile.mkdtemp(prefix="rebalance-apply-")
    os.chmod(workdir, 0o755)  # workers run as another user and read below it
    proc, env = start_dev(os.path.abspath(a.tempest), workdir)
    try:
        flux = os.path.join(workdir, "paced.yaml")
        with open(flux, "w") as f:
            f.write(topology(a.rate, a.tasks))
        r = tempest_cmd(a.tempest, env, ["submit", flux, "--env-filter", "--until-running"])
        if r.returncode != 0:
            sys.exit("rebalance_apply_bench: submit failed:\n" + r.stderr)
        time.sleep(a.interval)
        for n in counts:
            r = tempest_cmd(a.tempest, env, ["rebalance", "cluster-generator-verifier", "-w", "0",
                                             "-e", "identity=%d" % n])
            if r.returncode != 0:
                sys.exit("rebalance_apply_bench: rebalance failed:\n" + r.stderr)
            time.sleep(a.interval)
        rows = measure(read_logs(os.path.join(workdir, "dev")))
    finally:
        stop_dev(proc)
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    for v in sorted(rows):
        notice, us, restart = rows[v]
        print("version %d: notice %s ms, in place %s us, restart %s ms" %
              (v, ",".join("%.0f" % x for x in notice), ",".join(str(x) for x in us),
               ",".join("%.0f" % x for x in restart)))
    for name, i, unit in (("notice (nimbus write -> applied in place)", 0, "ms"),
                          ("in place (worker's own time)", 1, "us"),
                          ("restart (stopping -> successor started)", 2, "ms")):
        m = median_of(rows, i)
        if m:
            print("median %s: %.1f %s (range %.1f-%.1f, n=%d)" % (name, m[0], unit, m[1], m[2],
                                                                  m[3]))
    print("load average: %s" % open("/proc/loadavg").read().split()[0])


if __name__ == "__main__":
    main()
