#!/usr/bin/env python3
"""Nothing lost under a real mpiexec: SIGTERM to the launcher (what a batch system sends at its
time limit) stops every rank at the same image with a checkpoint; kill -9 of one rank leaves the
images flushed before it; --resume continues on another number of ranks (P -> Q, 1 included) and
the finished file is bitwise the serial run's, for every boundary and both precisions; a file
written by one process (SWMR format), run or sweep, continues over MPI as well; an earlier
version's single-process file is refused over MPI with one line.

Usage: test_mpi_durability.py GRAYSCOTT MPIEXEC [MPIEXEC_FLAGS...]
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import compare_runs  # noqa: E402
import h5py  # noqa: E402
import scratch  # noqa: E402

GRAYSCOTT, MPIEXEC, FLAGS = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
WORK = scratch.enter("grayscott-mpi-durability-")
random.seed(int(os.environ.get("GRAYSCOTT_TEST_SEED", "7")))
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


def mpi(ranks, *args):
    command = [GRAYSCOTT, *args] if ranks == 0 else [MPIEXEC, "-n", str(ranks), *FLAGS, GRAYSCOTT, *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(p, timeout=300):
    out, err = p.communicate(timeout=timeout)
    return p.returncode, err


def partway(p, path, low, high, seconds):
    """Once `path` exists (or p ended), waits a random fraction in [low, high] of `seconds`."""
    while p.poll() is None and not os.path.exists(path):
        time.sleep(0.02)
    time.sleep(random.uniform(low, high) * seconds)


def after_progress(p, path, reached):
    """Waits until reached(f) holds for the single-process (SWMR) file `path`, or p ended: a stop
    point that does not depend on how fast the machine is at the moment."""
    while p.poll() is None:
        try:
            with h5py.File(path, "r", swmr=True) as f:
                if reached(f):
                    return
        except (OSError, KeyError):
            pass  # not created yet, or its datasets not yet there
        time.sleep(0.02)


def after_images(p, path, images):
    """Waits until a single process's run file counts `images` images, or p ended."""
    after_progress(p, path, lambda f: f["step"].shape[0] >= images)


def after_sweep_checkpoint(p, path, images):
    """Waits until a single process's sweep file has checkpointed `images` images, or p ended."""
    after_progress(p, path, lambda f: f["checkpoint/images"][...].max() >= images)


def same(a, b, what):
    problems = compare_runs.main(a, b, ("backend",))
    check(problems == 0, f"{what}: differs from the uninterrupted serial run")


def base(boundary, precision, fields="u,v"):
    return ["--rows", "96", "--cols", "80", "--images", "60", "--steps-per-image", "600",
            "--boundary", boundary, "--precision", precision, "--init", "noise", "--seed", "3",
            "--fields", fields, "--threads", "1"]


cases = [("zero-flux", "single"), ("periodic", "double"), ("fixed", "single"),
         ("zero-flux", "double")]
