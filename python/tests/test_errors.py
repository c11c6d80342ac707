"""Bad input raises ValueError or TypeError with the command line's one-line message."""

import os

import h5py
import numpy as np
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
        (dict(fuse_steps=65, backend="cpu"),
         "^fuse_steps must be 0 \\(the backend's best\\) or a whole number from 1 to 64 on the CPU, got 65$"),
        (dict(fuse_steps=17, backend="cpu", depth=4),
         "^fuse_steps must be 0 \\(the backend's best\\) or a whole number from 1 to 16 for a volume on the CPU, "
         "got 17$"),
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
    with pytest.raises(ValueError, match="checkpoint_every: expected a whole number of images from 1"):
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


def test_an_array_is_not_taken_for_the_number_it_holds():
    # NumPy turns an array of one value into that number, which would take a list for a number.
    with pytest.raises(TypeError, match=r"^rows: expected an int, got numpy.ndarray"):
        gs.Simulation(rows=np.array([32]), cols=32, backend="cpu")
    with pytest.raises(TypeError, match=r"^feed: expected a number, got numpy.ndarray"):
        gs.Simulation(rows=32, cols=32, feed=np.array([0.02]), backend="cpu")
    sim = gs.Simulation(rows=np.int64(16), cols=16, feed=np.float32(0.02), backend="cpu")
    with pytest.raises(TypeError, match=r"^steps: expected an int, got numpy.ndarray"):
        sim.advance(np.array([3]))
    sim.advance(np.array(3))  # a value without axes is a number
    assert sim.step == 3


def test_a_misspelt_keyword_gets_the_command_lines_hint():
    with pytest.raises(TypeError, match=r"^Simulation\(\) got an unexpected keyword argument "
                                        r"'colls' \(did you mean cols\?\)$"):
        gs.Simulation(colls=64)
    with pytest.raises(TypeError, match=r"did you mean images\?"):
        gs.Simulation(rows=8, cols=8, backend="cpu").run(imagse=2)
    with pytest.raises(TypeError, match=r"^sweep\(\) got an unexpected keyword argument 'zzz'$"):
        gs.sweep(feed=[0.02], kill=[0.06], zzz=1)
    # The command line's own names point to Python's; the other functions hint alike.
    with pytest.raises(TypeError, match=r"'force' \(did you mean overwrite\?\)"):
        gs.Simulation(rows=8, cols=8, backend="cpu").run(force=True)
    with pytest.raises(TypeError, match=r"^render\(\) got .* 'feild' \(did you mean field\?\)"):
        gs.render("x.h5", feild="u")
    with pytest.raises(TypeError, match=r"did you mean bins\?"):
        gs.Simulation(rows=8, cols=8, backend="cpu").stats(bnis=3)
    for keyword, meant in (("fuse", "fuse_steps"), ("deltat", "dt")):
        with pytest.raises(TypeError, match=rf"'{keyword}' \(did you mean {meant}\?\)"):
            gs.Simulation(rows=8, cols=8, backend="cpu", **{keyword: 1})
    with pytest.raises(TypeError, match=r"'seedss' \(did you mean seeds\?\)"):
        gs.sweep(feed=[0.02], kill=[0.06], seedss=[3])
    # A name that begins a keyword is taken for it before a slip (out: output, not outside).
    with pytest.raises(TypeError, match=r"'out' \(did you mean output\?\)"):
        gs.sweep(feed=[0.02], kill=[0.06], out="x.h5")


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
    with pytest.raises(IsADirectoryError, match="is a directory, not a file"):
        sim.run(images=1, output=tmp_path / "pictures", overwrite=True, quiet=True)
    with pytest.raises(IsADirectoryError, match="is a directory, not a file"):
        gs.Simulation.resume(tmp_path / "pictures")
    # The companion's name as the file's: taken only with overwrite=True, never a folder.
    (tmp_path / "noted.xmf").write_text("notes\n")
    with pytest.raises(FileExistsError, match=r"output companion .*noted\.xmf already exists"):
        sim.run(images=1, output=tmp_path / "noted.h5", quiet=True)
    (tmp_path / "folder.xmf").mkdir()
    with pytest.raises(IsADirectoryError, match=r"output companion .*folder\.xmf is a directory"):
        sim.run(images=1, output=tmp_path / "folder.h5", overwrite=True, quiet=True)
    # Names the file system cannot hold, and a folder that cannot be made, refused before the run.
    with pytest.raises(ValueError, match="File name too long"):
        sim.run(images=1, output=tmp_path / ("x" * 300 + ".h5"), quiet=True)
    for render in ["x" * 300, "/proc/pictures"]:
        # (PermissionError where /proc is not writable to this user at all)
        with pytest.raises((ValueError, PermissionError),
                           match=r"^render folder .* cannot be created"):
            sim.run(images=1, output=tmp_path / "drawn.h5", quiet=True, render=tmp_path / render
                    if not render.startswith("/") else render)
        assert not (tmp_path / "drawn.h5").exists()
    assert not (tmp_path / "noted.h5").exists() and not (tmp_path / "folder.h5").exists()
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(PermissionError, match="not writable"):
            sim.run(images=1, output=locked / "x.h5", quiet=True)


