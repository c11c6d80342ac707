#!/usr/bin/env python3
"""The run command's memory, from the outside: a run's peak resident memory is at most the state's
buffers (u and v, two buffers each) plus two images of the fields it writes, over what the same
process needs for a tiny grid. For v alone, 4 + 2 fields; for u and v, 4 + 4: the checkpoint at
the last image (both fields) stays within it too. The peak is the kernel's (getrusage of the
child), so every allocation counts, HDF5's included.

Usage: test_run_memory.py GRAYSCOTT
"""
import os
import resource
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import scratch  # noqa: E402

GRAYSCOTT = os.path.abspath(sys.argv[1])
WORK = scratch.enter("grayscott-memory-")
failures = []


def peak_kib(*args):
    """The peak resident memory (KiB) of one grayscott process, alone in its own child."""
    probe = ("import resource, subprocess, sys;"
             "r = subprocess.run(sys.argv[1:]);"
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, GRAYSCOTT, *args], capture_output=True,
                         text=True, check=True).stdout.split()
    if out[0] != "0":
        failures.append(f"grayscott {' '.join(args)} exited with {out[0]}")
    return int(out[1])


ROWS, COLS = 2048, 1536  # 12 MiB per float32 field: well above the process's own noise
field_kib = ROWS * COLS * 4 / 1024
common = ["--images", "3", "--steps-per-image", "4", "--threads", "2", "--quiet", "--force"]
base = peak_kib("run", "--rows", "16", "--cols", "16", "-o", "tiny.h5", *common)
for fields, images_fields in (("v", 2), ("u,v", 4)):
    peak = peak_kib("run", "--rows", str(ROWS), "--cols", str(COLS), "--fields", fields, "-o",
                    f"big-{fields}.h5", *common)
    allowed = (4 + images_fields) * field_kib
    used = peak - base
    print(f"--fields {fields}: {used / field_kib:.2f} fields over the tiny run's "
          f"{base / 1024:.0f} MiB (at most {4 + images_fields})", flush=True)
    # 3 % for the allocator's and HDF5's bookkeeping, which grow a little with the grid.
    if used > allowed * 1.03:
        failures.append(f"--fields {fields}: {used / field_kib:.2f} fields of memory, more than "
                        f"the state's 4 and {images_fields} of images")

scratch.leave(WORK, bool(failures))
if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("run memory: all checks passed")
