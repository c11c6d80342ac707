"""Volumes from Python: gs.Simulation(depth=...) is `grayscott run --depth`, its fields have shape
(depth, rows, cols), and the refusals are the command line's."""

import h5py
import numpy as np
import pytest

import grayscott as gs
from conftest import run_cli


def test_a_volumes_fields_have_its_three_axes_and_step_as_the_command_line(tmp_path, grayscott_bin):
    sim = gs.Simulation(depth=6, rows=10, cols=12, init="noise", seed=4, feed=0.03, kill=0.06,
                        precision="double", backend="cpu")
    assert sim.shape == (6, 10, 12)
    assert sim.v.shape == (6, 10, 12) and sim.u.shape == (6, 10, 12)
    assert sim.parameters["depth"] == 6 and sim.parameters["stencil"] == "seven-point"
    assert "depth=6" in repr(sim)
    start = np.array(sim.v)
    sim.advance(15)
    assert not np.array_equal(sim.v, start)
    out = tmp_path / "cli.h5"
    run_cli(grayscott_bin, "run", "--depth", 6, "--rows", 10, "--cols", 12, "--init", "noise",
            "--seed", 4, "--feed", 0.03, "--kill", 0.06, "--precision", "double", "--images", 1,
            "--steps-per-image", 15, "--backend", "cpu", "-o", out, "--quiet")
    with h5py.File(out, "r") as f:
        assert np.array_equal(np.asarray(f["v"][-1]).reshape(6, 10, 12), sim.v)


def test_run_writes_the_command_lines_file(tmp_path, grayscott_bin):
    py_file, cli_file = tmp_path / "py.h5", tmp_path / "cli.h5"
    sim = gs.Simulation(depth=5, rows=7, cols=9, stencil="nineteen-point", boundary="periodic",
                        backend="cpu")
    sim.run(images=3, steps_per_image=4, output=py_file, quiet=True)
    run_cli(grayscott_bin, "run", "--depth", 5, "--rows", 7, "--cols", 9, "--stencil",
            "nineteen-point", "--boundary", "periodic", "--images", 3, "--steps-per-image", 4,
            "--backend", "cpu", "-o", cli_file, "--quiet")
    with h5py.File(py_file, "r") as a, h5py.File(cli_file, "r") as b:
        assert np.array_equal(a["v"][...], b["v"][...])
        with_shape = np.asarray(a["v"][-1]).reshape(5, 7, 9)
        assert np.array_equal(with_shape, sim.v)


def test_a_sweep_of_volumes_has_a_member_axis_first():
    sweep = gs.Sweep(feed=[0.02, 0.03], depth=4, rows=16, cols=18, init="cube", backend="cpu")
    assert sweep.v.shape == (2, 4, 16, 18)
    start = np.array(sweep.v)
    sweep.advance(3)
    assert not np.array_equal(sweep.v, start)
    assert not np.array_equal(sweep.v[0], sweep.v[1])  # each member its own feed


def test_a_volumes_picture_is_its_middle_plane():
    sim = gs.Simulation(depth=8, rows=16, cols=16, init="cube", backend="cpu")
    png = sim._repr_png_()
    assert png.startswith(b"\x89PNG")


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(depth=0), ValueError, "depth must be a positive integer"),
    (dict(depth=-1), ValueError, "depth must be a positive integer"),
    (dict(depth="4"), TypeError, "depth: expected"),
    (dict(depth=4, stencil="oono-puri"), ValueError, "stencil oono-puri is a plane's"),
    (dict(stencil="seven-point"), ValueError, "stencil seven-point is a volume's"),
    (dict(depth=10**6, rows=10**5, cols=10**5), MemoryError, "depth x rows x cols"),
])
def test_bad_volumes_are_refused_as_the_command_line_refuses_them(kwargs, error, message):
    with pytest.raises(error, match=message):
        gs.Simulation(**{"rows": 8, "cols": 8, "backend": "cpu", **kwargs})


def test_open_names_a_volumes_axes(tmp_path):
    out = tmp_path / "volume.h5"
    sim = gs.Simulation(depth=4, rows=6, cols=8, backend="cpu")
    sim.run(images=2, steps_per_image=3, output=out, quiet=True)
    ds = gs.open(out)
    assert ds["v"].dims == ("time", "z", "y", "x")
    assert ds["v"].shape == (2, 4, 6, 8)
    assert "member" not in ds.dims
    assert np.array_equal(ds["v"][-1].values, sim.v)