def test_a_file_that_cannot_be_read_raises_permission_error():
    # As the command line says, in one line, and as Python's own open() raises: PermissionError.
    import shutil
    import subprocess
    import sys
    import tempfile

    folder = tempfile.mkdtemp(prefix="grayscott-locked-")  # one a user without rights can reach
    try:
        os.chmod(folder, 0o755)
        locked = os.path.join(folder, "locked.h5")
        with open(locked, "wb") as f:
            f.write(b"x")
        os.chmod(locked, 0)
        code = ("import grayscott as gs\n"
                "try:\n"
                f"    gs.open({locked!r})\n"
                "except PermissionError as e:\n"
                "    print('PermissionError', e)\n")
        # Root reads every file: the check runs as a user without rights (nobody).
        command = ([sys.executable, "-c", code] if os.geteuid() != 0 else
                   ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                    sys.executable, "-c", code])
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == f"PermissionError {locked}: Permission denied", (
            done.stdout, done.stderr)
    finally:
        shutil.rmtree(folder)


def test_a_backend_that_cannot_run_says_so_in_pythons_words():
    try:
        sim = gs.Simulation(rows=8, cols=8, backend="cuda")
    except RuntimeError as error:  # no CUDA in this build, or no usable device
        assert "--" not in str(error) and "backend='cuda'" in str(error), str(error)
    else:
        assert sim.backend == "cuda"


def test_every_argument_of_a_wrong_type_is_named_in_a_type_error(tmp_path):
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    never = tmp_path / "never.h5"
    for call, message in [
        (lambda: setattr(sim, "feed", None), "^feed: expected a number, got NoneType None$"),
        (lambda: sim.advance(None), "^steps: expected an int, got NoneType None$"),
        (lambda: sim.stats(bins=2.5), "^bins: expected an int, got float 2.5$"),
        (lambda: gs.dt_limit(everywhere="yes"), "^everywhere: expected True or False, got str 'yes'$"),
        (lambda: gs.classify(np.zeros((16, 16)), periodic=1), "^periodic: expected a bool"),
        (lambda: gs.change_per_step(np.zeros(4), np.ones(4), 2.0), "^steps: expected an int"),
        (lambda: gs.classify(np.ma.masked_less(np.zeros((16, 16)), 1)), "^v: a masked array"),
        (lambda: gs.classify(None), "^v: expected a 2D array, got None$"),
        (lambda: sim.run(images=1, output=never, live="yes"), "^live: expected a bool"),
        (lambda: sim.run(images=1, output=never, on_image=3), "^on_image: expected a callable"),
    ]:
        with pytest.raises(TypeError, match=message):
            call()
    assert sim.feed == gs.Simulation(rows=8, cols=8).feed and sim.step == 0
    assert not never.exists()


