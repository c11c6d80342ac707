"""grayscott.open: a run or sweep file as an xarray.Dataset with named axes and coordinates."""

import numpy as np
import pytest

import grayscott as gs

xr = pytest.importorskip("xarray")


def test_open_a_run_names_its_axes_and_times(tmp_path):
    out = tmp_path / "run.h5"
    sim = gs.Simulation(rows=20, cols=30, dt=0.5, backend="cpu")
    sim.run(images=4, steps_per_image=3, output=out, fields="u,v", quiet=True)
    ds = gs.open(out)
    assert ds["v"].dims == ("time", "y", "x") and ds["u"].dims == ("time", "y", "x")
    assert ds["v"].shape == (4, 20, 30)
    assert list(ds["step"].values) == [3, 6, 9, 12]
    assert list(ds["time"].values) == [1.5, 3.0, 4.5, 6.0]
    assert ds.attrs["feed"] == 0.014 and ds.attrs["rows"] == 20
    assert "matrix" not in ds
    np.testing.assert_array_equal(ds["v"].isel(time=-1).values, sim.v)
    # Selecting by time, as users of xarray do.
    np.testing.assert_array_equal(ds["v"].sel(time=3.0).values, ds["v"][1].values)


def test_open_a_sweep_has_a_member_axis(tmp_path):
    out = tmp_path / "sweep.h5"
    summary = gs.sweep(out, feed=[0.02, 0.03], kill=[0.05, 0.06], rows=16, cols=12, images=2,
                       steps_per_image=5, backend="cpu")
    assert summary["completed"] and summary["members"] == 4
    ds = gs.open(out)
    assert ds["v"].dims[0] == "member" and ds["v"].dims[-2:] == ("y", "x")
    assert ds["v"].shape[0] == 4 and ds["v"].shape[-2:] == (16, 12)
    batch = gs.Sweep(feed=[0.02, 0.03], kill=[0.05, 0.06], rows=16, cols=12, backend="cpu")
    batch.advance(10)
    np.testing.assert_array_equal(ds["v"].values[:, -1], batch.v)


def test_a_sweeps_members_are_selected_by_their_parameters(tmp_path):
    out = tmp_path / "seeds.h5"
    gs.sweep(out, feed=[0.02, 0.03], kill=[0.05, 0.06], seeds=[1, 2], rows=16, cols=12, images=2,
             steps_per_image=5, backend="cpu")
    ds = gs.open(out)
    assert "matrix" not in ds
    picked = ds["v"].sel(feed=0.03, kill=0.06, seed=2)
    assert picked.dims == ("time", "y", "x")
    alone = gs.Simulation(rows=16, cols=12, feed=0.03, kill=0.06, init="noise", seed=2,
                          backend="cpu")
    alone.advance(10)
    np.testing.assert_array_equal(picked.isel(time=-1).values, alone.v)
    assert ds["v"].sel(feed=0.02, kill=0.05).sizes["seed"] == 2
    np.testing.assert_array_equal(ds["v"].isel(member=7).values, picked.values)


def test_the_sweep_pages_example_selects_a_member_of_a_range(tmp_path, grayscott_bin):
    # docs/sweeps.md's example, as written but smaller: a range's values are selected by the
    # decimals they stand for (0.04 + 2 x 0.01 was stored as 0.060000000000000005).
    import subprocess

    out = tmp_path / "sweep.h5"
    subprocess.run([grayscott_bin, "sweep", "--feed", "0.010:0.060:4", "--kill", "0.040:0.070:4",
                    "--rows", "16", "--cols", "16", "--images", "2", "--steps-per-image", "5",
                    "-o", str(out), "--quiet"], check=True)
    ds = xr.open_dataset(out, engine="h5netcdf")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as written, it warns of nothing
        grid = ds[["v"]].set_index(member=["seed", "feed", "kill"]).unstack("member")
    last = grid.v.sel(feed=0.06, kill=0.06, seed=0).isel(time=-1)
    assert last.dims == ("y", "x")
    assert list(ds["kill"].values[:4]) == [0.04, 0.05, 0.06, 0.07]
    ds.close()
    with pytest.raises(ValueError, match="sweep.xmf is the XDMF companion of .*sweep.h5"):
        gs.open(tmp_path / "sweep.xmf")
    # Another file than HDF5 is named so, as grayscott info names it, not in HDF5's words.
    (tmp_path / "run.avi").write_bytes(b"RIFF....AVI ")
    with pytest.raises(ValueError, match=r"run\.avi is not an HDF5 file$"):
        gs.open(tmp_path / "run.avi")


