#!/usr/bin/env python3
"""A volume (--depth) split over MPI ranks, under a real mpiexec.

- The file (/u, /v, the checkpoint, /step, ...) is bitwise the single process's on 1 to 5 ranks,
  with automatic splits and forced uneven ones (2x1x1 on 5 planes, 1x2x2 on odd rows and columns,
  3x1x1 on 7 planes, blocks one cell thick), for every boundary, both volume stencils and both
  precisions; the XDMF companion is the single process's but for where the images lie.
- --stats over ranks: extremes and counts exactly the single process's, means to rounding.
- A run stopped by SIGTERM to the launcher continues with --resume on another number of ranks,
  one process included, and a single process's file continues over ranks: the finished file is
  bitwise the uninterrupted run's.
- A split that does not fit, a plane's RxC for a volume, a volume's PxRxC for a plane and a halo
  deeper than one cell are refused in one line.

Usage: test_mpi_volume.py GRAYSCOTT MPIEXEC [MPIEXEC_FLAGS...]
"""
import os
import random
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import compare_runs  # noqa: E402
import h5py  # noqa: E402
import scratch  # noqa: E402
import numpy as np  # noqa: E402
import xmf_places  # noqa: E402

GRAYSCOTT, MPIEXEC, FLAGS = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
WORK = scratch.enter("grayscott-mpi-volume-")
random.seed(int(os.environ.get("GRAYSCOTT_TEST_SEED", "11")))
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