def test_numpy_scalars_are_taken_where_python_numbers_are(tmp_path):
    v = np.zeros((16, 16), dtype=np.float32)
    v[4:8, 4:8] = 0.3
    assert gs.classify(v, periodic=np.bool_(True), change_per_step=np.float32(1e-9)).pattern == \
        gs.classify(v, periodic=True, change_per_step=1e-9).pattern
    assert gs.classify(v, change_per_step=np.array(1e-9)).pattern == gs.classify(v, change_per_step=1e-9).pattern
    assert gs.change_per_step(v, v + 1, np.int64(4)) == pytest.approx(0.25)
    sim = gs.Simulation(rows=np.int64(8), cols=8, backend="cpu", feed=np.float32(0.03))
    sim.run(images=np.int64(2), steps_per_image=3, output=tmp_path / "np.h5", quiet=np.bool_(True),
            stats=np.bool_(True))
    assert sim.step == 6


def test_rates_a_run_refuses_are_refused_by_dt_limit_too():
    with pytest.raises(ValueError, match="^feed must be a finite non-negative number, got -1$"):
        gs.dt_limit(feed=-1)
    with pytest.raises(ValueError, match="^du must be a finite non-negative number, got nan$"):
        gs.dt_limit(du=float("nan"))


def test_a_checkpoint_interval_that_is_not_finite_is_refused(tmp_path):
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    with pytest.raises(ValueError, match="^checkpoint_every: expected a finite number of seconds, got nan$"):
        sim.run(images=1, output=tmp_path / "n.h5", checkpoint_every=float("nan"))
    assert not (tmp_path / "n.h5").exists()


def test_a_runs_notices_are_python_warnings_which_a_notebook_shows(tmp_path, capfd):
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    with pytest.warns(UserWarning, match="named.dat does not end in .h5 or .hdf5; it is written as HDF5"):
        sim.run(images=1, steps_per_image=1, output=tmp_path / "named.dat", quiet=False)
    assert "does not end in" not in capfd.readouterr().err
    with pytest.warns(UserWarning, match="does not end in"):
        gs.sweep(tmp_path / "sweep.dat", feed=[0.03], kill=[0.06], rows=8, cols=8, images=1,
                 steps_per_image=1, backend="cpu", quiet=False)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            gs.Simulation(rows=8, cols=8, backend="cpu").run(
                images=1, steps_per_image=1, output=tmp_path / "strict.dat")


def test_none_means_the_default_and_is_not_a_given_value():
    # A preset's rates stand when feed and kill are None, as when they are left out.
    assert gs.Simulation(preset="course-numpy", rows=16, cols=16, feed=None, kill=None).feed == \
        gs.Simulation(preset="course-numpy", rows=16, cols=16).feed == 0.0565
    assert gs.Simulation(rows=8, cols=8, outside=None).parameters["boundary"] == "zero-flux"
    v = np.zeros((16, 16))
    assert gs.classify(v, periodic=None).pattern == gs.classify(v).pattern


def test_small_refusals_name_their_cause():
    import copy

    with pytest.raises(TypeError, match="^a Simulation owns its engine and is not copied"):
        copy.copy(gs.Simulation(rows=8, cols=8))
    with pytest.raises(ValueError, match="^change_per_step: previous or current holds a value that is not finite$"):
        gs.change_per_step(np.full((4, 4), np.nan), np.zeros((4, 4)), 2)
    with pytest.raises(ValueError, match="^seeds: expected a whole number from 0 to 2\\^63-1, got '-1'$"):
        gs.sweep("never.h5", feed=[0.03], kill=[0.06], rows=8, cols=8, init="noise", seeds=[-1])


