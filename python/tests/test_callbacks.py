"""Per-image callbacks, views that never go stale, rates that change between steps, and objects
that refuse attributes they do not have."""

import subprocess

import h5py
import numpy as np
import pytest

import grayscott as gs
from conftest import run_cli


@pytest.mark.parametrize("steps", [1, 2, 3, 5, 7, 32, 33, 64, 65])
@pytest.mark.parametrize("fuse", [0, 1, 4])
def test_a_view_taken_before_an_advance_shows_the_state_after_it(steps, fuse):
    sim = gs.Simulation(rows=40, cols=48, backend="cpu", fuse_steps=fuse)
    v, u = sim.v, sim.u
    reference = gs.Simulation(rows=40, cols=48, backend="cpu", fuse_steps=1)
    for _ in range(2):
        sim.advance(steps)
        reference.advance(steps)
        assert np.array_equal(v, reference.v) and np.array_equal(u, reference.u)
        assert np.array_equal(v, sim.v)


def test_a_view_stays_current_after_a_run(tmp_path):
    sim = gs.Simulation(rows=24, cols=24, backend="cpu")
    v = sim.v
    sim.run(images=3, steps_per_image=7, output=tmp_path / "r.h5", quiet=True)
    with h5py.File(tmp_path / "r.h5") as f:
        assert np.array_equal(v, f["v"][-1])


def test_on_image_sees_each_image_and_the_current_state(tmp_path):
    sim = gs.Simulation(rows=32, cols=40, backend="cpu")
    seen = []

    def on_image(index, step, time, image):
        assert not image.flags.writeable
        seen.append((index, step, time, image, sim.v.copy(), sim.u.copy(), sim.step))

    sim.run(images=4, steps_per_image=9, output=tmp_path / "a.h5", quiet=True, on_image=on_image)
    with h5py.File(tmp_path / "a.h5") as f:
        written = f["v"][...]
    assert [s[0] for s in seen] == [0, 1, 2, 3]
    assert [s[1] for s in seen] == [9, 18, 27, 36] == [s[6] for s in seen]
    assert [s[2] for s in seen] == [9.0, 18.0, 27.0, 36.0]
    for index, _, _, image, v, _, _ in seen:
        assert np.array_equal(image, written[index])  # a copy: still this image afterwards
        assert np.array_equal(v, written[index])      # sim.v is the image's state inside


@pytest.mark.parametrize("fields", ["u", "v"])
def test_on_image_gets_the_written_field_even_with_a_checkpoint_beside_it(tmp_path, fields):
    # Every image carries a checkpoint (both fields), the last one always does.
    seen = []
    sim = gs.Simulation(rows=20, cols=24, backend="cpu", init="noise", seed=2)
    sim.run(images=3, steps_per_image=5, output=tmp_path / "f.h5", fields=fields, quiet=True,
            checkpoint_every=1, on_image=lambda i, s, t, image: seen.append(image.copy()))
    with h5py.File(tmp_path / "f.h5") as f:
        written = f[fields][...]
    assert len(seen) == 3
    for index, image in enumerate(seen):
        assert np.array_equal(image, written[index])


