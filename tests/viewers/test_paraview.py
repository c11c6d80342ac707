#!/usr/bin/python3
"""ParaView opens runs and sweeps with every XDMF reader it has: OpenDataFile (its default for .xmf,
Xdmf3ReaderS), XDMFReader (the legacy one), Xdmf3ReaderS and Xdmf3ReaderT (Debian's pvbatch, under
Xvfb). Each finds the grid in the XY plane (x across columns, y across rows), the time steps of
the images, and u and v at every time step equal to the file's, row 0 at the top (the point at
y = rows - 1 - r holds row r); a screenshot with the default camera shows the picture the right
way up. Files: a run (u and v), a run written by two MPI ranks, a sweep, a sweep over two ranks.
Usage: test_paraview.py PATH/TO/grayscott [MPIEXEC [FLAGS...]]"""

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

grayscott = os.path.abspath(sys.argv[1])
mpiexec = sys.argv[2:]
for tool in ("pvbatch", "xvfb-run"):
    if shutil.which(tool) is None:
        sys.exit(f"test_paraview: {tool} is missing: scripts/setup installs paraview, "
                 "python3-paraview, xvfb and xauth")

READERS = ["OpenDataFile", "XDMFReader", "Xdmf3ReaderS", "Xdmf3ReaderT"]

