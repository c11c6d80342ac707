#!/usr/bin/python3
"""ParaView opens a run in view: its own reader (Debian's pvbatch, under Xvfb) finds the grid in the
XY plane (x across columns, y across rows), the time steps of the images, and a screenshot with the
default camera shows the picture the right way up (row 0 at the top, as in the PNGs).
Usage: test_paraview.py PATH/TO/grayscott"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import matplotlib.image
import numpy as np

grayscott = os.path.abspath(sys.argv[1])
for tool in ("pvbatch", "xvfb-run"):
    if shutil.which(tool) is None:
        sys.exit(f"test_paraview: {tool} is missing: scripts/setup installs paraview, "
                 "python3-paraview, xvfb and xauth")

PARAVIEW_SCRIPT = """
import json, sys
from paraview.simple import *
reader = XDMFReader(FileNames=[sys.argv[1]])
reader.UpdatePipeline(max(reader.TimestepValues))
info = reader.GetDataInformation()
shown = Show(reader)
ColorBy(shown, ("POINTS", "v"))
shown.RescaleTransferFunctionToDataRange(True)
view = GetActiveView()
view.ViewSize = [300, 200]
ResetCamera()
SaveScreenshot(sys.argv[2], view, ImageResolution=[300, 200])
print(json.dumps({"bounds": list(info.GetBounds()), "times": list(reader.TimestepValues),
                  "range": list(reader.PointData["v"].GetRange())}))
"""

with tempfile.TemporaryDirectory() as work:
    os.chdir(work)
    subprocess.run([grayscott, "run", "--rows", "40", "--cols", "60", "--images", "3",
                    "--steps-per-image", "4", "--backend", "cpu", "-o", "run.h5", "--quiet"],
                   check=True)
    # A picture that shows its orientation: v = 1 in the top-left corner block only.
    with h5py.File("run.h5", "r+") as f:
        v = f["v"][...]
        v[:] = 0
        v[:, 0:10, 0:15] = 1
        f["v"][...] = v
    with open("view.py", "w") as script:
        script.write(PARAVIEW_SCRIPT)
    # xvfb-run -a picks the first display without a lock file, which two runs starting at once
    # can both pick: start the search at a number of this process's own. A loaded machine may
    # leave the server not yet ready for the first window: give it a moment, and try again.
    for attempt in range(3):
        display = 100 + (os.getpid() + 37 * attempt) % 800
        done = subprocess.run(["xvfb-run", "-a", "-n", str(display), "sh", "-c",
                               "sleep 2; exec pvbatch view.py run.xmf shot.png"],
                              capture_output=True, text=True, timeout=300)
        lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
        if lines:
            break
    assert lines, f"pvbatch printed nothing: {done.stderr[:1500]}"
    result = json.loads(lines[-1])
    failures = []
    if result["bounds"] != [0.0, 59.0, 0.0, 39.0, 0.0, 0.0]:
        failures.append(f"bounds {result['bounds']}, wanted x 0..59, y 0..39, z 0..0")
    if result["times"] != [4.0, 8.0, 12.0]:
        failures.append(f"time steps {result['times']}")
    if result["range"] != [0.0, 1.0]:
        failures.append(f"data range {result['range']}")
    shot = matplotlib.image.imread("shot.png")[..., :3]
    background = shot[0, 0]
    drawn = np.any(np.abs(shot - background) > 0.05, axis=2)
    ys, xs = np.nonzero(drawn)
    if len(ys) == 0:
        failures.append("the screenshot is blank")
    else:
        # The hot block (the colormap's top end, red in ParaView's default map) must sit in the
        # top-left quarter of the drawn grid.
        hot = drawn & (shot[..., 0] > 0.6) & (shot[..., 2] < 0.4)
        hy, hx = np.nonzero(hot)
        if len(hy) == 0:
            failures.append("no hot block in the screenshot")
        else:
            top, left = ys.min(), xs.min()
            height, width = ys.max() - top + 1, xs.max() - left + 1
            if not (hy.mean() < top + height / 2 and hx.mean() < left + width / 2):
                failures.append(f"the top-left block is drawn at ({hx.mean():.0f}, {hy.mean():.0f}) "
                                f"in a grid at x {left}..{left + width}, y {top}..{top + height}")
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)
