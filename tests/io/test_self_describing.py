#!/usr/bin/env python3
"""Files that describe themselves, read by the real clients: xarray through h5netcdf and the
netCDF4 library name every axis of a run and a sweep file (HDF5 dimension scales), the time
coordinate is step x dt, and all of it holds for a run continued after SIGINT, for a file read
while it is written (SWMR) and, when an MPI launcher is given, for a run and a sweep written by
parallel HDF5 over ranks. The course's /matrix link and plain h5py keep working.

Usage: test_self_describing.py GRAYSCOTT WORKDIR [MPIEXEC [FLAGS...]].
Needs Debian's python3-xarray, python3-h5netcdf, python3-netcdf4, python3-h5py, python3-numpy.
"""
import os
import signal
import subprocess
import sys
import time

import h5py
import netCDF4
import numpy as np
import xarray as xr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_checks import check, failures, finish, work_in  # noqa: E402

GRAYSCOTT = os.path.abspath(sys.argv[1])
WORK = sys.argv[2]
MPIEXEC = sys.argv[3:]
work_in(WORK)


def run(*args, launcher=()):
    r = subprocess.run([*launcher, GRAYSCOTT, *args], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def check_run_file(path, rows, cols, images, steps_per_image, dt, fields=("u", "v")):
    ds = xr.open_dataset(path, engine="h5netcdf")
    for name in fields:
        check(ds[name].dims == ("time", "y", "x"), f"{path}: {name} has dims {ds[name].dims}")
    check(ds.sizes == {"time": images, "y": rows, "x": cols}, f"{path}: sizes {dict(ds.sizes)}")
    steps = steps_per_image * np.arange(1, images + 1)
    check(np.array_equal(ds["step"].values, steps), f"{path}: step is (i + 1) * steps_per_image")
    check("step" in ds.coords, f"{path}: step is a coordinate along time")
    check(np.allclose(ds["time"].values, steps * dt), f"{path}: time = step * dt")
    check(np.array_equal(ds["y"].values, np.arange(rows)) and
          np.array_equal(ds["x"].values, np.arange(cols)), f"{path}: y and x are indices")
    at = ds["v"].sel(time=steps[-1] * dt)
    with h5py.File(path, "r") as f:
        check(np.array_equal(at.values, f["v"][-1]), f"{path}: v.sel(time=last) is /v[-1]")
        check(np.array_equal(f["matrix"][...], f["v"][...]), f"{path}: /matrix is still /v")
    ds.close()
    n = netCDF4.Dataset(path)
    check(n.variables["v"].dimensions == ("time", "y", "x") and
          n.variables["step"].dimensions == ("time",), f"{path}: netCDF4 names the axes")
    n.close()


# A run, its model time step 0.5.
small = ["--rows", "24", "--cols", "40", "--images", "4", "--steps-per-image", "6", "--dt", "0.5",
         "--fields", "u,v", "--quiet"]
run("run", *small, "-o", "run.h5")
check_run_file("run.h5", 24, 40, 4, 6, 0.5)

# Read while it is written: the axes are there from the first image on.
long = ["--rows", "256", "--cols", "256", "--images", "400", "--steps-per-image", "40",
        "--fields", "u,v", "--quiet", "--checkpoint-every", "1"]
writer = subprocess.Popen([GRAYSCOTT, "run", *long, "-o", "live.h5"], stderr=subprocess.PIPE,
                          text=True)
seen = 0
deadline = time.time() + 60
while time.time() < deadline and seen < 2:
    time.sleep(0.2)
    try:
        with h5py.File("live.h5", "r", swmr=True) as f:
            seen = len(f["step"])
            if seen >= 2:
                check(f["time"].shape[0] >= seen - 1 and
                      [d[0].name for d in f["v"].dims] == ["/time", "/y", "/x"],
                      "a running file already names its axes (SWMR reader)")
    except (OSError, KeyError):
        pass
check(seen >= 2, f"the running file showed {seen} images within a minute")

# Stopped by SIGINT, then continued: the time coordinate follows the images.
writer.send_signal(signal.SIGINT)
writer.wait(timeout=60)
check(writer.returncode != 0, f"SIGINT stops the run (exit {writer.returncode})")
with h5py.File("live.h5", "r") as f:
    stopped_at = len(f["step"])
check(0 < stopped_at < 400, f"the stopped file holds {stopped_at} images")
run("run", "--resume", "live.h5", "--quiet")
check_run_file("live.h5", 256, 256, 400, 40, 1.0)

# A sweep: member, time, y, x, with feed, kill and seed along member.
run("sweep", "--feed", "0.02:0.04:2", "--kill", "0.05:0.06:3", "--seeds", "1,2", "--init", "noise",
    "--rows", "16", "--cols", "12", "--images", "2", "--steps-per-image", "5", "--quiet",
    "-o", "sweep.h5")


def check_sweep_file(path, members, images, steps_per_image):
    ds = xr.open_dataset(path, engine="h5netcdf")
    check(ds["v"].dims == ("member", "time", "y", "x"), f"{path}: v has dims {ds['v'].dims}")
    check(all(name in ds.coords and ds[name].dims == ("member",) for name in
              ("feed", "kill", "seed")), f"{path}: feed, kill, seed are member coordinates")
    check(ds.sizes["member"] == members and ds.sizes["time"] == images, f"{path}: sizes")
    check(np.allclose(ds["time"].values, steps_per_image * np.arange(1, images + 1)),
          f"{path}: time = step * dt")
    grid = ds.set_index(member=["seed", "feed", "kill"]).unstack("member")
    with h5py.File(path, "r") as f:
        feed, kill, seed = f["feed"][...], f["kill"][...], f["seed"][...]
        m = members - 1
        one = grid["v"].sel(feed=feed[m], kill=kill[m], seed=seed[m]).isel(time=-1)
        check(np.array_equal(one.values, f["v"][m, -1]),
              f"{path}: the unstacked sweep's (feed, kill, seed) is member {m}")
    ds.close()
    n = netCDF4.Dataset(path)
    check(n.variables["v"].dimensions == ("member", "time", "y", "x"),
          f"{path}: netCDF4 names the sweep's axes")
    n.close()


check_sweep_file("sweep.h5", 12, 2, 5)

if MPIEXEC:
    # Parallel HDF5 over two ranks: the same axes, attached collectively.
    run("run", *small, "-o", "mpi-run.h5", launcher=[*MPIEXEC, "-n", "2"])
    check_run_file("mpi-run.h5", 24, 40, 4, 6, 0.5)
    with h5py.File("mpi-run.h5", "r") as a, h5py.File("run.h5", "r") as b:
        check(all(np.array_equal(a[k][...], b[k][...]) for k in ("u", "v", "step", "time")),
              "the MPI run's datasets equal the serial run's")
    run("sweep", "--feed", "0.02:0.04:2", "--kill", "0.05:0.06:3", "--rows", "16", "--cols", "12",
        "--images", "2", "--steps-per-image", "5", "--quiet", "-o", "mpi-sweep.h5",
        launcher=[*MPIEXEC, "-n", "2"])
    check_sweep_file("mpi-sweep.h5", 6, 2, 5)

finish("run and sweep files name their axes for xarray and netCDF4")