for k, (boundary, precision) in enumerate(cases):
    # With v alone the checkpoint keeps u, and v comes from the last image.
    problem = base(boundary, precision, "v" if k % 2 else "u,v")
    t0 = time.monotonic()
    code, err = finished(mpi(0, "run", *problem, "-o", f"serial{k}.h5", "--quiet"))
    duration = time.monotonic() - t0
    check(code == 0, f"serial run: {err}")
    ranks, again = random.choice([(2, 1), (4, 3), (3, 2), (4, 1), (2, 4)])

    # SIGTERM to the launcher, as a batch system's time limit sends it.
    path = f"stopped{k}.h5"
    p = mpi(ranks, "run", *problem, "-o", path, "--checkpoint-every", str(random.randint(2, 9)))
    partway(p, path, 0.05, 0.4, duration)
    p.send_signal(signal.SIGTERM)
    code, err = finished(p)
    with h5py.File(path, "r") as f:
        status, n = f.attrs["status"], f["v"].shape[0]
        newest = int(f["checkpoint/images"][...].max())
    # The launcher kills the ranks (SIGKILL) a while after SIGTERM: a loaded machine may not reach
    # the image boundary in time, and the file is then as kill -9 leaves it.
    if status.startswith("interrupted"):
        check(status == f"interrupted by SIGTERM after image {n}" and newest == n,
              f"SIGTERM to mpiexec -n {ranks}: status {status!r}, checkpoint {newest}, {n} images")
        check(err.count("grayscott: interrupted by SIGTERM") == 1,
              f"SIGTERM to mpiexec -n {ranks}: not one line from rank 0: {err!r}")
    if status != "complete":
        code, err = finished(mpi(again if again > 1 else 0, "run", "--resume", path, "--quiet"))
        check(code == 0, f"resume of {ranks} ranks on {again}: {err}")
    same(f"serial{k}.h5", path, f"{boundary}/{precision}: {ranks} ranks stopped after {n}, "
                                f"resumed on {again}")
    print(f"{boundary}/{precision}: SIGTERM to {ranks} ranks after image {n}, resumed on {again}",
          flush=True)

    # kill -9 of one rank: the launcher ends the job; the collective flushes kept the images.
    path = f"killed{k}.h5"
    p = mpi(ranks, "run", *problem, "-o", path, "--checkpoint-every", "3", "--quiet")
    partway(p, path, 0.1, 0.5, duration)
    # One rank (the newest process that is the program itself, not the launcher).
    subprocess.run(["pkill", "-9", "-n", "-f", f"^{GRAYSCOTT} run .*{path}"])
    finished(p)
    with h5py.File(path, "r") as f, h5py.File(f"serial{k}.h5", "r") as serial:
        # No SWMR over MPI: the file opens as it is. /step counts the images; /v and /time may
        # hold more, written after (or flushed in) the last flush, before /step's own.
        n, status = f["step"].shape[0], f.attrs["status"]
        check(f["v"].shape[0] >= n and f["time"].shape[0] >= n,
              f"kill -9 of a rank: /step counts {n} images, /v {f['v'].shape[0]}, "
              f"/time {f['time'].shape[0]}")
        check(f["step"][:n].tobytes() == serial["step"][:n].tobytes() and
              f["v"][:n].tobytes() == serial["v"][:n].tobytes(),
              f"kill -9 of a rank: the {n} images /step counts are not the serial run's")
    if status != "complete":
        code, err = finished(mpi(again if again > 1 else 0, "run", "--resume", path, "--quiet"))
        check(code == 0, f"resume after kill -9 of one of {ranks} ranks, on {again}: {err}")
    same(f"serial{k}.h5", path, f"{boundary}/{precision}: kill -9 of a rank after {n}, resumed "
                                f"on {again}")

# A sweep over 3 ranks stopped by SIGTERM continues on 2, each member from its own checkpoint.
SWEEP = ["--feed", "0.02:0.05:3", "--kill", "0.05:0.065:3", "--rows", "48", "--cols", "48",
         "--images", "30", "--steps-per-image", "400", "--init", "noise", "--seeds", "1,2",
         "--threads", "1"]
t0 = time.monotonic()
code, err = finished(mpi(0, "sweep", *SWEEP, "-o", "sweep-serial.h5", "--quiet"))
check(code == 0, f"serial sweep: {err}")
duration = time.monotonic() - t0
p = mpi(3, "sweep", *SWEEP, "-o", "sweep-mpi.h5", "--checkpoint-every", "3", "--quiet")
partway(p, "sweep-mpi.h5", 0.2, 0.5, duration)
p.send_signal(signal.SIGTERM)
finished(p)
with h5py.File("sweep-mpi.h5", "r") as f:
    status = f.attrs["status"]
if status != "complete":
    check(status.startswith("interrupted by SIGTERM") or status == "running",
          f"MPI sweep: status {status!r}")
    code, err = finished(mpi(2, "sweep", "--resume", "sweep-mpi.h5", "--quiet"))
    check(code == 0, f"MPI sweep resumed on 2 ranks: {err}")