def test_what_new_users_met_is_refused_in_pythons_words(tmp_path):
    sim = gs.Simulation(rows=16, cols=16, backend="cpu")
    # A path named, of the wrong type; None is the default.
    with pytest.raises(TypeError, match="^output: expected a path \\(str or os.PathLike\\), got int$"):
        sim.run(images=1, output=123)
    # A progress that is not callable, before any file is made.
    with pytest.raises(TypeError, match="^progress: expected a callable f\\(done, total\\), got int$"):
        sim.run(images=2, output=tmp_path / "p.h5", progress=5)
    assert not (tmp_path / "p.h5").exists()
    # stats(): its range in every form a run's histogram_range takes, named when wrong.
    assert len(sim.stats(range="0,0.5")["histogram"]) == len(sim.stats(range=(0, 0.5))["histogram"])
    assert len(sim.stats(range=None, bins=None)["histogram"]) == 50
    with pytest.raises(TypeError, match="^range: expected \\(low, high\\), got int 5$"):
        sim.stats(range=5)
    # A stencil no dt makes stable has no dt limit; a mistyped name is not "a weight".
    with pytest.raises(ValueError, match="anti-diffusive"):
        gs.dt_limit("-1,1,-1,1,0,1,-1,1,-1")
    assert gs.dt_limit(None) == gs.dt_limit()
    with pytest.raises(TypeError, match="^stencil: expected a name or nine"):
        gs.dt_limit(5)
    with pytest.raises(ValueError, match="^stencil: unknown stencil 'PRETTY' \\(known: oono-puri"):
        gs.Simulation(rows=16, cols=16, stencil="PRETTY")
    with pytest.raises(TypeError, match="^v: expected an array of numbers"):
        gs.classify("abc")
    with pytest.raises(ValueError, match="^v: expected a 2D array; NumPy makes none of it: "):
        gs.classify([[0.1, 0.2], [0.3]])
    # render's messages speak Python.
    sim.run(images=1, steps_per_image=1, output=tmp_path / "r.h5", quiet=True)
    with pytest.raises(ValueError, match="^range: expected \\(lo, hi\\) with finite lo < hi, got \\(1, 0\\)$"):
        gs.render(tmp_path / "r.h5", out=tmp_path / "pictures", range=(1, 0))
    with pytest.raises(ValueError, match="field='v'; run with fields='u,v' writes both"):
        gs.render(tmp_path / "r.h5", out=tmp_path / "pictures", field="u")
    with pytest.raises(ValueError, match="stats=True\\)$"):
        gs.Simulation(depth=4, rows=16, cols=16).run(images=1, classify=True,
                                                     output=tmp_path / "v.h5")
    with pytest.raises(ValueError, match="^histogram_bins: a setting of the statistics, which "
                                         "this run does not measure: give stats=True"):
        sim.run(images=1, output=tmp_path / "h.h5", histogram_bins=7)
    with pytest.raises(ValueError, match="^steady_images: the images in a row that until_steady= "
                                         "waits for; without it, this run does not settle$"):
        sim.run(images=1, output=tmp_path / "h.h5", steady_images=3, stats=True)
    assert not (tmp_path / "h.h5").exists()
    # The signature's defaults passed on as such ask for nothing: a wrapper passing every argument.
    gs.Simulation(rows=16, cols=16).run(images=1, output=tmp_path / "defaults.h5", quiet=True,
                                        histogram_bins=50, histogram_range=(0, 1),
                                        steady_images=5, until_steady=0.0)
    gs.sweep(tmp_path / "defaults_sweep.h5", feed=[0.03], kill=[0.06], rows=8, cols=8, images=1,
             quiet=True, histogram_bins=50, histogram_range="0,1", steady_images=5)
    with pytest.raises(ValueError, match="^seeds: no value given$"):
        gs.sweep(tmp_path / "s.h5", feed=[0.03], kill=[0.06], rows=8, cols=8, init="noise",
                 seeds=[])


