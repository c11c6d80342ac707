#!/usr/bin/env python3
"""A rank killed at any of its writes, inside a collective flush included, leaves a run file that
h5py opens, whose /step counts only images that are on disk with their times and statistics
(bitwise the serial run's), and that --resume finishes bitwise equal to the serial run, on 1, 2 or
3 ranks; a sweep killed the same way resumes bitwise equal to the serial sweep. A single process
killed at any of its writes (inside its flushes) keeps the same promises.

kill -9 from outside lands inside a flush only by chance; here a preloaded library
(kill_at_write) kills rank R just before its Nth write to a file, for N drawn over every write of
the run, on either rank.

Usage: test_mpi_killed_in_flush.py GRAYSCOTT KILL_AT_WRITE_LIBRARY MPIEXEC [MPIEXEC_FLAGS...]
"""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import compare_runs  # noqa: E402
import h5py  # noqa: E402
import scratch  # noqa: E402
import numpy as np  # noqa: E402

GRAYSCOTT, LIBRARY = (os.path.abspath(a) for a in sys.argv[1:3])
MPIEXEC, FLAGS = sys.argv[3], sys.argv[4:]
WORK = scratch.enter("grayscott-killed-in-flush-")
random.seed(int(os.environ.get("GRAYSCOTT_TEST_SEED", "11")))
TRIALS = 40
SWEEP_TRIALS = 16
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


PROBLEM = ["--rows", "96", "--cols", "80", "--images", "60", "--steps-per-image", "40",
           "--init", "noise", "--seed", "3", "--fields", "u,v", "--threads", "1",
           "--checkpoint-every", "3", "--stats", "--quiet"]