def start(ranks, *args):
    """The program on `ranks` MPI ranks (0: one process without the launcher)."""
    command = [GRAYSCOTT, *args] if ranks == 0 else [MPIEXEC, "-n", str(ranks), *FLAGS, GRAYSCOTT,
                                                     *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(p, timeout=300):
    _, err = p.communicate(timeout=timeout)
    return p.returncode, err


def run(ranks, *args):
    return finished(start(ranks, *args))


def same(a, b, what):
    check(compare_runs.main(a, b) == 0, f"{what}: differs from the single process's file")


def same_xdmf(a, b, what):
    """The companions alike but for the file named and the images' places; b's places right."""
    def text(path):
        with open(path[:-3] + ".xmf") as f:
            content = f.read().replace(os.path.basename(path), "FILE")
        return re.sub(r' Seek="[0-9]+"', "", content)
    check(text(a) == text(b) and xmf_places.main(b) == 0, f"{what}: XDMF differs")


def volume(depth, rows, cols, boundary, stencil, precision, fields):
    return ["--depth", str(depth), "--rows", str(rows), "--cols", str(cols), "--boundary",
            boundary, "--stencil", stencil, "--precision", precision, "--fields", fields,
            "--init", "noise", "--seed", "5", "--feed", "0.03", "--kill", "0.06", "--threads", "1",
            "--quiet", "--force"]


# --- Bitwise the single process's file ------------------------------------------------------------
# (ranks, split or None for automatic, depth, rows, cols, boundary, stencil, precision)
CASES = [
    (1, None, 6, 9, 10, "zero-flux", "seven-point", "single"),
    (2, None, 6, 9, 10, "periodic", "nineteen-point", "double"),
    (3, None, 7, 9, 11, "fixed", "seven-point", "double"),
    (4, None, 6, 12, 10, "zero-flux", "nineteen-point", "single"),
    (5, None, 5, 6, 7, "periodic", "seven-point", "single"),
    (2, "2x1x1", 5, 8, 9, "fixed", "nineteen-point", "single"),
    (4, "1x2x2", 4, 9, 11, "periodic", "seven-point", "double"),
    (3, "3x1x1", 7, 8, 8, "periodic", "nineteen-point", "single"),
    (4, "2x2x1", 5, 7, 6, "zero-flux", "seven-point", "double"),
    (3, "1x1x3", 4, 6, 7, "fixed", "nineteen-point", "double"),
    (4, "1x4x1", 3, 4, 5, "fixed", "seven-point", "single"),  # blocks one row thick
    (4, "4x1x1", 4, 5, 6, "zero-flux", "nineteen-point", "double"),  # blocks one plane thick
]
for k, (ranks, split, depth, rows, cols, boundary, stencil, precision) in enumerate(CASES):
    # With v alone the checkpoint keeps u, and v comes from the last image.
    problem = volume(depth, rows, cols, boundary, stencil, precision, "v" if k % 2 else "u,v")
    problem += ["--images", "3", "--steps-per-image", "4"]
    what = (f"{depth}x{rows}x{cols} on {ranks} ranks ({split or 'automatic'}), {boundary}, "
            f"{stencil}, {precision}")
    code, err = run(0, "run", *problem, "-o", "serial.h5")
    check(code == 0, f"{what}: serial run: {err}")
    extra = ["--decomposition", split] if split else []
    code, err = run(ranks, "run", *problem, *extra, "-o", f"split{k}.h5")
    check(code == 0, f"{what}: run failed: {err}")
    if code == 0:
        same("serial.h5", f"split{k}.h5", what)
        same_xdmf("serial.h5", f"split{k}.h5", what)
    print(what, flush=True)

# --- Statistics over ranks ------------------------------------------------------------------------
stats = volume(6, 10, 9, "zero-flux", "nineteen-point", "double", "v")
stats += ["--images", "3", "--steps-per-image", "5", "--stats"]
code, err = run(0, "run", *stats, "-o", "stats1.h5")
check(code == 0, f"statistics, one process: {err}")
code, err = run(3, "run", *stats, "-o", "stats3.h5")
check(code == 0, f"statistics, three ranks: {err}")
if code == 0:
    with h5py.File("stats1.h5", "r") as one, h5py.File("stats3.h5", "r") as three:
        check(one["v"][...].tobytes() == three["v"][...].tobytes(), "statistics: /v differs")
        for name in ("v_min", "v_max", "u_min", "u_max", "change_max", "v_histogram"):
            check(np.array_equal(one["stats/" + name][...], three["stats/" + name][...]),
                  f"statistics over ranks: {name} differs")
        for name in ("v_mean", "v_std", "u_mean", "u_std", "change_rms_per_step"):
            check(np.allclose(one["stats/" + name][...], three["stats/" + name][...], rtol=1e-12,
                              atol=1e-15), f"statistics over ranks: {name} differs")
        v = one["v"][...].astype(np.float64)
        check(np.allclose(three["stats/v_mean"][...], v.mean(axis=(1, 2, 3)), rtol=1e-12),
              "statistics over ranks: v_mean is not the mean of the images")
print("statistics over 3 ranks", flush=True)

# --- Stopped by SIGTERM, resumed on another number of ranks ---------------------------------------


def long_run(boundary, stencil, precision, fields):
    return volume(16, 19, 17, boundary, stencil, precision, fields) + [
        "--images", "40", "--steps-per-image", "150"]


def after_images(p, path, images):
    """Waits until a single process's (SWMR) run file counts `images` images, or p ended."""
    while p.poll() is None:
        try:
            with h5py.File(path, "r", swmr=True) as f:
                if f["step"].shape[0] >= images:
                    return
        except (OSError, KeyError):
            pass  # not created yet, or its datasets not yet there
        time.sleep(0.02)


def status_of(path, swmr=False):
    with h5py.File(path, "r", swmr=swmr) as f:
        return f.attrs["status"], f["step"].shape[0]


# (ranks stopped, ranks resumed on: 0 is one process without the launcher)
STOPS = [(3, 2, "periodic", "nineteen-point", "single", "v"),
         (2, 0, "fixed", "seven-point", "double", "u,v"),
         (0, 2, "zero-flux", "nineteen-point", "double", "v"),
         (4, 3, "zero-flux", "seven-point", "single", "u,v")]
for k, (ranks, again, boundary, stencil, precision, fields) in enumerate(STOPS):
    problem = long_run(boundary, stencil, precision, fields)
    t0 = time.monotonic()
    code, err = run(0, "run", *problem, "-o", f"whole{k}.h5")
    duration = time.monotonic() - t0
    check(code == 0, f"uninterrupted run: {err}")
    path = f"stopped{k}.h5"
    p = start(ranks, "run", *problem, "-o", path, "--checkpoint-every", str(random.randint(2, 5)))
    if ranks == 0:
        after_images(p, path, random.randint(5, 25))
    else:
        while p.poll() is None and not os.path.exists(path):
            time.sleep(0.02)
        time.sleep(random.uniform(0.1, 0.4) * duration)
    p.send_signal(signal.SIGTERM)
    code, err = finished(p)
    status, n = status_of(path, swmr=ranks == 0)
    if ranks == 0:
        check(status != "complete", "the single process's run ended before its SIGTERM")
    if status != "complete":
        code, err = run(again, "run", "--resume", path, "--quiet")
        check(code == 0, f"resume of {ranks} ranks' file on {again}: {err}")
    same(f"whole{k}.h5", path, f"{boundary}/{stencil}/{precision}: {ranks or 'one process'} "
                               f"stopped after {n} ({status}), resumed on {again or 'one process'}")
    print(f"{boundary}/{stencil}/{precision}: SIGTERM to {ranks or 'one process'} after image {n}, "
          f"resumed on {again or 'one process'}", flush=True)

# --- Refusals, in one line ------------------------------------------------------------------------
small = volume(5, 8, 8, "zero-flux", "seven-point", "single", "v") + ["--images", "2"]
for ranks, args, wanted in (
        (4, [*small, "--decomposition", "2x2"], "is split PLANESxROWSxCOLS"),
        (6, [*small, "--decomposition", "6x1x1"], "volume is too small for 6x1x1 ranks"),
        (2, [*small, "--decomposition", "3x1x1"], "needs 3 ranks, but the run has 2"),
        (5, [*volume(2, 2, 1, "fixed", "seven-point", "single", "v"), "--images", "2"],
         "too small for 5 ranks in any split"),
        (2, [*small, "--halo-depth", "2"], "halo depth 1"),
        (2, ["--rows", "8", "--cols", "8", "--images", "2", "--quiet", "--force",
             "--decomposition", "2x1x1"], "is split ROWSxCOLS"),
):
    code, err = run(ranks, "run", *args, "-o", "refused.h5")
    lines = [line for line in err.splitlines() if line.startswith("grayscott:")]
    check(code != 0 and len(lines) == 1 and wanted in lines[0] and
          not os.path.exists("refused.h5"),
          f"{' '.join(args[-2:])} on {ranks} ranks: not refused in one line with '{wanted}': {err!r}")

scratch.leave(WORK, bool(failures))
if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("volumes over MPI ranks: all checks passed")
