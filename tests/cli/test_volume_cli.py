#!/usr/bin/python3
"""A volume end to end through the command line: `grayscott run --depth 16 --rows 20 --cols 24`,
then h5py (/v as [time, z, y, x]), xarray (dims time, z, y, x), `grayscott info` (16x20x24),
`grayscott render` (a slice and the projection), a continued run bitwise equal to an
uninterrupted one, and `--resume` with another depth refused.
Usage: test_volume_cli.py PATH/TO/grayscott WORKDIR"""

import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

grayscott, work = (os.path.abspath(a) for a in sys.argv[1:3])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)

probe = subprocess.run([grayscott, "run", "--depth", "2", "--rows", "4", "--cols", "4",
                        "--images", "1", "--quiet", "-o", "probe.h5"],
                       capture_output=True, text=True, timeout=120)
if probe.returncode != 0:
    sys.exit("FAIL: a volume does not run: " + probe.stderr.strip())

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args, ok=True):
    done = subprocess.run([grayscott, *args], capture_output=True, text=True, timeout=300)
    if ok and done.returncode != 0:
        check(False, f"grayscott {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return done


D, R, C, IMAGES = 16, 20, 24, 4
volume = ["--depth", str(D), "--rows", str(R), "--cols", str(C), "--images", str(IMAGES),
          "--steps-per-image", "20", "--init", "noise", "--seed", "3", "--fields", "u,v", "--quiet"]
run("run", *volume, "-o", "volume.h5")
with h5py.File("volume.h5", "r") as f:
    check(f["v"].shape == (IMAGES, D, R, C), f"/v has shape {f['v'].shape}")
    check(int(f.attrs["depth"]) == D, "the attribute depth")
    check(f.attrs["status"] == "complete", f"status {f.attrs['status']}")
    whole = f["v"][...]

import xarray as xr

with xr.open_dataset("volume.h5", engine="h5netcdf", drop_variables="matrix") as ds:
    check(ds.v.dims == ("time", "z", "y", "x"), f"xarray: v's dims {ds.v.dims}")

info = run("info", "volume.h5").stdout
check(f"grid: {D}x{R}x{C}," in info, f"info: {info}")
run("render", "volume.h5", "--out", "middle", "--quiet")
run("render", "volume.h5", "--out", "max", "--projection", "max", "--quiet")
for folder in ("middle", "max"):
    check(len(os.listdir(folder)) == IMAGES, f"render --out {folder}: {os.listdir(folder)}")

# Stopped by a signal after its first images, then continued: equal to the uninterrupted run.
stopped = subprocess.Popen([grayscott, "run", *volume, "--checkpoint-every", "1", "-o",
                            "stopped.h5"], stderr=subprocess.PIPE)
import signal, time
time.sleep(0.5)
stopped.send_signal(signal.SIGTERM)
stopped.wait(timeout=300)
with h5py.File("stopped.h5", "r") as f:
    done = len(f["step"])
if done < IMAGES:
    refused = run("run", "--resume", "stopped.h5", "--depth", str(D + 1), ok=False)
    check(refused.returncode != 0 and f"--depth {D + 1} contradicts" in refused.stderr,
          f"--resume with another depth: {refused.stderr}")
    run("run", "--resume", "stopped.h5", "--quiet")
    with h5py.File("stopped.h5", "r") as f:
        check(np.array_equal(f["v"][...], whole), "a continued volume differs from the whole run")
else:
    print("note: the run ended before the signal; the continued run is not checked")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
