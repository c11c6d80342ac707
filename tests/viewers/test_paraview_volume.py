#!/usr/bin/python3
"""ParaView opens a volume's run file through its .xmf with every XDMF reader it has (OpenDataFile,
its default, Xdmf3ReaderS; Xdmf3ReaderT; the legacy XDMFReader): the grid depth x rows x cols
(x across columns, y across rows with row 0 at the top, z across the planes from 0), the images'
time steps, u and v at every point equal to the file's; a Contour of v has cells and a
screenshot of it is not blank (pvbatch under Xvfb).

The file is written by the test-only program write_volume_file, through the run file's writer
with no engine (no backend steps a volume yet).
Usage: test_paraview_volume.py PATH/TO/write_volume_file"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import matplotlib.image
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvbatch_runner import run_pvbatch  # noqa: E402

writer = os.path.abspath(sys.argv[1])
for tool in ("pvbatch", "xvfb-run"):
    if shutil.which(tool) is None:
        sys.exit(f"test_paraview_volume: {tool} is missing: scripts/setup installs paraview, "
                 "python3-paraview, xvfb and xauth")

READERS = ["OpenDataFile", "XDMFReader", "Xdmf3ReaderS", "Xdmf3ReaderT"]
LEVEL = 0.25

# Per reader: its time steps, bounds, each array's values at the points (x, y, z, value) of every
# time step; for the default reader a Contour of v at LEVEL (its cells) and a screenshot of it.
PARAVIEW_SCRIPT = """
import json, sys
from paraview.simple import *
from paraview import servermanager
from vtkmodules.util.numpy_support import vtk_to_numpy
path, readers, shot, level = sys.argv[1], sys.argv[2].split(","), sys.argv[3], float(sys.argv[4])
results = {}
for name in readers:
    try:
        if name == "OpenDataFile":
            reader = OpenDataFile(path)
        elif name == "XDMFReader":
            reader = XDMFReader(FileNames=[path])
        else:
            reader = getattr(servermanager.sources, name)(FileName=[path])
        times = list(reader.TimestepValues)
        steps = []
        for t in times:
            reader.UpdatePipeline(t)
            data = servermanager.Fetch(reader)
            if data.IsA("vtkCompositeDataSet"):
                it = data.NewIterator()
                it.InitTraversal()
                data = it.GetCurrentDataObject()
            points = [data.GetPoint(k) for k in range(data.GetNumberOfPoints())]
            arrays = {}
            for a in range(data.GetPointData().GetNumberOfArrays()):
                array = data.GetPointData().GetArray(a)
                arrays[array.GetName()] = [[p[0], p[1], p[2], v]
                                           for p, v in zip(points, vtk_to_numpy(array).tolist())]
            steps.append(arrays)
        info = reader.GetDataInformation()
        result = {"times": times, "bounds": list(info.GetBounds()), "steps": steps}
        if name == "OpenDataFile":
            reader.UpdatePipeline(times[-1])
            contour = Contour(Input=reader, ContourBy=["POINTS", "v"], Isosurfaces=[level])
            contour.UpdatePipeline(times[-1])
            result["contour_cells"] = contour.GetDataInformation().GetNumberOfCells()
            shown = Show(contour)
            view = GetActiveView()
            view.ViewTime = times[-1]
            view.ViewSize = [300, 240]
            ResetCamera()
            SaveScreenshot(shot, view, ImageResolution=[300, 240])
            Delete(contour)
        results[name] = result
        Delete(reader)
    except Exception as error:
        results[name] = {"error": repr(error)}
print("RESULT " + json.dumps(results))
"""

failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what)


def pvbatch(xmf, shot):
    return run_pvbatch("view.py", xmf, ",".join(READERS), shot, LEVEL)


with tempfile.TemporaryDirectory() as work:
    os.chdir(work)
    with open("view.py", "w") as script:
        script.write(PARAVIEW_SCRIPT)
    D, R, C, IMAGES = 16, 20, 24, 3
    subprocess.run([writer, "volume.h5", str(D), str(R), str(C), str(IMAGES), "single", "u,v"],
                   check=True)
    with h5py.File("volume.h5", "r") as f:
        images = {name: f[name][...] for name in ("u", "v")}
        steps_per_image, dt = int(f.attrs["steps_per_image"]), float(f.attrs["dt"])
    results, stderr = pvbatch(os.path.abspath("volume.xmf"), "shot.png")
    wanted_times = [float((i + 1) * steps_per_image) * dt for i in range(IMAGES)]
    wanted_bounds = [0.0, C - 1.0, 0.0, R - 1.0, 0.0, D - 1.0]
    for reader in READERS:
        got = results.get(reader, {})
        if "error" in got or not got:
            fail(f"{reader}: {got.get('error', 'no result')}")
            continue
        if got["times"] != wanted_times:
            fail(f"{reader}: time steps {got['times']}, wanted {wanted_times}")
        if got["bounds"] != wanted_bounds:
            fail(f"{reader}: bounds {got['bounds']}, wanted {wanted_bounds}")
        for i, arrays in enumerate(got["steps"]):
            for name in ("u", "v"):
                if name not in arrays:
                    fail(f"{reader}: no array {name} at time step {i} (arrays {sorted(arrays)})")
                    continue
                # Cell (z, r, c) lies at x = c, y = rows - 1 - r, z = z.
                image = images[name][i]
                wanted = {(float(c), float(R - 1 - r), float(z)): float(image[z, r, c])
                          for z in range(D) for r in range(R) for c in range(C)}
                seen = {(x, y, z): value for x, y, z, value in arrays[name]}
                if seen != wanted:
                    wrong = sum(1 for k, v in wanted.items() if seen.get(k) != v)
                    fail(f"{reader}: {name} at time step {i}: {wrong} of {len(wanted)} points "
                         "differ from the file (or lie elsewhere)")
    cells = results.get("OpenDataFile", {}).get("contour_cells", 0)
    if not cells:
        fail(f"the contour of v at {LEVEL} has no cells")
    if "Skipping unrecognized array type" in stderr:
        fail(f"ParaView skipped an array: {stderr[-500:]}")
    if os.path.exists("shot.png"):
        shot = matplotlib.image.imread("shot.png")[..., :3]
        drawn = np.any(np.abs(shot - shot[0, 0]) > 0.05, axis=2)
        if drawn.sum() < 100:
            fail(f"the screenshot of the contour is blank ({drawn.sum()} pixels drawn)")
    else:
        fail("no screenshot")
    print(f"contour: {cells} cells")
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