def run(ranks, args, preload_env=None):
    command = [GRAYSCOTT, *args]
    if ranks == 0 and preload_env is not None:
        extra = [f"{k}={v}" for k, v in preload_env.items()]
        command = ["env", f"LD_PRELOAD={LIBRARY}", *extra, *command]
    if ranks > 0:
        # `env` sets the library for the ranks alone, not for the launcher.
        extra = [f"{k}={v}" for k, v in (preload_env or {}).items()]
        command = [MPIEXEC, "-n", str(ranks), *FLAGS, "env", f"LD_PRELOAD={LIBRARY}", *extra,
                   *command]
    p = subprocess.run(command, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stderr


def writes_per_rank(args, name, ranks=2):
    """Runs `args` uninterrupted on `ranks` ranks (0: one process, rank -1): {rank: writes}."""
    counts = os.path.abspath(f"{name}_writes.txt")
    code, err = run(ranks, [*args, "-o", f"{name}_counted.h5"],
                    {"GRAYSCOTT_TEST_COUNT_WRITES": counts})
    check(code == 0, f"counting {name}: {err}")
    writes = {}
    with open(counts) as f:
        for line in f:
            rank, count = map(int, line.split())
            writes[rank] = count
    check(sorted(writes) == (list(range(ranks)) or [-1]) and min(writes.values()) > 20,
          f"the library counted no writes of the {name}: {writes}")
    return writes


def check_counted(f, what):
    """/step counts n images: every dataset along time holds at least n, the first n the serial
    run's (times and statistics included; statistics over ranks, summed in another order, to
    rounding). Returns n."""
    n = f["step"].shape[0]
    along_time = {name: f[name] for name in ("v", "u", "time")}
    along_time.update({f"stats/{name}": f["stats"][name] for name in f["stats"]
                       if name != "v_bin"})
    short = {name: d.shape[0] for name, d in along_time.items() if d.shape[0] < n}
    check(not short, f"{what}: /step counts {n} images, shorter: {short}")
    check(f["step"][...].tobytes() == serial["step"][:n].tobytes(),
          f"{what}: /step is not the serial run's first {n} steps")
    def same(name, values):
        if name.startswith("stats/"):
            return np.allclose(values, serial[name][:n], rtol=1e-12, atol=1e-15, equal_nan=True)
        return values.tobytes() == serial[name][:n].tobytes()

    differing = [name for name, d in along_time.items() if not short and not same(name, d[:n])]
    check(not differing, f"{what}: the {n} images /step counts differ from the serial run's "
          f"in {differing}")
    return n


code, err = run(0, ["run", *PROBLEM, "-o", "serial.h5"])
check(code == 0, f"serial run: {err}")
writes = writes_per_rank(["run", *PROBLEM], "run")

with h5py.File("serial.h5", "r") as f:
    serial = {"step": f["step"][...], "v": f["v"][...], "u": f["u"][...], "time": f["time"][...]}
    serial.update({f"stats/{name}": d[...] for name, d in f["stats"].items()})

# One process, killed at any of its writes: a file left open for writing (SWMR), read as such.
single_writes = writes_per_rank(["run", *PROBLEM], "single", ranks=0)[-1]
single_read = 0
for trial in range(TRIALS if not failures else 0):
    at = random.randint(1, single_writes)
    path = f"single_killed{trial}.h5"
    what = f"one process killed before its write {at} of {single_writes}"
    run(0, ["run", *PROBLEM, "-o", path],
        {"GRAYSCOTT_TEST_KILL_RANK": -1, "GRAYSCOTT_TEST_KILL_AT_WRITE": at})
    if not os.path.exists(path):
        continue
    try:
        with h5py.File(path, "r", swmr=True) as f:
            check_counted(f, what)
        single_read += 1
    except OSError as e:
        check(False, f"{what}: h5py cannot read the file: {e}")
print(f"{single_read} killed single-process runs read")
check(single_read >= TRIALS // 2, f"only {single_read} of {TRIALS} killed runs left a file")

readable = resumed = 0
for trial in range(TRIALS if not failures else 0):
    rank = random.choice(sorted(writes))
    at = random.randint(1, writes[rank])
    path = f"killed{trial}.h5"
    what = f"rank {rank} killed before its write {at} of {writes[rank]}"
    run(2, ["run", *PROBLEM, "-o", path],
        {"GRAYSCOTT_TEST_KILL_RANK": rank, "GRAYSCOTT_TEST_KILL_AT_WRITE": at})
    if not os.path.exists(path):
        continue  # killed before the file took its name: nothing to read yet
    try:
        with h5py.File(path, "r") as f:
            check_counted(f, what)
            status = f.attrs["status"]
        readable += 1
    except OSError as e:
        check(False, f"{what}: h5py cannot read the file: {e}")
        continue
    if status != "complete" and trial % 3 == 0:
        again = random.choice([0, 2, 3])
        code, err = run(again, ["run", "--resume", path, "--quiet"])
        check(code == 0, f"{what}: resume on {again or 1} rank(s): {err.strip()}")
        check(compare_runs.main("serial.h5", path, ("backend",), ("stats",)) == 0,
              f"{what}: resumed on {again or 1} rank(s), differs from the serial run")
        resumed += 1

print(f"{readable} killed runs read, {resumed} resumed")
check(readable >= TRIALS // 2, f"only {readable} of {TRIALS} killed runs left a file")

# A sweep the same way: every killed sweep resumes bitwise (each member from its own checkpoint;
# one stopped between the two saves of its final state gets it in both slots).
SWEEP = ["sweep", "--feed", "0.02:0.05:3", "--kill", "0.05:0.065:3", "--rows", "48", "--cols",
         "48", "--images", "30", "--steps-per-image", "40", "--checkpoint-every", "3", "--quiet",
         "--threads", "1"]
code, err = run(0, [*SWEEP, "-o", "sweep_serial.h5"])
check(code == 0, f"serial sweep: {err}")
sweep_writes = writes_per_rank(SWEEP, "sweep")
sweeps_resumed = 0
for trial in range(SWEEP_TRIALS if not failures else 0):
    rank = random.choice(sorted(sweep_writes))
    at = random.randint(1, sweep_writes[rank])
    path = f"sweep_killed{trial}.h5"
    what = f"sweep: rank {rank} killed before its write {at} of {sweep_writes[rank]}"
    run(2, [*SWEEP, "-o", path],
        {"GRAYSCOTT_TEST_KILL_RANK": rank, "GRAYSCOTT_TEST_KILL_AT_WRITE": at})
    if not os.path.exists(path):
        continue
    try:
        with h5py.File(path, "r") as f:
            status = f.attrs["status"]
    except OSError as e:
        check(False, f"{what}: h5py cannot read the file: {e}")
        continue
    if status != "complete":
        again = random.choice([0, 3])
        code, err = run(again, ["sweep", "--resume", path, "--quiet"])
        check(code == 0, f"{what}: resume on {again or 1} rank(s): {err.strip()}")
        sweeps_resumed += 1
    check(compare_runs.main("sweep_serial.h5", path, ("backend",)) == 0,
          f"{what}: differs from the serial sweep")
print(f"{sweeps_resumed} killed sweeps resumed")
scratch.leave(WORK, bool(failures))
if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all passed")