same("sweep-serial.h5", "sweep-mpi.h5", f"sweep over 3 ranks ({status}), resumed on 2")

# A single process's file (SWMR format) stopped by SIGTERM or by kill -9 continues over 2 and 3
# ranks (rank 0 places the unwritten chunks of a sweep first), bitwise the uninterrupted run's.
for way, resumed_on in (("SIGTERM", 2), ("SIGKILL", 3)):
    path = f"single-{way}.h5"
    p = mpi(0, "run", *base("zero-flux", "single"), "-o", path, "--checkpoint-every", "2")
    after_images(p, path, random.randint(12, 36))
    p.send_signal(getattr(signal, way))
    finished(p)
    with h5py.File(path, "r", swmr=True) as f:
        status, n = f.attrs["status"], f["v"].shape[0]
    check(status != "complete", f"the single-process run ended before its {way}")
    code, err = finished(mpi(resumed_on, "run", "--resume", path, "--quiet"))
    check(code == 0, f"a single process's file ({way} after {n} images) over {resumed_on} ranks: {err}")
    same("serial0.h5", path, f"single process {way} after {n}, resumed on {resumed_on} ranks")

    path = f"sweep-single-{way}.h5"
    p = mpi(0, "sweep", *SWEEP, "-o", path, "--checkpoint-every", "3", "--quiet")
    after_sweep_checkpoint(p, path, 3 * random.randint(1, 6))
    p.send_signal(getattr(signal, way))
    finished(p)
    with h5py.File(path, "r", swmr=True) as f:
        status = f.attrs["status"]
    check(status != "complete", f"the single-process sweep ended before its {way}")
    code, err = finished(mpi(resumed_on, "sweep", "--resume", path, "--quiet"))
    check(code == 0, f"a single process's sweep ({way}) over {resumed_on} ranks: {err}")
    same("sweep-serial.h5", path, f"single-process sweep {way}, resumed on {resumed_on} ranks")

# A file of an earlier version, whose chunks one process placed at their first write, is refused
# over MPI in one line (parallel HDF5 writes only into chunks already placed).
p = mpi(0, "run", *base("zero-flux", "single"), "-o", "earlier.h5", "--checkpoint-every", "2")
after_images(p, "earlier.h5", random.randint(6, 30))
p.send_signal(signal.SIGTERM)
finished(p)
with h5py.File("earlier.h5", "r+") as f:
    images = f["u"][...]
    del f["u"]
    f.create_dataset("u", data=images, chunks=(1, 96, 80), maxshape=(None, 96, 80))  # placed at write
code, err = finished(mpi(2, "run", "--resume", "earlier.h5"))
check(code != 0 and "earlier grayscott" in err and "without mpirun" in err and
      err.count("grayscott: error") == 1, f"an earlier version's file is not refused over MPI: {err!r}")

# A file that ranks are writing is theirs: neither repaired, continued nor replaced by another
# process (rank 0 is recorded as its writer), and info says so; once the ranks are gone it is.
long_enough = ["--images", "400", "--steps-per-image", "2000"]  # a minute: killed before its end
for kind, args in (("run", ["run", *base("periodic", "single"), *long_enough]),
                   ("sweep", ["sweep", *SWEEP, *long_enough])):
    path = f"live-{kind}.h5"
    p = mpi(2, *args, "-o", path, "--quiet")
    while p.poll() is None and not os.path.exists(path):
        time.sleep(0.02)
    time.sleep(0.3)
    check(p.poll() is None, f"live {kind}: the ranks ended before the file could be touched")
    info = subprocess.run([GRAYSCOTT, "info", path], capture_output=True, text=True)
    check("state: being written by process" in info.stdout,
          f"live {kind}: info does not say the ranks write it: {info.stdout}{info.stderr}")
    for action, command in (("repair", ["repair", path]),
                            ("continue", [kind, "--resume", path, "--quiet"]),
                            ("replace", [*args, "-o", path, "--force", "--quiet"])):
        r = subprocess.run([GRAYSCOTT, *command], capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and "is being written by process" in r.stderr and
              f"{action} it once that process has ended" in r.stderr,
              f"live {kind}: {action} was not refused: {r.returncode} {r.stderr!r}")
    subprocess.run(["pkill", "-9", "-f", f"^{GRAYSCOTT} {kind} .*{path}"])
    finished(p)
    r = subprocess.run([GRAYSCOTT, "repair", path], capture_output=True, text=True)
    check(r.returncode == 0, f"live {kind}: not repaired once its ranks were killed: {r.stderr}")
    with h5py.File(path, "r") as f:
        check(f.attrs["writer_pid"] == 0 and f.attrs["writer_process"] == "",
              f"live {kind}: a repaired file still names a writer")