def test_numbers_beyond_64_bits_are_refused_as_the_command_line_refuses_them():
    # Read as the nearest (2^63-1), they were reported as given ("got 9223372036854775807").
    with pytest.raises(ValueError, match=r"^rows: 100000000000000000000 is out of range \(at most "
                                         r"2\^63-1\)$"):
        gs.Simulation(rows=10**20)
    with pytest.raises(ValueError, match=r"^threads: -18446744073709551616 is out of range "
                                         r"\(at least -2\^63\)$"):
        gs.Simulation(threads=-2**64)
    with pytest.raises(ValueError, match=r"^images: 9223372036854775808 is out of range"):
        gs.Simulation(rows=8, cols=8).run(images=2**63, quiet=True)
    with pytest.raises(ValueError, match=r"^feed must be a finite non-negative number, got inf$"):
        gs.Simulation(feed=10**400)
    with pytest.raises(ValueError, match=r"^seed: expected a whole number from 0 to 2\^63-1, got "
                                         r"'9223372036854775808'$"):
        gs.Simulation(init="noise", seed=2**63)


def test_a_run_that_becomes_non_finite_raises_and_a_sweep_warns(tmp_path):
    # As the command line: an error naming the file and where (its images before are kept), and
    # a warning for a sweep's members.
    with pytest.raises(FloatingPointError, match=r"diverged\.h5: stopped: values became "
                                                 r"non-finite at image 0"):
        gs.Simulation(rows=16, cols=16, init_values=(-1, 2), backend="cpu").run(
            images=2, output=tmp_path / "diverged.h5", quiet=True)
    with pytest.warns(UserWarning, match=r"2 members became non-finite \(see /nonfinite_image"):
        gs.sweep(feed=[0.02, 0.03], kill=[0.06], rows=16, cols=16, images=2,
                 init_values=(-1, 2), output=tmp_path / "diverged-sweep.h5", quiet=True)


@pytest.mark.parametrize("steps_per_image", [20, 1])
def test_after_a_run_stopped_by_non_finite_values_step_is_the_step_of_the_state_held(
        tmp_path, steps_per_image):
    # The state held is the one whose values became non-finite, steps past the file's last
    # image: sim.step and sim.time say which, so that the same steps from the same start give it.
    def started():
        sim = gs.Simulation(rows=32, cols=32, backend="cpu")
        sim.u[:] = 1.5  # diverges within about ten steps
        return sim

    sim = started()
    with pytest.raises(FloatingPointError, match="values became non-finite") as raised:
        sim.run(images=100, steps_per_image=steps_per_image, output=tmp_path / "diverged.h5",
                quiet=True)
    assert str(raised.value).endswith(f"; the simulation holds the state of step {sim.step}")
    with h5py.File(tmp_path / "diverged.h5") as f:
        written = f["v"].shape[0]
    assert (written > 0) == (steps_per_image == 1)
    assert sim.step > written * steps_per_image and sim.time == sim.step * sim.dt
    assert not np.isfinite(sim.v).all()
    again = started()
    again.advance(sim.step)
    assert np.array_equal(again.v, sim.v, equal_nan=True)
    assert np.array_equal(again.u, sim.u, equal_nan=True)


def test_a_video_without_ffmpeg_is_refused_in_pythons_words(tmp_path, monkeypatch):
    gs.Simulation(rows=8, cols=8, backend="cpu").run(images=2, output=tmp_path / "r.h5",
                                                     quiet=True)
    monkeypatch.setenv("GRAYSCOTT_FFMPEG", str(tmp_path / "no-ffmpeg"))
    with pytest.raises(ValueError, match="^a video: GRAYSCOTT_FFMPEG=.* is not an executable"):
        gs.video(tmp_path / "r.h5", tmp_path / "r.mp4")
    assert not (tmp_path / "r.mp4").exists()


def test_none_means_the_default_for_dt_limit_and_show():
    assert gs.dt_limit(du=None, dv=None, feed=None, kill=None, everywhere=None) == gs.dt_limit()
    pytest.importorskip("IPython")
    picture = gs.show(np.zeros((16, 16)), range=None, colormap=None)
    assert picture.data == gs.show(np.zeros((16, 16))).data