def test_open_reads_a_running_file_and_one_left_by_kill_9(tmp_path, grayscott_bin):
    import subprocess
    import time

    import h5py

    out = tmp_path / "running.h5"
    process = subprocess.Popen([grayscott_bin, "run", "--rows", "64", "--cols", "64", "--images",
                                "5000", "--steps-per-image", "400", "--backend", "cpu", "--quiet",
                                "-o", str(out)])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # A run refused (say for want of disk space) ends at once: said, not waited for.
            assert process.poll() is None, f"the run ended (exit {process.returncode}) early"
            try:
                with h5py.File(out, "r", swmr=True) as f:
                    if f["step"].shape[0] >= 2:
                        break
            except (OSError, KeyError):
                pass
            time.sleep(0.1)
        running = gs.open(out)
        images = running["v"].sizes["time"]
        assert images >= 2 and running.attrs["status"] == "running"
        np.testing.assert_array_equal(running["time"].values, running["step"].values * 1.0)
        process.kill()
        process.wait()
        killed = gs.open(out)  # left open for writing by kill -9
        assert killed["v"].sizes["time"] >= images
        np.testing.assert_array_equal(killed["v"].values[:images], running["v"].values)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_sweep_reports_its_progress_and_stops_where_progress_raises(tmp_path):
    calls = []
    summary = gs.sweep(tmp_path / "counted.h5", feed=[0.02, 0.03], kill=[0.05, 0.06], rows=16,
                       cols=12, images=3, steps_per_image=5, backend="cpu",
                       progress=lambda done, total: calls.append((done, total)))
    assert summary["completed"]
    # Member-images: four members written image after image, all of them at the end.
    assert calls == [(4, 12), (8, 12), (12, 12)]

    def stop(done, total):
        if done == 4:
            raise ValueError("enough")

    out = tmp_path / "stopped.h5"
    with pytest.raises(ValueError, match="enough"):
        gs.sweep(out, feed=[0.02, 0.03], kill=[0.05, 0.06], rows=16, cols=12, images=3,
                 steps_per_image=5, backend="cpu", progress=stop)
    import h5py

    # Stopped at an image boundary before the end (the next one, as a signal would), resumable.
    with h5py.File(out, "r") as f:
        status = f.attrs["status"]
    assert status in ("stopped after image 1 of members 0 to 3: progress raised ValueError: enough",
                      "stopped after image 2 of members 0 to 3: progress raised ValueError: enough"), status


def test_a_stopped_sweeps_unreached_images_are_marked_and_left_out_of_its_companion(tmp_path):
    # A stopped sweep leaves what it had not reached unwritten (no disk; it reads 0): gs.open says
    # which images are the sweep's, and the .xmf lists only those.
    out = tmp_path / "stopped.h5"

    def enough(done, total):
        if done >= 6:
            raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        gs.sweep(out, feed=[0.03, 0.04], kill=[0.06], rows=16, cols=16, images=10,
                 steps_per_image=5, backend="cpu", quiet=True, progress=enough)
    ds = gs.open(out)
    counts = ds["images_written"].values
    assert 0 < counts.max() < 10
    assert ds.image_written.dims == ("member", "time")
    assert (ds.image_written.sum("time").values == counts).all()
    masked = ds["v"].where(ds.image_written)
    assert bool(masked.isel(member=0, time=int(counts[0]) - 1).notnull().all())
    assert bool(masked.isel(member=0, time=int(counts[0])).isnull().all())
    assert not ds["v"].isel(member=0, time=int(counts[0])).values.any()  # unwritten: 0
    ds.close()
    companion = (tmp_path / "stopped.xmf").read_text()
    assert companion.count('CollectionType="Spatial"') == counts.max()
    assert companion.count('Name="member') == counts.sum()


@pytest.mark.parametrize("kind", ["run", "run with statistics", "sweep", "sweep with statistics"])
def test_closing_what_open_returned_releases_the_file_for_a_resume(tmp_path, kind):
    # HDF5 locks a file its readers hold open: a Dataset closed (a with block, close()) must let
    # the file go at once, not when the garbage collector finds the objects it was made from.
    out = tmp_path / "stopped.h5"
    stats = kind.endswith("statistics")

    def stop(*progress):
        if progress[0] >= 2:
            raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        if kind.startswith("run"):
            gs.Simulation(rows=16, cols=16, backend="cpu").run(
                images=6, steps_per_image=4, output=out, quiet=True, stats=stats,
                on_image=lambda index, *_: stop(index))
        else:
            gs.sweep(out, feed=[0.02, 0.03], kill=0.06, rows=16, cols=16, images=6,
                     steps_per_image=4, backend="cpu", quiet=True, stats=stats, progress=stop)
    written = "time" if kind.startswith("run") else "images_written"  # a sweep's room is whole
    with gs.open(out) as ds:
        assert 0 < int(ds[written].size if written == "time" else ds[written].max()) < 6
        assert ("v_mean" in ds) == stats
    if kind.startswith("run"):
        gs.Simulation.resume(out, quiet=True)
    else:
        gs.resume_sweep(out, quiet=True)
    ds = gs.open(out)
    assert int(ds[written].size if written == "time" else ds[written].min()) == 6
    ds.close()
    import h5py

    with h5py.File(out, "r+"):  # HDF5 refuses to write a file that a reader still holds
        pass


def test_open_passes_other_engines_their_own_options(tmp_path):
    pytest.importorskip("netCDF4")
    out = tmp_path / "run.h5"
    gs.Simulation(rows=16, cols=12, backend="cpu").run(images=2, steps_per_image=3, output=out,
                                                        quiet=True, stats=True)
    with gs.open(out, engine="netcdf4") as ds:
        assert ds["v"].dims == ("time", "y", "x") and ds["v"].shape == (2, 16, 12)
        assert ds["v_mean"].dims == ("time",)


def test_open_without_xarray_names_what_to_install(tmp_path):
    # A plain `pip install .` leaves the "files" extra out: gs.open says what to install. Here in a
    # process where xarray and h5netcdf are missing (None in sys.modules: found nowhere).
    import subprocess
    import sys

    script = (
        "import sys\n"
        "sys.modules['xarray'] = sys.modules['h5netcdf'] = None\n"
        "import grayscott as gs\n"
        "gs.Simulation(rows=8, cols=8).run(images=1, output='r.h5', quiet=True)\n"
        "try:\n"
        "    gs.open('r.h5')\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e.name, '|', e)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("xarray | grayscott.open needs xarray and h5netcdf: "
                                  "pip install 'grayscott[files]'"), done.stdout
