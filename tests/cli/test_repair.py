#!/usr/bin/python3
"""grayscott repair and info FILE, from the outside: a run killed with kill -9 at random images (one
process, and one MPI rank) leaves a file h5py refuses without swmr ("file is already open for
write"); `info` says it needs repair; `repair` makes it one that h5py (no swmr), xarray, netCDF4 and
ParaView open, /step and /time counting the complete images (no image counted before the kill is
lost, each equal to an uninterrupted run's), status "killed after image N", the .xmf rewritten;
a second repair changes nothing; `--resume` then finishes it bitwise. A file being written, a
file that is not grayscott's and a file that is not HDF5 are refused.
Usage: test_repair.py PATH/TO/grayscott WORK_FOLDER [MPIEXEC [FLAGS...]]"""

import json
import os
import random
import shutil
import subprocess
import sys
import time

import h5py
import netCDF4
import numpy as np
import xarray as xr

grayscott = os.path.abspath(sys.argv[1])
work = os.path.abspath(sys.argv[2])
mpiexec = sys.argv[3:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)
failures = []
random.seed(os.getpid())


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


def run(*args):
    return subprocess.run([grayscott, *args], capture_output=True, text=True, timeout=300)


PROBLEM = ["--rows", "128", "--cols", "128", "--images", "40", "--steps-per-image", "1500",
           "--backend", "cpu", "--threads", "1", "--checkpoint-every", "3"]
r = run("run", *PROBLEM, "--quiet", "-o", "reference.h5")
check(r.returncode == 0, f"the reference run failed: {r.stderr}")
with h5py.File("reference.h5", "r") as f:
    reference = {name: f[name][...] for name in ("v", "step", "time")}


def counted(path):
    try:
        with h5py.File(path, "r", swmr=True) as f:
            return len(f["step"])
    except (OSError, KeyError):
        return 0


def kill_after(process, path, images, victim=None):
    """kill -9 `victim` (default: `process`) once /step counts `images` images."""
    deadline = time.time() + 240
    while process.poll() is None and counted(path) < images and time.time() < deadline:
        time.sleep(0.05)
    seen = counted(path)
    os.kill(victim or process.pid, 9)
    process.wait()
    return seen


def repaired(label, path, seen, marked=True):
    """Checks a killed file before and after repair; returns the images it holds. `marked`: HDF5
    marks it open for writing (a single process writes in SWMR mode; MPI-IO files are not)."""
    try:
        h5py.File(path, "r").close()
        fail_open = ""
    except OSError as error:
        fail_open = str(error)
    if marked:
        check("already open for write" in fail_open,
              f"{label}: h5py opened the killed file without swmr ({fail_open!r})")
    info = run("info", path)
    check(info.returncode == 0 and "needs repair" in info.stdout and "grayscott repair" in info.stdout,
          f"{label}: info does not say the file needs repair: {info.stdout}{info.stderr}")
    r = run("repair", path)
    check(r.returncode == 0 and "repaired" in r.stdout, f"{label}: repair failed: {r.stdout}{r.stderr}")
    with h5py.File(path, "r") as f:  # no swmr: every reader opens it
        n = len(f["step"])
        check(f["v"].shape[0] == n and len(f["time"]) == n,
              f"{label}: /v {f['v'].shape}, /time {f['time'].shape}, /step {n} disagree")
        check(n >= seen, f"{label}: {seen} images were counted before the kill, {n} after repair")
        check(f.attrs["status"] == f"killed after image {n}",
              f"{label}: status {f.attrs['status']!r}")
        shared = min(n, len(reference["step"]))  # an MPI run may go past the reference's 40
        for name in ("v", "step", "time"):
            check(np.array_equal(f[name][:shared], reference[name][:shared]),
                  f"{label}: /{name} is not the uninterrupted run's first {shared}")
    ds = xr.open_dataset(path, engine="h5netcdf")
    check(ds.v.shape[0] == n and list(ds.time.values[:40]) == list(reference["time"][:n][:40]),
          f"{label}: xarray sees {ds.v.shape}")
    ds.close()
    with netCDF4.Dataset(path) as nc:
        check(nc.variables["v"].shape[0] == n, f"{label}: netCDF4 sees {nc.variables['v'].shape}")
    with open(path[:-3] + ".xmf") as companion:
        xmf = companion.read()
    check(xmf.count('<Grid Name="image ') == n, f"{label}: the .xmf does not list {n} images")
    # Idempotent: a second repair changes nothing.
    before = open(path, "rb").read()
    r = run("repair", path)
    check(r.returncode == 0 and "nothing to repair" in r.stdout,
          f"{label}: a second repair: {r.stdout}{r.stderr}")
    check(open(path, "rb").read() == before, f"{label}: a second repair changed the file")
    check(open(path[:-3] + ".xmf").read() == xmf, f"{label}: a second repair changed the .xmf")
    return n


