#!/usr/bin/python3
"""The whole performance report in one command (bench/run_perf_report.sh runs this).

Sections, in this order, each with the machine's load (`uptime`) before it:
  headline   engine_bench and cluster_bench with their default flags, and
             bench/tempest_local_bench.py (the product path); with --before,
             the before build's programs and these alternate (before, after,
             before, ...) and each figure gets the median of the per-pair
             ratios after/before;
  scaling    engine_bench for payloads of 10 B, 100 B, 1 KB, 10 KB, fields
             grouping over 1M keys (1 and 2 executors) against shuffle, 1 ->
             2 -> 4 executors per component; cluster_bench for 1 -> 2 -> 3
             worker processes (this build only: the flags are new);
  sweep      Storm's ThroughputVsLatency: the paced acked topology at 10%,
             20%, ... 150% of its measured acked peak, in process and across
             two worker processes; written to tvl.dat and plotted by gnuplot
             into throughput-latency.png.
Every figure is the median of --reps runs with its range and, where the
program measures one in the same run, its ratio to the same-run baseline
(engine_bench: the SPSC hand-off; cluster_bench: the LocalCluster figure).
Writes OUT_DIR/report.md (all tables), OUT_DIR/raw/*.txt (every program's
output), OUT_DIR/tvl.dat, OUT_DIR/throughput-latency.plt and the PNG.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RUN_LIMIT_SECS = 900  # one program invocation; a stuck one ends the report

ENGINE_REP = re.compile(
    r"^rep (\d+): baseline ([0-9.]+)M/s \| unacked ([0-9.]+)M/s .*?\| acked ([0-9.]+)M/s .*?\| "
    r"latency @([0-9.]+)k/s: p50 (\d+)us p99 (\d+)us", re.M)
ENGINE_EXACT = re.compile(
    r"^rep (\d+) exact: baseline ([0-9.]+)/s unacked ([0-9.]+)/s acked ([0-9.]+)/s "
    r"latency @([0-9.]+)/s", re.M)
CLUSTER_RUN = re.compile(
    r"^run (\d+): local unacked ([0-9.]+)M/s acked ([0-9.]+)M/s \| 2 processes unacked "
    r"([0-9.]+)M/s \([0-9.]+x\) acked ([0-9.]+)M/s \([0-9.]+x\) \| latency @([0-9.]+)k/s: "
    r"p50 (\d+)us p99 (\d+)us", re.M)
WORKERS_RUN = re.compile(
    r"^run (\d+): baseline ([0-9.]+)M/s \| local unacked ([0-9.]+)M/s acked ([0-9.]+)M/s \| "
    r"(\d+) workers unacked ([0-9.]+)M/s \([0-9.]+x\) acked ([0-9.]+)M/s \([0-9.]+x\) \| "
    r"latency @([0-9.]+)k/s: p50 (\d+)us p99 (\d+)us", re.M)
SWEEP = re.compile(r"^sweep: load ([0-9.]+) offered ([0-9.]+)/s achieved ([0-9.]+)/s "
                   r"p50 (\d+)us p99 (\d+)us", re.M)


class Report:
    """Runs programs, keeps their output under raw/, collects markdown."""

    def __init__(self, out_dir):
        self.out = out_dir
        self.raw = os.path.join(out_dir, "raw")
        os.makedirs(self.raw, exist_ok=True)
        self.md = []
        self.count = 0

    def run(self, name, argv):
        self.count += 1
        path = os.path.join(self.raw, "%03d-%s.txt" % (self.count, name))
        print("  $ %s" % " ".join(argv), flush=True)
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_LIMIT_SECS,
                              check=False)
        with open(path, "w", encoding="utf-8") as f:
            f.write("$ %s\n%s%s" % (" ".join(argv), proc.stdout, proc.stderr))
        if proc.returncode != 0:
            sys.exit("perf_report: %s failed (exit %d); see %s" % (argv[0], proc.returncode, path))
        print("    %.1fs -> %s" % (time.monotonic() - start, os.path.relpath(path, self.out)),
              flush=True)
        return proc.stdout

    def load(self):
        up = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout
        m = re.search(r"load average: (.*)$", up.strip())
        return "%s UTC, load average %s" % (time.strftime("%H:%M:%S", time.gmtime()),
                                            m.group(1) if m else "?")

    def section(self, title, intro):
        self.md += ["", "## " + title, "", intro, "", "Machine: " + self.load() + ".", ""]
        print("== %s (%s)" % (title, self.load()), flush=True)

    def table(self, header, rows):
        self.md.append("| " + " | ".join(header) + " |")
        self.md.append("|" + "---|" * len(header))
        for r in rows:
            self.md.append("| " + " | ".join(r) + " |")
        self.md.append("")


def med(v):
    return statistics.median(v) if v else float("nan")


def rate(r):
    if r != r:  # nan
        return "-"
    return "%.2fM/s" % (r / 1e6) if r >= 1e6 else "%.1fk/s" % (r / 1e3)


def rate_cell(v):
    return "%s (%s–%s)" % (rate(med(v)), rate(min(v)), rate(max(v)))


def us_cell(v):
    return "%.0f µs (%.0f–%.0f)" % (med(v), min(v), max(v))


def ratio_cell(num, den):
    r = [a / b for a, b in zip(num, den) if b > 0]
    return "%.2fx (%.2f–%.2f)" % (med(r), min(r), max(r)) if r else "-"


def parse_engine(text):
    """Per rep: baseline, unacked, acked, latency rate (per s), p50, p99 (µs)."""
    reps = {int(m.group(1)): [float(m.group(2)) * 1e6, float(m.group(3)) * 1e6,
                              float(m.group(4)) * 1e6, float(m.group(5)) * 1e3,
                              float(m.group(6)), float(m.group(7))]
            for m in ENGINE_REP.finditer(text)}
    for m in ENGINE_EXACT.finditer(text):
        reps[int(m.group(1))][0:4] = [float(m.group(i)) for i in range(2, 6)]
    cols = list(zip(*[reps[k] for k in sorted(reps)]))
    return dict(zip(["baseline", "unacked", "acked", "lat_rate", "p50", "p99"], map(list, cols)))


def parse_cluster(text):
    rows = [[float(x) for x in m.groups()[1:]] for m in CLUSTER_RUN.finditer(text)]
    cols = list(zip(*rows))
    scale = [1e6, 1e6, 1e6, 1e6, 1e3, 1, 1]
    names = ["local_unacked", "local_acked", "unacked", "acked", "lat_rate", "p50", "p99"]
    return {n: [x * s for x in c] for n, s, c in zip(names, scale, cols)}


def parse_workers(text):
    rows = [[float(x) for x in m.groups()[1:]] for m in WORKERS_RUN.finditer(text)]
    cols = list(zip(*rows))
    scale = [1e6, 1e6, 1e6, 1, 1e6, 1e6, 1e3, 1, 1]
    names = ["baseline", "local_unacked", "local_acked", "workers", "unacked", "acked",
             "lat_rate", "p50", "p99"]
    return {n: [x * s for x in c] for n, s, c in zip(names, scale, cols)}


def headline(rep, args, before, after):
    """engine_bench, cluster_bench (default flags) and tempest local, alternating."""
    builds = ([("before", before)] if before else []) + [("after", after)]
    rep.section("Headline: default flags" + (", before and after" if before else ""),
                "engine_bench and cluster_bench with their default flags, one repetition per "
                "invocation (`--reps 1` / `--runs 1`), %d invocations per build%s; tempest local "
                "through bench/tempest_local_bench.py. Ratio to baseline: median of the per-run "
                "ratios to the same run's SPSC hand-off (engine_bench) or LocalCluster figure "
                "(cluster_bench)." % (args.reps, ", alternating before, after, before, ..."
                                      if before else ""))
    eng = {label: [] for label, _ in builds}
    clu = {label: [] for label, _ in builds}
    for i in range(args.reps):
        for label, d in builds:
            eng[label].append(parse_engine(rep.run(
                "engine-%s" % label, [os.path.join(d, "bench/engine_bench"), "--reps", "1"]
                + args.engine_quick)))
        for label, d in builds:
            clu[label].append(parse_cluster(rep.run(
                "cluster-%s" % label, [os.path.join(d, "bench/cluster_bench"), "--runs", "1"]
                + args.cluster_quick)))
    flat = lambda runs, k: [x for r in runs for x in r[k]]  # noqa: E731
    header = ["measure", "build", "median (range)", "ratio to same-run baseline"]
    if before:
        header.append("after/before (median of pairs, range)")
    rows = []
    measures = [("engine_bench unacked tuples/s", eng, "unacked", "baseline"),
                ("engine_bench acked trees/s", eng, "acked", "baseline"),
                ("engine_bench latency p99 @50%", eng, "p99", None),
                ("engine_bench latency p50 @50%", eng, "p50", None),
                ("cluster_bench 2 processes unacked", clu, "unacked", "local_unacked"),
                ("cluster_bench 2 processes acked", clu, "acked", "local_acked"),
                ("cluster_bench latency p99 @50%", clu, "p99", None),
                ("cluster_bench local unacked", clu, "local_unacked", None),
                ("cluster_bench local acked", clu, "local_acked", None)]
    for name, data, key, base in measures:
        for label, _ in builds:
            v = flat(data[label], key)
            row = [name, label, us_cell(v) if key.startswith("p") else rate_cell(v),
                   ratio_cell(v, flat(data[label], base)) if base else "-"]
            if before:
                row.append(ratio_cell(v, flat(data["before"], key)) if label == "after" else "")
            rows.append(row)
    rep.table(header, rows)
    md = os.path.join(rep.raw, "tempest-local.md")
    argv = [sys.executable, os.path.join(HERE, "tempest_local_bench.py"), "--reps",
            str(args.reps), "--tuples", str(args.local_tuples), "--markdown", md]
    for label, d in builds:
        argv += ["--tempest", "%s=%s" % (label, os.path.join(d, "cli/tempest"))]
    argv += ["--engine-bench", os.path.join(builds[-1][1], "bench/engine_bench")]
    rep.run("tempest-local", argv)
    rep.md.append("`tempest local` (the product path, whole process; bench/tempest_local_bench.py: "
                  "tuples/s = N / (wall(N) - median wall(0 tuples)), %d tuples, acked runs "
                  "half), machine: %s:" % (args.local_tuples, rep.load()))
    rep.md.append("")
    with open(md, encoding="utf-8") as f:
        rep.md.append(f.read())


def scaling(rep, args, after):
    rep.section("How cost grows", "This build only (the flags are new). engine_bench `--reps %d "
                "--latency-secs %s %s`; each row one invocation; ratio: median of the per-rep ratios "
                "to the same rep's SPSC hand-off of 100-byte items (a fixed yardstick of the "
                "machine's speed, whatever the payload). Latency: the acked topology paced at 50%% "
                "of the same rep's acked rate." % (args.reps, args.scaling_latency_secs,
                                                   " ".join(args.new_quick)))
    engine = os.path.join(after, "bench/engine_bench")
    common = ["--reps", str(args.reps), "--latency-secs", str(args.scaling_latency_secs)]
    common += args.new_quick
    settings = [("payload 10 B", ["--payload", "10"], args.tuples),
                ("payload 100 B (shuffle, 1 executor)", [], args.tuples),
                ("payload 1 KB", ["--payload", "1024"], args.tuples // 2),
                ("payload 10 KB", ["--payload", "10240"], args.tuples // 8),
                ("fields, 1M keys, 1 executor", ["--grouping", "fields", "--keys", "1000000"],
                 args.tuples),
                ("shuffle, 2 executors", ["--executors", "2"], args.tuples),
                ("fields, 1M keys, 2 executors",
                 ["--grouping", "fields", "--keys", "1000000", "--executors", "2"], args.tuples),
                ("shuffle, 4 executors", ["--executors", "4"], args.tuples)]
    rows = []
    for name, flags, tuples in settings:
        slug = "scaling-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        r = parse_engine(rep.run(slug, [engine] + common + ["--tuples", str(tuples)] + flags))
        rows.append([name, str(tuples), rate_cell(r["unacked"]), ratio_cell(r["unacked"], r["baseline"]),
                     rate_cell(r["acked"]), ratio_cell(r["acked"], r["baseline"]),
                     us_cell(r["p99"]), rate(med(r["lat_rate"])), rate_cell(r["baseline"])])
    rep.table(["setting", "--tuples", "unacked tuples/s", "ratio", "acked trees/s", "ratio",
               "p99 @50% of acked", "at", "SPSC baseline"], rows)
    rep.md.append("Worker processes: cluster_bench `--workers W --runs %d --latency-secs %s %s`: W "
                  "forked workers on loopback, each with one spout and one bolt executor (the "
                  "acker in the first), shuffle; ratio: median of the per-run ratios to the same "
                  "run's LocalCluster (1 spout, 1 bolt) figure. Machine: %s." %
                  (args.reps, args.scaling_latency_secs, " ".join(args.new_quick), rep.load()))
    rep.md.append("")
    cluster = os.path.join(after, "bench/cluster_bench")
    rows = []
    for w in (1, 2, 3):
        r = parse_workers(rep.run("scaling-workers-%d" % w, [
            cluster, "--workers", str(w), "--runs", str(args.reps), "--tuples", str(args.tuples),
            "--latency-secs", str(args.scaling_latency_secs)] + args.new_quick))
        rows.append([str(w), rate_cell(r["unacked"]), ratio_cell(r["unacked"], r["local_unacked"]),
                     rate_cell(r["acked"]), ratio_cell(r["acked"], r["local_acked"]),
                     us_cell(r["p99"]), rate(med(r["lat_rate"])),
                     ratio_cell(r["unacked"], r["baseline"]), rate_cell(r["baseline"])])
    rep.table(["worker processes", "unacked tuples/s", "vs local", "acked trees/s", "vs local",
               "p99 @50% of acked", "at", "unacked vs SPSC", "SPSC baseline"], rows)


def sweep(rep, args, after):
    rep.section("Throughput vs latency", "Storm's ThroughputVsLatency method: the acked topology "
                "(1 acker) with the spout paced at a fraction of the acked peak measured just "
                "before it (`--reps 1`), stepped up past the peak; per step the offered and the "
                "achieved trees/s, complete latency p50 and p99 over a measured window of %s s "
                "after a warm-up window as long. In process: engine_bench `--sweep`; across two "
                "worker processes: cluster_bench `--sweep` (the spout and acker in one, the bolt "
                "in the other). Plot: throughput-latency.png." % args.sweep_latency_secs)
    fractions = args.sweep_fractions
    runs = [("in process", [os.path.join(after, "bench/engine_bench"), "--reps", "1"]),
            ("2 worker processes", [os.path.join(after, "bench/cluster_bench"), "--runs", "1"])]
    blocks = []
    rows = []
    for name, argv in runs:
        quick = list(args.new_quick) if "engine" in argv[0] else []
        quick += ["--tuples", str(args.tuples)] if args.quick else []
        text = rep.run("sweep-" + ("local" if "engine" in argv[0] else "2-workers"), argv + ["--latency-secs", str(args.sweep_latency_secs),
                                        "--sweep", fractions] + quick)
        steps = [[float(x) for x in m.groups()] for m in SWEEP.finditer(text)]
        blocks.append((name, steps))
        for load, offered, achieved, p50, p99 in steps:
            rows.append([name, "%.0f%%" % (load * 100), rate(offered), rate(achieved),
                         "%.0f µs" % p50, "%.0f µs" % p99])
    rep.table(["setting", "offered (of peak)", "offered", "achieved", "p50", "p99"], rows)
    dat = os.path.join(rep.out, "tvl.dat")
    with open(dat, "w", encoding="utf-8") as f:
        f.write("# Throughput vs complete latency (bench/perf_report.py), %s\n" % rep.load())
        for name, steps in blocks:
            f.write("# %s\n# load offered_per_s achieved_per_s p50_us p99_us\n" % name)
            for s in steps:
                f.write("%.2f %.0f %.0f %.0f %.0f\n" % tuple(s))
            f.write("\n\n")
    plot(rep, [name for name, _ in blocks], dat)


def plot(rep, names, dat):
    png = os.path.join(rep.out, "throughput-latency.png")
    plt = os.path.join(rep.out, "throughput-latency.plt")
    lines = []
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for i, name in enumerate(names):
        for col, pct, dash in ((5, "p99", 1), (4, "p50", 2)):
            # Points joined in order of achieved rate (smooth unique): past the peak
            # the achieved rate stalls while latency climbs, and a noisy step
            # must not draw a loop back across the plot.
            lines.append("'%s' index %d using ($3/1000):($%d > 0 ? $%d : 1/0) smooth unique "
                         "with linespoints lw 2 pt 7 ps 0.8 dt %d lc rgb '%s' title '%s, %s'" %
                         (dat, i, col, col, dash, colors[i % len(colors)], name, pct))
    with open(plt, "w", encoding="utf-8") as f:
        f.write("""set terminal pngcairo size 1000,680 enhanced font 'DejaVu Sans,11'
