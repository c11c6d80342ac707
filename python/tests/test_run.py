"""Simulation.run is the pipeline of `grayscott run`: the same file, bitwise; stops and resumes."""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import h5py
import numpy as np
import pytest

import grayscott as gs
from conftest import run_cli

# Attributes that say how a file was made rather than what it holds.
CIRCUMSTANTIAL = {"version", "backend", "created", "threads"}


def assert_same_run_file(a, b):
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        for name in ("v", "step"):
            assert np.array_equal(fa[name][...], fb[name][...]), name
        assert ("u" in fa) == ("u" in fb)
        if "u" in fa:
            assert np.array_equal(fa["u"][...], fb["u"][...])
        attrs_a = {k: v for k, v in fa.attrs.items() if k not in CIRCUMSTANTIAL}
        attrs_b = {k: v for k, v in fb.attrs.items() if k not in CIRCUMSTANTIAL}
        assert attrs_a.keys() == attrs_b.keys()
        for k in attrs_a:
            assert np.array_equal(np.asarray(attrs_a[k]), np.asarray(attrs_b[k])), k


@pytest.mark.parametrize("boundary", ["zero-flux", "periodic", "fixed"])
@pytest.mark.parametrize("precision", ["single", "double"])
def test_python_run_is_bitwise_the_command_line_run(tmp_path, grayscott_bin, boundary, precision):
    py_file, cli_file = tmp_path / "py.h5", tmp_path / "cli.h5"
    sim = gs.Simulation(rows=37, cols=53, feed=0.03, kill=0.06, boundary=boundary,
                        precision=precision, backend="cpu")
    summary = sim.run(images=6, steps_per_image=9, output=py_file, quiet=True)
    assert summary["completed"] and summary["images_written"] == 6
    assert sim.step == 54
    run_cli(grayscott_bin, "run", "--rows", 37, "--cols", 53, "--feed", 0.03, "--kill", 0.06,
            "--boundary", boundary, "--precision", precision, "--images", 6,
            "--steps-per-image", 9, "--backend", "cpu", "-o", cli_file, "--quiet")
    assert_same_run_file(py_file, cli_file)
    # The simulation holds the last state the file holds.
    with h5py.File(py_file, "r") as f:
        assert np.array_equal(sim.v, f["v"][-1])


def test_run_with_both_fields_and_noise(tmp_path, grayscott_bin):
    py_file, cli_file = tmp_path / "py.h5", tmp_path / "cli.h5"
    sim = gs.Simulation(rows=30, cols=31, init="noise", seed=42, backend="cpu")
    sim.run(images=3, steps_per_image=20, output=py_file, fields="u,v", quiet=True)
    run_cli(grayscott_bin, "run", "--rows", 30, "--cols", 31, "--init", "noise", "--seed", 42,
            "--images", 3, "--steps-per-image", 20, "--fields", "u,v", "--backend", "cpu", "-o",
            cli_file, "--quiet")
    assert_same_run_file(py_file, cli_file)


def test_run_refuses_to_replace_a_file_and_a_started_simulation(tmp_path):
    out = tmp_path / "out.h5"
    out.write_bytes(b"precious")
    sim = gs.Simulation(rows=16, cols=16, backend="cpu")
    with pytest.raises(FileExistsError, match="already exists \\(use overwrite=True to overwrite\\)"):
        sim.run(images=1, steps_per_image=1, output=out, quiet=True)
    assert out.read_bytes() == b"precious"
    sim.run(images=1, steps_per_image=1, output=out, overwrite=True, quiet=True)
    assert h5py.is_hdf5(out)
    with pytest.raises(ValueError, match="step 1"):
        sim.run(images=1, steps_per_image=1, output=tmp_path / "again.h5", quiet=True)


