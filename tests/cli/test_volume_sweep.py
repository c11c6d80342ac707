#!/usr/bin/python3
"""A sweep of volumes end to end through the command line: `grayscott sweep --depth 5 --rows 9
--cols 13` of 2x2 members, then
  - h5py: /v and /u as [member, time, z, y, x] with the scales member, time, z, y, x, one plane
    per chunk, checkpoints [2, member, z, y, x], the depth attribute, /images_written;
  - every member's images and statistics bitwise equal to `grayscott run` of that member alone;
  - xarray: v's dims (member, time, z, y, x);
  - `grayscott info` (the grid 5x9x13), `grayscott render` (the atlas of middle planes, a slice,
    the projection);
  - a sweep stopped by SIGTERM and continued with --resume, and one killed (SIGKILL), repaired
    and continued, bitwise equal to the uninterrupted sweep;
  - the XDMF companion: one 3DCoRectMesh volume per member, opened by ParaView's default reader
    (pvpython, where installed) with each member's v equal to the file's;
  - over MPI ranks (where an mpiexec is given): the same file as one process, bitwise.
Usage: test_volume_sweep.py PATH/TO/grayscott WORKDIR [MPIEXEC [MPIEXEC_FLAG...]]"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

grayscott, work = (os.path.abspath(a) for a in sys.argv[1:3])
mpiexec = sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))
compare_runs = os.path.join(here, "..", "mpi", "compare_runs.py")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args, ok=True, timeout=300):
    done = subprocess.run([grayscott, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)
    if ok and done.returncode != 0:
        check(False, f"grayscott {' '.join(map(str, args))}: exit {done.returncode}: "
                     f"{done.stderr.strip()}")
    return done


def same_file(a, b, what):
    done = subprocess.run([sys.executable, compare_runs, a, b, "backend"], capture_output=True,
                          text=True, timeout=300)
    check(done.returncode == 0, f"{what}: {done.stdout.strip()}")


D, R, C, IMAGES, STEPS = 5, 9, 13, 3, 6
FEEDS, KILLS = (0.03, 0.04), (0.055, 0.062)
grid = ["--depth", D, "--rows", R, "--cols", C, "--init", "noise", "--seed", 7,
        "--precision", "double", "--fields", "u,v", "--quiet"]
sweep = ["sweep", *grid, "--feed", ",".join(map(str, FEEDS)), "--kill", ",".join(map(str, KILLS)),
         "--images", IMAGES, "--steps-per-image", STEPS, "--stats"]
run(*sweep, "-o", "sweep.h5")

with h5py.File("sweep.h5", "r") as f:
    members = len(FEEDS) * len(KILLS)
    for name in ("v", "u"):
        check(f[name].shape == (members, IMAGES, D, R, C), f"/{name} has shape {f[name].shape}")
        check(f[name].chunks == (1, 1, 1, R, C), f"/{name} is chunked {f[name].chunks}")
        scales = [[s.name for s in dim.values()] for dim in f[name].dims]
        check(scales == [["/member"], ["/time"], ["/z"], ["/y"], ["/x"]],
              f"/{name}'s scales: {scales}")
    check(np.array_equal(f["z"][...], np.arange(D)), "/z counts the planes")
    check(int(f.attrs["depth"]) == D and int(f.attrs["members"]) == members,
          "the attributes depth and members")
    check(f.attrs["status"] == "complete", f"status {f.attrs['status']}")
    check(list(f["images_written"][...]) == [IMAGES] * members,
          f"/images_written: {f['images_written'][...]}")
    for name in ("u", "v"):
        if name in f["checkpoint"]:
            check(f["checkpoint"][name].shape == (2, members, D, R, C),
                  f"/checkpoint/{name}: {f['checkpoint'][name].shape}")
    check(f["stats/v_mean"].shape == (members, IMAGES), f"stats: {f['stats/v_mean'].shape}")
    whole = {name: f[name][...] for name in ("v", "u")}
    feed, kill, seed = f["feed"][...], f["kill"][...], f["seed"][...]
    stats = {name: f["stats"][name][...] for name in ("v_mean", "v_max", "u_min")}

# Each member alone: the same images, bitwise, and the same statistics.
for m in range(members):
    out = f"member{m}.h5"
    run("run", *grid, "--feed", repr(float(feed[m])), "--kill", repr(float(kill[m])),
        "--seed", int(seed[m]), "--images", IMAGES, "--steps-per-image", STEPS, "--stats",
        "-o", out)
    with h5py.File(out, "r") as f:
        for name in ("v", "u"):
            check(np.array_equal(f[name][...], whole[name][m]),
                  f"member {m}'s /{name} differs from its run alone")
        for name, values in stats.items():
            check(np.array_equal(f["stats"][name][...], values[m]),
                  f"member {m}'s stats/{name} differ from its run alone")

import xarray as xr

with xr.open_dataset("sweep.h5", engine="h5netcdf", drop_variables="matrix") as ds:
    check(ds.v.dims == ("member", "time", "z", "y", "x"), f"xarray: v's dims {ds.v.dims}")

info = run("info", "sweep.h5").stdout
check(f"grid: {D}x{R}x{C}," in info and f"members: {members}" in info, f"info: {info}")
refused = run("sweep", *grid, "--feed", "0.03", "--kill", "0.06", "--stats", "--classify",
              "-o", "classified.h5", ok=False)
check(refused.returncode != 0 and "is not classified" in refused.stderr,
      f"--classify of volumes: {refused.stderr}")

# The atlas: one tile per member, its middle plane by default; a slice; the projection.
for folder, view in (("middle", []), ("slice", ["--slice", "y=2"]),
                     ("max", ["--projection", "max"])):
    run("render", "sweep.h5", "--out", folder, *view, "--quiet")
    check(len(os.listdir(folder)) == 1, f"render --out {folder}: {os.listdir(folder)}")
pictures = [open(os.path.join(f, os.listdir(f)[0]), "rb").read() for f in ("middle", "max")]
check(pictures[0] != pictures[1], "the projection's atlas is the middle plane's")
out_of_range = run("render", "sweep.h5", "--out", "none", "--slice", f"z={D}", ok=False)
check(out_of_range.returncode != 0 and "out of range" in out_of_range.stderr,
      f"render --slice z={D}: {out_of_range.stderr}")

# The XDMF companion: a volume of D x R x C per member, member m from z = m * (D + 1).
with open("sweep.xmf") as xmf:
    text = xmf.read()
check(text.count(f'TopologyType="3DCoRectMesh" Dimensions="{D} {R} {C}"') == members * IMAGES,
      "the companion's grids are not every member's volumes")
PARAVIEW = """
import json, sys
from paraview.simple import OpenDataFile
from paraview import servermanager
from vtkmodules.util.numpy_support import vtk_to_numpy
reader = OpenDataFile(sys.argv[1])
times = list(reader.TimestepValues)
reader.UpdatePipeline(times[-1])
data = servermanager.Fetch(reader)
blocks = []
it = data.NewIterator()
it.InitTraversal()
while not it.IsDoneWithTraversal():
    block = it.GetCurrentDataObject()
    blocks.append({"dims": list(block.GetDimensions()), "origin": list(block.GetOrigin()),
                   "v": vtk_to_numpy(block.GetPointData().GetArray("v")).tolist()})
    it.GoToNextItem()