set output '%s'
set title "Tempest: complete latency against achieved throughput (acked, 1 acker, 100-byte tuples)\\n{/*0.8 %s}"
set xlabel 'achieved throughput (thousand trees/s)'
set ylabel 'complete latency (µs, log scale)'
set logscale y
set format y '%%.0f'
set grid xtics ytics mytics
set key outside bottom center horizontal
set xrange [0:*]
plot %s
""" % (png, rep.load(), ", \\\n     ".join(lines)))
    proc = subprocess.run(["/usr/bin/gnuplot", plt], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit("perf_report: gnuplot failed: %s" % proc.stderr)
    rep.md.append("![throughput vs latency](throughput-latency.png)")
    rep.md.append("")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--before", help="the before build directory (its bench/ and cli/)")
    ap.add_argument("--after", default=os.path.join(REPO, "build/release"),
                    help="this build's directory (default: build/release of this checkout)")
    ap.add_argument("--quick", action="store_true", help="a smoke check: small runs, 1 rep")
    ap.add_argument("--sections", default="headline,scaling,sweep")
    ap.add_argument("--update-docs-image", action="store_true",
                    help="copy the PNG to docs/images/throughput-latency.png")
    args = ap.parse_args()
    args.tuples, args.local_tuples = 3_000_000, 10_000_000
    args.engine_quick, args.cluster_quick = [], []
    # The new flags' runs (this build only) take a shorter SPSC yardstick: at
    # ~4.5M items/s on this machine the default 20M would be a third of them.
    args.new_quick = ["--baseline-items", "5000000"]
    args.scaling_latency_secs = args.sweep_latency_secs = 1
    args.sweep_fractions = "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0,1.1,1.25,1.5"
    if args.quick:
        args.reps = 1
        args.tuples, args.local_tuples = 500_000, 1_000_000
        args.engine_quick = ["--tuples", "500000", "--latency-secs", "0.5"]
        args.cluster_quick = args.engine_quick
        args.new_quick = ["--baseline-items", "1000000"]
        args.scaling_latency_secs = args.sweep_latency_secs = 0.5
        args.sweep_fractions = "0.25,0.5,1.0,1.5"
    before = os.path.abspath(args.before) if args.before else None
    after = os.path.abspath(args.after)
    sections = args.sections.split(",")
    needed = ["bench/engine_bench", "bench/cluster_bench"]
    needed += ["cli/tempest"] if "headline" in sections else []
    for d in [after] + ([before] if before else []):
        for p in needed:
            if not os.access(os.path.join(d, p), os.X_OK):
                sys.exit("perf_report: %s/%s is missing" % (d, p))
    rep = Report(os.path.abspath(args.out_dir))
    start = time.monotonic()
    rep.md += ["# Performance report", "",
               "Command: `bench/run_perf_report.sh %s`" % " ".join(sys.argv[1:]), "",
               "After: `%s`%s." % (after, "; before: `%s`" % before if before else "")]
    if "headline" in sections:
        headline(rep, args, before, after)
    if "scaling" in sections:
        scaling(rep, args, after)
    if "sweep" in sections:
        sweep(rep, args, after)
    rep.md += ["", "Total time: %.0f s; finished %s." % (time.monotonic() - start, rep.load())]
    with open(os.path.join(rep.out, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(rep.md) + "\n")
    if args.update_docs_image and "sweep" in sections:
        shutil.copy(os.path.join(rep.out, "throughput-latency.png"),
                    os.path.join(REPO, "docs/images/throughput-latency.png"))
    print("\n".join(rep.md))


if __name__ == "__main__":
    main()
