"""What every peer shares: the model's constants, the initial state, the check against
grayscott on a small grid, the timing loop and the one-line JSON result.

The model (grayscott's defaults, the course's seed): a 3x3 Oono-Puri Laplacian, zero-flux
boundary (a neighbour outside the grid contributes nothing), explicit Euler:
    lap(x)  = sum over the 8 neighbours n present of w_n * (x_n - x_centre)
    u_next  = u + dt * (du * lap(u) - u*v*v + feed * (1 - u))
    v_next  = v + dt * (dv * lap(v) + u*v*v - (feed + kill) * v)
All arithmetic in float32.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

FEED, KILL, DU, DV, DT = 0.014, 0.054, 0.1, 0.05, 1.0

# Oono-Puri weights, row-major 3x3 (the centre's is unused).
WEIGHTS = np.array([[0.25, 0.5, 0.25],
                    [0.5, 0.0, 0.5],
                    [0.25, 0.5, 0.25]])

# The exit status of a peer that cannot run here (module or device missing), as ctest expects.
SKIPPED = 77

CHECK_ROWS, CHECK_COLS, CHECK_STEPS = 48, 80, 200
# Relative L2 difference of v allowed against grayscott after CHECK_STEPS float32 steps: the two
# sum the same terms in a different order, so they differ by float32 rounding only.
CHECK_TOLERANCE = 1e-5


def seed_state(rows, cols, xp=np):
    """u = 1, v = 0 except the seed rectangle (grayscott's seed_rectangle)."""
    u = np.ones((rows, cols), dtype=np.float32)
    v = np.zeros((rows, cols), dtype=np.float32)
    clamp = lambda x, hi: min(max(x, 0), hi)
    r0, r1 = clamp(7 * rows // 16 - 4, rows), clamp(8 * rows // 16 - 4, rows)
    c0, c1 = clamp(7 * cols // 16, cols), clamp(8 * cols // 16, cols)
    u[r0:r1, c0:c1] = 0.0
    v[r0:r1, c0:c1] = 1.0
    return xp.asarray(u), xp.asarray(v)


def present_weight_sum(rows, cols):
    """Per cell, the sum of the weights of the neighbours inside the grid (zero flux), float32.

    With it the Laplacian is sum_n w_n x_n - W x_centre, where the sum runs over the neighbours
    present: a zero-padded convolution or shifted slices over a zero halo give the first term."""
    present = np.zeros((rows + 2, cols + 2))
    present[1:-1, 1:-1] = 1.0
    total = np.zeros((rows, cols))
    for dr in range(3):
        for dc in range(3):
            if (dr, dc) != (1, 1):
                total += WEIGHTS[dr, dc] * present[dr:dr + rows, dc:dc + cols]
    return total.astype(np.float32)


def default_grayscott():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.environ.get("GRAYSCOTT"),
                      os.path.join(here, "..", "..", "build", "grayscott"),
                      shutil.which("grayscott")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--rows", type=int, default=1080)
    p.add_argument("--cols", type=int, default=1920)
    p.add_argument("--images", type=int, default=1000)
    p.add_argument("--steps-per-image", type=int, default=32)
    p.add_argument("--repeat", type=int, default=1, help="timed repeats; the median is reported")
    p.add_argument("--grayscott", default=default_grayscott(),
                   help="the grayscott executable the result is checked against")
    p.add_argument("--check-only", action="store_true", help="check against grayscott, do not time")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def skip(name, reason):
    print(json.dumps({"peer": name, "skipped": reason}) if "--json" in sys.argv
          else f"{name}: skipped: {reason}")
    sys.exit(SKIPPED)


def grayscott_v(grayscott, rows, cols, steps):
    """v after `steps` steps from the seed, computed by grayscott's CPU engine: in this process
    through the grayscott module where it is installed, otherwise by the grayscott program."""
    try:
        import grayscott as gs
    except ImportError:
        gs = None
    if gs is not None:
        sim = gs.Simulation(rows=rows, cols=cols, backend="cpu")
        sim.advance(steps)
        return np.asarray(sim.v, dtype=np.float64)
    import h5py
    if grayscott is None:
        raise SystemExit("grayscott executable not found: build it or pass --grayscott PATH")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "check.h5")
        subprocess.run([grayscott, "run", "--backend", "cpu", "--rows", str(rows), "--cols",
                        str(cols), "--images", "1", "--steps-per-image", str(steps),
                        "--output", out, "--quiet"], check=True)
        with h5py.File(out, "r") as f:
            return np.asarray(f["v"][-1], dtype=np.float64)


def check(name, make_runner, grayscott):
    """Runs the peer on a small grid and compares its v with grayscott's; exits on a mismatch."""
    expected = grayscott_v(grayscott, CHECK_ROWS, CHECK_COLS, CHECK_STEPS)
    runner = make_runner(CHECK_ROWS, CHECK_COLS)
    runner.advance(CHECK_STEPS)
    got = np.asarray(runner.v_host(), dtype=np.float64)
    if not np.all(np.isfinite(got)):
        raise SystemExit(f"{name}: check failed: non-finite values")
    error = float(np.linalg.norm(got - expected) / np.linalg.norm(expected))
    if not error <= CHECK_TOLERANCE:
        raise SystemExit(f"{name}: check failed: relative L2 difference from grayscott "
                         f"{error:.3e} > {CHECK_TOLERANCE:.0e} ({CHECK_ROWS}x{CHECK_COLS}, "
                         f"{CHECK_STEPS} steps)")
    return error


def run(name, make_runner, args, members=1):
    """Checks, then times the workload `repeat` times, each on a new runner that first steps one
    untimed image: that call compiles whatever the runner compiles (a JIT per runner, per shape or
    per step count), so no compilation is timed, only stepping; the timed images follow it.
    `members`: simulations of rows x cols the runner steps together (a batch)."""
    error = check(name, make_runner, args.grayscott)
    if args.check_only:
        print(json.dumps({"peer": name, "check_error": error}) if args.json
              else f"{name}: agrees with grayscott (relative L2 {error:.2e})")
        return
    seconds, warmups = [], []
    for _ in range(args.repeat):
        runner = make_runner(args.rows, args.cols)
        start = time.perf_counter()
        runner.advance(args.steps_per_image)
        runner.v_host()  # waits for an asynchronous device
        warmups.append(time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(args.images):
            runner.advance(args.steps_per_image)
        v = runner.v_host()
        seconds.append(time.perf_counter() - start)
        if not np.all(np.isfinite(v)):
            raise SystemExit(f"{name}: the timed run produced non-finite values")
    median = float(np.median(seconds))
    cell_updates = members * args.rows * args.cols * args.images * args.steps_per_image
    result = {"peer": name, "members": members, "rows": args.rows, "cols": args.cols,
              "images": args.images,
              "steps_per_image": args.steps_per_image, "seconds": median,
              "seconds_each": seconds, "cell_updates_per_s": cell_updates / median,
              "warmup_seconds": warmups, "check_error": error}
    if args.json:
        print(json.dumps(result))
    else:
        batch = f"{members} x " if members > 1 else ""
        print(f"{name}: {batch}{args.rows}x{args.cols}, {args.images} images x {args.steps_per_image} "
              f"steps in {median:.3f} s ({cell_updates / median / 1e9:.3f} Gcell-updates/s)")
