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