repaired_files = {}
# 1. One process, killed at two random images.
for trial in range(2):
    path = f"killed{trial}.h5"
    p = subprocess.Popen([grayscott, "run", *PROBLEM, "--quiet", "-o", path])
    # While it runs, repair refuses it, and info says who writes it.
    if trial == 0:
        while counted(path) < 1 and p.poll() is None:
            time.sleep(0.05)
        r = run("repair", path)
        check(r.returncode != 0 and "being written by process" in r.stderr,
              f"repair of a running file was not refused: {r.stdout}{r.stderr}")
        info = run("info", path)
        check(f"being written by process {p.pid}" in info.stdout, f"info of a running file: {info.stdout}")
    seen = kill_after(p, path, random.randint(2, 12))
    repaired_files[path] = repaired(f"kill -9 at image {seen}", path, seen)

# 2. One MPI rank killed.
if mpiexec:
    path = "mpi_killed.h5"
    # Many more images than the reference: the run must still be going when a rank is killed.
    longer = [a if a != "40" else "2000" for a in PROBLEM]
    launch = [mpiexec[0], "-n", "2", *mpiexec[1:], grayscott, "run", *longer, "--quiet", "-o", path]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.Popen(launch, env=env, stderr=subprocess.DEVNULL)
    ranks = []
    deadline = time.time() + 60
    while len(ranks) < 2 and time.time() < deadline:
        out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout
        ranks = [int(x) for x in out.split()]
        time.sleep(0.1)
    check(len(ranks) == 2, f"the two ranks were not found: {ranks}")
    if ranks:
        # Parallel HDF5 has no SWMR: the file cannot be read while it runs, so wait by time.
        time.sleep(random.uniform(2, 4))
        check(p.poll() is None, "the MPI run ended before a rank could be killed")
        try:
            os.kill(random.choice(ranks), 9)
        except ProcessLookupError:
            pass
        p.wait(timeout=60)
        repaired_files[path] = repaired("kill -9 of an MPI rank", path, 0, marked=False)
else:
    print("note: no mpiexec given: the MPI case is not checked")

# 3. ParaView's default reader and the legacy one see the repaired files' images.
script = """
import json, sys
from paraview.simple import *
out = {}
for path in sys.argv[1:]:
    out[path] = [len(OpenDataFile(path).TimestepValues), len(XDMFReader(FileNames=[path]).TimestepValues)]
print("RESULT " + json.dumps(out))
"""
if shutil.which("pvbatch") and shutil.which("xvfb-run"):
    with open("steps.py", "w") as f:
        f.write(script)
    xmfs = [os.path.abspath(p[:-3] + ".xmf") for p in repaired_files]
    display = 100 + os.getpid() % 800
    done = subprocess.run(["xvfb-run", "-a", "-n", str(display), "pvbatch", "steps.py", *xmfs],
                          capture_output=True, text=True, timeout=300)
    lines = [l for l in done.stdout.splitlines() if l.startswith("RESULT ")]
    check(lines, f"pvbatch printed nothing: {done.stderr[-1500:]}")
    if lines:
        steps = json.loads(lines[-1][len("RESULT "):])
        for path, n in repaired_files.items():
            got = steps.get(os.path.abspath(path[:-3] + ".xmf"))
            check(got == [n, n], f"{path}: ParaView's readers see {got} time steps, wanted {n}")
else:
    failures.append("pvbatch or xvfb-run missing (scripts/setup installs them)")

# 4. --resume finishes a repaired file, bitwise as the uninterrupted run.
r = run("run", "--resume", "killed0.h5", "--quiet")
check(r.returncode == 0, f"--resume of a repaired file failed: {r.stderr}")
with h5py.File("killed0.h5", "r") as f:
    check(f.attrs["status"] == "complete" and np.array_equal(f["v"][...], reference["v"]),
          "the resumed file is not the uninterrupted run's")

# 5. Refused: not a grayscott file, not an HDF5 file, no file.
with h5py.File("foreign.h5", "w") as f:
    f["data"] = np.zeros(3)
with open("text.h5", "w") as f:
    f.write("not HDF5\n")
for name, why in (("foreign.h5", "not a grayscott file"), ("text.h5", "not an HDF5 file"),
                  ("missing.h5", "no such file")):
    before = open(name, "rb").read() if os.path.exists(name) else None
    r = run("repair", name)
    lines = r.stderr.strip().splitlines()
    check(r.returncode != 0 and len(lines) == 1 and lines[0].startswith("grayscott: error:")
          and why in lines[0], f"repair {name}: {r.returncode} {r.stderr!r}")
    if before is not None:
        check(open(name, "rb").read() == before, f"repair {name} changed it")
    r = run("info", name)
    check(r.returncode != 0 and why in r.stderr, f"info {name}: {r.returncode} {r.stderr!r}")

# 6. info of a complete file.
r = run("info", "reference.h5")
check(r.returncode == 0 and "status: complete" in r.stdout and "images: 40 of 40" in r.stdout
      and "feed 0.014" in r.stdout, f"info of a complete file: {r.stdout}{r.stderr}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