def test_the_first_thing_a_user_tries_plotting_each_image_works(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim = gs.Simulation(rows=32, cols=32, backend="cpu")
    figure, axes = plt.subplots()
    drawn = []

    def plot(index, step, time, image):
        axes.imshow(sim.v)
        axes.set_title(f"step {sim.step}")
        figure.savefig(tmp_path / f"{index}.png")
        drawn.append(index)

    sim.run(images=3, steps_per_image=5, output=tmp_path / "p.h5", quiet=True, on_image=plot)
    assert drawn == [0, 1, 2] and (tmp_path / "2.png").stat().st_size > 0


def test_an_exception_in_on_image_stops_at_that_image_with_a_checkpoint_and_resumes(tmp_path):
    path = tmp_path / "stopped.h5"
    sim = gs.Simulation(rows=30, cols=34, backend="cpu")

    def fail_at_image_2(index, step, time, image):
        if index == 2:
            raise ValueError("plot went wrong")

    with pytest.raises(ValueError, match="plot went wrong"):
        sim.run(images=6, steps_per_image=11, output=path, quiet=True, on_image=fail_at_image_2)
    assert sim.step == 33
    with h5py.File(path, "r") as f:
        status = f.attrs["status"]
        assert status == "stopped after image 3: on_image raised ValueError: plot went wrong"
        assert list(f["step"][...]) == [11, 22, 33]
    resumed = gs.Simulation.resume(path, quiet=True)
    gs.Simulation(rows=30, cols=34, backend="cpu").run(images=6, steps_per_image=11,
                                                      output=tmp_path / "whole.h5", quiet=True)
    with h5py.File(path) as a, h5py.File(tmp_path / "whole.h5") as b:
        assert a.attrs["status"] == "complete"
        assert np.array_equal(a["v"][...], b["v"][...])
    assert resumed.step == 66


def test_a_keyboard_interrupt_raised_by_on_image_is_not_taken_for_ctrl_c(tmp_path):
    # Raised by the callback's own code: recorded as any exception is, raised as it was. Ctrl-C
    # (a SIGINT) during the callback is an interruption, as the command line records it.
    import signal

    def give_up(index, *_):
        if index == 1:
            raise KeyboardInterrupt("enough")

    def press_ctrl_c(index, *_):
        if index == 1:
            signal.raise_signal(signal.SIGINT)

    for callback, status in [(give_up, "stopped after image 2: on_image raised KeyboardInterrupt"),
                             (press_ctrl_c, "interrupted by SIGINT after image 2")]:
        path = tmp_path / f"{callback.__name__}.h5"
        with pytest.raises(KeyboardInterrupt):
            gs.Simulation(rows=16, cols=16, backend="cpu").run(
                images=4, steps_per_image=5, output=path, quiet=True, on_image=callback)
        with h5py.File(path) as f:
            assert f.attrs["status"].startswith(status), f.attrs["status"]


def test_a_callback_may_not_step_the_simulation_it_watches(tmp_path):
    sim = gs.Simulation(rows=16, cols=16, backend="cpu")

    def meddle(index, step, time, image):
        sim.advance(1)

    with pytest.raises(RuntimeError, match="advance\\(\\) cannot be called while run\\(\\)"):
        sim.run(images=3, steps_per_image=2, output=tmp_path / "m.h5", quiet=True, on_image=meddle)

    def set_a_rate(index, step, time, image):
        sim.feed = 0.02

    sim.reset()
    with pytest.raises(RuntimeError, match="^feed cannot be set while run\\(\\) steps this "):
        sim.run(images=3, steps_per_image=2, output=tmp_path / "r.h5", quiet=True,
                on_image=set_a_rate)


def test_a_callback_may_not_replace_or_continue_the_file_its_run_writes(tmp_path):
    # As another process would be refused it: the outer run's images stay, and once it has ended
    # the file may be replaced.
    out = tmp_path / "r.h5"
    other = gs.Simulation(rows=16, cols=16, init="noise", seed=2, backend="cpu")
    refusals = []

    def meddle(index, step, time, image):
        if index != 1:
            return
        for attempt in (
                lambda: other.run(images=2, steps_per_image=2, output=out, overwrite=True,
                                  quiet=True),
                lambda: gs.Simulation.resume(out, quiet=True),
                lambda: gs.sweep(feed=[0.02, 0.03], kill=0.06, rows=16, cols=16, images=2,
                                 steps_per_image=2, output=out, overwrite=True, quiet=True)):
            with pytest.raises(ValueError, match="is being written by this process") as refused:
                attempt()
            refusals.append(str(refused.value))

    sim = gs.Simulation(rows=16, cols=16, init="noise", seed=1, backend="cpu")
    result = sim.run(images=4, steps_per_image=2, output=out, quiet=True, on_image=meddle)
    assert result["status"] == "complete" and len(refusals) == 3
    assert "replace it once that one has ended" in refusals[0]
    assert "continue it once that one has ended" in refusals[1]
    with h5py.File(out) as f:
        assert f["v"].shape == (4, 16, 16) and f.attrs["seed"] == 1
        assert np.array_equal(f["v"][-1], sim.v)
    other.run(images=2, steps_per_image=2, output=out, overwrite=True, quiet=True)
    with h5py.File(out) as f:
        assert f["v"].shape == (2, 16, 16) and f.attrs["seed"] == 2


@pytest.mark.parametrize("field", ["v", "u"])
@pytest.mark.parametrize("fields", ["u,v", "v", "u"])
def test_a_callback_may_not_write_the_state_of_the_run_it_watches(tmp_path, field, fields):
    # Its file could not tell: the field is put back, the run stops there and says why, and the
    # file continues as the uninterrupted run; a field the file does not hold included (its
    # images do not carry it, yet the steps after depend on it).
    path = tmp_path / "w.h5"
    sim = gs.Simulation(rows=16, cols=16, backend="cpu")

    def write(index, step, time, image):
        if index == 1:
            getattr(sim, field)[4:8, 4:8] = 0.25

    with pytest.raises(RuntimeError, match=f"^on_image wrote into sim.{field}: a run's state"):
        sim.run(images=4, steps_per_image=5, output=path, quiet=True, fields=fields,
                checkpoint_every=1000, on_image=write)
    with h5py.File(path, "r") as f:
        assert f.attrs["status"].startswith(f"stopped after image 2: on_image wrote into sim.{field}")
    gs.Simulation.resume(path, quiet=True)
    gs.Simulation(rows=16, cols=16, backend="cpu").run(images=4, steps_per_image=5, fields=fields,
                                                      output=tmp_path / "whole.h5", quiet=True)
    with h5py.File(path) as a, h5py.File(tmp_path / "whole.h5") as b:
        for name in fields.split(","):
            assert np.array_equal(a[name][...], b[name][...])


def test_stats_in_a_callback_are_the_runs_unless_another_histogram_is_asked_for(tmp_path):
    sim = gs.Simulation(rows=16, cols=16, backend="cpu")
    seen = []

    def look(index, step, time, image):
        own, other = sim.stats(), sim.stats(5, (0, 1))
        seen.append((len(own["histogram"]), np.isnan(own["change_max"]),
                     len(other["histogram"]), np.isnan(other["change_max"])))

    sim.run(images=1, steps_per_image=3, output=tmp_path / "s.h5", quiet=True, stats=True,
            histogram_bins=20, on_image=look)
    assert seen == [(20, False, 5, True)]


def test_rates_change_between_steps_and_take_effect_at_the_next(tmp_path):
    a = gs.Simulation(rows=24, cols=24, backend="cpu", feed=0.02)
    b = gs.Simulation(rows=24, cols=24, backend="cpu", feed=0.02)
    a.advance(10)
    b.advance(10)
    a.feed = 0.05
    assert a.feed == 0.05 and a.parameters["feed"] == 0.05
    a.advance(10)
    b.advance(10)
    assert not np.array_equal(a.v, b.v)
    # The same as a simulation that had 0.05 from a state equal to a's at step 10.
    c = gs.Simulation(rows=24, cols=24, backend="cpu", feed=0.05)
    d = gs.Simulation(rows=24, cols=24, backend="cpu", feed=0.02)
    d.advance(10)
    c.u[...] = d.u
    c.v[...] = d.v
    c.advance(10)
    assert np.array_equal(a.v, c.v)
    # A run records the rates it ran with.
    e = gs.Simulation(rows=16, cols=16, backend="cpu")
    e.kill = 0.061
    e.run(images=1, steps_per_image=1, output=tmp_path / "k.h5", quiet=True)
    with h5py.File(tmp_path / "k.h5") as f:
        assert f.attrs["kill"] == 0.061


@pytest.mark.parametrize("name, value, error", [
    ("feed", -0.1, ValueError), ("dt", 6.0, ValueError), ("kill", "0.05", TypeError),
])
def test_bad_rates_are_refused_and_leave_the_simulation_as_it_was(name, value, error):
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    before = getattr(sim, name)
    with pytest.raises(error, match=name):
        setattr(sim, name, value)
    assert getattr(sim, name) == before


def test_unknown_attributes_are_refused():
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    with pytest.raises(AttributeError):
        sim.feeed = 0.05
    with pytest.raises(AttributeError):
        sim.rows = 16
    batch = gs.Sweep(feed=[0.02, 0.03], rows=8, cols=8, backend="cpu")
    with pytest.raises(AttributeError):
        batch.feed = 0.05


def test_pictures_from_python(tmp_path):
    sim = gs.Simulation(rows=32, cols=48, backend="cpu")
    sim.run(images=3, steps_per_image=20, output=tmp_path / "r.h5", quiet=True)
    png = sim._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    written = gs.render(tmp_path / "r.h5", out=tmp_path / "pics")
    assert [p.name for p in written] == ["v_0000.png", "v_0001.png", "v_0002.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in written)
    with pytest.raises(FileExistsError, match="overwrite=True replaces them"):
        gs.render(tmp_path / "r.h5", out=tmp_path / "pics")
    assert len(gs.render(tmp_path / "r.h5", out=tmp_path / "pics", overwrite=True, image=-1)) == 1


def test_a_video_from_python(tmp_path):
    import shutil
    import subprocess

    if shutil.which("ffmpeg") is None:
        pytest.fail("no ffmpeg program: install Debian's ffmpeg (scripts/setup does)")
    gs.Simulation(rows=32, cols=48, backend="cpu").run(images=5, steps_per_image=20,
                                                      output=tmp_path / "r.h5", quiet=True)
    path = gs.video(tmp_path / "r.h5", tmp_path / "r.mp4", fps=5)
    assert path == tmp_path / "r.mp4"
    frames = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                             "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                             str(path)], capture_output=True, text=True, check=True).stdout
    assert int(frames) == 5


def test_the_sliders_run_the_simulation_again_at_every_change(capfd):
    pytest.importorskip("ipywidgets")
    panel = gs.explore(rows=32, cols=32, steps=300, backend="cpu")
    controls, picture = panel.children
    first = picture.value
    assert first[:4] == b"\x89PNG"
    controls.children[0].value = 0.025  # feed
    second = picture.value
    assert second != first and second[:4] == b"\x89PNG"
    controls.children[1].value = 0.058  # kill
    assert picture.value != second
    # Made outside a notebook, the panel writes nothing (no terminal escapes on a script's output).
    assert capfd.readouterr() == ("", "")


def test_the_sliders_refuse_a_wrong_setting_at_once():
    pytest.importorskip("ipywidgets")
    with pytest.raises(ValueError, match="boundary"):
        gs.explore(rows=32, cols=32, steps=10, boundary="sideways")


def test_a_progress_callable_may_read_the_simulation(tmp_path):
    sim = gs.Simulation(rows=24, cols=24, backend="cpu")
    seen = []

    def progress(done, total):
        seen.append((done, total, sim.step, float(np.asarray(sim.v).sum())))

    sim.run(images=3, steps_per_image=4, output=tmp_path / "p.h5", progress=progress, quiet=True)
    assert [(d, t, s) for d, t, s, _ in seen] == [(1, 3, 4), (2, 3, 8), (3, 3, 12)]


@pytest.mark.parametrize("field", ["u", "v"])
def test_a_progress_callable_cannot_write_the_state(tmp_path, field):
    # Inside progress, sim.u and sim.v are read-only: a write would change the run unseen (the
    # file could not tell). It raises there, and the run stops as for any exception in progress,
    # with the images before in its file; afterwards the views are writable again.
    sim = gs.Simulation(rows=24, cols=24, backend="cpu")
    flags = []

    def progress(done, total):
        flags.append((sim.u.flags.writeable, sim.v.flags.writeable))
        if done == 2:
            getattr(sim, field)[3, 3] = 0.5

    with pytest.raises(ValueError, match="^assignment destination is read-only$"):
        sim.run(images=5, steps_per_image=4, output=tmp_path / "p.h5", progress=progress,
                quiet=True)
    assert flags == [(False, False), (False, False)]
    assert sim.u.flags.writeable and sim.v.flags.writeable
    whole = gs.Simulation(rows=24, cols=24, backend="cpu")
    whole.run(images=5, steps_per_image=4, output=tmp_path / "whole.h5", quiet=True)
    with h5py.File(tmp_path / "p.h5", "r") as stopped, h5py.File(tmp_path / "whole.h5") as full:
        assert stopped.attrs["status"].startswith("stopped after image ")
        n = len(stopped["step"])
        assert n >= 2 and np.array_equal(stopped["v"][...], full["v"][:n])


def test_show_pictures_a_simulation_or_any_2d_array():
    pytest.importorskip("IPython")
    sim = gs.Simulation(rows=24, cols=32, backend="cpu")
    sim.advance(50)
    picture = gs.show(sim)
    assert picture.format == "png" and picture.data[:4] == b"\x89PNG"
    # Any 2D array of numbers, as the simulation's own v gives the same picture.
    assert gs.show(np.array(sim.v, dtype=np.float64)).data == picture.data
    with pytest.raises(TypeError, match="show: expected a Simulation or a 2D array of numbers, got str"):
        gs.show("x")
    with pytest.raises(ValueError):
        gs.show(np.zeros(5))


def test_run_renders_its_pictures_as_the_command_lines_run_render(tmp_path, grayscott_bin):
    sim = gs.Simulation(rows=24, cols=40, init="noise", seed=2, backend="cpu")
    summary = sim.run(images=3, steps_per_image=10, output=tmp_path / "py.h5", quiet=True,
                      render=tmp_path / "py")
    assert [p.name for p in summary["pictures"]] == ["v_0000.png", "v_0001.png", "v_0002.png"]
    run_cli(grayscott_bin, "run", "--rows", 24, "--cols", 40, "--init", "noise", "--seed", 2,
            "--backend", "cpu", "--images", 3, "--steps-per-image", 10, "-o", tmp_path / "cli.h5",
            "--render", tmp_path / "cli", "--quiet")
    for picture in summary["pictures"]:
        assert picture.read_bytes() == (tmp_path / "cli" / picture.name).read_bytes()
    # Pictures that exist are refused before the run, which then writes nothing.
    again = gs.Simulation(rows=24, cols=40, backend="cpu")
    with pytest.raises(FileExistsError, match="overwrite=True replaces them"):
        again.run(images=3, steps_per_image=10, output=tmp_path / "again.h5", quiet=True,
                  render=tmp_path / "py")
    assert not (tmp_path / "again.h5").exists()
    with pytest.raises(ValueError, match="render folder .*is the name of the run's file"):
        again.run(images=3, output=tmp_path / "same.h5", render=tmp_path / "same.h5", quiet=True)
    with pytest.raises(TypeError, match="render"):
        again.run(images=3, output=tmp_path / "typed.h5", render=3, quiet=True)
    # An empty folder name is refused before the run, which then writes nothing.
    with pytest.raises(ValueError, match="^render: the folder name is empty$"):
        again.run(images=3, output=tmp_path / "empty.h5", render="", quiet=True)
    assert not (tmp_path / "empty.h5").exists()
    # A run that writes u alone draws u.
    only_u = again.run(images=2, steps_per_image=5, output=tmp_path / "u.h5", fields="u",
                       render=tmp_path / "u", quiet=True)
    assert [p.name for p in only_u["pictures"]] == ["u_0000.png", "u_0001.png"]
    # gs.render and gs.video draw it by its u as well, unless field= says otherwise.
    assert [p.name for p in gs.render(tmp_path / "u.h5", tmp_path / "u-again", quiet=True)] == [
        "u_0000.png", "u_0001.png"]
    with pytest.raises(ValueError, match="has no field v"):
        gs.render(tmp_path / "u.h5", tmp_path / "v-asked", field="v", quiet=True)
    # A run whose values became non-finite draws the images before, then raises: as the command
    # line's run --render, pictures bitwise its own.
    blown = gs.Simulation(rows=16, cols=16, init_values=(1e12, 1e12), backend="cpu")
    with pytest.raises(FloatingPointError, match=r"blow\.h5: stopped: values became non-finite "
                                                 r"at image 1"):
        blown.run(images=5, steps_per_image=1, output=tmp_path / "blow.h5",
                  render=tmp_path / "blow", quiet=True)
    cli = subprocess.run([grayscott_bin, "run", "--rows", "16", "--cols", "16", "--init-values",
                          "1e12,1e12", "--backend", "cpu", "--images", "5", "--steps-per-image",
                          "1", "-o", tmp_path / "blow-cli.h5", "--render", tmp_path / "blow-cli",
                          "--quiet"], capture_output=True, text=True, timeout=60)
    assert cli.returncode == 1 and "non-finite at image 1" in cli.stderr
    assert sorted(p.name for p in (tmp_path / "blow").iterdir()) == ["v_0000.png"]
    assert ((tmp_path / "blow" / "v_0000.png").read_bytes() ==
            (tmp_path / "blow-cli" / "v_0000.png").read_bytes())


def test_a_resumed_run_renders_every_image_of_its_file(tmp_path):
    import signal

    sim = gs.Simulation(rows=16, cols=16, backend="cpu")

    def stop_at_the_second(index, step, time, image):
        if index == 1:
            signal.raise_signal(signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        sim.run(images=4, steps_per_image=5, output=tmp_path / "r.h5", quiet=True,
                on_image=stop_at_the_second)
    gs.Simulation.resume(tmp_path / "r.h5", quiet=True, render=tmp_path / "pics")
    assert sorted(p.name for p in (tmp_path / "pics").iterdir()) == [
        f"v_000{i}.png" for i in range(4)]
    # Its pictures that exist are refused before it continues, and overwrite=True replaces them
    # (only them: without render= it is refused, the file continued, never replaced).
    with pytest.raises(KeyboardInterrupt):
        gs.Simulation(rows=16, cols=16, backend="cpu").run(
            images=4, steps_per_image=5, output=tmp_path / "again.h5", quiet=True,
            on_image=stop_at_the_second)
    with pytest.raises(FileExistsError, match="overwrite=True replaces them"):
        gs.Simulation.resume(tmp_path / "again.h5", quiet=True, render=tmp_path / "pics")
    with pytest.raises(ValueError, match="^overwrite=True in Simulation.resume replaces only the "
                                         "pictures of render=DIR "):
        gs.Simulation.resume(tmp_path / "again.h5", quiet=True, overwrite=True)
    before = (tmp_path / "pics" / "v_0000.png").stat().st_ino
    gs.Simulation.resume(tmp_path / "again.h5", quiet=True, render=tmp_path / "pics",
                         overwrite=True)
    assert (tmp_path / "pics" / "v_0000.png").stat().st_ino != before


def test_renders_report_their_progress_and_stop_when_it_raises(tmp_path):
    gs.Simulation(rows=16, cols=16, backend="cpu").run(images=3, steps_per_image=5,
                                                       output=tmp_path / "r.h5", quiet=True)
    calls = []
    gs.render(tmp_path / "r.h5", tmp_path / "pics", progress=lambda done, total: calls.append(
        (done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]

    def fail(done, total):
        raise RuntimeError(f"enough after {done}")

    with pytest.raises(RuntimeError, match="enough after 1"):
        gs.render(tmp_path / "r.h5", tmp_path / "stopped", progress=fail)
    assert [p.name for p in (tmp_path / "stopped").iterdir()] == ["v_0000.png"]
    with pytest.raises(TypeError, match="progress: expected a callable"):
        gs.render(tmp_path / "r.h5", tmp_path / "typed", progress=3)


def test_pictures_of_a_longer_run_left_in_the_folder_are_named(tmp_path):
    import warnings

    sim = gs.Simulation(rows=16, cols=16, backend="cpu")
    sim.run(images=4, steps_per_image=2, output=tmp_path / "long.h5", render=tmp_path / "pics",
            quiet=True)
    gs.Simulation(rows=16, cols=16, backend="cpu").run(images=2, steps_per_image=2,
                                                       output=tmp_path / "short.h5", quiet=True)
    with pytest.warns(UserWarning, match=r"pics also holds 2 pictures of v that this rendering "
                                         r"did not write \(v_0002\.png to v_0003\.png\), left as "
                                         r"they were$"):
        gs.render(tmp_path / "short.h5", tmp_path / "pics", overwrite=True)
    assert len(list((tmp_path / "pics").iterdir())) == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one picture asked, or quiet: no warning
        gs.render(tmp_path / "short.h5", tmp_path / "pics", overwrite=True, image=0)
        gs.render(tmp_path / "short.h5", tmp_path / "pics", overwrite=True, quiet=True)


def test_a_videos_progress_counts_its_frames_and_a_raise_leaves_no_video(tmp_path):
    import shutil

    if shutil.which("ffmpeg") is None:
        pytest.fail("no ffmpeg program: install Debian's ffmpeg (scripts/setup does)")
    gs.Simulation(rows=16, cols=16, backend="cpu").run(images=4, steps_per_image=5,
                                                       output=tmp_path / "r.h5", quiet=True)
    calls = []
    gs.video(tmp_path / "r.h5", tmp_path / "r.mp4", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
    calls.clear()  # image 1 alone, as render --video --image 1
    gs.video(tmp_path / "r.h5", tmp_path / "one.mp4", image=1,
             progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 1)]

    def fail(done, total):
        raise RuntimeError("no more frames")

    with pytest.raises(RuntimeError, match="no more frames"):
        gs.video(tmp_path / "r.h5", tmp_path / "stopped.mp4", progress=fail)
    assert not (tmp_path / "stopped.mp4").exists()

    def fail_at_the_last(done, total):
        if done == total:
            raise RuntimeError("not the last")

    with pytest.raises(RuntimeError, match="not the last"):
        gs.video(tmp_path / "r.h5", tmp_path / "late.mp4", progress=fail_at_the_last)
    assert not (tmp_path / "late.mp4").exists()


def test_pictures_of_an_unfinished_file_warn_of_what_it_holds(tmp_path):
    import warnings

    def stop(index, step, time, image):
        if index == 1:
            raise RuntimeError("enough")

    sim = gs.Simulation(rows=16, cols=16, backend="cpu")
    with pytest.raises(RuntimeError, match="enough"):
        sim.run(images=5, steps_per_image=5, output=tmp_path / "r.h5", quiet=True, on_image=stop)
    with pytest.warns(UserWarning, match=r"r\.h5 holds \d of 5 images \(status: stopped"):
        gs.render(tmp_path / "r.h5", tmp_path / "pics")
    # A whole file's pictures say nothing.
    gs.Simulation(rows=16, cols=16, backend="cpu").run(images=2, steps_per_image=5,
                                                      output=tmp_path / "whole.h5", quiet=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gs.render(tmp_path / "whole.h5", tmp_path / "whole")
        # quiet: no note, as render --quiet prints none.
        gs.render(tmp_path / "r.h5", tmp_path / "quiet", quiet=True)
