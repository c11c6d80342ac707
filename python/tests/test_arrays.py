"""The state is seen without copies: views of the engine's memory that a write goes through."""

import gc
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import grayscott as gs
from conftest import reference_step


def test_view_is_the_engines_memory_not_a_copy():
    sim = gs.Simulation(rows=40, cols=50, backend="cpu")
    a, b = sim.v, sim.v
    assert isinstance(a, np.ndarray) and a.shape == (40, 50) and a.dtype == np.float32
    # Two accesses with no advance between them view the same memory.
    assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    assert not a.flags.owndata
    a[3, 4] = 0.25
    assert b[3, 4] == np.float32(0.25)
    # The engine's own copy path (capture, read back) sees the write: the view is its state.
    assert sim._copy_field("v")[3, 4] == np.float32(0.25)


def test_a_write_through_the_view_is_where_the_next_step_starts():
    sim = gs.Simulation(rows=24, cols=30, backend="cpu", precision="double")
    sim.v[10:20, 10:20] = 0.5
    sim.u[2:5, 20:28] = 0.3
    u0, v0 = sim.u.copy(), sim.v.copy()
    sim.advance(1)
    u1, v1 = reference_step(u0, v0)
    np.testing.assert_allclose(sim.u, u1, rtol=0, atol=1e-14)
    np.testing.assert_allclose(sim.v, v1, rtol=0, atol=1e-14)


def test_initial_state_is_the_rectangle():
    sim = gs.Simulation(rows=100, cols=100, backend="cpu")
    v, u = sim.v, sim.u
    assert set(np.unique(v)) == {0.0, 1.0} and set(np.unique(u)) == {0.0, 1.0}
    assert np.array_equal(u, 1 - v)
    assert 0 < v.sum() < v.size


def test_step_time_and_reset():
    sim = gs.Simulation(rows=16, cols=16, dt=0.5, backend="cpu")
    first = sim.v.copy()
    sim.advance(7)
    assert sim.step == 7 and sim.time == 3.5
    assert not np.array_equal(sim.v, first)
    sim.reset()
    assert sim.step == 0 and np.array_equal(sim.v, first)


def test_advance_in_pieces_is_bitwise_one_advance():
    one = gs.Simulation(rows=64, cols=80, backend="cpu")
    one.advance(100)
    pieces = gs.Simulation(rows=64, cols=80, backend="cpu")
    for n in (1, 2, 30, 67):
        pieces.advance(n)
    assert pieces.step == one.step == 100
    assert np.array_equal(one.v, pieces.v) and np.array_equal(one.u, pieces.u)


def test_sweep_arrays_have_a_member_axis_and_are_views():
    sweep = gs.Sweep(feed=[0.02, 0.03], kill=[0.05, 0.06, 0.062], seeds=[1, 2], rows=20, cols=24,
                     backend="cpu")
    assert len(sweep) == 12
    v = sweep.v
    assert v.shape == (12, 20, 24) and not v.flags.owndata
    assert sweep.members[0] == (0.02, 0.05, 1) and sweep.members[1] == (0.02, 0.06, 1)
    assert sweep.members[6] == (0.02, 0.05, 2)
    v[5, 0, 0] = 0.75
    assert sweep._copy_field("v")[5, 0, 0] == np.float32(0.75)


def test_sweep_members_equal_single_runs():
    feeds, kills, seeds = [0.022, 0.035], [0.051, 0.06], [3, 9]
    sweep = gs.Sweep(feed=feeds, kill=kills, seeds=seeds, rows=32, cols=40, backend="cpu")
    sweep.advance(150)
    for m, (feed, kill, seed) in enumerate(sweep.members):
        alone = gs.Simulation(rows=32, cols=40, feed=feed, kill=kill, init="noise", seed=seed,
                              backend="cpu")
        alone.advance(150)
        assert np.array_equal(sweep.v[m], alone.v), m
        assert np.array_equal(sweep.u[m], alone.u), m


def test_a_view_outlives_its_simulation():
    sim = gs.Simulation(rows=30, cols=30, backend="cpu")
    sim.advance(10)
    view = sim.v
    expected = view.copy()
    del sim
    gc.collect()
    # The view holds the simulation, hence the engine's memory: reading it is safe and unchanged.
    assert np.array_equal(view, expected)
    view[0, 0] = 0.5
    assert view[0, 0] == np.float32(0.5)