print("RESULT" + json.dumps({"times": times, "blocks": blocks}))
"""
if shutil.which("pvpython"):
    with open("paraview_check.py", "w") as script:
        script.write(PARAVIEW)
    done = subprocess.run(["pvpython", "--force-offscreen-rendering", "paraview_check.py",
                           os.path.abspath("sweep.xmf")], capture_output=True, text=True, timeout=240)
    lines = [l for l in done.stdout.splitlines() if l.startswith("RESULT")]
    if not lines:
        check(False, f"pvpython: {done.returncode}: {done.stderr.strip()[-2000:]}")
    else:
        seen = json.loads(lines[-1][len("RESULT"):])
        check(len(seen["times"]) == IMAGES, f"ParaView's times: {seen['times']}")
        check(len(seen["blocks"]) == members, f"ParaView's blocks: {len(seen['blocks'])}")
        for m, block in enumerate(seen["blocks"]):
            check(block["dims"] == [C, R, D], f"ParaView's member {m}: dims {block['dims']}")
            check(block["origin"][2] == m * (D + 1), f"member {m}'s origin {block['origin']}")
            # Points x fastest, then y (row 0 at the top: rows reversed), then z.
            expected = whole["v"][m, -1][:, ::-1, :].ravel()
            check(np.array_equal(np.asarray(block["v"]), whole["v"][m, -1].ravel())
                  or np.array_equal(np.asarray(block["v"]), expected),
                  f"ParaView's v of member {m} differs from the file's")
else:
    print("note: pvpython is not installed; ParaView's reading of the companion is not checked")

# Stopped by SIGTERM, then continued: the uninterrupted sweep's file, bitwise.
# A larger volume, so that the signal comes while the sweep runs.
LONG = ["sweep", "--depth", 10, "--rows", 24, "--cols", 28, *grid[6:], "--feed",
        ",".join(map(str, FEEDS)), "--kill", ",".join(map(str, KILLS)), "--images", 30,
        "--steps-per-image", 60, "--stats", "--checkpoint-every", 1]
run(*LONG, "-o", "long.h5", timeout=600)


def stopped_early(path, sig):
    """Starts the long sweep and stops it with `sig` once it has written images; whether it
    stopped before its end."""
    process = subprocess.Popen([grayscott, *map(str, LONG), "-o", path],
                               stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
        try:
            with h5py.File(path, "r", swmr=True) as f:
                if int(f["images_written"][...].max()) >= 2:
                    break
        except (OSError, KeyError):
            pass
    process.send_signal(sig)
    process.wait(timeout=300)
    if sig == signal.SIGKILL:
        return True
    with h5py.File(path, "r") as f:
        return f.attrs["status"] != "complete"


if stopped_early("stopped.h5", signal.SIGTERM):
    with h5py.File("stopped.h5", "r") as f:
        print(f"stopped: {f.attrs['status']}")
    run("sweep", "--resume", "stopped.h5", "--quiet", timeout=600)
    same_file("long.h5", "stopped.h5", "a sweep of volumes stopped and continued")
else:
    print("note: the sweep ended before the signal; its continuation is not checked")

# Killed, repaired (the images past each member's count read as never written), continued.
stopped_early("killed.h5", signal.SIGKILL)
repaired = run("repair", "killed.h5")
with h5py.File("killed.h5", "r") as f:
    counts = f["images_written"][...]
    check(f.attrs["status"] != "running", f"a repaired sweep's status: {f.attrs['status']}")
    for m, n in enumerate(counts):
        check(np.array_equal(f["v"][m, :n], h5py.File("long.h5", "r")["v"][m, :n]),
              f"member {m}'s images kept by repair differ")
        check(bool(np.isnan(f["v"][m, n:]).all()), f"member {m}'s images past {n} are not NaN")
print(f"repaired after kill -9: images_written {list(counts)}")
info = run("info", "killed.h5").stdout
check("grid: 10x24x28," in info, f"info of a repaired sweep: {info}")
if int(counts.min()) < 30:
    run("sweep", "--resume", "killed.h5", "--quiet", timeout=600)
    same_file("long.h5", "killed.h5", "a sweep of volumes killed, repaired and continued")

# Over MPI ranks: the members split, the same file as one process.
if mpiexec:
    for ranks in (2, 3):
        done = subprocess.run([*mpiexec, "-n", str(ranks), grayscott, *map(str, sweep), "-o",
                               f"ranks{ranks}.h5"], capture_output=True, text=True, timeout=300)
        check(done.returncode == 0, f"sweep over {ranks} ranks: {done.stderr.strip()[-2000:]}")
        if done.returncode == 0:
            same_file("sweep.h5", f"ranks{ranks}.h5", f"a sweep of volumes over {ranks} ranks")
else:
    print("note: no mpiexec given; the sweep over MPI ranks is not checked")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
