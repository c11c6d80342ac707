#!/usr/bin/env python3
"""Nothing lost, tried from the outside: real signals to a real process at random moments, kill -9,
a file read while it is written, --resume against an uninterrupted run (bitwise, every dataset),
files that belong to someone else, and a disk that fills up mid-run.

Usage: test_durability.py GRAYSCOTT [WORKDIR [MPIEXEC [MPIEXEC_FLAGS...]]]. Needs Debian's
python3-h5py and python3-numpy. With MPIEXEC (an MPI build), a disk that fills up under two MPI
ranks is tried too.
"""
import filecmp
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import h5py
import numpy as np

GRAYSCOTT = os.path.abspath(sys.argv[1])
OWN_WORK = len(sys.argv) <= 2  # a temporary folder of its own: removed when every check passes
WORK = sys.argv[2] if not OWN_WORK else tempfile.mkdtemp(prefix="grayscott-durability-")
MPIEXEC = sys.argv[3:]  # the launcher and its flags; empty: no MPI run is tried
if os.path.ismount(os.path.join(WORK, "small-disk")):
    subprocess.run(["umount", os.path.join(WORK, "small-disk")])
shutil.rmtree(WORK, ignore_errors=True)  # a fresh folder: every output below is new
os.makedirs(WORK)
os.chdir(WORK)
random.seed(int(os.environ.get("GRAYSCOTT_TEST_SEED", "20261202")))

# A run long enough to be stopped anywhere (a few seconds on 2 cores), small enough to repeat.
PROBLEM = ["--rows", "192", "--cols", "160", "--images", "150", "--steps-per-image", "80",
           "--boundary", "periodic", "--init", "noise", "--seed", "7", "--fields", "u,v"]
failures = []


def with_options(base, **changes):
    """`base` with some options' values replaced (an option may be given once)."""
    out = list(base)
    for key, value in changes.items():
        flag = "--" + key.replace("_", "-")
        out[out.index(flag) + 1] = str(value)
    return out


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


def run(*args, **kw):
    return subprocess.run([GRAYSCOTT, *args], capture_output=True, text=True, **kw)