# Killed after its last image, one checkpoint slot still older (as the file then is): --resume on
# 2 ranks writes the final state into both, bitwise the uninterrupted file, as on one process.
last = ["--rows", "32", "--cols", "40", "--images", "20", "--steps-per-image", "10",
        "--checkpoint-every", "5", "--quiet"]
finished(mpi(0, "run", *last, "-o", "last-whole.h5"))
finished(mpi(0, "run", *last[:4], "--images", "15", *last[6:], "-o", "last-15.h5"))
finished(mpi(0, "run", *last, "-o", "last-killed.h5"))
with h5py.File("last-killed.h5", "r+") as f, h5py.File("last-15.h5", "r") as earlier:
    f["checkpoint/images"][...] = [15, 20]
    f["checkpoint/u"][0] = earlier["checkpoint/u"][0]
    f.attrs["status"] = "running"
code, err = finished(mpi(2, "run", "--resume", "last-killed.h5", "--quiet"))
check(code == 0, f"a run killed after its last image, resumed on 2 ranks: {err}")
same("last-whole.h5", "last-killed.h5", "a run killed after its last image, resumed on 2 ranks")

# Two --resume of one file, one of them over ranks, a few milliseconds apart: one goes on, the
# other is refused naming why (rank 0 checks the file and every rank agrees before any opens it),
# and the file left is bitwise the uninterrupted run.
# (Or, where the first ended before the second started on a loaded machine, nothing to resume.)
REFUSALS = ("is being written by process", "was replaced since it was read", "open elsewhere",
            "open for writing elsewhere", "nothing to resume")
# About a second of stepping left to resume on 2 ranks: both resumes start while the other runs.
race = ["--rows", "192", "--cols", "160", "--images", "60", "--steps-per-image", "2000",
        "--init", "noise", "--seed", "3", "--threads", "1"]
finished(mpi(0, "run", *race, "-o", "race-whole.h5", "--quiet"))
p = mpi(0, "run", *race, "-o", "race-stopped.h5", "--quiet", "--checkpoint-every", "1")
after_images(p, "race-stopped.h5", 8)
p.send_signal(signal.SIGINT)
finished(p)
went_on = 0
for trial, other in enumerate((2, 0, 2)):
    path = f"race{trial}.h5"
    shutil.copy("race-stopped.h5", path)
    commands = [(2, "run", "--resume", path, "--quiet"), (other, "run", "--resume", path, "--quiet")]
    random.shuffle(commands)
    processes = []
    for ranks, *args in commands:
        processes.append(mpi(ranks, *args))
        time.sleep(random.uniform(0, 0.01))
    outputs = [finished(p) for p in processes]
    what = f"two --resume on {[c[0] or 1 for c in commands]} processes: {outputs}"
    refused = [err for code, err in outputs if code != 0]
    check(len(refused) == 1 and any(r in refused[0] for r in REFUSALS), what)
    went_on += len(refused) == 1
    same("race-whole.h5", path, what)
print(f"two --resume of one file, over ranks: one went on, the other refused, in {went_on} of 3",
      flush=True)

scratch.leave(WORK, bool(failures))
if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("MPI durability: all checks passed")
