#!/usr/bin/python3
"""Draws the comparison saved by `bench/compare --save FILE` as a bar chart (PNG): each
implementation's time on the workload, log scale, with how many times faster grayscott is.

    bench/plot.py results.json docs/benchmarks.png"""

import argparse
import json

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", help="JSON written by bench/compare --save")
    p.add_argument("png", help="the chart to write")
    p.add_argument("--title", default=None)
    a = p.parse_args()
    with open(a.results) as f:
        saved = json.load(f)
    measured = [r for r in saved["results"] if "seconds" in r]
    if not measured:
        raise SystemExit(f"{a.results}: no measured results")
    measured.sort(key=lambda r: r["seconds"], reverse=True)
    ours = next(r for r in measured if r["name"].startswith("grayscott"))

    names = [r["name"] for r in measured]
    seconds = [r["seconds"] for r in measured]
    colours = ["#d95f02" if r is ours else "#7570b3" for r in measured]
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(measured) + 1.6))
    bars = ax.barh(names, seconds, color=colours)
    ax.set_xscale("log")
    ax.set_xlabel("seconds (log scale, lower is better)")
    for bar, r in zip(bars, measured):
        label = f"{r['seconds']:.3g} s"
        if r is not ours:
            label += f"  (grayscott {r['seconds'] / ours['seconds']:.1f}x faster)"
        ax.text(bar.get_width() * 1.05, bar.get_y() + bar.get_height() / 2, label, va="center",
                fontsize=9)
    ax.set_xlim(min(seconds) / 2, max(seconds) * 30)
    ax.set_title(a.title or f"{saved['workload']}\n{saved['machine']}, {saved['date']}",
                 fontsize=10)
    missing = [r["name"] for r in saved["results"] if "seconds" not in r]
    if missing:  # peers that could not run there (module or device missing) are named, not drawn
        ax.text(0, -0.22 - 0.25 / len(measured), "not measured: " + ", ".join(missing),
                transform=ax.transAxes, fontsize=8, color="grey")
    fig.tight_layout()
    fig.savefig(a.png, dpi=120)


if __name__ == "__main__":
    main()
