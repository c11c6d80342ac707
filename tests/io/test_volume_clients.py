#!/usr/bin/python3
"""A volume's run file from the outside, as real clients read it: h5py (shape [time, z, y, x],
chunks of a plane), xarray and netCDF4 (dims time, z, y, x named by the dimension scales),
`grayscott info` (the grid as DxRxC), `grayscott render` (a slice, another axis's slice, the
projection of the largest values; refusals), a video of a slice and one of the projection
(ffprobe counts their frames), and `grayscott repair` of a volume left open by its writer.

The files are written by the test-only program write_volume_file, through the run file's writer
with no engine (no backend steps a volume yet).
Usage: test_volume_clients.py PATH/TO/grayscott PATH/TO/write_volume_file WORKDIR"""

import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

grayscott, writer, work = (os.path.abspath(a) for a in sys.argv[1:4])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)
failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what)


def check(condition, what):
    if not condition:
        fail(what)


def run(*args, ok=True):
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    if ok and done.returncode != 0:
        fail(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return done


D, R, C, IMAGES = 16, 20, 24, 3
run(writer, "volume.h5", str(D), str(R), str(C), str(IMAGES), "single", "u,v")

with h5py.File("volume.h5", "r") as f:
    check(f["v"].shape == (IMAGES, D, R, C), f"/v has shape {f['v'].shape}")
    check(f["u"].shape == (IMAGES, D, R, C), f"/u has shape {f['u'].shape}")
    check(f["v"].chunks == (1, 1, R, C), f"/v is chunked {f['v'].chunks}")
    check(int(f.attrs["depth"]) == D, "the attribute depth")
    check(list(f["z"][...]) == list(range(D)), "/z holds 0..depth-1")
    names = [[s.name for s in f["v"].dims[k].values()] for k in range(4)]
    check(names == [["/time"], ["/z"], ["/y"], ["/x"]], f"/v's scales: {names}")
    v = f["v"][...]
    check(f["matrix"].shape == v.shape, "/matrix is /v")

# A run that writes v keeps u in the checkpoint's slots: every cell of the volume.
run(writer, "v_only.h5", str(D), str(R), str(C), "2")
with h5py.File("v_only.h5", "r") as f:
    checkpoint = f["checkpoint/u"].shape
    check(checkpoint == (2, D, R, C), f"/checkpoint/u has shape {checkpoint}")

import xarray as xr

ds = xr.open_dataset("volume.h5", engine="h5netcdf", drop_variables="matrix")
check(ds.v.dims == ("time", "z", "y", "x"), f"xarray: v's dims {ds.v.dims}")
check(ds.u.dims == ("time", "z", "y", "x"), f"xarray: u's dims {ds.u.dims}")
check(list(ds.z.values) == list(range(D)), "xarray: the z coordinate")
check(np.array_equal(ds.v.isel(time=1).values, v[1]), "xarray: v equals h5py's")
check(float(ds.v.isel(time=-1).sel(z=D // 2).max()) > 0.4, "xarray: the ball's centre")
ds.close()
try:
    import netCDF4

    with netCDF4.Dataset("volume.h5") as nc:
        check(nc["v"].dimensions == ("time", "z", "y", "x"), f"netCDF4: {nc['v'].dimensions}")
except ImportError:
    print("note: no netCDF4 module: its check skipped")

info = run(grayscott, "info", "volume.h5").stdout
check(f"grid: {D}x{R}x{C}," in info, f"info's grid line: {info}")

# The pictures: a slice across z by default (the middle plane), others asked for.
run(grayscott, "render", "volume.h5", "--out", "middle", "--scale", "1", "--quiet")
run(grayscott, "render", "volume.h5", "--out", "y", "--slice", "y=3", "--scale", "1", "--quiet")
run(grayscott, "render", "volume.h5", "--out", "max", "--projection", "max", "--scale", "1",
    "--quiet", "--image", "-1")
import matplotlib.image

for folder, shape, count in (("middle", (R, C), IMAGES), ("y", (D, C), IMAGES), ("max", (R, C), 1)):
    pictures = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    check(len(pictures) == count, f"render --out {folder}: {pictures}")
    if pictures:
        picture = matplotlib.image.imread(os.path.join(folder, pictures[-1]))
        check(picture.shape[:2] == shape, f"{folder}: a picture of {picture.shape[:2]}")
        check(np.ptp(picture[..., :3]) > 0.1, f"{folder}: the picture is blank")
refused = run(grayscott, "render", "volume.h5", "--out", "bad", "--slice", f"z={D}", ok=False)
check(refused.returncode != 0 and f"z={D} is out of range: the grid has {D} planes (z = 0 to "
      f"{D - 1})" in refused.stderr, f"a slice past the volume: {refused.stderr}")
refused = run(grayscott, "render", "volume.h5", "--out", "bad", "--slice", f"y={R}", ok=False)
check(refused.returncode != 0 and f"y={R} is out of range: the grid has {R} rows (y = 0 to "
      f"{R - 1})" in refused.stderr, f"a slice past the rows: {refused.stderr}")
both = run(grayscott, "render", "volume.h5", "--slice", "z=1", "--projection", "max", ok=False)
check(both.returncode != 0, "--slice and --projection together are refused")
run(writer, "plane.h5", "1", str(R), str(C), "1")
plane = run(grayscott, "render", "plane.h5", "--out", "plane", "--projection", "max", ok=False)
check(plane.returncode != 0 and "holds a plane" in plane.stderr, f"a plane's view: {plane.stderr}")

if shutil.which("ffmpeg") and shutil.which("ffprobe"):
    for name, view in (("slice.mp4", ["--slice", "x=mid"]), ("max.mp4", ["--projection", "max"])):
        run(grayscott, "render", "volume.h5", "--video", name, *view, "--quiet")
        probe = run("ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                    "-show_entries", "stream=nb_read_frames,width,height", "-of", "json", name)
        try:
            stream = json.loads(probe.stdout)["streams"][0]
            check(int(stream["nb_read_frames"]) == IMAGES, f"{name}: {stream}")
        except (ValueError, KeyError, IndexError):
            fail(f"{name}: ffprobe says {probe.stdout} {probe.stderr}")
else:
    print("note: no ffmpeg: the videos are not checked")

# A volume left open by its writer (as kill -9 leaves it): repair keeps the images flushed.
run(writer, "killed.h5", "4", "6", "8", "5", "double", "stop-after=2")
with h5py.File("killed.h5", "r", swmr=True) as f:
    check(f["v"].shape[1:] == (4, 6, 8), f"killed: /v has shape {f['v'].shape}")
run(grayscott, "repair", "killed.h5")
with h5py.File("killed.h5", "r") as f:
    check(f["v"].shape == (2, 4, 6, 8), f"repaired: /v has shape {f['v'].shape}")
    check(f.attrs["status"] == "killed after image 2", f"repaired: status {f.attrs['status']}")
xmf = open("killed.xmf").read()
check(xmf.count('Dimensions="4 6 8"') == 2 + 2, "repaired: the companion lists 2 volumes")
# A continued volume keeps its depth: another is refused in one line, before anything runs.
other = run(grayscott, "run", "--resume", "killed.h5", "--depth", "5", ok=False)
if "no backend of this build can run this request" in other.stderr:
    print("note: no backend steps a volume: --resume with another depth is checked by "
          "tests/cli/test_volume_cli.py once one does")
else:
    check(other.returncode != 0 and "--depth 5 contradicts" in other.stderr
          and len(other.stderr.strip().splitlines()) == 1,
          f"--resume with another depth: {other.stderr}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
