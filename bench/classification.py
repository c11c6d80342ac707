#!/usr/bin/env python3
"""Pearson's map against gs.classify: each published (F, k) point run with grayscott in Pearson's
setup, its last image classified, and the class compared with the published one.

    build/venv/bin/python bench/classification.py                  # the table of docs/classification.md
    build/venv/bin/python bench/classification.py --pictures out/  # and a PNG of each final image

Pearson's setup (Science 261, 1993), in grid units: a 256x256 periodic grid of side 2.5, so
dx = 2.5/256 and Du = 2e-5/dx^2 = 0.2097, Dv = 0.1049, dt = 1, the five-point Laplacian; u = 1,
v = 0 except a central square of 20x20 cells at u = 1/2, v = 1/4, with +-1 % noise to break its
symmetry. The simulations here start from exactly that (written into gs.Simulation's arrays), on
Pearson's grid for 100000 steps by default (`--size 128 --steps 30000`: the same patterns on a
smaller grid, in a tenth of the time). The nearest start of the command line is
`--init noise --init-values 0.5,0.25` (a 16x16 square on 256x256, +-0.05 noise):

    grayscott run --rows 256 --cols 256 --feed F --kill K --du 0.2097 --dv 0.1049 \\
        --stencil five-point --boundary periodic --init noise --init-values 0.5,0.25 --seed 1 ...

Writes a Markdown table on stdout (and --csv FILE); the exit status is 0 whatever the agreement.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

# Threads that sleep at barriers: on a machine shared with other work, OpenMP's default spinning
# costs far more than the steps (set before the engine's OpenMP runtime starts).
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import grayscott as gs  # noqa: E402

PAGE = "http://mrob.com/pub/comp/xmorphia/pearson-classes.html"


def point_page(feed: float, kill: float) -> str:
    """Munafo's page of one point of his map: F=0.0460, k=0.0610 is F460/F460-k610.html."""
    f, k = round(feed * 1e4), round(kill * 1e4)
    return f"http://mrob.com/pub/comp/xmorphia/F{f}/F{f}-k{k}.html"


# Each published class and the classes of gs.classify that describe it: the first is the one it
# maps to, any others are what its description also allows (docs/classification.md says why).
MAPPING = {
    "alpha": ("waves",),      # spatiotemporal chaos of wavelets and fledgling spirals
    "beta": ("waves",),       # chaos: waves with voids that open and fill again
    "gamma": ("waves", "stripes"),  # stripes with endless instability and oscillation
    "delta": ("holes",),      # a hexagonal array of negative spots
    "epsilon": ("waves",),    # chaos of unstable spots, die-outs, regrowth
    "zeta": ("waves", "spots"),  # like epsilon, spots more stable, fewer die-outs
    "eta": ("mixed",),        # a mixture of spots and worms
    "theta": ("stripes",),    # negative stripes, branching, networks of loops
    "iota": ("holes",),       # negative spots (negatons)
    "kappa": ("stripes",),    # stripes, branching, hedgerow mazes
    "lambda": ("spots",),     # solitons that divide, then a steady hexagonal grid
    "mu": ("stripes", "mixed"),  # worms, possibly with some solitons
    "R": ("decayed",),        # the uniform red state, u = 1, v = 0
    "B": ("uniform",),        # the uniform blue state
}

# (published class, F, k, source). The examples of each class on Munafo's page of Pearson's
# classes, and the points whose own pages name their Pearson class.
POINTS = [
    ("alpha", 0.010, 0.047, PAGE),
    ("alpha", 0.014, 0.053, PAGE),
    ("beta", 0.014, 0.039, PAGE),
    ("beta", 0.026, 0.051, PAGE),
    ("gamma", 0.022, 0.051, PAGE),
    ("gamma", 0.026, 0.055, PAGE),
    ("delta", 0.030, 0.055, PAGE),
    ("delta", 0.042, 0.059, PAGE),
    ("epsilon", 0.018, 0.055, PAGE),
    ("epsilon", 0.022, 0.059, PAGE),
    ("zeta", 0.022, 0.061, PAGE),
    ("zeta", 0.026, 0.059, PAGE),
    ("eta", 0.034, 0.063, PAGE),
    ("theta", 0.030, 0.057, PAGE),
    ("theta", 0.038, 0.061, PAGE),
    ("theta", 0.046, 0.061, point_page(0.046, 0.061)),
    ("theta", 0.082, 0.059, point_page(0.082, 0.059)),
    ("iota", 0.046, 0.0594, PAGE),
    ("kappa", 0.050, 0.063, PAGE),
    ("kappa", 0.062, 0.063, point_page(0.062, 0.063)),
    ("lambda", 0.026, 0.061, PAGE),
    ("lambda", 0.034, 0.065, PAGE),
    ("mu", 0.046, 0.065, PAGE),
    ("mu", 0.058, 0.065, PAGE),
    ("mu", 0.050, 0.065, point_page(0.050, 0.065)),
    ("mu", 0.070, 0.063, point_page(0.070, 0.063)),
    ("R", 0.030, 0.070, PAGE),
    ("R", 0.060, 0.070, PAGE),
    ("B", 0.080, 0.040, PAGE),
]

