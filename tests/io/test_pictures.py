#!/usr/bin/env python3
"""`grayscott render`'s looks, checked from the outside: every --colormap is matplotlib's own map
(its 256 entries, read back from a PNG of a known ramp of values), --scale enlarges each cell to a
square, the default scale makes a small grid readable, and --annotate adds a title and a colorbar
whose colours run from the map's low end to its high end; a video takes the same looks.

Usage: test_pictures.py GRAYSCOTT WORKDIR. Needs Debian's python3-matplotlib, python3-h5py,
python3-numpy and ffmpeg (ffprobe).
"""
import os
import shutil
import subprocess
import sys

import h5py
import matplotlib
import matplotlib.image
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_checks import check, finish, work_in  # noqa: E402

GRAYSCOTT = os.path.abspath(sys.argv[1])
WORK = sys.argv[2]
work_in(WORK)


def run(*args):
    r = subprocess.run([GRAYSCOTT, *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
    return r


def picture(path):
    return np.rint(matplotlib.image.imread(path)[..., :3] * 255).astype(int)


# A run file whose one image is a ramp: cell (r, c) holds (16 r + c) / 255 * 0.5, every value
# of the default range 0:0.5 that maps onto colormap entry 16 r + c.
run("run", "--rows", "16", "--cols", "16", "--images", "1", "--steps-per-image", "1", "-o",
    "ramp.h5", "--quiet")
with h5py.File("ramp.h5", "r+") as f:
    f["v"][0] = (np.arange(256).reshape(16, 16) / 255.0 * 0.5).astype(np.float32)

for name in ("inferno", "viridis", "magma", "plasma", "cividis", "gray"):
    r = run("render", "ramp.h5", "--out", name, "--colormap", name, "--scale", "1", "--quiet")
    got = picture(f"{name}/v_0000.png").reshape(256, 3)
    table = matplotlib.colormaps["gray" if name == "gray" else name](np.arange(256) / 255.0)
    want = np.rint(table[:, :3] * 255).astype(int)
    worst = np.abs(got - want).max()
    check(r.returncode == 0 and worst <= 1, f"--colormap {name} is matplotlib's (worst {worst})")
r = run("render", "ramp.h5", "--out", "x", "--colormap", "jet")
check(r.returncode == 2 and "colormap: expected inferno" in r.stderr, f"an unknown map: {r.stderr}")

# --scale: a cell becomes a square of pixels; the default enlarges a 16x16 grid to 512x512.
run("render", "ramp.h5", "--out", "scaled", "--scale", "3", "--quiet")
small, scaled = picture("inferno/v_0000.png"), picture("scaled/v_0000.png")
check(scaled.shape == (48, 48, 3) and np.array_equal(scaled, small.repeat(3, 0).repeat(3, 1)),
      f"--scale 3: each cell a 3x3 square ({scaled.shape})")
run("render", "ramp.h5", "--out", "default", "--quiet")
check(picture("default/v_0000.png").shape == (512, 512, 3), "the default scale: 16x16 shows as 512")
r = run("run", "--rows", "16", "--cols", "16", "--images", "1", "--steps-per-image", "1", "-o",
        "again.h5", "--render", "again", "--quiet")
check(picture("again/v_0000.png").shape == (512, 512, 3), "run --render scales alike")
for bad in ("0", "65", "two"):
    r = run("render", "ramp.h5", "--out", "bad", "--scale", bad)
    check(r.returncode == 2 and "scale" in r.stderr and not os.path.exists("bad/v_0000.png"),
          f"--scale {bad} is refused: {r.stderr.strip()}")

# --annotate: white margins with dark text above, and the colorbar below from low to high.
run("render", "ramp.h5", "--out", "annotated", "--scale", "10", "--annotate", "--colormap",
    "viridis", "--quiet")
a = picture("annotated/v_0000.png")
check(a.shape[0] > 160 + 30 and a.shape[1] >= 160, f"annotated picture {a.shape}")
cells = np.where((np.abs(a - picture("viridis/v_0000.png")[0, 0]).sum(axis=2) == 0))
top = cells[0].min()
title = a[:top]
check((title.sum(axis=2) < 200).any() and (title == 255).mean() > 0.7,
      "a title in dark ink on white above the image")
below = a[top + 160:]
viridis = np.rint(matplotlib.colormaps["viridis"](np.arange(256) / 255.0)[:, :3] * 255)
row = below[np.argmax([(np.abs(r[:, None, :] - viridis[None]).sum(axis=2).min(axis=1) <= 3).mean()
                       for r in below])]
inside = row[8:-8]
nearest = np.abs(inside[:, None, :] - viridis[None]).sum(axis=2).argmin(axis=1)
check(nearest[0] < 16 and nearest[-1] > 239 and (np.diff(nearest) >= 0).all(),
      f"a colorbar from the map's low end to its high end ({nearest[0]} .. {nearest[-1]})")

# A video takes the same looks: an annotated, scaled frame.
if shutil.which("ffprobe"):
    r = run("render", "ramp.h5", "--video", "annotated.mp4", "--scale", "10", "--annotate",
            "--quiet")
    size = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=width,height", "-of",
                           "csv=p=0", "annotated.mp4"], capture_output=True, text=True).stdout
    w, h = (int(x) for x in size.strip().split(","))
    check(r.returncode == 0 and (w, h) == (a.shape[1] + a.shape[1] % 2, a.shape[0] + a.shape[0] % 2),
          f"the annotated video is the annotated picture's size ({w}x{h})")

# An unfinished file is rendered with a note of what it holds; a complete one without.
import signal  # noqa: E402
import time  # noqa: E402
# (Long enough, at 100 s or more of stepping, that the signal always finds it running.)
writer = subprocess.Popen([GRAYSCOTT, "run", "--rows", "256", "--cols", "256", "--images", "400",
                           "--steps-per-image", "10000", "-o", "stopped.h5", "--quiet"])
time.sleep(1.5)
writer.send_signal(signal.SIGINT)
writer.wait(timeout=60)
with h5py.File("stopped.h5", "r") as f:
    held = len(f["step"])
r = run("render", "stopped.h5", "--out", "stopped", "--scale", "1")
check(r.returncode == 0 and
      f"note: stopped.h5 holds {held} of 400 images (status: interrupted by SIGINT after image "
      f"{held})" in r.stderr, f"an interrupted file's pictures come with a note: {r.stderr!r}")
r = run("render", "ramp.h5", "--out", "complete", "--scale", "1")
check("note:" not in r.stderr, f"a complete file's pictures come without: {r.stderr!r}")

finish("colormaps, scale and annotations")