def start(*args):
    return subprocess.Popen([GRAYSCOTT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def datasets(path, swmr=False):
    """Every dataset of the file as arrays, by name (the checkpoint group included)."""
    out = {}

    def walk(group, prefix):
        for key in group.keys():  # by name: /matrix and /v are one object under two names
            obj = group[key]
            if isinstance(obj, h5py.Dataset):
                out[prefix + key] = obj[...]
            else:
                walk(obj, prefix + key + "/")

    with h5py.File(path, "r", swmr=swmr) as f:
        walk(f, "")
        attrs = dict(f.attrs)
    return out, attrs


def same_file(a, b, what):
    da, _ = datasets(a)
    db, _ = datasets(b)
    check(sorted(da) == sorted(db), f"{what}: datasets {sorted(db)} != {sorted(da)}")
    for name in da:
        if name in db:
            check(da[name].dtype == db[name].dtype and np.array_equal(da[name], db[name]),
                  f"{what}: /{name} differs from the uninterrupted run")


def prefix_of_reference(ref, path, what, swmr=False):
    """The images in `path` are exactly the reference's first ones, and /step agrees.

    A file closed normally (swmr=False) holds as many images in /u and /v as /step counts. After
    kill -9 (swmr=True), HDF5 may have written the larger size of /v or /u before that of /step
    (docs/file-format.md): /step counts the images, and each of those is the reference's; the ones
    beyond are uncounted and --resume writes over them.
    """
    d, attrs = datasets(path, swmr=swmr)
    n = d["step"].shape[0]
    extents = (d["u"].shape[0], d["v"].shape[0], n)
    if swmr:
        check(d["u"].shape[0] >= n and d["v"].shape[0] >= n,
              f"{what}: /step counts images that /u or /v do not hold (/u, /v, /step: {extents})")
    else:
        check(d["u"].shape[0] == n and d["v"].shape[0] == n,
              f"{what}: /u, /v and /step disagree on the image count {extents}")
    for name in ("u", "v", "step"):
        check(np.array_equal(d[name][:n], ref[name][:n]),
              f"{what}: /{name} is not the uninterrupted run's first {n} images")
    return n, attrs


# ---- the uninterrupted reference --------------------------------------------------------------
t0 = time.monotonic()
r = run("run", *PROBLEM, "-o", "reference.h5", "--quiet")
duration = time.monotonic() - t0
check(r.returncode == 0, f"reference run failed: {r.stderr}")
ref, ref_attrs = datasets("reference.h5")
# u and v are written: the state to continue from is their last image, the slots hold nothing more.
check(list(ref["checkpoint/images"]) == [150, 150] and "checkpoint/u" not in ref
      and "checkpoint/v" not in ref, "a complete run's checkpoint does not mark its final state")
print(f"reference: {duration:.2f} s", flush=True)

# ---- stop signals at random moments, then --resume --------------------------------------------
for k, sig in enumerate([signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1,
                         signal.SIGUSR2, signal.SIGTERM, signal.SIGINT]):
    path = f"signal{k}.h5"
    p = start("run", *PROBLEM, "-o", path, "--checkpoint-every", str(random.randint(3, 30)))
    time.sleep(random.uniform(0.15, 0.8) * duration)
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    name = signal.Signals(sig).name
    if p.returncode == 0:  # the run ended before the signal: nothing to test this time
        print(f"{name}: the run had finished", flush=True)
        continue
    check(p.returncode == 128 + sig, f"{name}: exit status {p.returncode}, not {128 + sig}")
    # The notice the signal gets at once, then one line saying how the run ended.
    notice = f"grayscott: {name}: stopping after the image in progress"
    check(err.count(notice) == 1 and err.startswith(notice), f"{name}: no notice at once: {err!r}")
    lines = [line for line in err.splitlines()
             if line.startswith("grayscott:") and not line.startswith(notice)]
    check(len(lines) == 1 and f"interrupted by {name}" in lines[0] and "--resume" in lines[0],
          f"{name}: expected one line naming the signal and --resume, got {err!r}")
    n, attrs = prefix_of_reference(ref, path, name)
    check(attrs["status"] == f"interrupted by {name} after image {n}",
          f"{name}: status {attrs['status']!r} after {n} images")
    with h5py.File(path, "r") as f:
        check(int(f["checkpoint/images"][...].max()) == n,
              f"{name}: the newest checkpoint is not at the image the run stopped at")
    threads = random.choice(["1", "2"])
    r = run("run", "--resume", path, "--threads", threads, "--quiet")
    check(r.returncode == 0, f"{name}: resume failed: {r.stderr}")
    same_file("reference.h5", path, f"{name} at image {n}, resumed on {threads} threads")
    print(f"{name}: stopped after image {n}, resumed: ok", flush=True)

# ---- kill -9: every durable image kept, nothing counted that is not there --------------------
for k in range(4):
    path = f"killed{k}.h5"
    p = start("run", *PROBLEM, "-o", path, "--checkpoint-every", "5")
    time.sleep(random.uniform(0.2, 0.8) * duration)
    p.kill()
    p.communicate(timeout=60)
    if p.returncode == 0:  # the run ended before the kill: nothing to test this time
        print(f"kill -9 #{k}: the run had finished", flush=True)
        continue
    n, attrs = prefix_of_reference(ref, path, f"kill -9 #{k}", swmr=True)
    check(attrs["status"] == "running", f"kill -9 #{k}: status {attrs['status']!r}")
    r = run("run", "--resume", path, "--quiet")
    check(r.returncode == 0, f"kill -9 #{k}: resume failed: {r.stderr}")
    same_file("reference.h5", path, f"kill -9 #{k} after {n} images, resumed")
    print(f"kill -9 #{k}: {n} images on disk, resumed: ok", flush=True)

# ---- sweeps: stopped (signal or kill -9) in the middle of a batch, continued member by member --
SWEEP = ["--feed", "0.02:0.05:3", "--kill", "0.05:0.065:3", "--rows", "64", "--cols", "64",
         "--images", "30", "--steps-per-image", "300", "--init", "noise", "--seeds", "1,2",
         "--fields", "v"]  # v only: u is continued from the checkpoint, v from the last image
t0 = time.monotonic()
r = run("sweep", *SWEEP, "-o", "sweep-reference.h5", "--quiet")
sweep_duration = time.monotonic() - t0
check(r.returncode == 0, f"reference sweep failed: {r.stderr}")
for k, how in enumerate(["SIGTERM", "kill -9", "SIGINT"]):
    path = f"sweep{k}.h5"
    # Batches of 6 members: the stop falls in one batch, with others done and others not begun.
    p = start("sweep", *SWEEP, "-o", path, "--max-batch-memory", "1500K", "--checkpoint-every",
              str(random.randint(2, 6)))
    time.sleep(random.uniform(0.2, 0.8) * sweep_duration)
    if how == "kill -9":
        p.kill()
    else:
        p.send_signal(getattr(signal, how))
    out, err = p.communicate(timeout=60)
    if p.returncode == 0:
        print(f"sweep {how}: the sweep had finished", flush=True)
        continue
    if how != "kill -9":
        check(p.returncode == 128 + getattr(signal, how) and "sweep --resume" in err,
              f"sweep {how}: exit {p.returncode}, {err!r}")
        # The images not reached are left unwritten (0, no disk) for the continuation, not
        # written NaN (the rest of the file, after a time limit's signal).
        with h5py.File(path, "r") as f:
            counts = f["images_written"][...]
            check(all(not np.any(f["v"][m, n:]) for m, n in enumerate(counts)),
                  f"sweep {how}: images past the counts {list(counts)} were written")
    r = run("sweep", "--resume", path, "--threads", random.choice(["1", "2"]))
    check(r.returncode == 0, f"sweep {how}: resume failed: {r.stderr}")
    # Its summary says it continued the members, not that it wrote them all.
    check(r.stderr.strip().splitlines()[-1].startswith("completed ")
          and "(each member from its checkpoint, or from its start where it had none)" in r.stderr,
          f"sweep {how}: the continued sweep's summary: {r.stderr!r}")
    same_file("sweep-reference.h5", path, f"sweep stopped by {how}, resumed")
    print(f"sweep {how}: resumed: ok", flush=True)
r = run("sweep", "--resume", "sweep-reference.h5")
check(r.returncode == 2 and "nothing to resume" in r.stderr, f"a complete sweep: {r.stderr}")
r = run("sweep", "--resume", "reference.h5")
check(r.returncode == 2 and "not a sweep file" in r.stderr, f"a run file as sweep: {r.stderr}")
r = run("sweep", "--resume", "sweep0.h5", "--rows", "32")
check(r.returncode == 2 and "--rows with --resume" in r.stderr, f"sweep --resume --rows: {r.stderr}")

# ---- files whose attributes another program changed -------------------------------------------
# Read by its attributes, such a file was continued past its datasets' ends (a crash) or over
# their images (rows 100 of 256: the rest of every image cut away). Refused, the file untouched.
def stopped(kind, *args):
    path = f"edited-{kind}.h5"
    p = start(kind, *args, "-o", path, "--quiet")
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    return path


stopped_run = stopped("run", "--rows", "256", "--cols", "256", "--images", "60",
                      "--steps-per-image", "2000")
stopped_sweep = stopped("sweep", "--rows", "256", "--cols", "256", "--images", "60",
                        "--steps-per-image", "2000", "--feed", "0.02,0.03")
EDITS = [(stopped_run, "rows", 1000, "a grid of 1000x256 but /v holds images of 256x256"),
         (stopped_run, "cols", 100, "a grid of 256x100 but /v holds images of 256x256"),
         (stopped_sweep, "rows", 100, "a grid of 100x256 but /v holds images of 256x256"),
         (stopped_sweep, "members", 3, "/feed holds 2 values for 3 members"),
         (stopped_sweep, "members", 1, "/feed holds 2 values for 1 members")]
for source, name, value, said in EDITS:
    path = f"edited-{name}-{value}-{source}"
    shutil.copy(source, path)
    with h5py.File(path, "r+") as f:
        f.attrs[name] = np.int64(value)
    shutil.copy(path, "edited-before.h5")
    kind = "sweep" if "sweep" in source else "run"
    for command in ([kind, "--resume", path, "--quiet"], ["info", path], ["repair", path]):
        r = run(*command)
        check(r.returncode == 2 and said in r.stderr and
              "(the file was changed by another program): nothing done with it" in r.stderr,
              f"{' '.join(command)} with {name} = {value}: exit {r.returncode}, {r.stderr!r}")
        check(filecmp.cmp(path, "edited-before.h5", shallow=False),
              f"{' '.join(command)} with {name} = {value} changed the file")

# ---- a second Ctrl-C exits at once -------------------------------------------------------------
# Images of a few seconds each (3.6 s at 2.3 Gcell-updates/s): the first SIGINT waits for the
# image boundary, the second not.
def interrupted_twice(*command):
    """Two SIGINTs to a run or sweep of slow images: returns what it said (stderr)."""
    p = start(*command)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    time.sleep(0.3)  # a second keystroke; one within 20 ms is taken for the same one delivered twice
    p.send_signal(signal.SIGINT)
    t = time.monotonic()
    _, err = p.communicate(timeout=60)
    check(p.returncode == 130, f"second SIGINT: exit status {p.returncode}, not 130")
    check(time.monotonic() - t < 1.0, f"second SIGINT to {command[0]}: did not exit at once")
    return err


err = interrupted_twice("run", "--rows", "1024", "--cols", "1024", "--images", "3",
                        "--steps-per-image", "8000", "-o", "twice.h5")
check("second SIGINT: exiting now; twice.h5 keeps the images flushed before (grayscott repair "
      "twice.h5 makes it readable, grayscott run --resume twice.h5 continues it)" in err,
      f"second SIGINT: no line saying so and naming the remedy: {err!r}")
with h5py.File("twice.h5", "r", swmr=True) as f:
    check(f.attrs["status"] == "running" and f["v"].shape[0] >= f["step"].shape[0],
          "second SIGINT: /step counts an image that /v does not hold")
# A sweep names its own way to continue.
err = interrupted_twice("sweep", "--rows", "1024", "--cols", "1024", "--feed", "0.03,0.04",
                        "--images", "3", "--steps-per-image", "8000", "-o", "twice-sweep.h5")
check("(grayscott repair twice-sweep.h5 makes it readable, grayscott sweep --resume "
      "twice-sweep.h5 continues it)" in err, f"second SIGINT to a sweep: {err!r}")
# While a run draws its pictures (--render), its file is whole: that is what the second one says.
# Pictures of 2048x2048 cells take a while each: both signals come while one is drawn.
p = start("run", "--rows", "2048", "--cols", "2048", "--images", "20", "--steps-per-image", "1",
          "-o", "drawing.h5", "--render", "drawing")
while p.poll() is None and not (os.path.isdir("drawing") and os.listdir("drawing")):
    time.sleep(0.005)
p.send_signal(signal.SIGINT)
time.sleep(0.05)
p.send_signal(signal.SIGINT)
_, err = p.communicate(timeout=60)
check(p.returncode == 130 and "second SIGINT: exiting now; the run in drawing.h5 is whole; the "
      "pictures written stay in drawing" in err,
      f"second SIGINT while drawing the pictures: {p.returncode} {err!r}")

# ---- reading a file while it is written -----------------------------------------------------
# Flushed twice a second: a reader sees the file grow in several stages, every image it sees
# final (compared with the finished file). The run lasts about 5 s at the reference's pace.
steps_per_image = max(3000, int(150 * 80 / duration * 5.0 / 30))
p = start("run", *with_options(PROBLEM, images=30, steps_per_image=steps_per_image), "-o",
          "growing.h5", "--quiet")
seen = {}
while p.poll() is None:
    try:
        with h5py.File("growing.h5", "r", swmr=True) as f:
            # /step first: it counts only images already there, and /v never shrinks.
            n = f["step"].shape[0]
            check(f["v"].shape[0] >= n, "reader: /step counts an image that /v does not hold")
            if n > 0 and n not in seen:
                seen[n] = f["v"][n - 1]
    except (OSError, KeyError):
        pass  # not created yet
    time.sleep(0.05)
check(p.returncode == 0, "the run read while written failed")
check(len(seen) >= 3, f"reader: saw too few stages of the growing file: {sorted(seen)}")
with h5py.File("growing.h5", "r") as f:
    for n, image in seen.items():
        check(np.array_equal(image, f["v"][n - 1]),
              f"reader: image {n - 1} seen while written differs from the finished file")
r = run("render", "growing.h5", "--image", "0", "--out", "growing-png")
check(r.returncode == 0, f"render of the finished file failed: {r.stderr}")

# ---- files that are someone else's ------------------------------------------------------------
small = ["--rows", "32", "--cols", "32", "--images", "3", "--steps-per-image", "5", "--quiet"]
with open("theirs.xmf", "w") as f:
    f.write("someone's notes\n")
r = run("run", *small, "-o", "theirs.h5")
check(r.returncode != 0 and "theirs.xmf" in r.stderr and not os.path.exists("theirs.h5"),
      f"an unrelated NAME.xmf is not refused: {r.stderr}")
check(open("theirs.xmf").read() == "someone's notes\n", "an unrelated NAME.xmf was changed")
# repair writes a companion over a companion only, not over someone's notes, a link or a folder.
run("run", *small, "-o", "ours.h5")
shutil.copy("ours.h5", "theirs.h5")
os.symlink("target.txt", "linked.xmf")
shutil.copy("ours.h5", "linked.h5")
for h5, what in [("theirs.h5", "not an XDMF companion"), ("linked.h5", "a link")]:
    r = run("repair", h5)
    check(r.returncode == 2 and f"which is {what}: move it away first" in r.stderr,
          f"repair beside {what}: exit {r.returncode}, {r.stderr!r}")
    check(filecmp.cmp(h5, "ours.h5", shallow=False), f"repair beside {what} changed {h5}")
check(open("theirs.xmf").read() == "someone's notes\n", "repair replaced an unrelated NAME.xmf")
check(os.path.islink("linked.xmf"), "repair replaced a link at NAME.xmf")
# A continued run or sweep writes its companion too: refused as repair refuses, before anything
# is computed (it wrote over someone's notes, or failed on a folder after the whole run).
for kind, source in (("run", stopped_run), ("sweep", stopped_sweep)):
    shutil.copy(source, "theirs.h5")
    for what, make in (("not an XDMF companion", None), ("a directory", os.mkdir)):
        if make:
            os.rename("theirs.xmf", "notes.txt")
            make("theirs.xmf")
        r = run(kind, "--resume", "theirs.h5", "--quiet")
        check(r.returncode == 2 and "a continued " + kind + " writes theirs.h5's companion as "
              f"theirs.xmf, which is {what}: move it away first" in r.stderr,
              f"{kind} --resume beside {what}: exit {r.returncode}, {r.stderr!r}")
        check(filecmp.cmp("theirs.h5", source, shallow=False),
              f"{kind} --resume beside {what} changed the file")
        if make:
            os.rmdir("theirs.xmf")
            os.rename("notes.txt", "theirs.xmf")
    check(open("theirs.xmf").read() == "someone's notes\n",
          f"{kind} --resume replaced an unrelated NAME.xmf")
# A companion that cannot be removed (immutable): --force leaves the old run and its companion
# as they were (the run was replaced by an empty file before), a continued run is refused first.
run("run", *small, "-o", "kept.h5")
shutil.copy("kept.h5", "kept-before.h5")
shutil.copy(stopped_run, "stuck.h5")
run("repair", "stuck.h5")  # gives it a companion
immutable = [name for name in ("kept.xmf", "stuck.xmf")
             if subprocess.run(["chattr", "+i", name], capture_output=True).returncode == 0]
if len(immutable) < 2:
    print("note: chattr +i is not available here: the immutable companion is not tried")
else:
    try:
        r = run("run", *small, "-o", "kept.h5", "--force")
        check(r.returncode == 2 and "output companion kept.xmf cannot be replaced" in r.stderr,
              f"--force beside an immutable companion: exit {r.returncode}, {r.stderr!r}")
        check(filecmp.cmp("kept.h5", "kept-before.h5", shallow=False),
              "--force beside an immutable companion replaced the run")
        r = run("run", "--resume", "stuck.h5", "--quiet")
        check(r.returncode == 2 and "a companion that cannot be replaced" in r.stderr,
              f"--resume beside an immutable companion: exit {r.returncode}, {r.stderr!r}")
        # The mirror case: the run immutable, its companion not (which was removed before the
        # rename over the run failed).
        for name in immutable:
            subprocess.run(["chattr", "-i", name])
        immutable = ["kept.h5"] if subprocess.run(["chattr", "+i", "kept.h5"]).returncode == 0 else []
        shutil.copy("kept.xmf", "kept-before.xmf")
        r = run("run", *small, "-o", "kept.h5", "--force")
        check(r.returncode == 2 and "output kept.h5 cannot be replaced" in r.stderr and
              filecmp.cmp("kept.xmf", "kept-before.xmf", shallow=False),
              f"--force over an immutable run: exit {r.returncode}, {r.stderr!r}")
    finally:
        for name in immutable:
            subprocess.run(["chattr", "-i", name])
os.remove("theirs.h5")
os.remove("linked.h5")
os.remove("linked.xmf")

with open("target.txt", "w") as f:
    f.write("precious\n")
os.symlink("target.txt", "link.h5")
r = run("run", *small, "-o", "link.h5")
check(r.returncode != 0 and "already exists" in r.stderr, "a symlink at the output is not refused")
r = run("run", *small, "-o", "link.h5", "--force")
check(r.returncode == 0, f"--force over a symlink failed: {r.stderr}")
check(open("target.txt").read() == "precious\n", "--force wrote through a symlink")
check(not os.path.islink("link.h5") and h5py.is_hdf5("link.h5"),
      "--force did not replace the symlink by the new file")

os.symlink("target.txt", "linked.xmf")
r = run("run", *small, "-o", "linked.h5", "--force")
check(r.returncode == 0 and open("target.txt").read() == "precious\n",
      "the .xmf companion was written through a symlink")

os.mkdir("pictures")
os.symlink(os.path.abspath("target.txt"), "pictures/v_0000.png")
r = run("run", *small, "-o", "pictured.h5", "--render", "pictures")
check(r.returncode != 0 and "pictures/v_0000.png exists" in r.stderr and
      os.path.islink("pictures/v_0000.png") and not os.path.exists("pictured.h5"),
      f"--render without --force did not refuse an existing picture: {r.stderr}")
r = run("run", *small, "-o", "pictured.h5", "--render", "pictures", "--force")
check(r.returncode == 0 and open("target.txt").read() == "precious\n",
      f"--render wrote through a symlinked picture: {r.stderr}")
check(not os.path.islink("pictures/v_0000.png") and
      open("pictures/v_0000.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n",
      "--render did not replace the symlink by its picture")

r = run("run", *small, "-o", "images.xmf")
check(r.returncode == 2 and "XDMF" in r.stderr and not os.path.exists("images.xmf"),
      f"-o NAME.xmf is not refused: {r.stderr}")
r = run("run", *small, "-o", "")
check(r.returncode == 2 and "empty" in r.stderr, f"-o '' is not named: {r.stderr}")
os.mkdir("folder.h5")
r = run("run", *small, "-o", "folder.h5")
check(r.returncode == 2 and "directory" in r.stderr, f"-o DIR is not named: {r.stderr}")

r = run("run", *small, "-o", "a&b<c>'\".h5")
check(r.returncode == 0, f"a name with XML's special characters failed: {r.stderr}")
try:
    root = ET.parse("a&b<c>'\".xmf").getroot()
    items = [e.text for e in root.iter("DataItem") if e.get("Format") == "Binary"]
    check(items and all(t == "a&b<c>'\".h5" for t in items),
          "the escaped name does not read back as the file's name")
except ET.ParseError as e:
    check(False, f"the .xmf of a name with & and < is not valid XML: {e}")

# --force over a file that another process holds open: it keeps what it had; the new file is whole.
r = run("run", *small, "-o", "held.h5")
with open("held.h5", "rb") as held:
    before = held.read()
    held.seek(0)
    r = run("run", *with_options(small, images=4), "-o", "held.h5", "--force")
    check(r.returncode == 0, f"--force over a held file failed: {r.stderr}")
    check(held.read() == before, "--force changed the file another process holds open")
with h5py.File("held.h5", "r") as f:
    check(f["v"].shape[0] == 4 and f.attrs["status"] == "complete",
          "--force over a held file did not leave the new run")

# A killed writer's pid that another process took since (a reboot, a container) is not its writer:
# the file is repaired and continued, as writer_process tells them apart.
p = start("run", *PROBLEM, "-o", "reused.h5", "--checkpoint-every", "2")
while p.poll() is None and not os.path.exists("reused.h5"):
    time.sleep(0.02)
time.sleep(0.2 * duration)
p.kill()
p.communicate()
stranger = subprocess.Popen(["sleep", "60"])
subprocess.run(["h5clear", "-s", "reused.h5"], capture_output=True)
with h5py.File("reused.h5", "r+") as f:
    check(f.attrs["writer_pid"] == p.pid and "/" in f.attrs["writer_process"],
          "the writer's pid and process are not recorded while it writes")
    f.attrs["writer_pid"] = stranger.pid
r = run("repair", "reused.h5")
check(r.returncode == 0 and "repaired" in r.stdout,
      f"a live process that took the killed writer's pid blocks repair: {r.stderr}")
stranger.kill()
stranger.wait()

# Killed after its last image, before its final checkpoint filled both slots (one still holds an
# earlier state, as the file is then): --resume writes it into both, bitwise the uninterrupted file.
last = ["--rows", "32", "--cols", "32", "--images", "20", "--steps-per-image", "10",
        "--checkpoint-every", "5", "--quiet"]
run("run", *last, "-o", "last-whole.h5")
run("run", *with_options(last, images=15), "-o", "last-15.h5")
shutil.copy("last-whole.h5", "last-killed.h5")
with h5py.File("last-killed.h5", "r+") as f, h5py.File("last-15.h5", "r") as earlier:
    f["checkpoint/images"][...] = [15, 20]
    f["checkpoint/u"][0] = earlier["checkpoint/u"][0]
    f.attrs["status"] = "running"
r = run("run", "--resume", "last-killed.h5")
check(r.returncode == 0 and "all 20 images were written before" in r.stderr,
      f"a run killed after its last image does not resume to its end: {r.stderr}")
same_file("last-whole.h5", "last-killed.h5", "a run killed after its last image, resumed")

# A stale companion never sits beside a new file: --force replaces it at once. (The old one is
# removed before the new file takes the name, and the new one written just after: read once the
# new file is in place, the companion may be absent for that moment, never the old one.)
r = run("run", *small, "-o", "stale.h5")
old_file = os.stat("stale.h5").st_ino
p = start("run", *PROBLEM, "-o", "stale.h5", "--force")
deadline = time.monotonic() + 30
while os.stat("stale.h5").st_ino == old_file and time.monotonic() < deadline:
    time.sleep(0.002)
text = None
while text is None and time.monotonic() < deadline:
    try:
        text = open("stale.xmf").read()
    except FileNotFoundError:
        time.sleep(0.002)
check(text is not None and "32 32" not in text,
      "the companion of a replaced run still describes the old file (or none came)")
p.kill()
p.communicate()
# A sweep writes its companion when it ends: the replaced sweep's is gone once the new file is.
run("sweep", "--feed", "0.02,0.03", "--kill", "0.06", "--rows", "16", "--cols", "16", "--images", "2",
    "--quiet", "-o", "stale-sweep.h5")
p = start("sweep", "--feed", "0.02,0.03", "--kill", "0.06", "--rows", "192", "--cols", "160",
          "--images", "400", "--steps-per-image", "200", "-o", "stale-sweep.h5", "--force")
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        with h5py.File("stale-sweep.h5", "r", swmr=True) as f:
            if f.attrs["rows"] == 192:
                break
    except OSError:
        pass
    time.sleep(0.02)
check(not os.path.exists("stale-sweep.xmf"),
      "the companion of a replaced sweep stays beside the new sweep's file")
p.kill()
p.communicate()

# Two processes given one name with --force at the same moment: not both go on (one would write
# into a file that is gone while the other's companion describes a file of another size). The
# later is refused, naming the earlier; what stays under the name is one whole run, its companion
# describing it, no temporary file left.
def force_race(command, sizes):
    for name in os.listdir("."):
        if name.startswith("race."):
            os.remove(name)
    outputs = []
    processes = [start(command, "--rows", str(rows), "--cols", str(rows), "--images", str(images),
                       *(["--feed", "0.02,0.03"] if command == "sweep" else []),
                       "-o", "race.h5", "--force", "--quiet") for rows, images in sizes]
    for p in processes:
        outputs.append(p.communicate(timeout=120) + (p.returncode,))
    refused = [err for _, err, code in outputs if code != 0]
    check(len(refused) <= 1 and all("race.h5 is being written by process" in e for e in refused),
          f"{command} --force race: {[(code, err) for _, err, code in outputs]}")
    with h5py.File("race.h5", "r") as f:
        shape, status = f["v"].shape, f.attrs["status"]
    xmf = open("race.xmf").read()
    rows, images, listed = shape[-1], shape[-3], xmf.count('<Grid Name="image ')
    check(status == "complete" and f'Dimensions="1 {rows} {rows}"' in xmf and listed == images
          and (rows, images) in sizes,
          f"{command} --force race: race.h5 holds {shape} ({status}) beside a companion of "
          f"{listed} images")
    check(not [n for n in os.listdir(".") if n.startswith("race.h5.partial")],
          f"{command} --force race: a temporary file was left: {os.listdir('.')}")
    return len(refused)


refusals = sum(force_race("run", [(128, 20), (96, 30)]) for _ in range(4))
refusals += sum(force_race("sweep", [(64, 20), (48, 30)]) for _ in range(2))
print(f"--force at once: {refusals} of 6 later claims refused, every file whole", flush=True)

# A stopped file continued by two processes at once, or continued while a run given its name with
# --force replaces it: never both (two writers in one file, or the resume writing its images into
# the new run's file). One goes on, the other is refused naming why; what stays is whole: the
# resumed run, bitwise the uninterrupted one, or the new run.
RESUMED = ["--rows", "96", "--cols", "96", "--images", "60", "--steps-per-image", "400",
           "--threads", "1", "--checkpoint-every", "5"]
run("run", *RESUMED, "--quiet", "-o", "resume-reference.h5")
p = start("run", *RESUMED, "--quiet", "-o", "resume-stopped.h5")
while p.poll() is None:
    try:
        with h5py.File("resume-stopped.h5", "r", swmr=True) as f:
            if len(f["step"]) >= 8:
                break
    except (OSError, KeyError):
        pass
    time.sleep(0.02)
p.send_signal(signal.SIGINT)
p.communicate()
check(p.returncode == 128 + signal.SIGINT, "the run to continue was not stopped by SIGINT")
REFUSALS = ("is being written by process", "was replaced since it was read", "open elsewhere",
            "open for writing elsewhere")


def resume_race(second):
    for name in ("resumed.h5", "resumed.xmf"):
        if os.path.exists(name):
            os.remove(name)
    shutil.copy("resume-stopped.h5", "resumed.h5")
    # Either first, the other a few milliseconds later.
    commands = [["run", "--resume", "resumed.h5", "--quiet"], second]
    order = [0, 1] if random.random() < 0.5 else [1, 0]
    processes = {}
    for k in order:
        processes[k] = start(*commands[k])
        time.sleep(random.uniform(0, 0.01))
    outputs = [processes[k].communicate(timeout=120) + (processes[k].returncode,) for k in (0, 1)]
    what = f"--resume against {' '.join(second[:2])}: {[(c, e.strip()) for _, e, c in outputs]}"
    refused = [err for _, err, code in outputs if code != 0]
    check(len(refused) == 1 and any(r in refused[0] for r in REFUSALS), what)
    with h5py.File("resumed.h5", "r") as f:
        status, feed = f.attrs["status"], f.attrs["feed"]
    check(status == "complete", f"{what}: the file left says {status!r}")
    if feed != 0.03:
        same_file("resume-reference.h5", "resumed.h5", f"{what}: the resumed file")
    return outputs[0][2] == 0


won = sum(resume_race(["run", "--resume", "resumed.h5", "--quiet"]) for _ in range(4))
won += sum(resume_race(["run", *RESUMED, "--feed", "0.03", "--force", "--quiet", "-o", "resumed.h5"])
           for _ in range(4))
print(f"--resume against a second --resume or a --force run: the resume went on in {won} of 8, "
      "the other refused, every file whole", flush=True)

# The temporary file of a writer killed before its file took its name (NAME.partial-PID): the next
# claim of that name removes it once plainly abandoned (its process gone, unchanged for a minute);
# one whose process lives, or one changed just now, stays.
gone = subprocess.Popen(["true"])
gone.wait()
abandoned, fresh, alive = (f"claimed.h5.partial-{pid}" for pid in (gone.pid, gone.pid + 1, os.getpid()))
for name in (abandoned, fresh, alive):
    open(name, "wb").close()
minutes_ago = time.time() - 120
os.utime(abandoned, (minutes_ago, minutes_ago))
os.utime(alive, (minutes_ago, minutes_ago))
r = run("run", "--rows", "8", "--cols", "8", "--images", "1", "--quiet", "-o", "claimed.h5")
check(r.returncode == 0 and not os.path.exists(abandoned) and os.path.exists(alive),
      f"an abandoned temporary file: {r.stderr} {sorted(n for n in os.listdir('.') if 'claimed' in n)}")
for name in (fresh, alive):
    if os.path.exists(name):
        os.remove(name)

# A rendering killed by SIGKILL leaves its picture's or video's temporary file (nothing can remove
# it then): the next rendering of that name removes it by the same rule, and leaves the others.
os.makedirs("killed-render", exist_ok=True)
outputs = [os.path.join("killed-render", "v_0000.png")]
if shutil.which("ffmpeg"):
    outputs.append("claimed.gif")
for output in outputs:
    abandoned, fresh, alive = (f"{output}.partial-{pid}"
                               for pid in (gone.pid, gone.pid + 1, os.getpid()))
    for name in (abandoned, fresh, alive):
        open(name, "wb").close()
    os.utime(abandoned, (minutes_ago, minutes_ago))
    os.utime(alive, (minutes_ago, minutes_ago))
    where = (["--out", "killed-render", "--image", "0"] if output.endswith(".png")
             else ["--video", output])
    r = run("render", "claimed.h5", *where, "--quiet")
    check(r.returncode == 0 and os.path.exists(output) and not os.path.exists(abandoned)
          and os.path.exists(fresh) and os.path.exists(alive),
          f"a killed rendering's temporary file beside {output}: {r.stderr} "
          f"{sorted(n for n in os.listdir(os.path.dirname(output) or '.') if '.partial-' in n)}")
    for name in (fresh, alive):
        if os.path.exists(name):
            os.remove(name)

# In a container every rendering may run as PID 1: a picture's temporary file left under that
# number by a killed one is no obstacle to the next (in a new PID namespace, as root).
os.makedirs("same-pid", exist_ok=True)
open(os.path.join("same-pid", "v_0000.png.partial-1"), "wb").close()
r = subprocess.run(["unshare", "--fork", "--pid", GRAYSCOTT, "render", "claimed.h5", "--out",
                    "same-pid", "--image", "0", "--quiet"], capture_output=True, text=True)
if r.returncode != 0 and "cannot write" not in r.stderr:
    print(f"skipped the picture under PID 1: no PID namespace here ({r.stderr.strip()})", flush=True)
else:
    check(r.returncode == 0 and os.listdir("same-pid") == ["v_0000.png"],
          f"a picture rendered as PID 1 beside a killed one's temporary file: {r.stderr} "
          f"{os.listdir('same-pid')}")

# ---- a disk that fills up mid-run ---------------------------------------------------------------
# Twice: on a tmpfs (images through the page cache) and on an ext4 file system in a file (images
# written straight to the disk, past the page cache: io/files/direct_writes.hpp).
def full_disk_test(kind, disk, small_images=False):
    """A run fills `disk`: the error says so in one line, and the file keeps, counted and bitwise
    the uninterrupted run's, every image written before the one that found no room. With
    `small_images` (under 64 KiB, which go through HDF5 rather than straight to the disk) and
    checkpoints 30 images apart, the images since the last flush must be kept too."""
    path = os.path.join(disk, "full.h5")
    if small_images:
        slower = with_options(PROBLEM, rows=64, cols=128, images=200, steps_per_image=1200)
        every = "30"
        reference = "full-small-reference.h5"
    else:
        # 150 images of 192x160 u and v are 37 MB: refused up front on 24 MB...
        r = run("run", *PROBLEM, "-o", path, "--quiet")
        check(r.returncode == 2 and "free" in r.stderr,
              f"{kind}: the up-front space check did not refuse: {r.stderr}")
        # ...so run a smaller one, and fill the disk while it writes.
        slower = with_options(PROBLEM, images=60, steps_per_image=300)
        every = "4"
        reference = "full-reference.h5"
    p = start("run", *slower, "-o", path, "--checkpoint-every", every)
    images_seen = 0
    while p.poll() is None and images_seen < 3:  # fill the disk once the run is writing
        try:
            with h5py.File(path, "r", swmr=True) as f:
                images_seen = f["v"].shape[0]
        except (OSError, KeyError):
            pass
        time.sleep(0.02)
    subprocess.run(["dd", "if=/dev/zero", f"of={disk}/filler", "bs=1M", "count=64"],
                   capture_output=True)
    out, err = p.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.startswith("grayscott:")]
    check(p.returncode != 0, f"{kind}: a full disk did not fail the run")
    check(len(lines) == 1 and "No space left on device" in lines[0] and path in lines[0],
          f"{kind}: a full disk is not named in one line with the file: {err!r}")
    os.remove(f"{disk}/filler")
    if not os.path.exists(reference):
        run("run", *slower, "-o", reference, "--quiet")
    # Opened as any reader opens it (no swmr): the run closed it, its status recorded.
    n, attrs = prefix_of_reference(datasets(reference)[0], path, f"full {kind}")
    check(attrs["status"].startswith(f"stopped after image {n} by an error: ")
          and "No space left on device" in attrs["status"],
          f"full {kind}: status {attrs['status']!r} does not name the error and image {n}")
    # The error says what the file keeps, which the image it names may be beyond.
    kept = "its first image" if n == 1 else f"its first {n} images"
    check(bool(lines) and lines[0].endswith(f"; the file keeps {kept}"),
          f"full {kind}: the error does not say the file keeps {n} images: {lines}")
    # Every image complete before the disk filled is kept and counted: where an image's write
    # found no room, every image before it.
    check(n >= max(images_seen - 1, 1),
          f"full {kind}: {n} images kept, {images_seen} were seen before the disk filled")
    # The error is a write's, an image's or (but with small images) the checkpoint's: a flush
    # that fails had held images in memory, lost with it.
    failed_image = re.search(r"write image (\d+) of", lines[0]) if lines else None
    at_checkpoint = not small_images and bool(lines) and "write the checkpoint" in lines[0]
    check(failed_image is not None or at_checkpoint,
          f"full {kind}: the disk filled at no write of an image"
          f"{'' if small_images else ' or a checkpoint'}: {lines}")
    if failed_image is not None:
        check(n == int(failed_image.group(1)),
              f"full {kind}: {n} images kept, but the write of image {failed_image.group(1)} "
              "failed: every image before it was written")
    with open(path[:-3] + ".xmf") as companion:
        listed = companion.read().count('<Grid Name="image ')
    # The .xmf is replaced by a new file, for which a full disk may have no room: it then lists
    # the images of the flush before (grayscott repair lists them all once there is room).
    check(listed <= n, f"full {kind}: the .xmf lists {listed} images, /step counts {n}")
    print(f"full {kind}: {n} images kept, status {attrs['status']!r}", flush=True)


def full_disk_mpi_test(disk):
    """Two MPI ranks write a run onto `disk` until it fills: the ranks stop together and the file,
    closed, opens in any reader with its status naming the error and the image, /step counting
    the images complete before, each of them the single process's (bitwise the same run)."""
    path = os.path.join(disk, "full-mpi.h5")
    # 60 images of 192x160 u and v (15 MB) pass the up-front check on 24 MB; the images are slow
    # enough (about 40 ms each on two ranks) for the disk to be filled in the middle of the run.
    problem = with_options(PROBLEM, images=60, steps_per_image=1500)
    image_bytes = 192 * 160 * 4 * 2
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    p = subprocess.Popen([MPIEXEC[0], "-n", "2", *MPIEXEC[1:], GRAYSCOTT, "run", *problem,
                          "-o", path, "--checkpoint-every", "4", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # Parallel HDF5 has no SWMR, so the file is not read while it is written: the disk it takes
    # (its images' room is reserved as a hole, filled as they are written) says how far it is.
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline:
        try:
            if os.stat(path).st_blocks * 512 >= 4 * image_bytes:
                break
        except FileNotFoundError:
            pass  # still under its temporary name
        time.sleep(0.01)
    check(p.poll() is None, "mpi full tmpfs: the run ended before the disk could be filled")
    subprocess.run(["dd", "if=/dev/zero", f"of={disk}/filler", "bs=1M", "count=64"],
                   capture_output=True)
    out, err = p.communicate(timeout=180)
    os.remove(f"{disk}/filler")
    check(p.returncode != 0, f"mpi full tmpfs: a full disk did not fail the run: {err!r}")
    # One line from the ranks, naming the file and the write that failed: the system's reason
    # where the MPI library passes it on (Open MPI's ROMIO says MPI_ERR_IO).
    lines = [line for line in err.splitlines() if line.startswith("grayscott: error: ")]
    # Open MPI's ROMIO says only MPI_ERR_IO: grayscott names the full disk it found.
    check(len(lines) == 1 and path in lines[0] and "No space left on device" in lines[0],
          f"mpi full tmpfs: the error does not name the file and the full disk: {err!r}")
    message = lines[0][len("grayscott: error: "):] if lines else "(none)"
    message, _, kept = message.partition("; the file keeps ")  # what the status does not say
    run("run", *problem, "-o", "full-mpi-reference.h5", "--quiet")
    reference, _ = datasets("full-mpi-reference.h5")
    # Opened as any reader opens it (no swmr): the ranks closed it.
    with h5py.File(path, "r") as f:
        status = f.attrs["status"]
        n = len(f["step"])
        check(status == f"stopped after image {n} by an error: {message}" and
              f"write image {n} of" in status,
              f"mpi full tmpfs: status {status!r} does not name the error ({message!r}) and "
              f"image {n}")
        check(n >= 1, "mpi full tmpfs: no image was kept, though some were written before the "
                      "disk filled")
        check(kept == ("its first image" if n == 1 else f"its first {n} images"),
              f"mpi full tmpfs: the error says the file keeps {kept!r}, not {n} images")
        # No more either (the failed write's image is cut): xarray refuses sizes that differ.
        check(len(f["time"]) == n and f["u"].shape[0] == n and f["v"].shape[0] == n,
              f"mpi full tmpfs: /time {f['time'].shape}, /u {f['u'].shape}, /v {f['v'].shape} "
              f"hold other counts of images than /step ({n})")
        for name in ("u", "v", "step", "time"):
            check(np.array_equal(f[name][:n], reference[name][:n]),
                  f"mpi full tmpfs: /{name} is not the single process's first {n} images")
    print(f"full tmpfs under mpiexec -n 2: {n} images kept, status {status!r}", flush=True)


def full_disk_sweep_test(disk, ranks):
    """A sweep (one process, or `ranks` MPI ranks) writes onto `disk` until it fills: one line
    names the full disk, the process ends (no crash, no hang), the file is closed with its status,
    info reads it, and once there is room repair and --resume make it bitwise the whole sweep."""
    kind = f"sweep on {ranks} ranks" if ranks > 1 else "sweep"
    path = os.path.join(disk, f"full-sweep-{ranks}.h5")
    # 3 members x 40 images of 192x160 v (15 MB) pass the up-front check on 24 MB.
    sweep = ["sweep", "--feed", "0.02:0.05:3", "--kill", "0.06", "--rows", "192", "--cols", "160",
             "--images", "40", "--steps-per-image", "1500", "--init", "noise", "--stats",
             "--checkpoint-every", "4"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    launcher = [MPIEXEC[0], "-n", str(ranks), *MPIEXEC[1:]] if ranks > 1 else []
    p = subprocess.Popen([*launcher, GRAYSCOTT, *sweep, "-o", path, "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline:
        try:
            if os.stat(path).st_blocks * 512 >= 12 * 192 * 160 * 4:
                break
        except FileNotFoundError:
            pass  # still under its temporary name
        time.sleep(0.01)
    check(p.poll() is None, f"full {kind}: it ended before the disk could be filled")
    subprocess.run(["dd", "if=/dev/zero", f"of={disk}/filler", "bs=1M", "count=64"],
                   capture_output=True)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, f"full {kind}: hung once the disk was full")
    lines = [line for line in err.splitlines() if line.startswith("grayscott: error: ")]
    check(p.returncode == 1 and len(lines) == 1 and "No space left on device" in lines[0],
          f"full {kind}: exit {p.returncode}, not one line naming the full disk: {err!r}")
    info = run("info", path)
    check(info.returncode == 0 and "status: stopped after image" in info.stdout,
          f"full {kind}: info does not read the file it left: {info.stdout}{info.stderr}")
    os.remove(f"{disk}/filler")
    with h5py.File(path, "r") as f:  # closed: any reader opens it
        written = f["images_written"][...]
    check(written.sum() >= 1, f"full {kind}: no image kept")
    # One process: the members step together, so each keeps every image before the one whose
    # write found no room (over ranks each rank writes at its own pace).
    failed_image = re.search(r"write image (\d+) of", lines[0]) if lines else None
    if ranks == 1 and failed_image is not None:
        check(written.min() == int(failed_image.group(1)),
              f"full {kind}: members keep {list(written)} images, but the write of image "
              f"{failed_image.group(1)} failed: every image before it was written")
    repaired = run("repair", path)
    resumed = run("sweep", "--resume", path, "--quiet")
    check(repaired.returncode == 0 and resumed.returncode == 0,
          f"full {kind}: repair or --resume failed: {repaired.stderr}{resumed.stderr}")
    reference = f"full-sweep-reference.h5"
    if not os.path.exists(reference):
        run("sweep", *sweep[1:], "-o", reference, "--quiet")
    same_file(reference, path, f"full {kind} resumed")
    print(f"full {kind}: {written.sum()} images kept, resumed bitwise", flush=True)


def full_companion_test(disk):
    """A run that fits the disk when it starts, whose companion, rewritten beside itself at the
    end, no longer does (another program filled the disk meanwhile, leaving room for the images
    alone): the file is complete and says so, the error names the companion and the remedy. The
    room the run asks for up front counts the companion, so without the other program it fits."""
    path = os.path.join(disk, "long.h5")
    args = ["run", "--rows", "4", "--cols", "4", "--images", "1000", "--steps-per-image",
            "100000", "--checkpoint-every", "1000", "--quiet", "-o", path]
    p = subprocess.Popen([GRAYSCOTT, *args], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while p.poll() is None and time.time() < deadline:
        try:
            with h5py.File(path, "r", swmr=True) as f:
                if len(f["step"]) >= 300:
                    break
        except (OSError, KeyError):
            pass
        time.sleep(0.05)
    check(p.poll() is None, "full companion: the run ended before the disk could be filled")
    os.kill(p.pid, signal.SIGSTOP)
    room = os.statvfs(disk)
    # The images left need at most 700 x 64 bytes (and their index, in the room the file was
    # given past its end); the companion of 1000 images about 0.5 MB, twice.
    with open(os.path.join(disk, "filler"), "wb") as filler:
        filler.write(b"\0" * max(0, room.f_bavail * room.f_frsize - (400 << 10)))
    os.kill(p.pid, signal.SIGCONT)
    _, err = p.communicate(timeout=300)
    with h5py.File(path, "r") as f:
        status, n = f.attrs["status"], len(f["step"])
    check(status == "complete" and n == 1000,
          f"full companion: the run's file says {status!r} with {n} of 1000 images: {err}")
    check(p.returncode != 0 and "XDMF companion" in err and "grayscott repair" in err,
          f"full companion: the error does not name the companion and the remedy: {err}")
    os.remove(os.path.join(disk, "filler"))
    r = run("repair", path)
    check(r.returncode == 0 and os.path.exists(path[:-3] + ".xmf"),
          f"full companion: repair did not write the companion once there was room: {r.stderr}")
    print(f"full companion: status {status!r}, exit {p.returncode}", flush=True)


def room_counted_up_front_test(disk):
    """Runs and sweeps on a small disk, asking for a little less and a little more than it holds:
    each is refused before it starts or finishes whole, its companion too; none fails midway."""
    for images in range(110, 200, 8):
        for command in (["run", "--rows", "64", "--cols", "64"],
                        ["run", "--rows", "64", "--cols", "64", "--stats"],
                        ["sweep", "--rows", "32", "--cols", "32", "--feed", "0.02,0.03",
                         "--kill", "0.05,0.06", "--stats"]):
            subprocess.run(["rm", "-f", *[os.path.join(disk, n) for n in os.listdir(disk)]])
            what = f"{' '.join(command)} --images {images} on a 3 MiB disk"
            r = run(*command, "--images", str(images), "--steps-per-image", "10", "--quiet",
                    "-o", os.path.join(disk, "room.h5"))
            if r.returncode == 2:
                check("but" in r.stderr and "free" in r.stderr and
                      not os.path.exists(os.path.join(disk, "room.h5")),
                      f"{what}: refused, but not for the room: {r.stderr}")
                continue
            check(r.returncode == 0 and os.path.exists(os.path.join(disk, "room.xmf")),
                  f"{what}: started and failed: exit {r.returncode}: {r.stderr}")
    print("room counted up front: every run and sweep refused or whole", flush=True)


def read_only_disk_test(disk):
    """Finished files on a disk mounted read-only: read, repaired (nothing to do, nothing written)
    and rendered elsewhere without an error; a new output there refused in one line naming it."""
    run_file, sweep_file = os.path.join(disk, "done.h5"), os.path.join(disk, "swept.h5")
    r = run("run", "--rows", "32", "--cols", "32", "--images", "3", "--steps-per-image", "10",
            "--quiet", "-o", run_file)
    check(r.returncode == 0, f"read-only disk: the run failed: {r.stderr}")
    r = run("sweep", "--rows", "16", "--cols", "16", "--images", "2", "--steps-per-image", "10",
            "--feed", "0.02,0.03", "--quiet", "-o", sweep_file)
    check(r.returncode == 0, f"read-only disk: the sweep failed: {r.stderr}")
    if subprocess.run(["mount", "-o", "remount,ro", disk]).returncode != 0:
        failures.append("cannot remount a tmpfs read-only although running as root")
        return
    for path in (run_file, sweep_file):
        r = run("repair", path)
        check(r.returncode == 0 and "nothing to repair" in r.stdout and "is current" in r.stdout,
              f"read-only disk: repair of the complete {path}: exit {r.returncode}: "
              f"{r.stdout}{r.stderr}")
        r = run("info", path)
        check(r.returncode == 0 and "complete" in r.stdout,
              f"read-only disk: info {path}: {r.stdout}{r.stderr}")
    r = run("render", run_file, "--out", os.path.join(WORK, "read-only-pictures"))
    check(r.returncode == 0 and len(os.listdir(os.path.join(WORK, "read-only-pictures"))) == 3,
          f"read-only disk: render into another folder: {r.stderr}")
    r = run("run", "--rows", "8", "--cols", "8", "--images", "1", "--quiet",
            "-o", os.path.join(disk, "new.h5"))
    check(r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
          and "Read-only file system" in r.stderr,
          f"read-only disk: a new output there: exit {r.returncode}: {r.stderr}")
    print("read-only disk: repair, info and render of finished files pass", flush=True)


if os.geteuid() != 0:
    print("skipped the full-disk tests: mounting a small file system needs root (CI runs as root)")
else:
    disk = os.path.join(WORK, "small-disk")
    os.makedirs(disk, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", disk]).returncode
    if mounted != 0:
        failures.append("cannot mount a tmpfs although running as root")
    else:
        try:
            full_disk_test("tmpfs", disk)
            subprocess.run(["rm", "-f", *[os.path.join(disk, n) for n in os.listdir(disk)]])
            full_disk_test("tmpfs, small images", disk, small_images=True)
            for ranks in (1, 2) if MPIEXEC else (1,):
                subprocess.run(["rm", "-f", *[os.path.join(disk, n) for n in os.listdir(disk)]])
                full_disk_sweep_test(disk, ranks)
        finally:
            subprocess.run(["umount", disk])
    image = os.path.join(WORK, "small-ext4.img")
    with open(image, "wb") as f:
        f.truncate(24 << 20)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", image], capture_output=True)
    mounted = made.returncode == 0 and subprocess.run(
        ["mount", "-o", "loop", image, disk], capture_output=True).returncode == 0
    if not mounted:
        # A container without loop devices: the tmpfs test above still ran.
        print("skipped the full ext4 disk: no loop device to mount a file system on", flush=True)
    else:
        try:
            full_disk_test("ext4", disk)
        finally:
            subprocess.run(["umount", disk])
    os.remove(image)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", disk]).returncode == 0:
        try:
            full_companion_test(disk)
            room_counted_up_front_test(disk)
        finally:
            subprocess.run(["umount", disk])
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", disk]).returncode == 0:
        try:
            read_only_disk_test(disk)
        finally:
            subprocess.run(["umount", disk])
    if not MPIEXEC:
        print("skipped the full disk under MPI ranks: no MPIEXEC given (a build without MPI)")
    elif subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", disk]).returncode != 0:
        print("skipped the full disk under MPI ranks: cannot mount a tmpfs", flush=True)
    else:
        try:
            full_disk_mpi_test(disk)
        finally:
            subprocess.run(["umount", disk])

if failures:
    print(f"{len(failures)} failed (the files are in {WORK})")
    sys.exit(1)
if OWN_WORK:
    os.chdir("/")
    shutil.rmtree(WORK, ignore_errors=True)  # hundreds of MB of runs
print("durability: all checks passed")
