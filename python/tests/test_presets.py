"""The courses' programs (preset), named rates (pattern), the starts and the fixed boundary's
outside values from Python: the same settings as the command line's, explicit arguments winning
over a preset and a pattern."""

import math
import subprocess

import h5py
import numpy as np
import pytest

import grayscott as gs


def test_a_preset_sets_the_courses_settings_and_the_steps_per_image(tmp_path):
    sim = gs.Simulation(preset="course-cupy", rows=30, cols=46)
    p = sim.parameters
    assert (p["stencil"], p["boundary"], p["outside"], p["precision"]) == (
        "five-point", "fixed", (0.0, 0.0), "single")
    assert (sim.feed, sim.kill) == (0.0565, 0.062)
    assert sim.init[0] == "box"
    sim.run(images=2, output=tmp_path / "cupy.h5", quiet=True)
    with h5py.File(tmp_path / "cupy.h5") as f:
        assert f.attrs["steps_per_image"] == 34
        assert list(f.attrs["outside"]) == [0, 0]
    sim.reset()
    sim.run(images=1, steps_per_image=5, output=tmp_path / "five.h5", quiet=True)
    with h5py.File(tmp_path / "five.h5") as f:
        assert f.attrs["steps_per_image"] == 5


def test_explicit_arguments_win_over_the_preset_and_the_pattern():
    sim = gs.Simulation(preset="course-numba", boundary="periodic", pattern="worms", kill=0.06,
                        rows=30, cols=46)
    assert sim.parameters["boundary"] == "periodic"
    assert (sim.feed, sim.kill) == (0.078, 0.06)
    # Named with its default value, an argument still wins.
    assert gs.Simulation(preset="course-kokkos", precision="single", rows=8,
                         cols=8).parameters["precision"] == "single"
    assert gs.Simulation(pattern="holes", rows=8, cols=8).feed == 0.039


def test_starts_and_outside_values(tmp_path):
    sim = gs.Simulation(init="drop", init_values=(0.5, 0.75), rows=10, cols=10,
                        boundary="fixed", outside=(0.25, 0.5), precision="double")
    u, v = np.asarray(sim.u), np.asarray(sim.v)
    assert u[4:6, 4:6].tolist() == [[0.5, 0.5], [0.5, 0.5]] and v[4, 4] == 0.75
    assert u.sum() == 96 + 4 * 0.5
    assert sim.parameters["outside"] == (0.25, 0.5)
    assert gs.Simulation(boundary="fixed", outside="0,0", rows=8, cols=8).parameters[
        "outside"] == (0.0, 0.0)


def test_the_same_numbers_as_the_command_line(grayscott_bin, tmp_path):
    sim = gs.Simulation(preset="course-jax", rows=30, cols=46)
    sim.run(images=3, output=tmp_path / "py.h5", quiet=True)
    subprocess.run([grayscott_bin, "run", "--preset", "course-jax", "--rows", "30", "--cols", "46",
                    "--images", "3", "-o", str(tmp_path / "cli.h5"), "--quiet"], check=True,
                   timeout=60)
    with h5py.File(tmp_path / "py.h5") as a, h5py.File(tmp_path / "cli.h5") as b:
        assert np.array_equal(a["v"][...], b["v"][...])
        assert a.attrs["steps_per_image"] == b.attrs["steps_per_image"] == 34


def test_a_sweep_takes_the_preset(tmp_path):
    result = gs.sweep(tmp_path / "s.h5", preset="course-kokkos", rows=12, cols=12, images=2)
    assert result["completed"]
    with h5py.File(tmp_path / "s.h5") as f:
        assert list(f["feed"][...]) == [0.014] and f.attrs["steps_per_image"] == 10
        assert f.attrs["precision"] == "double" and f.attrs["init"] == "drop"
    members = gs.Sweep(preset="course-cupy", feed=[0.03, 0.04], rows=20, cols=30).members
    assert [m[:2] for m in members] == [(0.03, 0.062), (0.04, 0.062)]


@pytest.mark.parametrize("kwargs, words", [
    (dict(pattern="zebra"), "pattern: unknown pattern 'zebra' (known: spots"),
    (dict(preset="course-fortran"), "preset: unknown preset 'course-fortran' (known: course-numpy"),
    (dict(preset="course-nunpy"), "preset: unknown preset 'course-nunpy' (did you mean course-numpy?"),
    (dict(boundary="fixed", outside=(math.inf, 0)), "outside: the values must be finite"),
    (dict(boundary="fixed", outside=(1, 2, 3)), "outside: expected two numbers"),
    (dict(init="box", rows=6, cols=96), "init box: a grid of 6x96 is too small"),
])
def test_bad_values_raise_value_error_naming_the_argument(kwargs, words):
    with pytest.raises(ValueError) as info:
        gs.Simulation(**{"rows": 8, "cols": 8, **kwargs})
    assert str(info.value).startswith(words), str(info.value)
