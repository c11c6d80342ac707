#!/usr/bin/python3
"""A running file is read (xarray through h5netcdf in SWMR mode, grayscott info and render), and
the .xmf follows the file at linear cost: while a run is written, the companion (whole XML every
time it is read: replaced atomically) lists exactly the images /step counts, give or take the
instant between a flush and the companion's rename; each listed image points at its chunk's
bytes; 100000 images of 1x1 finish in seconds with a companion of a few hundred bytes per image.
Usage: test_xdmf_follows.py PATH/TO/grayscott WORK_FOLDER"""

import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_checks import check, finish, work_in  # noqa: E402

grayscott = os.path.abspath(sys.argv[1])
work_in(os.path.abspath(sys.argv[2]))


def listed(xmf):
    """Images the companion lists, and their Seek offsets of v; the XML must parse whole."""
    root = ET.parse(xmf).getroot()
    grids = root.find("Domain").find("Grid").findall("Grid")
    seeks = [int(g.find("Attribute[@Name='v']/DataItem").get("Seek")) for g in grids]
    return len(grids), seeks


def steps_counted(path):
    with h5py.File(path, "r", swmr=True) as f:
        return len(f["step"])


# 1. While running: sample the step count, then the companion, then the step count again.
# Long enough to be running still after the samples and the reads below on a fast core (400
# images took 5 s on a Zen 4 core, which the samples alone take): it is killed before its end.
run = subprocess.Popen([grayscott, "run", "--rows", "128", "--cols", "128", "--images", "1500",
                        "--steps-per-image", "2000", "--threads", "1", "--backend", "cpu",
                        "--quiet", "-o", "live.h5"], stderr=subprocess.PIPE, text=True)
samples = []
deadline = time.time() + 120
while run.poll() is None and time.time() < deadline:
    time.sleep(0.3)
    if not os.path.exists("live.xmf"):
        continue
    try:
        before = steps_counted("live.h5")
    except OSError:
        continue
    time.sleep(0.1)  # the companion is written right after the flush that made `before` visible
    count, _ = listed("live.xmf")
    after = steps_counted("live.h5")
    samples.append((before, count, after))
    check(before <= count <= after,
          f"while running: /step counted {before} then {after}, the .xmf listed {count}")
    if len(samples) >= 12 and after > 0:
        break
# A running file, read: plain xarray through h5netcdf opened in SWMR mode (the recipe of
# docs/file-format.md), grayscott info and render.
import h5netcdf  # noqa: E402
import xarray as xr  # noqa: E402
opened = None
for attempt in range(5):  # a reader can meet a flush half done (the sizes of /v and /time differ)
    try:
        with h5netcdf.File("live.h5", "r", swmr=True) as nc:
            ds = xr.open_dataset(xr.backends.H5NetCDFStore(nc))
            opened = (ds.v.shape[0], ds.time.shape[0], float(ds.v[-1].mean()))
            ds.close()
        break
    except (ValueError, OSError) as error:
        print(f"note: attempt {attempt}: {error}")
        time.sleep(0.2)
check(opened is not None and opened[0] == opened[1] and opened[0] > 0,
      f"xarray did not read the running file: {opened}")
info = subprocess.run([grayscott, "info", "live.h5"], capture_output=True, text=True)
check(info.returncode == 0 and f"being written by process {run.pid}" in info.stdout,
      f"info of a running file: {info.stdout}{info.stderr}")
shot = subprocess.run([grayscott, "render", "live.h5", "--image", "-1", "--out", "shots"],
                      capture_output=True, text=True)
check(shot.returncode == 0 and os.listdir("shots"), f"render of a running file: {shot.stderr}")
run.kill()
run.wait()
check(any(0 < count for _, count, _ in samples), f"the .xmf never listed an image: {samples}")
check(len({count for _, count, _ in samples}) > 2, f"the .xmf did not grow: {samples}")
# After kill -9: the companion lists exactly what /step counts, each image at its chunk.
count, seeks = listed("live.xmf")
with h5py.File("live.h5", "r", swmr=True) as f:
    counted = len(f["step"])
    chunks = [f["v"].id.get_chunk_info_by_coord((i, 0, 0)).byte_offset for i in range(count)]
check(count == counted, f"after kill -9: the .xmf lists {count} images, /step counts {counted}")
check(seeks == chunks, "the .xmf's offsets are not the chunks of /v")

# 2. Linear cost: 100000 images of 1x1.
started = time.time()
r = subprocess.run([grayscott, "run", "--rows", "1", "--cols", "1", "--images", "100000",
                    "--steps-per-image", "1", "--backend", "cpu", "--quiet", "-o", "many.h5"],
                   capture_output=True, text=True, timeout=120)
seconds = time.time() - started
check(r.returncode == 0, f"100000 images: {r.stderr}")
print(f"100000 images of 1x1: {seconds:.1f} s, .xmf {os.path.getsize('many.xmf')} bytes")
check(seconds < 30, f"100000 images of 1x1 took {seconds:.1f} s")
per_image = os.path.getsize("many.xmf") / 100000
check(per_image < 600, f"the .xmf takes {per_image:.0f} bytes per image")
check(listed("many.xmf")[0] == 100000, "the .xmf does not list the 100000 images")

finish("the .xmf follows the file; a running file is read")
