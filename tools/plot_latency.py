"""Plots `cargo xtask bench` results: latency distributions as CDFs (one panel per measure, one
line per scheduler) and, optionally, deadline misses per periodic task and load as bars.

Usage: plot_latency.py SAMPLES.csv OUT.png [MISSES.csv MISSES.png]
  SAMPLES.csv: columns series,value (series "scheduler metric", values in µs)
  MISSES.csv:  columns metric,scheduler,value (metric "<task>_<load>_miss_pct", value in %)
"""
import csv
import math
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLUMNS = 3


def title(metric: str) -> str:
    if metric == "uname_us":
        return "uname -r round trip under 2x CPU overcommit"
    if metric.endswith("_wu_us"):
        task, load = metric[: -len("_wu_us")].rsplit("_", 1)
        return f"{task} wakeup latency under {load}"
    return metric


def plot_cdfs(csv_path: str, png_path: str) -> None:
    series = defaultdict(list)
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            series[row["series"]].append(float(row["value"]) / 1000.0)
    metrics = sorted({name.split(" ", 1)[1] for name in series})
    rows = max(1, math.ceil(len(metrics) / COLUMNS))
    cols = min(COLUMNS, max(1, len(metrics)))
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False)
    for ax, metric in zip(axes.flat, metrics):
        for name, values in sorted(series.items()):
            sched, m = name.split(" ", 1)
            if m != metric or not values:
                continue
            values.sort()
            n = len(values)
            ax.step(values, [(i + 1) / n for i in range(n)], where="post", label=sched)
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_title(title(metric), fontsize=10)
        ax.set_xlabel("milliseconds (emulated VM: compare, do not read absolutely)", fontsize=8)
        ax.set_ylabel("fraction of samples ≤ x")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)


def plot_misses(csv_path: str, png_path: str) -> None:
    values = {}
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            values[(row["metric"], row["scheduler"])] = float(row["value"])
    metrics = sorted({m for m, _ in values})
    scheds = sorted({s for _, s in values}, key=lambda s: (s != "eevdf", s))
    if not metrics:
        return
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(metrics) * max(1, len(scheds)) / 3), 4.5))
    width = 0.8 / max(1, len(scheds))
    for i, sched in enumerate(scheds):
        xs = [j + i * width for j in range(len(metrics))]
        ax.bar(xs, [values.get((m, sched), 0.0) for m in metrics], width, label=sched)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(metrics))])
    ax.set_xticklabels([m[: -len("_miss_pct")] for m in metrics], rotation=30, ha="right")
    ax.set_ylabel("deadlines missed, % of periods (median)")
    ax.set_title("Periodic tasks under load: deadline misses (lower is better)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)


def main(argv: list[str]) -> None:
    plot_cdfs(argv[1], argv[2])
    if len(argv) >= 5:
        plot_misses(argv[3], argv[4])


if __name__ == "__main__":
    main(sys.argv)
