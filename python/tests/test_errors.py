"""Bad input raises ValueError or TypeError with the command line's one-line message."""

import os

import pytest

import grayscott as gs


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(rows=0), "rows must be a positive integer"),
        (dict(feed=-1.0), "feed"),
        (dict(dt=10.0), "dt"),
        (dict(stencil="nine"), "stencil"),
        (dict(boundary="mirror"), "boundary"),
        (dict(precision="half"), "precision"),
        (dict(backend="tpu"), "backend: expected auto, cpu or cuda"),
        (dict(init="stripes"), "init"),
        (dict(threads=100000), "threads must be 0 \\(all cores\\) or a whole number from 1 to 4096, got 100000"),
        (dict(threads=-1), "threads must be 0"),
        (dict(stencil="-1,-1,-1,-1,0,-1,-1,-1,-1"), "stencil"),
    ],
)
def test_bad_parameters_raise_value_error_with_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        gs.Simulation(rows=kwargs.pop("rows", 8), cols=8, **kwargs)
    assert "\n" not in str(info.value)


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError):
        gs.Simulation(rows="128", cols=8)
    with pytest.raises(TypeError):
        gs.Simulation(rows=8, cols=8).advance("ten")
    with pytest.raises(TypeError):
        gs.Simulation(rows=8, cols=8).run(images=1, steps_per_image=1, output="x.h5",
                                          checkpoint_every=[1])


def test_bad_run_options_raise_value_error(tmp_path):
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    with pytest.raises(ValueError, match="images must be a positive integer"):
        sim.run(images=0, output=tmp_path / "a.h5")
    with pytest.raises(ValueError, match="fields"):
        sim.run(images=1, output=tmp_path / "a.h5", fields="w")
    with pytest.raises(ValueError, match="checkpoint_every: expected a number of images"):
        sim.run(images=1, output=tmp_path / "a.h5", checkpoint_every="soon")
    with pytest.raises(ValueError):
        sim.advance(-1)
    assert not (tmp_path / "a.h5").exists()


def test_resume_of_a_file_that_is_not_a_run(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        gs.Simulation.resume(tmp_path / "missing.h5")
    assert "missing.h5" in str(info.value)


def test_sweep_needs_values():
    with pytest.raises(ValueError, match="feed"):
        gs.Sweep(feed=[], kill=[0.05])
    with pytest.raises(ValueError, match="feed"):
        gs.Sweep(feed=[-0.1], kill=[0.05])


def test_paths_raise_the_exceptions_python_has_for_them(tmp_path):
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    with pytest.raises(FileNotFoundError, match="output folder .*missing does not exist"):
        sim.run(images=1, output=tmp_path / "missing" / "x.h5", quiet=True)
    sim.run(images=1, steps_per_image=1, output=tmp_path / "x.h5", quiet=True)
    sim.reset()
    with pytest.raises(FileExistsError, match=r"already exists \(use overwrite=True to overwrite\)"):
        sim.run(images=1, output=tmp_path / "x.h5", quiet=True)
    with pytest.raises(FileNotFoundError, match="no such file"):
        gs.Simulation.resume(tmp_path / "nothing.h5")
    with pytest.raises(FileNotFoundError):
        gs.render(tmp_path / "nothing.h5", out=tmp_path / "pictures")
    gs.render(tmp_path / "x.h5", out=tmp_path / "pictures")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        gs.render(tmp_path / "x.h5", out=tmp_path / "pictures")
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(PermissionError, match="not writable"):
            sim.run(images=1, output=locked / "x.h5", quiet=True)


def test_a_backend_that_cannot_run_says_so_in_pythons_words():
    try:
        sim = gs.Simulation(rows=8, cols=8, backend="cuda")
    except RuntimeError as error:  # no CUDA in this build, or no usable device
        assert "--" not in str(error) and "backend='cuda'" in str(error), str(error)
    else:
        assert sim.backend == "cuda"
