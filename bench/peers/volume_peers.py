#!/usr/bin/env python3
"""The 3D peers of `grayscott bench --preset 3d`: the same seven-point Gray-Scott step written
array-first in NumPy and in JAX on the CPU (jax.jit over a lax.fori_loop of steps, as the Python
course teaches), each checked against grayscott's own run on a small volume, then timed on the
workload given, compilation excluded (one untimed call of the same shape and step count first).

The model: u = 1, v = 0 except ADIOS2's cube (u = 0.25, v = 0.33 in [n/2 - 6, n/2 + 6) of each
axis), the seven-point Laplacian (the six faces' mean minus the centre), zero flux (a neighbour
beyond the grid is the cell itself: edge padding) or periodic (np.roll), explicit Euler, float32.

Usage: volume_peers.py [--peers numpy,jax] [--depth D --rows R --cols C] [--steps N]
                       [--boundary zero-flux|periodic] [--grayscott PATH] [--check-only] [--json]
Prints one line per peer (one JSON object with --json): its rate in Gcell-updates/s, the time,
the check's relative L2 difference from grayscott.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import default_grayscott  # noqa: E402

FEED, KILL, DU, DV, DT = 0.014, 0.054, 0.1, 0.05, 1.0
CHECK_SHAPE, CHECK_STEPS, CHECK_TOLERANCE = (20, 24, 28), 100, 1e-5
SKIPPED = 77


def cube_state(shape):
    u = np.ones(shape, np.float32)
    v = np.zeros(shape, np.float32)
    box = tuple(slice(max(n // 2 - 6, 0), min(n // 2 + 6, n)) for n in shape)
    u[box], v[box] = 0.25, 0.33
    return u, v


def seven_point(xp, x, boundary):
    """The seven-point Laplacian of x in NumPy or JAX (`xp`): the six faces' differences from the
    centre, summed, over 6; beyond a zero-flux face the cell itself (edge padding)."""
    if boundary == "periodic":
        faces = sum(xp.roll(x, s, axis=a) - x for a in range(3) for s in (1, -1))
    else:
        p = xp.pad(x, 1, mode="edge")
        c = p[1:-1, 1:-1, 1:-1]
        faces = ((p[:-2, 1:-1, 1:-1] - c) + (p[2:, 1:-1, 1:-1] - c) + (p[1:-1, :-2, 1:-1] - c)
                 + (p[1:-1, 2:, 1:-1] - c) + (p[1:-1, 1:-1, :-2] - c) + (p[1:-1, 1:-1, 2:] - c))
    return xp.float32(1.0 / 6) * faces


def numpy_runner(shape, boundary):
    u, v = cube_state(shape)

    def laplacian(x):
        return seven_point(np, x, boundary)

    def advance(steps):
        nonlocal u, v
        for _ in range(steps):
            uvv = u * v * v
            u, v = (u + np.float32(DT) * (np.float32(DU) * laplacian(u) - uvv
                                          + np.float32(FEED) * (np.float32(1) - u)),
                    v + np.float32(DT) * (np.float32(DV) * laplacian(v) + uvv
                                          - np.float32(FEED + KILL) * v))
        return v

    return advance


def jax_runner(shape, boundary):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    u0, v0 = cube_state(shape)
    state = [jnp.asarray(u0), jnp.asarray(v0)]

    def laplacian(x):
        return seven_point(jnp, x, boundary)

    def step(_, uv):
        u, v = uv
        uvv = u * v * v
        return (u + DT * (DU * laplacian(u) - uvv + FEED * (1 - u)),
                v + DT * (DV * laplacian(v) + uvv - (FEED + KILL) * v))

    @jax.jit
    def steps_of(u, v, n):
        return jax.lax.fori_loop(0, n, step, (u, v))

    def advance(steps):
        state[0], state[1] = steps_of(state[0], state[1], steps)
        state[1].block_until_ready()
        return np.asarray(state[1])

    return advance


RUNNERS = {"numpy": numpy_runner, "jax": jax_runner}


def grayscott_v(grayscott, shape, steps, boundary):
    import h5py
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "check.h5")
        subprocess.run([grayscott, "run", "--backend", "cpu", "--depth", str(shape[0]), "--rows",
                        str(shape[1]), "--cols", str(shape[2]), "--stencil", "seven-point",
                        "--boundary", boundary, "--init", "cube", "--images", "1",
                        "--steps-per-image", str(steps), "--output", out, "--quiet"], check=True)
        with h5py.File(out, "r") as f:
            return np.asarray(f["v"][-1], dtype=np.float64).reshape(shape)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peers", default="numpy,jax")
    p.add_argument("--depth", type=int, default=128)
    p.add_argument("--rows", type=int, default=128)
    p.add_argument("--cols", type=int, default=128)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--boundary", default="zero-flux", choices=("zero-flux", "periodic"))
    p.add_argument("--grayscott", default=default_grayscott())
    p.add_argument("--check-only", action="store_true", help="check against grayscott, do not time")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.grayscott is None:
        raise SystemExit("grayscott executable not found: build it or pass --grayscott PATH")
    expected = grayscott_v(args.grayscott, CHECK_SHAPE, CHECK_STEPS, args.boundary)
    shape = (args.depth, args.rows, args.cols)
    status = 0
    for name in args.peers.split(","):
        try:
            make = RUNNERS[name]
            check = make(CHECK_SHAPE, args.boundary)
            got = check(CHECK_STEPS).astype(np.float64)
        except ImportError as e:
            print(json.dumps({"peer": name, "skipped": str(e)}) if args.json
                  else f"{name}: skipped: {e}")
            status = status or SKIPPED
            continue
        error = float(np.linalg.norm(got - expected) / np.linalg.norm(expected))
        if not error <= CHECK_TOLERANCE:
            raise SystemExit(f"{name}: check failed: relative L2 difference from grayscott "
                             f"{error:.3e} > {CHECK_TOLERANCE:.0e}")
        if args.check_only:
            print(json.dumps({"peer": name, "check_error": error}) if args.json
                  else f"{name}: check vs grayscott {error:.1e}")
            continue
        runner = make(shape, args.boundary)
        runner(args.steps)  # untimed: compiles (JAX) and warms the caches
        start = time.perf_counter()
        runner(args.steps)
        seconds = time.perf_counter() - start
        rate = args.depth * args.rows * args.cols * args.steps / seconds / 1e9
        result = {"peer": name, "depth": args.depth, "rows": args.rows, "cols": args.cols,
                  "steps": args.steps, "boundary": args.boundary, "seconds": seconds,
                  "gcell_updates_per_s": rate, "check_error": error}
        print(json.dumps(result) if args.json else
              f"{name}: {rate:.3f} Gcell-updates/s ({seconds:.2f} s for {args.steps} steps of "
              f"{args.depth}x{args.rows}x{args.cols}, {args.boundary}); check vs grayscott "
              f"{error:.1e}")
    return status


if __name__ == "__main__":
    sys.exit(main())