def test_resume_takes_how_it_is_computed_as_the_command_line(tmp_path):
    # grayscott run --resume FILE --fuse N --device D: the same keywords as Simulation's.
    path = tmp_path / "stopped.h5"

    def stop(index, *_):
        if index == 1:
            raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        gs.Simulation(rows=16, cols=16, backend="cpu").run(images=4, steps_per_image=5,
                                                           output=path, quiet=True, on_image=stop)
    with pytest.raises(ValueError, match=r"fuse_steps must be 0 \(the backend's best\) or a whole number "
                                         r"from 1 to 64 on the CPU, got 1000000"):
        gs.Simulation.resume(path, backend="cpu", fuse_steps=1000000, quiet=True)
    sim = gs.Simulation.resume(path, backend="cpu", fuse_steps=1, device=0, quiet=True)
    assert sim.step == 4 * 5


def test_files_to_read_are_refused_as_the_command_line_refuses_them(tmp_path):
    # A FIFO's opening waits for a writer for ever: each door refuses it before opening it.
    fifo = tmp_path / "fifo.h5"
    os.mkfifo(fifo)
    for call in (lambda: gs.open(fifo), lambda: gs.Simulation.resume(fifo),
                 lambda: gs.render(fifo, tmp_path / "pictures"),
                 lambda: gs.video(fifo, tmp_path / "fifo.gif")):
        with pytest.raises(ValueError, match="fifo.h5 is a FIFO, not a regular file"):
            call()
    with pytest.raises(FileNotFoundError, match="nothing.h5: no such file"):
        gs.open(tmp_path / "nothing.h5")
    with pytest.raises(IsADirectoryError, match="is a directory, not a file"):
        gs.open(tmp_path)
    for call in (lambda: gs.open(""), lambda: gs.Simulation.resume(""),
                 lambda: gs.video(fifo, ""), lambda: gs.resume_sweep("")):
        with pytest.raises(ValueError, match="^path: the file name is empty$"):
            call()


def test_until_steady_is_checked_against_a_presets_own_steps(tmp_path):
    # course-numpy steps 34 times per image: 3.6e-9 per step resolves there (not over 32).
    sim = gs.Simulation(rows=16, cols=16, preset="course-numpy", backend="cpu")
    sim.run(images=2, until_steady=3.6e-9, output=tmp_path / "p.h5", quiet=True)
    with pytest.raises(ValueError, match="over 34 steps per image"):
        gs.Simulation(rows=16, cols=16, preset="course-numpy", backend="cpu").run(
            images=2, until_steady=3.4e-9, output=tmp_path / "q.h5", quiet=True)


def test_file_names_in_messages_stay_as_given(tmp_path):
    # The command line's option names become Python's keywords only where they stand alone.
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    for name in ("run--force.h5", "x--init noise.h5", "gs--dt0.5.h5"):
        (tmp_path / name).touch()
        with pytest.raises(FileExistsError) as raised:
            sim.run(images=1, output=tmp_path / name, quiet=True)
        assert f"{tmp_path / name} already exists (use overwrite=True to overwrite)" in str(
            raised.value)
    with pytest.raises(FileNotFoundError, match="a--field u.h5: no such file"):
        gs.render(tmp_path / "a--field u.h5")


