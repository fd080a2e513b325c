#!/usr/bin/python3
"""Runs tests/system/live_change/live_change_driver.py at several rates and summarises it.

For each rate, `--runs` fresh `tempest dev` clusters each run every scenario (a rebalance of one
bolt, a rebalanced WordCountBolt, a rebalance onto one more worker, a SIGKILLed worker, a
SIGKILLed supervisor, a `tempest upgrade` to storm-kafka-client), or those named by `--scenario`,
under a kafka-python stream; each stream lasts
`--seconds` or holds at most 300,000 records (the dev Kafka keeps about 100k per partition, 4
partitions), and one kafka-python producer process is used per 20,000 records/s. Prints every
JSON line of the driver, then a markdown table per scenario and rate: median and range of the
longest output gap (as received, and by the output's record timestamps), replays, lost, the
worker-kill recovery time, workers restarted and kept, the upgrade's partitions seen with two
owners, and the rate the producers kept up.
Figures only: nothing is asserted. Needs kafka-python (Debian's python3-kafka).

Usage: live_change_bench.py --tempest BIN [--rates 5000,50000] [--runs 3] [--seconds 12]
                            [--scenario NAME]...
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "system",
                      "live_change", "live_change_driver.py")
FIELDS = ("gap_ms", "gap_ts_ms", "replays", "lost", "recovered_ms", "workers_restarted",
          "workers_kept", "workers_started", "counts_reset", "owner_overlaps", "rate_sent", "load")


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    med = statistics.median(values)
    fmt = (lambda v: "%g" % round(v, 1))
    return fmt(med) if min(values) == max(values) else "%s (%s–%s)" % (
        fmt(med), fmt(min(values)), fmt(max(values)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tempest", required=True)
    ap.add_argument("--rates", default="5000,50000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=12)
    ap.add_argument("--scenario", action="append",
                    help="only this driver scenario (repeatable; default: all)")
    a = ap.parse_args()
    results = []
    for rate in [int(r) for r in a.rates.split(",")]:
        seconds = min(a.seconds, 300000 / rate)
        producers = max(1, -(-rate // 20000))
        argv = ["/usr/bin/python3", DRIVER, "--tempest", a.tempest, "--rate", str(rate),
                "--seconds", str(seconds), "--producers", str(producers), "--runs", str(a.runs)]
        for scenario in a.scenario or []:
            argv += ["--scenario", scenario]
        print("# " + " ".join(argv), flush=True)
        run = subprocess.run(argv, stdout=subprocess.PIPE, text=True)
        for line in run.stdout.splitlines():
            print(line, flush=True)
            results.append(json.loads(line))
    print("\n| scenario | rate | runs | ok | " + " | ".join(FIELDS) + " |")
    print("|---" * (len(FIELDS) + 4) + "|")
    keys = sorted({(r["scenario"], r["rate"]) for r in results}, key=lambda k: (k[1], k[0]))
    for scenario, rate in keys:
        rs = [r for r in results if r["scenario"] == scenario and r["rate"] == rate]
        cells = [summary([r.get(f) for r in rs]) for f in FIELDS]
        print("| %s | %d | %d | %d | %s |" % (scenario, rate, len(rs),
                                              sum(r.get("ok", False) for r in rs),
                                              " | ".join(cells)))
    return 0 if all(r.get("ok") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