def test_a_sweeps_shape_and_parameters_are_its_members():
    sweep = gs.Sweep(feed=[0.02, 0.03], kill=[0.05, 0.06], rows=16, cols=12, backend="cpu")
    assert sweep.shape == sweep.v.shape == (4, 16, 12)
    assert sweep.parameters["feed"] == [feed for feed, _, _ in sweep.members] == [0.02, 0.02, 0.03,
                                                                                  0.03]
    assert sweep.parameters["kill"] == [0.05, 0.06, 0.05, 0.06]
    assert sweep.parameters["rows"] == 16 and sweep.parameters["cols"] == 12
    volume = gs.Sweep(feed=[0.02, 0.03], rows=8, cols=6, depth=4, backend="cpu")
    assert volume.shape == volume.v.shape == (2, 4, 8, 6)


def test_a_view_outlives_its_sweep():
    sweep = gs.Sweep(feed=[0.02, 0.03], rows=16, cols=16, backend="cpu")
    assert repr(sweep).startswith("Sweep(2 members of 16x16")
    assert repr(gs.Sweep(feed=[0.02], rows=16, cols=16)).startswith("Sweep(1 member of 16x16")
    view = sweep.u
    expected = view.copy()
    del sweep
    gc.collect()
    assert np.array_equal(view, expected)


