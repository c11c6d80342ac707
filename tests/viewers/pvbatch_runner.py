"""Runs a ParaView script under pvbatch on a virtual display, for the viewer tests: the script
prints one line "RESULT <json>", which is returned with pvbatch's stderr."""

import json
import os
import shlex
import subprocess


def run_pvbatch(script, *args):
    """pvbatch `script` with `args` under xvfb-run; (the RESULT line's object, stderr)."""
    command = " ".join(shlex.quote(str(a)) for a in (script, *args))
    # xvfb-run -a picks the first display without a lock file, which two runs starting at once
    # can both pick: start the search at a number of this process's own. A loaded machine may
    # leave the server not yet ready for the first window: give it a moment, and try again.
    for attempt in range(3):
        display = 100 + (os.getpid() + 37 * attempt) % 800
        done = subprocess.run(["xvfb-run", "-a", "-n", str(display), "sh", "-c",
                               f"sleep 2; exec pvbatch {command}"],
                              capture_output=True, text=True, timeout=600)
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if lines:
            return json.loads(lines[-1][len("RESULT "):]), done.stderr
    raise SystemExit(f"pvbatch printed nothing: {done.stderr[-3000:]}")