def _datasets(group, prefix=""):
    out = {}
    for key, item in group.items():
        if isinstance(item, h5py.Group):
            out.update(_datasets(item, prefix + key + "/"))
        else:
            out[prefix + key] = item[...]
    return out


def test_sweep_of_volumes_writes_the_command_lines_file(tmp_path, grayscott_bin):
    py_file, cli_file = tmp_path / "py.h5", tmp_path / "cli.h5"
    gs.sweep(py_file, feed=[0.03, 0.04], kill=[0.055, 0.062], depth=5, rows=9, cols=13,
             images=2, steps_per_image=3, init="noise", seeds=[7], fields="u,v", stats=True,
             backend="cpu")
    run_cli(grayscott_bin, "sweep", "--feed", "0.03,0.04", "--kill", "0.055,0.062", "--depth", 5,
            "--rows", 9, "--cols", 13, "--images", 2, "--steps-per-image", 3, "--init", "noise",
            "--seeds", 7, "--fields", "u,v", "--stats", "--backend", "cpu", "-o", cli_file,
            "--quiet")
    with h5py.File(py_file, "r") as a, h5py.File(cli_file, "r") as b:
        assert a["v"].shape == (4, 2, 5, 9, 13)
        assert int(a.attrs["depth"]) == 5
        da, db = _datasets(a), _datasets(b)
        assert sorted(da) == sorted(db)
        for name in da:
            assert da[name].tobytes() == db[name].tobytes(), name
    ds = gs.open(py_file)
    assert ds["v"].dims == ("member", "time", "z", "y", "x")
    assert ds["v"].shape == (4, 2, 5, 9, 13)
    assert ds["z"].values.tolist() == [0, 1, 2, 3, 4]
    assert ds["v"].sel(feed=0.04, kill=0.055, seed=7).shape == (2, 5, 9, 13)


def test_a_volumes_pictures_pick_a_slice_or_the_projection_as_the_command_line(
        tmp_path, grayscott_bin):
    gs.Simulation(depth=6, rows=10, cols=12, init="noise", seed=4, backend="cpu").run(
        images=2, steps_per_image=5, output=tmp_path / "vol.h5", quiet=True)
    for option, keyword, value in (("--slice", "slice", "y=3"), ("--slice", "slice", "x=mid"),
                                   ("--projection", "projection", "max")):
        out = tmp_path / f"{keyword}-{value}"
        pictures = gs.render(tmp_path / "vol.h5", out / "py", **{keyword: value})
        run_cli(grayscott_bin, "render", tmp_path / "vol.h5", "--out", out / "cli", option, value,
                "--quiet")
        assert len(pictures) == 2
        for picture in pictures:
            assert picture.read_bytes() == (out / "cli" / picture.name).read_bytes(), value
    with pytest.raises(ValueError, match="^slice and projection exclude each other"):
        gs.render(tmp_path / "vol.h5", tmp_path / "both", slice="z=1", projection="max")
    with pytest.raises(ValueError, match=r"^slice: expected z=N, y=N or x=N .*got 'w=1'"):
        gs.render(tmp_path / "vol.h5", tmp_path / "bad", slice="w=1")
    with pytest.raises(ValueError, match="^projection: expected max, got 'min'"):
        gs.video(tmp_path / "vol.h5", tmp_path / "bad.mp4", projection="min")
    with pytest.raises(TypeError, match="slice"):
        gs.render(tmp_path / "vol.h5", tmp_path / "typed", slice=3)
    with pytest.raises(ValueError, match="^slice: expected z=N"):
        gs.render(tmp_path / "vol.h5", tmp_path / "empty", slice="")
    gs.Simulation(rows=10, cols=12, backend="cpu").run(images=1, output=tmp_path / "plane.h5",
                                                       quiet=True)
    with pytest.raises(ValueError, match="a slice or a projection picks a view of a volume"):
        gs.render(tmp_path / "plane.h5", tmp_path / "plane", slice="z=0")