def test_one_simulation_from_several_threads_one_at_a_time():
    shared = gs.Simulation(rows=48, cols=48, backend="cpu")
    threads = [threading.Thread(target=shared.advance, args=(25,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    alone = gs.Simulation(rows=48, cols=48, backend="cpu")
    alone.advance(100)
    assert shared.step == 100
    assert np.array_equal(shared.v, alone.v)


_DAEMON_WORK = {
    "run": ["gs.Simulation(rows=64, cols=64, backend='cpu').run(images=10**5, steps_per_image=64, "
            "output=OUT + '0.h5', quiet=True, on_image=lambda *a: started.set())"],
    "sweep": ["gs.sweep(feed=[0.02, 0.03], kill=[0.06], rows=64, cols=64, images=10**5, "
              "steps_per_image=64, output=OUT + '0.h5', quiet=True, "
              "progress=lambda *a: started.set())"],
    # Two threads: runs take turns (HDF5), so the second waits for the first, which stops at the
    # exit; the second then starts no more.
    "two runs": [f"gs.Simulation(rows=64, cols=64, backend='cpu', threads=1).run(images=10**5, "
                 f"steps_per_image=64, output=OUT + '{i}.h5', quiet=True, "
                 f"on_image=lambda *a: started.set())" for i in range(2)],
    # Runs one after another: once the interpreter exits, none starts.
    "runs in a loop": ["[gs.Simulation(rows=64, cols=64, backend='cpu').run(images=10**5, "
                       "steps_per_image=64, output=OUT + '0.h5', overwrite=True, quiet=True, "
                       "on_image=lambda *a: started.set()) for _ in iter(int, 1)]"],
    "advance": ["(started.set(), gs.Simulation(rows=256, cols=256, backend='cpu').advance(2**40))"],
    # Calls again and again, each refused once the exit has begun: none may abort the process.
    "advance in a loop": ["[(started.set(), _try(lambda: SIM.advance(1000)), _try(SIM.stats), "
                          "_try(lambda: SIM.v.sum())) for _ in iter(int, 1)]"],
}


@pytest.mark.parametrize("work", list(_DAEMON_WORK))
def test_work_in_a_daemon_thread_stops_at_an_image_when_the_interpreter_exits(tmp_path, work):
    # The interpreter ends daemon threads at its exit; one ended inside the engine aborted the
    # process ("terminate called without an active exception", exit 134) and left the file
    # "running". It stops at an image instead, the file continuable, the process's exit its own.
    import subprocess
    import sys

    import h5py

    output = str(tmp_path / "daemon")
    threads = "".join(f"threading.Thread(target=lambda: {w}, daemon=True).start()\n"
                      for w in _DAEMON_WORK[work])
    script = ("import threading, grayscott as gs\n"
              f"OUT = {output!r}\n"
              "started = threading.Event()\n"
              "SIM = gs.Simulation(rows=64, cols=64, backend='cpu', threads=1)\n"
              "def _try(call):\n"
              "    try:\n"
              "        call()\n"
              "    except RuntimeError:\n"
              "        pass\n"
              f"{threads}"
              "assert started.wait(60)\n")
    # An abort at the exit comes and goes with the moment the exit finds the thread in: thrice.
    for _ in range(3 if work == "advance in a loop" else 1):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0 and "terminate" not in done.stderr, done.stderr
    import os

    files = work not in ("advance", "advance in a loop")
    written = [f"{output}{i}.h5" for i in range(len(_DAEMON_WORK[work]) if files else 0)
               if os.path.exists(f"{output}{i}.h5")]
    assert len(written) == (1 if files else 0), written
    for path in written:
        with h5py.File(path, "r") as f:  # no swmr: closed as a stopped file is
            status = f.attrs["status"]
        assert "the Python interpreter exited while it ran" in status, (path, status)


def test_an_exit_handler_registered_before_the_import_still_runs(tmp_path):
    # Exit handlers run last registered first: one registered before `import grayscott` runs
    # after the package's, which stops other threads' work; its own work goes on.
    import subprocess
    import sys

    import h5py

    output = tmp_path / "at-exit.h5"
    script = ("import atexit\n"
              "def last():\n"
              "    import grayscott as gs\n"
              "    gs.Simulation(rows=32, cols=32, backend='cpu').advance(10)\n"
              f"    gs.Simulation(rows=32, cols=32, backend='cpu').run(images=3, steps_per_image=5, "
              f"output={str(output)!r}, quiet=True)\n"
              "atexit.register(last)\n"
              "import grayscott\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    with h5py.File(output, "r") as f:
        assert f.attrs["status"] == "complete" and f["v"].shape[0] == 3


@pytest.mark.parametrize("registered", ["before the import", "after the import"])
@pytest.mark.parametrize("daemon", ["advance", "run"])
def test_an_exit_handler_steps_the_simulation_a_daemon_thread_was_stepping(tmp_path, registered,
                                                                           daemon):
    # The handler waited for ever for the daemon's turn on the simulation: registered after the
    # import it runs before the package's handler, which stops the daemon's work (the wait now
    # begins that stop); registered before, the stopped advance was held on its way out with the
    # simulation in hand.
    work = {"advance": "SIM.advance(10**7)",
            "run": f"SIM.run(images=10**5, steps_per_image=50, output={str(tmp_path / 'd.h5')!r}, "
                   "quiet=True)"}[daemon]
    register = ("atexit.register(lambda: (SIM.advance(3), print('handler stepped', flush=True)))"
                "\n")
    script = ("import atexit, threading, time\n" +
              (register if registered == "before the import" else "") +
              "import grayscott as gs\n"
              "SIM = gs.Simulation(rows=128, cols=128, backend='cpu', threads=1)\n" +
              (register if registered == "after the import" else "") +
              f"threading.Thread(target=lambda: {work}, daemon=True).start()\n"
              "time.sleep(0.5)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout == "handler stepped\n", done.stderr[-2000:]


def test_the_exits_later_handlers_run_though_a_held_thread_had_the_turn(tmp_path):
    # A thread that took the turn for a run and was held at its next call into the module (the
    # exit began in between) never gives it back: the exit's later handlers take turns anew.
    output = tmp_path / "after-exit.h5"
    script = textwrap.dedent(f"""
        import atexit, threading, time
        def last():
            import grayscott as gs
            gs.Simulation(rows=16, cols=16, backend="cpu").run(images=2, steps_per_image=5,
                                                               output={str(output)!r}, quiet=True)
        atexit.register(last)
        import grayscott as gs
        holding = threading.Event()
        def take_the_turn_and_keep_it():
            with gs._FILE_WORK:
                holding.set()
                time.sleep(600)
        threading.Thread(target=take_the_turn_and_keep_it, daemon=True).start()
        holding.wait(60)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert output.exists()


def test_a_child_forked_while_a_run_goes_on_is_told_not_to_run(tmp_path):
    # The child inherits the turn held by the parent's running thread, which it would wait for
    # for ever, and an HDF5 library perhaps in the middle of a write: it is refused at once,
    # naming the remedy. A child forked between runs runs.
    import os

    started, done = threading.Event(), threading.Event()
    runner = threading.Thread(target=lambda: gs.Simulation(rows=64, cols=64, backend="cpu").run(
        images=200, steps_per_image=50, output=tmp_path / "parent.h5", quiet=True,
        on_image=lambda *a: (started.set(), done.wait(60))))
    runner.start()
    assert started.wait(60)
    def fork_a_run(refused):
        """A child that runs; its exit status 0 where it is `refused` as a fork during a run
        (or, not, where its run completes)."""
        child = os.fork()
        if child == 0:
            code = 1
            try:
                gs.Simulation(rows=16, cols=16, backend="cpu", threads=1).run(
                    images=2, steps_per_image=5, output=tmp_path / "child.h5", quiet=True)
                code = 2 if refused else 0
            except RuntimeError as error:
                code = 0 if refused and "forked while its parent ran" in str(error) else 3
            finally:
                os._exit(code)
        return child

    child = fork_a_run(refused=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        finished, status = os.waitpid(child, os.WNOHANG)
        if finished:
            break
        time.sleep(0.05)
    else:
        os.kill(child, 9)
        os.waitpid(child, 0)
        status = -1
    done.set()
    runner.join(120)
    assert status == 0, f"the forked child was not refused at once ({status})"
    assert os.waitpid(fork_a_run(refused=False), 0)[1] == 0, "a child forked between runs did not run"


def test_a_child_forked_while_another_thread_steps_exits_at_once():
    # The child holds only the thread that forked: the work of the parent's other threads is not
    # its own, and its exit does not wait for it (a minute, then a message about a file).
    script = textwrap.dedent("""
        import os, sys, threading, time
        import grayscott as gs
        sim = gs.Simulation(rows=64, cols=64, backend="cpu", threads=1)
        stepping = threading.Thread(target=lambda: [sim.advance(2000) for _ in range(10**6)],
                                    daemon=True)
        stepping.start()
        time.sleep(0.5)
        child = os.fork()
        if child == 0:
            sys.exit(0)
        start = time.monotonic()
        _, status = os.waitpid(child, 0)
        print("child", os.waitstatus_to_exitcode(status), round(time.monotonic() - start, 1))
        os._exit(0)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    _, code, seconds = done.stdout.split()
    assert code == "0" and float(seconds) < 10 and "did not reach" not in done.stderr, done


def test_runs_sweeps_and_renderings_in_several_threads_take_turns(tmp_path):
    # The HDF5 library is not thread-safe: two files written at once from two threads corrupted
    # its caches ("ring type mismatch", a segmentation fault). They take turns, each file the
    # one a run alone writes.
    import h5py

    jobs = [lambda i=i: gs.Simulation(rows=48, cols=48, backend="cpu", threads=1).run(
                images=20, steps_per_image=20, output=tmp_path / f"t{i}.h5", quiet=True)
            for i in range(3)]
    jobs.append(lambda: gs.sweep(feed=[0.02, 0.03], kill=[0.06], rows=32, cols=32, images=10,
                                 steps_per_image=20, output=tmp_path / "s.h5", quiet=True))
    errors = []

    def attempt(job):
        try:
            job()
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=attempt, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    gs.Simulation(rows=48, cols=48, backend="cpu").run(images=20, steps_per_image=20,
                                                       output=tmp_path / "alone.h5", quiet=True)
    with h5py.File(tmp_path / "alone.h5", "r") as alone:
        for i in range(3):
            with h5py.File(tmp_path / f"t{i}.h5", "r") as f:
                assert f.attrs["status"] == "complete"
                assert np.array_equal(f["v"][...], alone["v"][...]), i


def test_a_second_thread_waits_for_a_run_to_end_then_steps_from_where_it_left(tmp_path):
    sim = gs.Simulation(rows=48, cols=48, backend="cpu", threads=1)
    started = threading.Event()

    def slow_image(index, step, time_, image):
        started.set()
        time.sleep(0.05)

    runner = threading.Thread(target=sim.run, kwargs=dict(
        images=6, steps_per_image=5, output=tmp_path / "t.h5", quiet=True, on_image=slow_image))
    runner.start()
    assert started.wait(60)
    sim.advance(3)  # waits (without the GIL, which the run's callbacks need) for the run to end
    runner.join()
    alone = gs.Simulation(rows=48, cols=48, backend="cpu")
    alone.advance(33)
    assert sim.step == 33
    assert np.array_equal(sim.v, alone.v)


def test_numpy_asarray_always_works():
    sim = gs.Simulation(rows=8, cols=8, backend="cpu")
    assert np.asarray(sim.v).shape == (8, 8)
    assert np.asarray(sim.v, dtype=np.float64).dtype == np.float64
