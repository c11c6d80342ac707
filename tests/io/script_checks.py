"""What the io folder's test scripts share: a fresh working folder, checks that print one line
each and are counted, and the ending (exit status 1 with the failures listed, else one PASS line).
"""
import os
import shutil
import sys

failures = []


def work_in(folder):
    """Makes `folder` anew (empty) and works in it."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    os.chdir(folder)


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures.append(what)


def finish(passed):
    if failures:
        print(f"{len(failures)} failure(s):\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("PASS: " + passed)