def test_progress_callable_sees_every_image(tmp_path):
    seen = []
    sim = gs.Simulation(rows=16, cols=16, backend="cpu")
    sim.run(images=4, steps_per_image=2, output=tmp_path / "p.h5", progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_an_error_in_the_progress_callable_stops_the_run_and_is_raised(tmp_path):
    def fail(done, total):
        if done == 2:
            raise RuntimeError("enough")

    sim = gs.Simulation(rows=16, cols=16, backend="cpu")
    with pytest.raises(RuntimeError, match="enough"):
        sim.run(images=50, steps_per_image=2, output=tmp_path / "e.h5", progress=fail)
    with h5py.File(tmp_path / "e.h5", "r") as f:
        assert f["v"].shape[0] >= 2  # the images written before the stop are kept
        # The cause in the file, not an interruption: the next image, with its checkpoint.
        assert f.attrs["status"] == "stopped after image 3: progress raised RuntimeError: enough"
    gs.Simulation.resume(tmp_path / "e.h5", quiet=True)
    gs.Simulation(rows=16, cols=16, backend="cpu").run(images=50, steps_per_image=2,
                                                       output=tmp_path / "whole.h5", quiet=True)
    with h5py.File(tmp_path / "e.h5") as a, h5py.File(tmp_path / "whole.h5") as b:
        assert a.attrs["status"] == "complete"
        assert np.array_equal(a["v"][...], b["v"][...])


SCRIPT = textwrap.dedent("""
    import sys, time, grayscott as gs
    sim = gs.Simulation(rows=512, cols=512, backend="cpu", threads=1)
    print("ready", flush=True)
    try:
        {body}
    except KeyboardInterrupt as e:
        print("interrupted", time.monotonic(), sim.step, flush=True)
        print("message", str(e).replace("\\n", " "), flush=True)
        {after}
        sys.exit(0)
    print("not interrupted", flush=True)
    sys.exit(1)
""")


def start_script(body, after="pass"):
    code = SCRIPT.format(body=body, after=after)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    return process


def ended_early(process, what):
    """Fails at once, with what the process said, when it has ended (a run refused, say for want
    of disk space) before `what` happened: waiting on would only time out."""
    if process.poll() is not None:
        out, err = process.communicate()
        raise AssertionError(f"the process ended (exit {process.returncode}) before {what}: "
                             f"{out or ''}{err or ''}")


def wait_for(path, process):
    """Until `path` exists (the process's run made its file), 30 s at most."""
    deadline = time.monotonic() + 30
    while not path.exists():
        ended_early(process, f"{path} was made")
        assert time.monotonic() < deadline, f"{path} was not made within 30 s"
        time.sleep(0.01)


def interrupt(process, after, within):
    """Ctrl-C to a started script `after` seconds: its KeyboardInterrupt must come `within`
    seconds; returns the line it printed ("interrupted TIME STEP")."""
    time.sleep(after)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0, out
    line = next(l for l in out.splitlines() if l.startswith("interrupted"))
    assert float(line.split()[1]) - sent < within, "KeyboardInterrupt came late"
    interrupt.message = next(l for l in out.splitlines() if l.startswith("message"))
    return line


def test_ctrl_c_interrupts_a_long_advance_quickly_with_a_consistent_state(tmp_path):
    state = tmp_path / "state.npy"
    process = start_script("sim.advance(10**9)",
                           after=f"import numpy; numpy.save({str(state)!r}, sim.v)")
    _, _, step = interrupt(process, after=1.0, within=0.2).split()
    step = int(step)
    assert step > 0
    # The state is that of step `step`: the same as a simulation advanced that far.
    again = gs.Simulation(rows=512, cols=512, backend="cpu")
    again.advance(step)
    assert np.array_equal(np.load(state), again.v)


def test_ctrl_c_stops_a_run_with_its_checkpoint_and_resume_finishes_it(tmp_path, grayscott_bin):
    out = tmp_path / "run.h5"
    process = start_script(
        f"sim.run(images=400, steps_per_image=40, output={str(out)!r}, quiet=True)")
    # Ctrl-C a moment after the run made its file: images written (the first takes milliseconds)
    # and far from its end (seconds), however busy the machine.
    wait_for(out, process)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    stdout, _ = process.communicate(timeout=60)
    assert process.returncode == 0, stdout
    message = next(l for l in stdout.splitlines() if l.startswith("message"))
    assert "interrupted by SIGINT after image" in message and "resume" in message
    with h5py.File(out, "r") as f:
        status = f.attrs["status"]
        status = status.decode() if isinstance(status, bytes) else status
        assert status.startswith("interrupted by SIGINT after image")
        kept = f["v"].shape[0]
    assert 0 < kept < 400
    sim = gs.Simulation.resume(out, backend="cpu", quiet=True)
    assert sim.step == 400 * 40
    reference = tmp_path / "reference.h5"
    run_cli(grayscott_bin, "run", "--rows", 512, "--cols", 512, "--images", 400,
            "--steps-per-image", 40, "--backend", "cpu", "-o", reference, "--quiet")
    with h5py.File(out, "r") as a, h5py.File(reference, "r") as b:
        assert np.array_equal(a["v"][...], b["v"][...])
        assert np.array_equal(a["step"][...], b["step"][...])
        assert a.attrs["status"] in ("complete", b"complete")
    with h5py.File(reference, "r") as b:
        assert np.array_equal(sim.v, b["v"][-1])


def test_resume_of_a_complete_run_says_there_is_nothing_to_do(tmp_path):
    out = tmp_path / "done.h5"
    gs.Simulation(rows=8, cols=8, backend="cpu").run(images=1, steps_per_image=1, output=out,
                                                      quiet=True)
    with pytest.raises(ValueError, match="nothing to resume"):
        gs.Simulation.resume(out)


def wait_for_images(path, count, process, timeout=60):
    """Until the process's run file `path` holds `count` images."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ended_early(process, f"{path} held {count} images")
        try:
            with h5py.File(path, "r", swmr=True) as f:
                if f["step"].shape[0] >= count:
                    return
        except (OSError, KeyError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"{path} did not reach {count} images")


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_a_file_another_process_is_writing_is_not_continued(tmp_path, grayscott_bin, kind):
    out = tmp_path / "busy.h5"
    shape = ["--rows", "96", "--cols", "96", "--images", "4000", "--steps-per-image", "200",
             "--backend", "cpu", "--threads", "1", "--quiet", "-o", str(out)]
    members = ["--feed", "0.02,0.03", "--kill", "0.06"] if kind == "sweep" else []
    writer = subprocess.Popen([grayscott_bin, kind, *shape, *members])
    try:
        wait_for_images(out, 1, writer)
        refusal = (f"{out} is being written by process {writer.pid} on this machine: continue it "
                   f"once that process has ended")
        done = subprocess.run([grayscott_bin, kind, "--resume", str(out)], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode != 0
        assert done.stderr.strip().splitlines()[-1].endswith(refusal), done.stderr
        if kind == "run":
            with pytest.raises(ValueError) as refused:
                gs.Simulation.resume(out, quiet=True)
            assert str(refused.value) == refusal
        # Nor replaced: its writer would go on into a file that is gone.
        done = subprocess.run([grayscott_bin, kind, *shape[:-2], *members, "--force", "-o",
                               str(out)], capture_output=True, text=True, timeout=60)
        assert done.returncode != 0
        assert done.stderr.strip().endswith(refusal.replace("continue it", "replace it")), \
            done.stderr
        assert writer.poll() is None  # the writer went on undisturbed
        writer.send_signal(signal.SIGTERM)
        writer.wait(timeout=60)
        with h5py.File(out, "r") as f:
            assert f.attrs["status"].startswith("interrupted by SIGTERM after image")
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()


@pytest.mark.parametrize("what", ["pictures", "video"])
def test_ctrl_c_stops_render_and_video_between_frames_without_a_partial_file(tmp_path, what):
    source = tmp_path / "many.h5"
    gs.Simulation(rows=512, cols=512, backend="cpu").run(images=300, steps_per_image=1,
                                                         output=source, quiet=True)
    call = (f"gs.render({str(source)!r}, out={str(tmp_path / 'pics')!r}, scale=4)"
            if what == "pictures" else
            f"gs.video({str(source)!r}, {str(tmp_path / 'many.mp4')!r}, scale=2)")
    interrupt(start_script(call), after=1.5, within=1.0)
    # The KeyboardInterrupt says what was done, as the command line does.
    said = (r"render stopped after \d+ pictures? into .*pics" if what == "pictures" else
            r"video stopped after \d+ of 300 frames; .*many.mp4 was not written")
    assert re.search(said, interrupt.message), interrupt.message
    left = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert not [name for name in left if "partial" in name], left
    if what == "pictures":
        assert 0 < len(list((tmp_path / "pics").glob("v_*.png"))) < 300
    else:
        assert not (tmp_path / "many.mp4").exists()


def test_ctrl_c_after_a_sweeps_progress_raised_is_not_a_second_ctrl_c(tmp_path):
    # The progress callback's error stops the sweep at the next image; a Ctrl-C meanwhile is the
    # first one (the run is stopping already), not the second that exits the process at once.
    out = tmp_path / "stopping.h5"
    code = textwrap.dedent(f"""
        import grayscott as gs
        def progress(done, total):
            print("raised", flush=True)
            raise ValueError("enough")
        gs.sweep({str(out)!r}, feed=[0.03], kill=[0.06], rows=512, cols=512, images=50,
                 steps_per_image=1500, backend="cpu", threads=1, progress=progress)
    """)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "raised"
    time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1 and "ValueError: enough" in stderr, (process.returncode, stderr)
    with h5py.File(out, "r") as f:
        assert f.attrs["status"].startswith("stopped after image ")
        assert f.attrs["status"].endswith(": progress raised ValueError: enough")


def test_ctrl_c_during_a_run_with_a_callback_stops_it_quickly(tmp_path):
    out = tmp_path / "watched.h5"
    # 200 steps an image: images the disk keeps up with. At 40, AVX2's faster stepping made 1 MB
    # images faster than a VM's disk took them, and the stop's flush to disk waited for the
    # backlog (0.21-0.24 s), which is the disk's time, not the stopping's this test measures.
    process = start_script(
        f"sim.run(images=400, steps_per_image=200, output={str(out)!r}, quiet=True, "
        f"on_image=lambda index, step, time, image: image.mean())")
    interrupt(process, after=1.5, within=0.2)
    with h5py.File(out, "r") as f:
        assert f.attrs["status"].startswith("interrupted by SIGINT after image")


# The run takes Ctrl-C itself while it runs (Python hears of a signal only when the run calls
# into it, an image later), and passes it on to Python. Ctrl-C a second into the first image:
# - images of seconds: the run stops after it, as on the command line; with a callback too, in
#   a script that imported no NumPy (the first image's array would import it then, and the
#   Ctrl-C interrupted that import: a TypeError);
# - a callback that blocks (a sleep, input(), a plot's pause) is interrupted as without the run;
# - a Ctrl-C during the last image, too late to stop the run, still reaches the script.
@pytest.mark.parametrize("run, then, within, status", [
    ("images=3, steps_per_image=30000", "", 30, "interrupted by SIGINT after image 1"),
    ("images=3, steps_per_image=30000, on_image=lambda *a: None", "", 30,
     "interrupted by SIGINT after image 1"),
    ("images=3, steps_per_image=5, on_image=lambda *a: time.sleep(60)", "", 5,
     "interrupted by SIGINT after image 1"),
    ("images=1, steps_per_image=30000", "; time.sleep(60)", 40, "complete"),
], ids=["slow images", "slow images, a callback", "a callback that blocks", "the last image"])
def test_ctrl_c_stops_a_run_after_the_image_in_progress(tmp_path, run, then, within, status):
    out = tmp_path / "slow.h5"
    process = start_script(f"sim.run({run}, output={str(out)!r}, quiet=True){then}")
    wait_for(out, process)
    interrupt(process, after=1.0, within=within)
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] == status


# A state written into sim.u / sim.v before run(): the run starts from it, and its file says so
# and stores it, so that a run killed before its first checkpoint continues from it too.
CUSTOM_START = textwrap.dedent("""
    import os, signal, sys
    import grayscott as gs
    sim = gs.Simulation(rows=40, cols=56, boundary="periodic", backend="cpu")
    sim.v[5:15, 40:50] = 0.8
    sim.u[5:15, 40:50] = 0.3
    def die(index, step, time, image):
        if index == 3 and sys.argv[2] == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
    sim.run(images=6, steps_per_image=25, output=sys.argv[1], quiet=True, checkpoint_every=1000,
            on_image=die)
""")


def custom_start_file(tmp_path, name, how):
    script = tmp_path / "custom_start.py"
    script.write_text(CUSTOM_START)
    path = tmp_path / name
    done = subprocess.run([sys.executable, str(script), str(path), how], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == (-signal.SIGKILL if how == "kill" else 0), done.stderr
    return path


def test_a_state_written_before_run_is_recorded_as_custom_and_stored(tmp_path, grayscott_bin):
    full = custom_start_file(tmp_path, "full.h5", "whole")
    by_hand = gs.Simulation(rows=40, cols=56, boundary="periodic", backend="cpu")
    by_hand.v[5:15, 40:50] = 0.8
    by_hand.u[5:15, 40:50] = 0.3
    u0, v0 = by_hand.u.copy(), by_hand.v.copy()
    with h5py.File(full, "r") as f:
        assert f.attrs["init"] == "custom" and "init_values" not in f.attrs
        assert f["initial_state"].attrs["status"] == "written"
        assert np.array_equal(f["initial_state"][0], u0)
        assert np.array_equal(f["initial_state"][1], v0)
        images = f["v"][...]
    xr = pytest.importorskip("xarray")
    with xr.open_dataset(full, engine="h5netcdf", drop_variables="matrix") as ds:
        assert ds["initial_state"].dims == ("initial_field", "y", "x")  # every axis named
    assert gs.open(full)["v"].shape == images.shape
    # Its images are the steps from that state.
    for image in images:
        by_hand.advance(25)
        assert np.array_equal(by_hand.v, image)
    info = run_cli(grayscott_bin, "info", full).stdout
    assert "initial state: custom" in info
    # A simulation left as it was made records its own start, and stores nothing.
    plain = tmp_path / "plain.h5"
    gs.Simulation(rows=8, cols=8, backend="cpu").run(images=1, steps_per_image=1, output=plain,
                                                      quiet=True)
    with h5py.File(plain, "r") as f:
        assert f.attrs["init"] == "rectangle" and "initial_state" not in f


def test_a_custom_start_killed_before_its_first_checkpoint_continues_from_it(tmp_path,
                                                                             grayscott_bin):
    full = custom_start_file(tmp_path, "full.h5", "whole")
    for how in ("command line", "python"):
        killed = custom_start_file(tmp_path, f"killed {how}.h5", "kill")
        run_cli(grayscott_bin, "repair", killed)
        with h5py.File(killed, "r") as f:
            assert f["checkpoint/images"][...].max() == 0  # nothing to continue from but the start
        if how == "command line":
            run_cli(grayscott_bin, "run", "--resume", killed, "--quiet")
        else:
            sim = gs.Simulation.resume(killed, backend="cpu", quiet=True)
            assert sim.init == ("custom", 0)
            sim.reset()  # the start the file stores
            with h5py.File(full, "r") as f:
                assert np.array_equal(sim.v, f["initial_state"][1])
        assert_same_run_file(killed, full)


def test_a_custom_start_that_was_never_stored_is_not_continued(tmp_path, grayscott_bin):
    killed = custom_start_file(tmp_path, "killed.h5", "kill")
    run_cli(grayscott_bin, "repair", killed)
    with h5py.File(killed, "r+") as f:
        f["initial_state"].attrs["status"] = "being written"  # killed while storing it
    # Repair still makes it readable (its .xmf written again); only continuing it is refused.
    run_cli(grayscott_bin, "repair", killed)
    done = subprocess.run([grayscott_bin, "run", "--resume", str(killed)], capture_output=True,
                          text=True)
    assert done.returncode == 2
    assert "stopped before its custom initial state was stored" in done.stderr
    with pytest.raises(ValueError, match="stopped before its custom initial state was stored"):
        gs.Simulation.resume(killed)


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGUSR2"])
def test_a_batch_systems_signal_stops_a_python_run_at_an_image_with_its_checkpoint(tmp_path, name):
    # Left to its default action it ended the process mid-write ("running", no checkpoint):
    # the run stops at an image boundary, records the signal, and the process then ends by it.
    out = tmp_path / "run.h5"
    process = start_script(
        f"sim.run(images=2000, steps_per_image=20, output={str(out)!r}, quiet=True)")
    wait_for_images(out, 2, process)
    process.send_signal(getattr(signal, name))
    process.communicate(timeout=60)
    assert process.returncode == -getattr(signal, name)
    with h5py.File(out, "r") as f:
        status = f.attrs["status"]
        assert status.startswith(f"interrupted by {name} after image "), status
        kept = f["step"].shape[0]
        assert f["checkpoint/images"][...].max() == kept > 0


def test_a_render_inside_a_runs_callback_leaves_the_stop_signals_working(tmp_path):
    # The render's signal handling, made while the run's lives, must leave the run's alone: a
    # later run still stops on SIGTERM at an image (the handlers were once lost this way).
    first, second = tmp_path / "first.h5", tmp_path / "second.h5"
    pictures = tmp_path / "pictures"
    process = start_script(
        f"sim.run(images=2, steps_per_image=5, output={str(first)!r}, quiet=True, "
        f"on_image=lambda i, s, t, image: gs.render({str(first)!r}, out={str(pictures)!r}, "
        f"overwrite=True) if i == 1 else None)\n"
        f"    sim.reset()\n"
        f"    sim.run(images=2000, steps_per_image=20, output={str(second)!r}, quiet=True)")
    wait_for_images(second, 2, process)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGTERM
    with h5py.File(second, "r") as f:
        assert f.attrs["status"].startswith("interrupted by SIGTERM after image ")


def test_a_stopped_sweep_is_continued_from_python_bitwise(tmp_path):
    from grayscott import _core

    sweep = dict(feed=[0.03, 0.04], kill=[0.06], rows=24, cols=24, images=6, steps_per_image=20,
                 init="noise", seeds=[1], backend="cpu", quiet=True)
    gs.sweep(tmp_path / "whole.h5", **sweep)

    def enough(done, total):
        if done >= 4:
            raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        gs.sweep(tmp_path / "stopped.h5", **sweep, checkpoint_every=1, progress=enough)
    summary = gs.resume_sweep(tmp_path / "stopped.h5", quiet=True, threads=1)
    assert summary["status"] == "complete"
    with h5py.File(tmp_path / "whole.h5", "r") as a, h5py.File(tmp_path / "stopped.h5", "r") as b:
        assert np.array_equal(a["v"][...], b["v"][...])
        assert b.attrs["status"] == "complete"
    with pytest.raises(ValueError, match="nothing to resume"):
        gs.resume_sweep(tmp_path / "whole.h5")
    with pytest.raises(TypeError, match="feed"):
        gs.resume_sweep(tmp_path / "whole.h5", feed=0.03)
    # What a stopped sweep says names the Python call that continues it.
    assert (_core._python_words("continue with: grayscott sweep --resume s.h5")
            == "continue with: grayscott.resume_sweep('s.h5')")
    # A run that was to draw its pictures names its folder; a command named without a file reads
    # as a call with its argument.
    assert (_core._python_words("continue with: grayscott run --resume r.h5 --render pics")
            == "continue with: grayscott.Simulation.resume('r.h5', render='pics')")
    assert (_core._python_words("continue with: grayscott run --resume r.h5 --render pics --force")
            == "continue with: grayscott.Simulation.resume('r.h5', render='pics', overwrite=True)")
    gs.Simulation(rows=16, cols=16, backend="cpu").run(images=1, output=tmp_path / "run.h5",
                                                       quiet=True)
    with pytest.raises(ValueError, match=r"is not a sweep file \(a run continues with "
                                         r"grayscott\.Simulation\.resume\(path\)\)$"):
        gs.resume_sweep(tmp_path / "run.h5")
    with pytest.raises(ValueError, match=r"is a sweep file: continue it with "
                                         r"grayscott\.resume_sweep\(path\)$"):
        gs.Simulation.resume(tmp_path / "whole.h5")


def test_a_sweep_stopped_by_ctrl_c_names_the_python_call_that_continues_it(tmp_path):
    out = tmp_path / "stopped.h5"
    code = textwrap.dedent(f"""
        import os, signal
        import grayscott as gs
        def progress(done, total):
            if done == 1:
                os.kill(os.getpid(), signal.SIGINT)
        try:
            gs.sweep({str(out)!r}, feed=[0.03], kill=[0.06], rows=64, cols=64, images=400,
                     steps_per_image=200, backend="cpu", threads=1, progress=progress)
        except KeyboardInterrupt as stopped:
            print("stopped:", stopped)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert f"continue with: grayscott.resume_sweep('{out}')" in done.stdout, (done.stdout,
                                                                             done.stderr)
