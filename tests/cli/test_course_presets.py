"""The courses' programs as presets (docs/model.md), against a float64 NumPy transcription of the
formulas that page documents, written here: the starts (the Python course's box on its mesh, the
Kokkos course's drop), the stencils, the boundaries with their outside values and the Euler step.
Also: explicit options win over a preset and a pattern, a sweep takes both, and bad names and
values are one line before anything runs.

Usage: test_course_presets.py GRAYSCOTT WORKDIR
"""

import os
import subprocess
import sys

import h5py
import numpy as np

PROGRAM, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def run(*args, output, command="run"):
    path = os.path.join(WORK, output)
    done = subprocess.run([PROGRAM, command, *args, "-o", path, "--force", "--quiet"],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"grayscott {command} {' '.join(args)}: {done.stderr}")
    return h5py.File(path, "r")


# ---- The model of docs/model.md, in float64 ----------------------------------------------------

def box(rows, cols, border):
    """0.4 < x < 0.6, 0.4 ymax < y < 0.6 ymax on x = linspace(0, 1, nx), y = linspace(0, ymax, ny),
    ymax = ny * (x's step), the mesh of the grid with `border` cells around it."""
    nx, ny = rows + 2 * border, cols + 2 * border
    x, step = np.linspace(0, 1, nx, retstep=True)
    ymax = ny * step
    y = np.linspace(0, ymax, ny)
    inside = ((0.4 < x) & (x < 0.6))[:, None] & ((0.4 * ymax < y) & (y < 0.6 * ymax))[None, :]
    return inside[border:nx - border, border:ny - border]


def drop(rows, cols):
    inside = np.zeros((rows, cols), bool)
    inside[max(rows // 2 - 1, 0):rows // 2 + 1, max(cols // 2 - 1, 0):cols // 2 + 1] = True
    return inside


def start(inside, values):
    u, v = np.ones(inside.shape), np.zeros(inside.shape)
    u[inside], v[inside] = values
    return u, v


FIVE_POINT = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], float)
PRETTY = np.array([[1, 1, 1], [1, 0, 1], [1, 1, 1]], float)


def laplacian(x, weights, boundary, outside):
    padded = np.pad(x, 1, mode="wrap") if boundary == "periodic" else \
        np.pad(x, 1, mode="constant", constant_values=outside)
    rows, cols = x.shape
    total = np.zeros_like(x)
    for dr in range(3):
        for dc in range(3):
            if weights[dr, dc]:
                total += weights[dr, dc] * (padded[dr:dr + rows, dc:dc + cols] - x)
    return total


def model(u, v, steps, weights, boundary, outside, feed, kill, du=0.1, dv=0.05, dt=1.0):
    for _ in range(steps):
        uvv = u * v * v
        lu = laplacian(u, weights, boundary, outside[0])
        lv = laplacian(v, weights, boundary, outside[1])
        u, v = (u + dt * (du * lu - uvv + feed * (1 - u)),
                v + dt * (dv * lv + uvv - (feed + kill) * v))
    return u, v


def relative_l2(got, expected):
    return np.linalg.norm(np.asarray(got, float) - expected) / np.linalg.norm(expected)


# ---- Each preset against the model -------------------------------------------------------------

# name: start, stencil, boundary, outside, feed, kill, steps per image, precision's tolerance
PYTHON = dict(feed=0.0565, kill=0.062, steps=34, tolerance=2e-5, precision="single")
KOKKOS = dict(feed=0.014, kill=0.054, steps=10, tolerance=1e-12, precision="double")
PRESETS = {
    "course-numpy": dict(start="box-bordered", weights=FIVE_POINT, boundary="periodic",
                         outside=(1, 0), **PYTHON),
    "course-numba": dict(start="box-bordered", weights=FIVE_POINT, boundary="fixed",
                         outside=(1, 0), **PYTHON),
    "course-cupy": dict(start="box", weights=FIVE_POINT, boundary="fixed", outside=(0, 0),
                        **PYTHON),
    "course-jax": dict(start="box", weights=FIVE_POINT, boundary="fixed", outside=(0, 0),
                       **PYTHON),
    "course-kokkos": dict(start="drop", weights=PRETTY, boundary="fixed", outside=(1, 0),
                          **KOKKOS),
}

images = 6
for name, p in PRESETS.items():
    for rows, cols in [(30, 46), (23, 17)]:
        f = run("--preset", name, "--rows", str(rows), "--cols", str(cols), "--images",
                str(images), "--fields", "u,v", output=f"{name}.h5")
        if p["start"] == "drop":
            inside, values = drop(rows, cols), (0.0, 1.0)
        else:
            inside, values = box(rows, cols, 1 if p["start"] == "box-bordered" else 0), (0.7, 0.25)
        check(inside.any(), f"{name} {rows}x{cols}: the start has cells")
        u, v = start(inside, values)
        check(f.attrs["steps_per_image"] == p["steps"] and f.attrs["precision"] == p["precision"]
              and f.attrs["boundary"] == p["boundary"] and f.attrs["init"] == p["start"]
              and f.attrs["feed"] == p["feed"] and f.attrs["kill"] == p["kill"],
              f"{name}: the file records the preset's settings")
        if p["boundary"] == "fixed":
            check(list(f.attrs["outside"]) == list(p["outside"]), f"{name}: outside recorded")
        worst = 0.0
        for image in range(images):
            u, v = model(u, v, p["steps"], p["weights"], p["boundary"], p["outside"], p["feed"],
                         p["kill"])
            worst = max(worst, relative_l2(f["v"][image], v), relative_l2(f["u"][image], u))
        check(worst <= p["tolerance"],
              f"{name} {rows}x{cols}: every image within {p['tolerance']:g} of the float64 model "
              f"(relative L2 {worst:.2e})")
        f.close()

