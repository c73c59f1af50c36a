"""Plots latency distributions from `cargo xtask bench` as CDFs, one line per scheduler.

Usage: plot_latency.py SAMPLES.csv OUT.png   (CSV columns: series,value; series "sched metric")
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(csv_path: str, png_path: str) -> None:
    series = defaultdict(list)
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            series[row["series"]].append(float(row["value"]) / 1000.0)
    metrics = sorted({name.split(" ", 1)[1] for name in series})
    fig, axes = plt.subplots(1, len(metrics), figsize=(7 * len(metrics), 4.5), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        for name, values in sorted(series.items()):
            sched, m = name.split(" ", 1)
            if m != metric:
                continue
            values.sort()
            n = len(values)
            ax.step(values, [(i + 1) / n for i in range(n)], where="post", label=sched)
        ax.set_title(f"{metric.replace('_us', '')} latency under 2x CPU overcommit")
        ax.set_xlabel("milliseconds (emulated VM: compare, do not read absolutely)")
        ax.set_ylabel("fraction of samples ≤ x")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
