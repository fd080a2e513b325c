#!/usr/bin/python3
"""The product path: `tempest local` as a whole process, tuples/s.

Runs bench/tempest_local_unacked.yaml (acking off) and tempest_local_acked.yaml
(XOR acking, one acker, max.spout.pending 5000): tempest.SequenceSpout with
100-byte payloads -> tempest.IdentityBolt, shuffle, `--until-complete`.

Start-up and shutdown are excluded by subtraction: every run of N tuples is
paired with a run of 0 tuples of the same binary and mode (same file, same
process start, topology build, activation, completion poll and clean stop),
and

    tuples/s = N / (wall(N tuples) - median wall(0 tuples))

with wall the whole process's time (fork to exit) measured here. `tempest local`
notices completion on a 100 ms poll, in both runs, so the subtraction leaves
up to +-50 ms of that: keep N large enough that a run lasts seconds. A run counts
only if its `done:` line reports every tuple emitted (and acked, with acking),
none failed and no errors.

With several --tempest binaries they run alternately (A, B, A, B, ...), and
the table gives each one's median, range, and the median of the per-round
ratios to the first binary. With --engine-bench, every round first measures
the machine's SPSC hand-off of 100-byte items (engine_bench's baseline, 5M
items) and the table adds each rate's median ratio to its round's hand-off.

  bench/tempest_local_bench.py --tempest before=/path/cli/tempest \\
      --tempest after=build/release/cli/tempest [--reps 5] [--tuples 10000000]
      [--modes unacked,acked] [--engine-bench build/release/bench/engine_bench]
      [--markdown OUT.md]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DONE = re.compile(r"^done: (\S+) after [0-9.]+s; spout-emitted=(\d+) acked=(\d+) failed=(\d+) "
                  r"pending=(\d+) errors=(\d+)", re.M)
RUN_LIMIT_SECS = 300  # one `tempest local` run; a stuck run fails the benchmark


def run_once(binary, mode, count):
    """One whole `tempest local` process; returns its wall time in seconds."""
    env = dict(os.environ, BENCH_COUNT=str(count))
    flux = os.path.join(HERE, "tempest_local_%s.yaml" % mode)
    start = time.monotonic()
    proc = subprocess.run([binary, "local", flux, "--env-filter", "--until-complete"],
                          env=env, capture_output=True, text=True, timeout=RUN_LIMIT_SECS,
                          check=False)
    wall = time.monotonic() - start
    m = DONE.search(proc.stdout)
    want_acked = count if mode == "acked" else 0
    if (proc.returncode != 0 or not m or m.group(1) != "complete" or int(m.group(2)) != count
            or int(m.group(3)) != want_acked or int(m.group(4)) != 0 or int(m.group(6)) != 0):
        sys.exit("tempest_local_bench: %s %s count=%d failed (exit %d):\n%s%s" %
                 (binary, mode, count, proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
    return wall


BASELINE = re.compile(r"^rep 0: baseline ([0-9.]+)([kM])/s", re.M)


def spsc_baseline(engine_bench):
    """The same-run yardstick: engine_bench's SPSC hand-off of 100-byte items, items/s."""
    proc = subprocess.run([engine_bench, "--reps", "1", "--tuples", "100000", "--latency-secs",
                           "1", "--baseline-items", "5000000"], capture_output=True, text=True,
                          timeout=RUN_LIMIT_SECS, check=False)
    m = BASELINE.search(proc.stdout)
    if proc.returncode != 0 or not m:
        sys.exit("tempest_local_bench: %s gave no baseline (exit %d):\n%s%s" %
                 (engine_bench, proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
    return float(m.group(1)) * (1e6 if m.group(2) == "M" else 1e3)


def fmt_rate(r):
    return "%.2fM/s" % (r / 1e6) if r >= 1e6 else "%.0fk/s" % (r / 1e3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tempest", action="append", required=True,
                    help="LABEL=PATH or PATH of a tempest binary; repeat to alternate")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tuples", type=int, default=10_000_000,
                    help="tuples per unacked run; acked runs use half")
    ap.add_argument("--modes", default="unacked,acked")
    ap.add_argument("--engine-bench", help="engine_bench binary: measure the same-run SPSC "
                    "hand-off each round and report each rate's ratio to it")
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    binaries = []
    for t in args.tempest:
        label, _, path = t.rpartition("=")
        binaries.append((label or path, os.path.abspath(path)))
    modes = args.modes.split(",")
    walls = {}  # (label, mode, count) -> [wall]
    spsc = []  # per round, items/s
    for rep in range(args.reps):
        if args.engine_bench:
            spsc.append(spsc_baseline(args.engine_bench))
        for mode in modes:
            n = args.tuples if mode == "unacked" else args.tuples // 2
            for label, path in binaries:
                for count in (0, n):
                    w = run_once(path, mode, count)
                    walls.setdefault((label, mode, count), []).append(w)
                print("round %d: %s %s: %d tuples %.3fs, 0 tuples %.3fs" %
                      (rep, label, mode, n, walls[(label, mode, n)][-1],
                       walls[(label, mode, 0)][-1]), flush=True)
    lines = ["| tempest | mode | tuples/s median | range | rounds | vs %s (median of per-round "
             "ratios) | start-up+stop (0 tuples) |%s" %
             (binaries[0][0], " ratio to same-run SPSC (median) |" if spsc else ""),
             "|---|---|---|---|---|---|---|%s" % ("---|" if spsc else "")]
    for mode in modes:
        n = args.tuples if mode == "unacked" else args.tuples // 2
        rates = {}
        for label, _ in binaries:
            empty = statistics.median(walls[(label, mode, 0)])
            rates[label] = [n / max(w - empty, 1e-6) for w in walls[(label, mode, n)]]
        first = rates[binaries[0][0]]
        for label, _ in binaries:
            r = rates[label]
            ratio = statistics.median([a / b for a, b in zip(r, first)])
            line = "| %s | %s | %s | %s–%s | %d | %.2fx | %.3fs |" % (
                label, mode, fmt_rate(statistics.median(r)), fmt_rate(min(r)), fmt_rate(max(r)),
                len(r), ratio, statistics.median(walls[(label, mode, 0)]))
            if spsc:
                line += " %.2fx (SPSC %s) |" % (statistics.median(
                    [a / b for a, b in zip(r, spsc)]), fmt_rate(statistics.median(spsc)))
            lines.append(line)
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(table)


if __name__ == "__main__":
    main()