@pytest.mark.parametrize("call, keyword, option", [
    (lambda: gs.Simulation(rows=8, cols=8, pattern=""), "pattern", "--pattern"),
    (lambda: gs.Simulation(rows=8, cols=8, preset=""), "preset", "--preset"),
    (lambda: gs.Simulation(rows=8, cols=8, init_values=()), "init_values", "--init-values"),
    (lambda: gs.Simulation(rows=8, cols=8, init_values=np.array([])), "init_values",
     "--init-values"),
    (lambda: gs.Simulation(rows=8, cols=8, stencil=""), "stencil", "--stencil"),
    (lambda: gs.Simulation(rows=8, cols=8).run(images=1, checkpoint_every="", quiet=True),
     "checkpoint_every", "--checkpoint-every"),
    (lambda: gs.sweep("never.h5", feed=[0.02], rows=8, cols=8, images=1, max_batch_memory="",
                      quiet=True), "max_batch_memory", "--max-batch-memory"),
    (lambda: gs.Sweep(feed=[0.02], rows=8, cols=8, pattern=" "), "pattern", "--pattern"),
])
def test_an_empty_value_is_refused_as_the_command_line_refuses_it(grayscott_bin, tmp_path,
                                                                   monkeypatch, call, keyword,
                                                                   option):
    # None is the default; an empty text or sequence (a script's empty variable) was taken for
    # it silently, where the command line refuses `--pattern ""`.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=f"^{keyword}: an empty value: give one, or leave "
                                         f"{keyword} out \\(or None\\) for its default$"):
        call()
    command = "sweep" if keyword == "max_batch_memory" else "run"
    import subprocess
    done = subprocess.run([grayscott_bin, command, option, "", "-o", "never.h5"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"{option}: an empty value" in done.stderr, done.stderr
    assert not os.path.exists("never.h5")


def test_a_path_with_a_null_byte_is_refused_as_open_refuses_it(tmp_path, monkeypatch):
    # The system reads a name up to its first null byte: 'a\0b.h5' was the file 'a' (reported
    # as existing, or pictures written into the folder 'a').
    monkeypatch.chdir(tmp_path)
    sim = gs.Simulation(rows=8, cols=8)
    sim.run(images=1, output="run.h5", quiet=True)
    for call, keyword in [
            (lambda: sim.run(images=1, output="a\0b.h5", quiet=True, overwrite=True), "output"),
            (lambda: gs.sweep("a\0b.h5", feed=[0.02], rows=8, cols=8, images=1, quiet=True),
             "output"),
            (lambda: gs.Simulation.resume("a\0b.h5"), "path"),
            (lambda: gs.open("a\0b"), "path"),
            (lambda: gs.render("run.h5", out="a\0b"), "out"),
            (lambda: sim.reset() or sim.run(images=1, output="run.h5", overwrite=True, quiet=True,
                                            render="a\0b"), "render")]:
        with pytest.raises(ValueError, match=f"^{keyword}: embedded null byte$"):
            call()
    assert sorted(os.listdir(".")) == ["run.h5", "run.xmf"]


def test_a_wrong_call_of_advance_or_reset_is_one_line():
    # nanobind listed the supported signatures over several lines; Python's own words now, in
    # a method that costs a call no more than a frame (advance(0) is timed in the benchmarks).
    for target in (gs.Simulation(rows=8, cols=8), gs.Sweep(feed=[0.02, 0.03], rows=8, cols=8)):
        name = type(target).__name__
        for call, message in [
                (lambda: target.advance(n=5),
                 f"^{name}.advance\\(\\) got an unexpected keyword argument 'n'$"),
                (lambda: target.advance(),
                 f"^{name}.advance\\(\\) missing 1 required positional argument: 'steps'$"),
                (lambda: target.advance(5, 5),
                 f"^{name}.advance\\(\\) takes 2 positional arguments but 3 were given$"),
                (lambda: target.reset(1),
                 f"^{name}.reset\\(\\) takes 1 positional argument but 2 were given$")]:
            with pytest.raises(TypeError, match=message):
                call()
        target.advance(steps=3)
        assert target.step == 3
        target.reset()
        assert target.step == 0


def test_a_long_list_is_shown_by_its_ends_in_a_message():
    # A repeated value among a thousand (a script's list) was said with the whole list: 11 KB.
    feeds = [0.02 + i * 1e-4 for i in range(1000)] + [0.02]
    with pytest.raises(ValueError, match=r"^feed: 0.02 appears twice in '0.02,0.0201,.*\.\.\..*,0.02'$"
                       ) as info:
        gs.Sweep(feed=feeds, rows=8, cols=8)
    assert len(str(info.value)) < 150


def test_a_file_held_or_forbidden_raises_the_oserror_python_has_for_it(tmp_path):
    # A file another program holds open (HDF5's lock) was a RuntimeError: BlockingIOError, as
    # Python's own calls raise for a lock refused; one the user may not write, PermissionError.
    import subprocess
    import sys

    sim = gs.Simulation(rows=16, cols=16)

    def stop(index, *rest):
        if index == 1:
            raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        sim.run(images=3, output=tmp_path / "stopped.h5", quiet=True, on_image=stop)
    with h5py.File(tmp_path / "stopped.h5", "r"):
        with pytest.raises(BlockingIOError, match="open elsewhere"):
            gs.Simulation.resume(tmp_path / "stopped.h5", quiet=True)
    if os.geteuid() == 0:
        # Root may write every file: the check runs as a user without rights (nobody), in a
        # folder that user reaches, on a file it may read and not write.
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="grayscott-read-only-")
        try:
            os.chmod(folder, 0o777)
            path = os.path.join(folder, "stopped.h5")
            shutil.copy(tmp_path / "stopped.h5", path)
            os.chmod(path, 0o444)
            code = ("import grayscott as gs\n"
                    "try:\n"
                    f"    gs.Simulation.resume({path!r}, quiet=True)\n"
                    "except PermissionError as e:\n"
                    "    print('PermissionError', e)\n")
            done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                   sys.executable, "-c", code], capture_output=True, text=True,
                                  timeout=60)
            assert done.stdout.startswith("PermissionError HDF5: cannot open ") and (
                "to continue it: Permission denied" in done.stdout), (done.stdout, done.stderr)
        finally:
            shutil.rmtree(folder)


