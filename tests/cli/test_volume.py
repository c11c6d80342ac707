#!/usr/bin/env python3
"""Volumes (--depth) on the command line, end to end.

- Bad requests are refused in one line, exit status 2, before any file is made: a depth that is
  not a positive whole number, a plane's stencil on a volume and a volume's on a plane, classes
  asked of a volume, a volume too big for memory. A volume split over 2 MPI ranks writes the
  single process's file.
- --preset adios2 is ADIOS2's Gray-Scott example (its rates, stencil, boundary, start, precision,
  10 steps per image and its 64^3 grid), and a grid given explicitly wins over the preset's.
- The images of a volume run are those of a NumPy float64 model of docs/model.md in three
  dimensions, written here from the formulas (every neighbour with its boundary rule), for both
  volume stencils, every boundary and both precisions.

Usage: test_volume.py PATH/TO/grayscott WORK_DIR
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

GS = os.path.realpath(sys.argv[1])
WORK = sys.argv[2]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def grayscott(*args, timeout=120):
    return subprocess.run([GS, *args], capture_output=True, text=True, timeout=timeout)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)

# --- Refusals ------------------------------------------------------------------------------------

small = ["--rows", "16", "--cols", "16", "--images", "2", "--steps-per-image", "2"]
for args, wanted in (
        (["--depth", "0"], "depth must be a positive integer"),
        (["--depth", "-3"], "depth must be a positive integer"),
        (["--depth", "two"], "--depth"),
        (["--depth", "8", "--stencil", "oono-puri"],
         "stencil oono-puri is a plane's (3x3): a grid of depth 8 needs a volume's stencil"),
        (["--depth", "8", "--stencil", "1,1,1,1,0,1,1,1,1"], "stencil custom is a plane's"),
        (["--stencil", "seven-point"], "stencil seven-point is a volume's (3x3x3)"),
        (["--depth", "8", "--classify"], "classify: the pattern classes are a plane's"),
        (["--depth", "100000", "--rows", "100000", "--cols", "100000"],
         "depth x rows x cols: the state of 100000x100000x100000 cells"),
):
    output = "refused.h5"
    r = grayscott("run", *small, *args, "-o", output)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and wanted in r.stderr and
          not os.path.exists(output),
          f"run {' '.join(args)}: refused in one line with '{wanted}' (status {r.returncode}): "
          f"{r.stderr.strip()}")

mpirun = shutil.which("mpirun")
if mpirun:
    # Split over 2 ranks (its planes, rows or columns), the file is the single process's.
    # With v alone the checkpoint keeps u.
    volume = ["--depth", "8", *small, "--fields", "v", "--init", "noise", "--force"]
    serial = grayscott("run", *volume, "-o", "serial.h5")
    r = subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "2", GS, "run",
                        *volume, "--threads", "1", "-o", "split.h5"],
                       capture_output=True, text=True, timeout=120)
    same = False
    if serial.returncode == 0 and r.returncode == 0:
        with h5py.File("serial.h5", "r") as a, h5py.File("split.h5", "r") as b:
            names = []
            a.visititems(lambda name, obj: names.append(name)
                         if isinstance(obj, h5py.Dataset) else None)
            same = "checkpoint/u" in names and all(
                name in b and a[name][...].tobytes() == b[name][...].tobytes() for name in names)
    check(same, f"a volume over 2 MPI ranks runs and writes the serial file: {r.returncode} "
                f"{r.stderr.strip()} {serial.stderr.strip()}")
else:
    print("skipped: the volume over MPI ranks (no mpirun)")

# --- The images against a float64 model ---------------------------------------------------------

def offsets(stencil):
    faces = [(dz, dr, dc) for dz in (-1, 0, 1) for dr in (-1, 0, 1) for dc in (-1, 0, 1)
             if abs(dz) + abs(dr) + abs(dc) == 1]
    edges = [(dz, dr, dc) for dz in (-1, 0, 1) for dr in (-1, 0, 1) for dc in (-1, 0, 1)
             if abs(dz) + abs(dr) + abs(dc) == 2]
    if stencil == "seven-point":
        return [(o, 1 / 6) for o in faces]
    return [(o, 1 / 18) for o in faces] + [(o, 1 / 36) for o in edges]


def neighbour(x, o, boundary, outside):
    """x shifted so that cell (z, r, c) holds x[z + dz, r + dr, c + dc], with the boundary's rule
    beyond the grid: zero flux the cell itself, periodic the opposite side, fixed the outside
    value."""
    if boundary == "periodic":
        return np.roll(x, tuple(-d for d in o), axis=(0, 1, 2))
    pad = np.pad(x, 1, mode="constant", constant_values=outside)
    D, R, C = x.shape
    shifted = pad[1 + o[0]:1 + o[0] + D, 1 + o[1]:1 + o[1] + R, 1 + o[2]:1 + o[2] + C]
    if boundary == "zero-flux":
        z = np.arange(D)[:, None, None] + o[0]
        r = np.arange(R)[None, :, None] + o[1]
        c = np.arange(C)[None, None, :] + o[2]
        beyond = (z < 0) | (z >= D) | (r < 0) | (r >= R) | (c < 0) | (c >= C)
        shifted = np.where(beyond, x, shifted)
    return shifted


def model_steps(u, v, steps, p):
    u, v = u.astype(np.float64), v.astype(np.float64)
    weights = offsets(p["stencil"])
    out_u, out_v = p["outside"]
    for _ in range(steps):
        lu = sum(w * (neighbour(u, o, p["boundary"], out_u) - u) for o, w in weights)
        lv = sum(w * (neighbour(v, o, p["boundary"], out_v) - v) for o, w in weights)
        uvv = u * v * v
        u, v = (u + p["dt"] * (p["du"] * lu - uvv + p["feed"] * (1.0 - u)),
                v + p["dt"] * (p["dv"] * lv + uvv - (p["feed"] + p["kill"]) * v))
    return u, v


shape = (5, 9, 13)  # odd, unequal extents: a transposed axis shows
for stencil in ("seven-point", "nineteen-point"):
    for boundary in ("zero-flux", "periodic", "fixed"):
        for precision in ("single", "double"):
            p = dict(stencil=stencil, boundary=boundary, feed=0.03, kill=0.06, du=0.2, dv=0.1,
                     dt=1.0, outside=(0.75, 0.125))
            name = f"{stencil}-{boundary}-{precision}.h5"
            # --outside only where the boundary reads it (given elsewhere, it is refused).
            outside = ["--outside", "0.75,0.125"] if boundary == "fixed" else []
            r = grayscott("run", "--depth", str(shape[0]), "--rows", str(shape[1]), "--cols",
                          str(shape[2]), "--stencil", stencil, "--boundary", boundary,
                          *outside, "--precision", precision, "--init", "noise",
                          "--seed", "3", "--feed", "0.03", "--kill", "0.06", "--du", "0.2",
                          "--dv", "0.1", "--images", "3", "--steps-per-image", "4",
                          "--fields", "u,v", "-o", name, "--quiet")
            if r.returncode != 0:
                check(False, f"{name}: the run failed: {r.stderr.strip()}")
                continue
            with h5py.File(name, "r") as f:
                u = np.asarray(f["u"]).reshape(3, *shape)
                v = np.asarray(f["v"]).reshape(3, *shape)
            tolerance = 2e-5 if precision == "single" else 1e-12
            mu, mv = u[0], v[0]
            for image in (1, 2):
                mu, mv = model_steps(mu, mv, 4, p)
                error = max(np.abs(u[image] - mu).max(), np.abs(v[image] - mv).max())
                check(error < tolerance,
                      f"{name}: image {image} is the float64 model's within {tolerance} "
                      f"(off by {error:.3g})")

# --- The ADIOS2 preset ---------------------------------------------------------------------------

printed = grayscott("run", "--preset", "adios2", "--print-config").stdout
check('preset = "adios2"' in printed, "--print-config records the preset")
r = grayscott("run", "--preset", "adios2", "--images", "2", "-o", "adios2.h5", "--quiet")
check(r.returncode == 0, f"--preset adios2 runs: {r.stderr.strip()}")
if r.returncode == 0:
    with h5py.File("adios2.h5", "r") as f:
        a = f.attrs
        got = (int(a["depth"]), int(a["rows"]), int(a["cols"]), float(a["feed"]), float(a["kill"]),
               float(a["du"]), float(a["dv"]), float(a["dt"]), int(a["steps_per_image"]),
               str(a["boundary"]), str(a["precision"]), str(a["init"]))
        check(got == (64, 64, 64, 0.01, 0.05, 0.2, 0.1, 2.0, 10, "periodic", "double", "cube"),
              f"--preset adios2 is ADIOS2's example's settings: {got}")
        v1 = np.asarray(f["v"][0]).reshape(64, 64, 64)
    # Its first image is ADIOS2's cube (u = 0.25, v = 0.33 in [26, 38)^3) after 10 of its steps.
    u0, v0 = np.ones((64, 64, 64)), np.zeros((64, 64, 64))
    u0[26:38, 26:38, 26:38], v0[26:38, 26:38, 26:38] = 0.25, 0.33
    adios2 = dict(stencil="seven-point", boundary="periodic", feed=0.01, kill=0.05, du=0.2,
                  dv=0.1, dt=2.0, outside=(1.0, 0.0))
    error = np.abs(model_steps(u0, v0, 10, adios2)[1] - v1).max()
    check(error < 1e-12, f"its first image is ADIOS2's cube after 10 steps (off by {error:.3g})")


# ADIOS2's example run as its README shows it (settings-files.json: 1000 steps, an output every
# 10): `bpls -l gs.bp` gives U 0.0907758 / 1 and V 0 / 0.674811 over its 100 outputs. The same
# ranges here, to the few 1e-4 that its random forcing (1e-7 per step) and its own rounding leave.
r = grayscott("run", "--preset", "adios2", "--images", "100", "--fields", "u,v", "-o",
              "adios2-full.h5", "--quiet", timeout=300)
check(r.returncode == 0, f"--preset adios2 --images 100 runs: {r.stderr.strip()}")
if r.returncode == 0:
    with h5py.File("adios2-full.h5", "r") as f:
        u, v = f["u"][...], f["v"][...]
    got = (u.min(), u.max(), v.min(), v.max())
    published = (0.0907758, 1.0, 0.0, 0.674811)
    check(all(abs(a - b) < 1e-3 for a, b in zip(got, published)),
          f"the adios2 preset's ranges over 100 images are ADIOS2's published ones: {got}")

shutil.rmtree(WORK, ignore_errors=True)
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all volume checks passed")
