#!/usr/bin/python3
"""grayscott repair and info FILE, from the outside: a run killed with kill -9 at random images (one
process, and one MPI rank) leaves a file h5py refuses without swmr ("file is already open for
write"); `info` says it needs repair; `repair` makes it one that h5py (no swmr), xarray, netCDF4 and
ParaView open, /step and /time counting the complete images (no image counted before the kill is
lost, each equal to an uninterrupted run's), status "killed after image N", the .xmf rewritten;
a second repair changes nothing; `--resume` then finishes it bitwise; the mark a writer without
SWMR leaves when killed (a repair or a resume cut short) is named by info and --resume, and
cleared by repair. A file being written, a
file that is not grayscott's and a file that is not HDF5 are refused. Sweeps alike (one process
killed in the middle of a batch, and one of two MPI ranks): each member's /images_written counts
exactly its images complete (every one counted before the kill kept, each the uninterrupted
sweep's), the images past it read as never written (NaN) by h5py without swmr and by xarray,
status "killed with N of M images complete"; a second repair changes nothing; `--resume` then
finishes it bitwise.
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


def launch_two_ranks(*args):
    """grayscott ARGS on two MPI ranks: the launcher, the ranks' pids once both run, and the time
    by which they were to be found."""
    launch = [mpiexec[0], "-n", "2", *mpiexec[1:], grayscott, *args]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.Popen(launch, env=env, stderr=subprocess.DEVNULL)
    ranks = []
    deadline = time.time() + 60
    while len(ranks) < 2 and time.time() < deadline:
        out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout
        ranks = [int(x) for x in out.split()]
        time.sleep(0.1)
    check(len(ranks) == 2, f"the two ranks were not found: {ranks}")
    return p, ranks, deadline


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
    # Idempotent: a second repair changes nothing, the .xmf not even rewritten (same inode), so
    # that a repaired file on a read-only disk repairs without an error.
    before = open(path, "rb").read()
    companion_inode = os.stat(path[:-3] + ".xmf").st_ino
    r = run("repair", path)
    check(r.returncode == 0 and "nothing to repair" in r.stdout and "its .xmf is current" in r.stdout,
          f"{label}: a second repair: {r.stdout}{r.stderr}")
    check(open(path, "rb").read() == before, f"{label}: a second repair changed the file")
    check(open(path[:-3] + ".xmf").read() == xmf, f"{label}: a second repair changed the .xmf")
    check(os.stat(path[:-3] + ".xmf").st_ino == companion_inode,
          f"{label}: a second repair rewrote the .xmf")
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

# 1b. A writer killed and not yet reaped by its parent (a zombie, as a script's child is until it
# waits for it): it writes nothing and holds nothing open, so repair takes the file.
path = "killed-unreaped.h5"
p = subprocess.Popen([grayscott, "run", *PROBLEM, "--quiet", "-o", path])
while counted(path) < 2 and p.poll() is None:
    time.sleep(0.05)
os.kill(p.pid, 9)
deadline = time.time() + 30
while time.time() < deadline:
    with open(f"/proc/{p.pid}/stat") as stat:
        if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
            break
    time.sleep(0.02)
r = run("repair", path)
check(r.returncode == 0 and "being written" not in r.stderr,
      f"repair of a file whose killed writer is not yet reaped: {r.stdout}{r.stderr}")
p.wait()

# 2. One MPI rank killed.
if mpiexec:
    path = "mpi_killed.h5"
    # Many more images than the reference: the run must still be going when a rank is killed.
    longer = [a if a != "40" else "2000" for a in PROBLEM]
    p, ranks, deadline = launch_two_ranks("run", *longer, "--quiet", "-o", path)
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

# 4b. A writer that opened the file without SWMR (a repair or a resume does, before its SWMR
# writing starts) killed with it open leaves a mark no reader accepts, not even an SWMR one: info
# and --resume say so and name repair, which clears it while no such writer has the file open
# (HDF5's lock refuses it while one has: a program holding it open, here h5py).
shutil.copy("killed1.h5", "marked.h5")
holder = subprocess.Popen([sys.executable, "-c", """
import sys, time, h5py
f = h5py.File(sys.argv[1], "r+", libver="latest")
print("open", flush=True)
time.sleep(300)
""", "marked.h5"], stdout=subprocess.PIPE, text=True)
check(holder.stdout.readline().strip() == "open", "h5py could not open a repaired file for writing")
before = open("marked.h5", "rb").read()
for args in (["repair", "marked.h5"], ["info", "marked.h5"]):
    r = run(*args)
    check(r.returncode != 0 and "open elsewhere" in r.stderr and open("marked.h5", "rb").read() == before,
          f"{' '.join(args)} of a file a live writer holds: {r.returncode} {r.stderr}")
holder.kill()
holder.wait()
for args in (["info", "marked.h5"], ["run", "--resume", "marked.h5", "--quiet"]):
    r = run(*args)
    lines = r.stderr.strip().splitlines()
    check(r.returncode != 0 and len(lines) == 1 and "marked open for writing" in lines[0]
          and "grayscott repair marked.h5" in lines[0], f"{' '.join(args)} of a marked file: {r.stderr}")
r = run("repair", "marked.h5")
check(r.returncode == 0, f"repair of a file whose writer without SWMR was killed: {r.stderr}")
# The mark cleared is a change, said so ("nothing to repair" told of a file no reader opened).
check("repaired" in r.stdout and "every reader opens it now" in r.stdout,
      f"repair of a marked file said: {r.stdout}")
r = run("run", "--resume", "marked.h5", "--quiet")
check(r.returncode == 0, f"--resume after that repair: {r.stderr}")
with h5py.File("marked.h5", "r") as f:
    check(f.attrs["status"] == "complete" and np.array_equal(f["v"][...], reference["v"]),
          "the file a killed writer had marked, repaired and resumed, is not the uninterrupted run's")

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

# 7. Sweeps: 18 members in two batches of 9 (64x64 v, 30 images of 2000 steps each: about 70 ms
# an image of a batch on one thread), with statistics; images are counted at every flush (twice a
# second), checkpoints saved every 20 images, so a kill leaves images counted past a checkpoint.
SWEEP = ["--feed", "0.02:0.05:3", "--kill", "0.05:0.065:3", "--rows", "64", "--cols", "64",
         "--images", "30", "--steps-per-image", "2000", "--init", "noise", "--seeds", "1,2",
         "--fields", "v", "--stats", "--max-batch-memory", "1500K", "--checkpoint-every", "20",
         "--backend", "cpu", "--threads", "1"]
MEMBERS, IMAGES = 18, 30
started = time.time()
r = run("sweep", *SWEEP, "--quiet", "-o", "sweep-reference.h5")
sweep_seconds = time.time() - started
check(r.returncode == 0, f"the reference sweep failed: {r.stderr}")


def every_dataset(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[...])
                     if isinstance(obj, h5py.Dataset) else None)
        out["attributes"] = {key: f.attrs[key] for key in f.attrs if key != "backend"}
    return out


sweep_reference = every_dataset("sweep-reference.h5")


def member_counts(path):
    try:
        with h5py.File(path, "r", swmr=True) as f:
            return [int(n) for n in f["images_written"][...]]
    except (OSError, KeyError):
        return [0] * MEMBERS


repaired_sweeps = []


def repaired_sweep(label, path, seen, marked=True):
    """Checks a killed sweep before and after repair: every member counts exactly its complete
    images, at least those counted before the kill (`seen`), each the reference's."""
    if marked:
        try:
            h5py.File(path, "r").close()
            fail_open = ""
        except OSError as error:
            fail_open = str(error)
        check("already open for write" in fail_open,
              f"{label}: h5py opened the killed sweep without swmr ({fail_open!r})")
    info = run("info", path)
    check(info.returncode == 0 and "needs repair" in info.stdout,
          f"{label}: info does not say the sweep needs repair: {info.stdout}{info.stderr}")
    # A copy of it cut short (a transfer that did not finish) is refused in seconds: its damaged
    # metadata was read again and again, each wait twice the last (render hung for good).
    with open(path, "rb") as whole, open(f"{path}-cut.h5", "wb") as cut:
        cut.write(whole.read(os.path.getsize(path) // 3))
    for command in (["render", f"{path}-cut.h5", "--out", f"{path}-cut"], ["info", f"{path}-cut.h5"]):
        try:
            r = subprocess.run([grayscott, *command], capture_output=True, text=True, timeout=60)
            check(r.returncode != 0, f"{label}: {command[0]} of a cut copy: {r.returncode}")
        except subprocess.TimeoutExpired:
            check(False, f"{label}: {command[0]} of a cut copy did not end within a minute")
    # Rendered before the repair, its note says the writer is gone (not that it is being written)
    # and names the remedy.
    r = run("render", path, "--out", f"{path}-unrepaired", "--force")
    check(r.returncode == 0 and "its writer is gone: grayscott repair" in r.stderr
          and "still being written" not in r.stderr,
          f"{label}: render of the killed sweep: {r.returncode} {r.stderr!r}")
    r = run("repair", path)
    check(r.returncode == 0 and "repaired" in r.stdout,
          f"{label}: repair failed: {r.stdout}{r.stderr}")
    reference_v = sweep_reference["v"]
    with h5py.File(path, "r") as f:  # no swmr: every reader opens it
        counts = [int(n) for n in f["images_written"][...]]
        check(all(0 <= n <= IMAGES for n in counts), f"{label}: counts {counts}")
        check(all(n >= s for n, s in zip(counts, seen)),
              f"{label}: {seen} images were counted before the kill, {counts} after repair")
        check(all(n >= c for n, c in zip(counts, f["checkpoint/images"][...].max(axis=0))),
              f"{label}: a member counts fewer images than its checkpoint holds")
        total = sum(counts)
        check(f.attrs["status"] == f"killed with {total} of {MEMBERS * IMAGES} images complete",
              f"{label}: status {f.attrs['status']!r} with {total} images counted")
        check(int(f.attrs["writer_pid"]) == 0, f"{label}: the repaired sweep names a writer")
        v = f["v"][...]
        for m, n in enumerate(counts):
            check(np.array_equal(v[m, :n], reference_v[m, :n]),
                  f"{label}: member {m}'s {n} images are not the uninterrupted sweep's")
            check(np.isnan(v[m, n:]).all(),
                  f"{label}: member {m} holds something past its {n} complete images")
            check(np.array_equal(f["stats/v_mean"][m, :n], sweep_reference["stats/v_mean"][m, :n])
                  and np.isnan(f["stats/v_mean"][m, n:]).all(),
                  f"{label}: member {m}'s statistics are not those of its {n} images")
    ds = xr.open_dataset(path, engine="h5netcdf")
    check(ds.images_written.dims == ("member",) and list(ds.images_written.values) == counts,
          f"{label}: xarray sees {ds.images_written}")
    for m, n in enumerate(counts):
        images = ds.v.isel(member=m).values
        check(np.array_equal(images[:n], reference_v[m, :n]) and np.isnan(images[n:]).all(),
              f"{label}: xarray reads member {m} otherwise")
    ds.close()
    with netCDF4.Dataset(path) as nc:
        v = nc.variables["v"]
        check(v.shape == (MEMBERS, IMAGES, 64, 64), f"{label}: netCDF4 sees {v.shape}")
        for m, n in enumerate(counts):
            images = np.ma.filled(v[m], np.nan)
            check(np.array_equal(images[:n], reference_v[m, :n]) and np.isnan(images[n:]).all(),
                  f"{label}: netCDF4 reads member {m} otherwise")
    # render draws what was written: each seed's atlas by default at the last image every member
    # of that seed holds (where one holds none, the last any holds), the images no member holds
    # refused, a video (of the first seed's atlas) as long as that seed's longest member, a note
    # of what each holds.
    least, most = min(counts), max(counts)
    with h5py.File(path, "r") as f:
        first_seed = f["seed"][...] == f["seed"][0]
    seed_counts = [n for n, first in zip(counts, first_seed) if first]
    # (A seed none of whose members wrote an image: its atlas is of image 0, every tile blank.)
    default_image = min(seed_counts) - 1 if min(seed_counts) > 0 else max(max(seed_counts) - 1, 0)
    for out, extra in ((f"{path}-atlas", []), (f"{path}-atlas-at", ["--image", str(default_image)])):
        r = run("render", path, "--out", out, "--force", *extra)
        held = f"{least}" if least == most else f"{least} to {most}"
        check(r.returncode == 0 and f"its members hold {held} of {IMAGES} images" in r.stderr,
              f"{label}: render {extra}: {r.returncode} {r.stderr!r}")
    check(open(f"{path}-atlas/atlas_seed1.png", "rb").read()
          == open(f"{path}-atlas-at/atlas_seed1.png", "rb").read(),
          f"{label}: the atlas is not of image {default_image}, the last every member of its "
          f"seed holds")
    r = run("render", path, "--out", f"{path}-past", "--image", str(most))
    check(r.returncode != 0 and "out of range" in r.stderr,
          f"{label}: render of image {most}, which no member holds: {r.returncode} {r.stderr!r}")
    if shutil.which("ffprobe"):
        r = run("render", path, "--video", f"{path}.mp4", "--force", "--quiet")
        frames = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams",
                                 "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                                 f"{path}.mp4"], capture_output=True, text=True).stdout.strip()
        seed_most = max(seed_counts)
        if seed_most == 0:  # no frame to make: refused, naming the seed
            check(r.returncode != 0 and "no member of seed" in r.stderr,
                  f"{label}: a video of a seed without images: {r.returncode} {r.stderr}")
        else:
            check(r.returncode == 0 and frames == str(seed_most),
                  f"{label}: the video has {frames} frames, not the {seed_most} images its "
                  f"seed's members wrote: {r.stderr}")
    # A copy as repair left it, for ParaView at the end (--resume below completes this one).
    os.makedirs("repaired", exist_ok=True)
    for name in (path, path[:-3] + ".xmf"):
        shutil.copy(name, os.path.join("repaired", name))
    repaired_sweeps.append(os.path.abspath(os.path.join("repaired", path[:-3] + ".xmf")))
    info = run("info", path)
    check(f"complete: {total} of {MEMBERS * IMAGES} images" in info.stdout
          and "needs repair" not in info.stdout, f"{label}: info after repair: {info.stdout}")
    # Idempotent: a second repair changes nothing, the .xmf not even rewritten (same inode).
    before = open(path, "rb").read()
    xmf = open(path[:-3] + ".xmf").read()
    companion_inode = os.stat(path[:-3] + ".xmf").st_ino
    r = run("repair", path)
    check(r.returncode == 0 and "nothing to repair" in r.stdout and "its .xmf is current" in r.stdout,
          f"{label}: a second repair: {r.stdout}{r.stderr}")
    check(os.stat(path[:-3] + ".xmf").st_ino == companion_inode,
          f"{label}: a second repair rewrote the sweep's .xmf")
    check(open(path, "rb").read() == before, f"{label}: a second repair changed the sweep")
    check(open(path[:-3] + ".xmf").read() == xmf, f"{label}: a second repair changed the .xmf")
    # --resume finishes it, bitwise the uninterrupted sweep.
    r = run("sweep", "--resume", path, "--quiet")
    check(r.returncode == 0, f"{label}: --resume of the repaired sweep failed: {r.stderr}")
    resumed = every_dataset(path)
    check(sorted(resumed) == sorted(sweep_reference),
          f"{label}: datasets {sorted(resumed)} != {sorted(sweep_reference)}")
    for name, values in sweep_reference.items():
        if name == "attributes":
            check(resumed[name].keys() == values.keys() and
                  all(np.array_equal(resumed[name][k], values[k]) for k in values),
                  f"{label}: the resumed sweep's attributes differ")
        elif name in resumed:
            check(resumed[name].dtype == values.dtype and
                  resumed[name].tobytes() == values.tobytes(),
                  f"{label}: /{name} of the resumed sweep is not the uninterrupted one's")
    return counts


# One process, killed once the first batch is done and the second has counted some images.
path = "sweep-killed.h5"
p = subprocess.Popen([grayscott, "sweep", *SWEEP, "--quiet", "-o", path])
seen = [0] * MEMBERS
deadline = time.time() + 120
while p.poll() is None and time.time() < deadline:
    seen = member_counts(path)
    if max(seen) == IMAGES and 0 < min(seen) < IMAGES:
        break
    time.sleep(0.02)
r = run("repair", path)  # still running: refused
check(r.returncode != 0 and f"being written by process {p.pid}" in r.stderr,
      f"repair of a running sweep was not refused: {r.stdout}{r.stderr}")
try:
    os.kill(p.pid, 9)
except ProcessLookupError:
    pass  # it ended first: the check below says so
p.wait()
check(max(seen) == IMAGES and 0 < min(seen) < IMAGES,
      f"the sweep was not killed in the middle of its second batch: {seen}")
counts = repaired_sweep("sweep killed with kill -9", path, seen)
print(f"sweep killed with kill -9: {counts} complete", flush=True)

# One of two MPI ranks killed: images it never wrote are holes in the file (read as 0) until the
# repair.
if mpiexec:
    path = "sweep-mpi-killed.h5"
    p, ranks, deadline = launch_two_ranks("sweep", *SWEEP, "--quiet", "-o", path)
    if ranks:
        # Parallel HDF5 has no SWMR: the sweep cannot be read while it runs, so wait by time, once
        # the ranks have created the file: each rank's 9 members take about half the reference's.
        while p.poll() is None and not os.path.exists(path) and time.time() < deadline + 60:
            time.sleep(0.02)
        time.sleep(random.uniform(0.1, 0.3) * sweep_seconds)
        check(p.poll() is None, "the MPI sweep ended before a rank could be killed")
        try:
            os.kill(random.choice(ranks), 9)
        except ProcessLookupError:
            pass
        p.wait(timeout=60)
        counts = repaired_sweep("sweep with an MPI rank killed", path, [0] * MEMBERS, marked=False)
        print(f"sweep with an MPI rank killed: {counts} complete", flush=True)

# 8. ParaView's default reader and the legacy one see every image of the repaired sweeps: the
# time steps some member completed (past every member's count, none is the sweep's).
if repaired_sweeps and shutil.which("pvbatch") and shutil.which("xvfb-run"):
    display = 100 + (os.getpid() + 1) % 800
    done = subprocess.run(["xvfb-run", "-a", "-n", str(display), "pvbatch", "steps.py",
                           *repaired_sweeps], capture_output=True, text=True, timeout=300)
    lines = [l for l in done.stdout.splitlines() if l.startswith("RESULT ")]
    check(lines, f"pvbatch printed nothing for the sweeps: {done.stderr[-1500:]}")
    if lines:
        steps = json.loads(lines[-1][len("RESULT "):])
        for xmf in repaired_sweeps:
            times = open(xmf).read().count("<Time ")
            with h5py.File(xmf[:-len(".xmf")] + ".h5", "r") as f:
                reached = int(f["images_written"][...].max())
            check(times == reached and steps.get(xmf) == [times, times],
                  f"{xmf}: ParaView's readers see {steps.get(xmf)} time steps, the .xmf lists "
                  f"{times}, the sweep's members reached {reached} of {IMAGES}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