def test_a_file_cut_short_is_said_so_by_open_as_by_resume(tmp_path):
    # xarray's error was HDF5's: "truncated file: eof = 66816, sblock->base_addr = 0, ...".
    pytest.importorskip("xarray")
    gs.Simulation(rows=64, cols=64).run(images=5, output=tmp_path / "whole.h5", quiet=True)
    data = (tmp_path / "whole.h5").read_bytes()
    (tmp_path / "cut.h5").write_bytes(data[:len(data) // 2])
    said = f"^{tmp_path / 'cut.h5'} is cut short: {len(data) // 2} bytes of the {len(data)} it records"
    with pytest.raises(ValueError, match=said):
        gs.open(tmp_path / "cut.h5")
    with pytest.raises(ValueError, match=said):
        gs.Simulation.resume(tmp_path / "cut.h5")


def test_an_exception_whose_text_cannot_be_made_still_stops_the_run_as_itself(tmp_path):
    # Its __str__ raising replaced it with that error, and the status held a traceback.
    class Unsayable(Exception):
        def __str__(self):
            raise RuntimeError("no words")

    def stop(index, *rest):
        if index == 1:
            raise Unsayable()

    with pytest.raises(Unsayable):
        gs.Simulation(rows=16, cols=16).run(images=3, steps_per_image=1, output=tmp_path / "o.h5",
                                            quiet=True, on_image=stop)
    with h5py.File(tmp_path / "o.h5", "r") as f:
        assert f.attrs["status"] == "stopped after image 2: on_image raised Unsayable"
        assert f["v"].shape[0] == 2


def test_a_long_text_is_cut_between_characters_in_a_message():
    # Cut inside a character's UTF-8 bytes, the message failed to decode (UnicodeDecodeError).
    text = "a" * 39 + "é" * 40
    with pytest.raises(ValueError, match="^feed: ") as info:
        gs.Sweep(feed=text, rows=8, cols=8)
    assert "..." in str(info.value) and "é" in str(info.value)