# The outside values matter: the same run with the default outside differs.
with run("--preset", "course-cupy", "--rows", "30", "--cols", "46", "--images", "2",
         output="zero.h5") as zero, \
        run("--preset", "course-cupy", "--outside", "1,0", "--rows", "30", "--cols", "46",
            "--images", "2", output="one.h5") as one:
    check(not np.array_equal(zero["v"][...], one["v"][...]) and
          list(one.attrs["outside"]) == [1, 0], "--outside wins over the preset's and matters")

# ---- Explicit options win --------------------------------------------------------------------

with run("--preset", "course-numba", "--boundary", "periodic", "--rows", "30", "--cols", "46",
         "--images", "2", output="numba-periodic.h5") as numba, \
        run("--preset", "course-numpy", "--rows", "30", "--cols", "46", "--images", "2",
            output="numpy.h5") as numpy_run:
    check(np.array_equal(numba["v"][...], numpy_run["v"][...]),
          "course-numba with --boundary periodic is course-numpy, bit for bit")

with run("--preset", "course-jax", "--pattern", "worms", "--kill", "0.06", "--steps-per-image",
         "5", "--init-values", "0.5,0.5", "--rows", "30", "--cols", "46", "--images", "1",
         output="mixed.h5") as f:
    check(f.attrs["feed"] == 0.078 and f.attrs["kill"] == 0.06, "pattern over preset, --kill over both")
    check(f.attrs["steps_per_image"] == 5, "--steps-per-image over the preset's")
    check(list(f.attrs["init_values"]) == [0.5, 0.5] and f.attrs["init"] == "box",
          "--init-values with the preset's start")

with run("--pattern", "spatiotemporal-chaos", "--rows", "16", "--cols", "16", "--images", "1",
         output="pattern.h5") as f:
    check(f.attrs["feed"] == 0.026 and f.attrs["kill"] == 0.051 and
          f.attrs["boundary"] == "zero-flux", "a pattern alone sets F and k only")

with run("--preset", "course-cupy", "--rows", "20", "--cols", "30", "--images", "2",
         output="sweep.h5", command="sweep") as f:
    check(list(f["feed"][...]) == [0.0565] and list(f["kill"][...]) == [0.062] and
          f.attrs["steps_per_image"] == 34 and list(f.attrs["outside"]) == [0, 0] and
          f.attrs["init"] == "box", "a sweep takes the preset's rates and settings")
with run("--preset", "course-cupy", "--feed", "0.03,0.04", "--rows", "20", "--cols", "30",
         "--images", "1", output="sweep2.h5", command="sweep") as f:
    check(list(f["feed"][...]) == [0.03, 0.04] and set(f["kill"][...]) == {0.062},
          "a sweep's --feed set wins over the preset's")

# ---- The README's block of the courses' runs, as written --------------------------------------

readme = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")).read()
block = readme[readme.index("# Python course (luckyjim/pyGrayScott)"):]
block = block[:block.index("```")]
commands = [line.split("#")[0].split() for line in block.splitlines()
            if line.startswith("grayscott ")]
check(len(commands) == 7, f"the README's block of the courses' runs: {len(commands)} commands")
written = os.path.join(WORK, "readme")
os.makedirs(written, exist_ok=True)
for old in os.listdir(written):
    os.remove(os.path.join(written, old))
for words in commands:
    done = subprocess.run([PROGRAM, *words[1:]], cwd=written, capture_output=True, text=True,
                          timeout=120)
    check(done.returncode == 0, f"README: {' '.join(words)}: {done.stderr.strip()}")
check(os.path.getsize(os.path.join(written, "run.avi")) > 0, "README: the course's .avi")

# ---- Bad input: one line, before anything runs -----------------------------------------------

for args, message in [
    (["--pattern", "zebra"], "pattern: unknown pattern 'zebra' (known: spots, labyrinthine"),
    (["--preset", "course-fortran"], "preset: unknown preset 'course-fortran' (known: course-numpy"),
    # A slip of the keyboard is answered with the name meant.
    (["--preset", "course-nunpy"], "preset: unknown preset 'course-nunpy' (did you mean course-numpy? known: "),
    (["--pattern", "spts"], "pattern: unknown pattern 'spts' (did you mean spots? known: spots"),
    (["--boundary", "fixed", "--outside", "nan,0"], "outside: the values must be finite"),
    (["--boundary", "fixed", "--outside", "1"], "outside: expected two numbers U,V"),
    (["--init", "drop", "--init-values", "0,inf"], "init-values: the values must be finite"),
    (["--init", "box", "--rows", "6"], "init box: a grid of 6x96 is too small to hold one cell"),
]:
    path = os.path.join(WORK, "refused.h5")
    done = subprocess.run([PROGRAM, "run", "--cols", "96", *args, "-o", path], capture_output=True,
                          text=True, timeout=60)
    lines = done.stderr.strip().splitlines()
    check(done.returncode != 0 and len(lines) == 1 and
          lines[0].startswith("grayscott: error: " + message) and not os.path.exists(path),
          f"{' '.join(args)}: {done.stderr.strip()}")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