# Prints, per reader, its class, its time steps, the bounds, and for every time step each array's
# values as (x, y, value) triples of the points (every block of a multiblock, z kept for sweeps).
PARAVIEW_SCRIPT = """
import json, sys
from paraview.simple import *
from paraview import servermanager
from vtkmodules.util.numpy_support import vtk_to_numpy
path, readers, shot = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
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
            leaves = []
            if data.IsA("vtkCompositeDataSet"):
                it = data.NewIterator()
                it.InitTraversal()
                while not it.IsDoneWithTraversal():
                    leaves.append(it.GetCurrentDataObject())
                    it.GoToNextItem()
            else:
                leaves.append(data)
            arrays = {}
            for leaf in leaves:
                points = [leaf.GetPoint(k) for k in range(leaf.GetNumberOfPoints())]
                for a in range(leaf.GetPointData().GetNumberOfArrays()):
                    array = leaf.GetPointData().GetArray(a)
                    values = vtk_to_numpy(array).tolist()
                    arrays.setdefault(array.GetName(), []).extend(
                        [[p[0], p[1], p[2], v] for p, v in zip(points, values)])
            steps.append(arrays)
        info = reader.GetDataInformation()
        results[name] = {"class": reader.GetXMLName(), "times": times,
                         "bounds": list(info.GetBounds()), "steps": steps}
        if name == "OpenDataFile" and shot != "-":
            shown = Show(reader)
            ColorBy(shown, ("POINTS", "v"))
            shown.RescaleTransferFunctionToDataRange(True)
            view = GetActiveView()
            view.ViewSize = [300, 200]
            ResetCamera()
            SaveScreenshot(shot, view, ImageResolution=[300, 200])
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
    return run_pvbatch("view.py", xmf, ",".join(READERS), shot)


def expected_points(image, z=0.0):
    """{(x, y, z): value} of one image: row r at y = rows - 1 - r, column c at x = c."""
    rows, cols = image.shape
    return {(float(c), float(rows - 1 - r), z): float(image[r, c])
            for r in range(rows) for c in range(cols)}


def check_file(label, h5, sweep):
    xmf = os.path.abspath(h5[:-3] + ".xmf")
    with h5py.File(h5, "r") as f:
        fields = [name for name in ("u", "v") if name in f]
        images = {name: f[name][...] for name in fields}
        steps_per_image, dt = int(f.attrs["steps_per_image"]), float(f.attrs["dt"])
        count = images["v"].shape[1 if sweep else 0]
        rows, cols = images["v"].shape[-2:]
    members = images["v"].shape[0] if sweep else 1
    results, stderr = pvbatch(xmf, "shot.png" if label == "run" else "-")
    wanted_times = [float((i + 1) * steps_per_image) * dt for i in range(count)]
    for reader in READERS:
        got = results.get(reader, {})
        where = f"{label}, {reader}"
        if "error" in got or not got:
            fail(f"{where}: {got.get('error', 'no result')}")
            continue
        if got["times"] != wanted_times:
            fail(f"{where}: time steps {got['times']}, wanted {wanted_times}")
        wanted_bounds = [0.0, cols - 1.0, 0.0, rows - 1.0, 0.0, members - 1.0]
        if got["bounds"] != wanted_bounds:
            fail(f"{where}: bounds {got['bounds']}, wanted {wanted_bounds}")
        for i, arrays in enumerate(got["steps"]):
            for name in fields:
                if name not in arrays:
                    fail(f"{where}: no array {name} at time step {i} (arrays {sorted(arrays)})")
                    continue
                wanted = {}
                for m in range(members):
                    image = images[name][m, i] if sweep else images[name][i]
                    wanted.update(expected_points(image, float(m)))
                seen = {(x, y, z): value for x, y, z, value in arrays[name]}
                if seen != wanted:
                    wrong = sum(1 for k, v in wanted.items() if seen.get(k) != v)
                    fail(f"{where}: {name} at time step {i}: {wrong} of {len(wanted)} points differ "
                         "from the file (or lie elsewhere)")
    if "Skipping unrecognized array type" in stderr:
        fail(f"{label}: ParaView skipped an array: {stderr[-500:]}")


with tempfile.TemporaryDirectory() as work:
    os.chdir(work)
    with open("view.py", "w") as script:
        script.write(PARAVIEW_SCRIPT)
    small = ["--rows", "12", "--cols", "18", "--images", "3", "--steps-per-image", "4",
             "--backend", "cpu", "--quiet"]
    subprocess.run([grayscott, "run", *small, "--fields", "u,v", "-o", "run.h5"], check=True)
    # A picture that shows its orientation: v = 1 in the top-left corner block only.
    with h5py.File("run.h5", "r+") as f:
        v = f["v"][...]
        v[:] = 0
        v[:, 0:3, 0:5] = 1
        v[1, 5, 7] = 0.5  # the images differ: each time step is checked on its own
        f["v"][...] = v
    check_file("run", "run.h5", sweep=False)

    shot = matplotlib.image.imread("shot.png")[..., :3]
    background = shot[0, 0]
    drawn = np.any(np.abs(shot - background) > 0.05, axis=2)
    ys, xs = np.nonzero(drawn)
    if len(ys) == 0:
        fail("the screenshot is blank")
    else:
        # The hot block (the colormap's top end, red in ParaView's default map) must sit in the
        # top-left quarter of the drawn grid.
        hot = drawn & (shot[..., 0] > 0.6) & (shot[..., 2] < 0.4)
        hy, hx = np.nonzero(hot)
        if len(hy) == 0:
            fail("no hot block in the screenshot")
        else:
            top, left = ys.min(), xs.min()
            height, width = ys.max() - top + 1, xs.max() - left + 1
            if not (hy.mean() < top + height / 2 and hx.mean() < left + width / 2):
                fail(f"the top-left block is drawn at ({hx.mean():.0f}, {hy.mean():.0f}) "
                     f"in a grid at x {left}..{left + width}, y {top}..{top + height}")

    sweep = ["sweep", "--feed", "0.03,0.05", "--kill", "0.06", "--rows", "10", "--cols", "14",
             "--images", "2", "--steps-per-image", "20", "--init", "noise", "--quiet"]
    subprocess.run([grayscott, *sweep, "-o", "sweep.h5"], check=True)
    check_file("sweep", "sweep.h5", sweep=True)

    if mpiexec:
        launch = [mpiexec[0], "-n", "2", *mpiexec[1:]]
        subprocess.run([*launch, grayscott, "run", *small, "-o", "mpi_run.h5"], check=True)
        check_file("run over 2 ranks", "mpi_run.h5", sweep=False)
        subprocess.run([*launch, grayscott, *sweep, "-o", "mpi_sweep.h5"], check=True)
        check_file("sweep over 2 ranks", "mpi_sweep.h5", sweep=True)
    else:
        print("note: no mpiexec given: MPI-written files not checked")

    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