# Pearson's rates in grid units (see the docstring).
DU, DV = 0.2097, 0.1049


# The value (u, v) of the seed square: Pearson's, and a stronger one for the points whose own
# pages describe runs started from spots of the reacting state ("an initial pattern of red with
# blue spots"), where Pearson's square decays before it grows.
SEEDS = {"pearson": (0.5, 0.25), "spot": (0.25, 0.5)}


def pearson_start(sim, size: int, seed: int, start: str = "pearson"):
    """Pearson's initial state, written into the simulation's own arrays: u = 1, v = 0, a central
    square of 20x20 cells at u = 1/2, v = 1/4 (SEEDS), and noise of +-1 % on both fields
    (additive, v kept non-negative)."""
    rng = np.random.default_rng(seed)
    u = np.ones((size, size))
    v = np.zeros((size, size))
    lo = size // 2 - 10
    u[lo:lo + 20, lo:lo + 20] = SEEDS[start][0]
    v[lo:lo + 20, lo:lo + 20] = SEEDS[start][1]
    u += rng.uniform(-0.01, 0.01, u.shape)
    v = np.maximum(v + rng.uniform(-0.01, 0.01, v.shape), 0.0)
    sim.u[...] = u
    sim.v[...] = v


def run_point(feed: float, kill: float, size: int, steps: int, gap: int, seed: int,
              start: str = "pearson"):
    """The last image after `steps` steps, and its RMS change per step over the last `gap`."""
    sim = gs.Simulation(rows=size, cols=size, feed=feed, kill=kill, du=DU, dv=DV, dt=1.0,
                        stencil="five-point", boundary="periodic")
    pearson_start(sim, size, seed, start)
    sim.advance(steps - gap)
    before = np.array(sim.v)
    sim.advance(gap)
    after = np.array(sim.v)
    return after, gs.change_per_step(before, after, gap)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=256, help="grid side (Pearson: 256)")
    parser.add_argument("--steps", type=int, default=100000, help="steps per point")
    parser.add_argument("--gap", type=int, default=200,
                        help="steps between the last two images (the change per step)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the noise")
    parser.add_argument("--csv", help="also write the table as CSV to this file")
    parser.add_argument("--pictures", help="write a PNG of each final image into this folder")
    parser.add_argument("--only", help="comma-separated published classes to run (e.g. mu,kappa)")
    args = parser.parse_args()

    points = POINTS
    if args.only:
        wanted = set(args.only.split(","))
        points = [p for p in points if p[0] in wanted]
    if args.pictures:
        os.makedirs(args.pictures, exist_ok=True)

    rows = []
    began = time.perf_counter()
    for published, feed, kill, source in points:
        t0 = time.perf_counter()
        seed_kind = "pearson" if source == PAGE else "spot"
        v, change = run_point(feed, kill, args.size, args.steps, args.gap, args.seed, seed_kind)
        result = gs.classify(v, periodic=True, change_per_step=change)
        seconds = time.perf_counter() - t0
        accepted = MAPPING[published]
        f = result.features
        minority = f["holes"] if f["covered"] > 0.5 else f["objects"]
        rows.append({
            "published": published, "feed": feed, "kill": kill, "source": source, "start": seed_kind,
            "expected": "/".join(accepted), "ours": result.pattern,
            "agree": result.pattern in accepted,
            "covered": f["covered"], "objects": f["objects"]["count"],
            "holes": f["holes"]["count"], "round_fraction": minority["round_fraction"],
            "change_per_step": change, "seconds": seconds,
        })
        print(f"{published:8s} F={feed:.4f} k={kill:.4f}: {result.pattern:8s} "
              f"(expected {'/'.join(accepted)}) covered {f['covered']:.3f} "
              f"objects {f['objects']['count']} holes {f['holes']['count']} "
              f"round {minority['round_fraction']:.2f} change {change:.2e} [{seconds:.1f} s]",
              file=sys.stderr, flush=True)
        if args.pictures:
            name = f"{published}-F{feed:.4f}-k{kill:.4f}-{result.pattern}.png"
            with open(os.path.join(args.pictures, name), "wb") as out:
                out.write(gs._picture_of(v))
    total = time.perf_counter() - began

    agree = sum(r["agree"] for r in rows)
    print("| published class | F | k | source | start | maps to | ours | agrees | covered | "
          "objects | holes | round share | change/step |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['published']} | {r['feed']:.4f} | {r['kill']:.4f} | [{'page' if r['source'] == PAGE else 'point'}]({r['source']}) "
              f"| {r['start']} | {r['expected']} | {r['ours']} | {'yes' if r['agree'] else '**no**'} "
              f"| {r['covered']:.3f} | {r['objects']} | {r['holes']} | {r['round_fraction']:.2f} "
              f"| {r['change_per_step']:.1e} |")
    print()
    print(f"Agreement: {agree} of {len(rows)} ({100.0 * agree / max(1, len(rows)):.0f} %); "
          f"{args.size}x{args.size}, {args.steps} steps per point, change over the last "
          f"{args.gap}; {total:.0f} s in all.")
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
