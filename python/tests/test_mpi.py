"""Same script, bigger machine: under `mpirun -n P python script.py`, Simulation(comm=MPI.COMM_WORLD)
splits one grid over the P ranks with the distributed engine of `grayscott run`; run() writes one
file, bitwise the one-process run's; sim.v is the rank's block, and a gather gives the whole grid
of one process. Real mpirun, P = 1..4."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import grayscott as gs
from grayscott import _core
from test_run import assert_same_run_file

SCRIPT = textwrap.dedent("""
    import json
    import sys
    import numpy as np
    from mpi4py import MPI
    import grayscott as gs

    comm = MPI.COMM_WORLD
    output, gathered, precision, boundary = sys.argv[1:5]
    tuning = json.loads(sys.argv[5])  # the exchanges' options, if any
    sim = gs.Simulation(rows=45, cols=62, feed=0.03, kill=0.06, init="noise", seed=5,
                        precision=precision, boundary=boundary, backend="cpu", threads=1,
                        comm=comm, **tuning)
    v = sim.v
    sim.advance(37)
    assert np.array_equal(v, sim.v)  # the view stays current under MPI too
    blocks = comm.gather((sim.block, np.array(sim.v)), root=0)
    if comm.rank == 0:
        whole = np.full((45, 62), np.nan, dtype=np.array(sim.v).dtype)
        for where, values in blocks:
            whole[where] = values
        np.save(gathered, whole)
    sim.reset()
    # Tuned, the run says what it used (its decomposition, halo depth, writes).
    summary = sim.run(images=4, steps_per_image=9, output=output, quiet=not tuning)
    assert summary["status"] == "complete", summary
    assert sim.step == 36
""")


def mpirun():
    program = shutil.which("mpirun") or shutil.which("mpiexec")
    if program is None:
        pytest.fail("no mpirun: install Debian's openmpi-bin (scripts/setup does)")
    if not _core._has_mpi:
        pytest.fail("the module was built without MPI (pip install . finds Open MPI and a parallel "
                    "HDF5: Debian's libopenmpi-dev libhdf5-openmpi-dev)")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.fail("no mpi4py: install Debian's python3-mpi4py (scripts/setup does)")
    return program


def mpi_environment():
    """Open MPI allowed to run as root, and one thread per rank (the ranks share the cores)."""
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMP_NUM_THREADS="1")


def run_over_ranks_and_compare(tmp_path, ranks, precision, boundary, tuning=None):
    """SCRIPT on `ranks` ranks: its gathered state and its file equal to one process's, bitwise.
    Returns what the ranks said (stderr)."""
    launcher = mpirun()
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    done = subprocess.run([launcher, "-n", str(ranks), "--oversubscribe", sys.executable,
                           str(script), str(tmp_path / "ranks.h5"), str(tmp_path / "whole.npy"),
                           precision, boundary, json.dumps(tuning or {})], capture_output=True,
                          text=True, timeout=300, env=mpi_environment())
    assert done.returncode == 0, done.stderr[-3000:]

    alone = gs.Simulation(rows=45, cols=62, feed=0.03, kill=0.06, init="noise", seed=5,
                          precision=precision, boundary=boundary, backend="cpu", threads=1)
    alone.advance(37)
    assert np.array_equal(np.load(tmp_path / "whole.npy"), alone.v)
    alone.reset()
    alone.run(images=4, steps_per_image=9, output=tmp_path / "alone.h5", quiet=True)
    assert_same_run_file(tmp_path / "ranks.h5", tmp_path / "alone.h5")
    return done.stderr


def what_each_rank_said(tmp_path, body, ranks=2):
    """Runs `body` on `ranks` ranks, after `from mpi4py import MPI` and `import grayscott as gs`;
    it sets `said` ("nothing said" if it does not). Returns what each rank said, in rank order:
    each writes a file of its own (mpirun interleaves the ranks' output)."""
    launcher = mpirun()
    script = tmp_path / "script.py"
    script.write_text("from mpi4py import MPI\nimport grayscott as gs\nsaid = 'nothing said'\n" +
                      textwrap.dedent(body) +
                      f"\nwith open(f'{tmp_path}/rank{{MPI.COMM_WORLD.rank}}.txt', 'w') as out:\n"
                      "    out.write(said)\n")
    done = subprocess.run([launcher, "-n", str(ranks), "--oversubscribe", sys.executable,
                           str(script)], capture_output=True, text=True, timeout=300,
                          env=mpi_environment())
    assert done.returncode == 0, done.stderr[-3000:]
    return [(tmp_path / f"rank{rank}.txt").read_text() for rank in range(ranks)]


@pytest.mark.parametrize("ranks, precision, boundary", [
    (1, "single", "zero-flux"), (2, "single", "periodic"), (3, "double", "fixed"),
    (4, "single", "zero-flux"),
])
def test_the_same_script_on_more_ranks_writes_the_same_file(tmp_path, ranks, precision, boundary):
    run_over_ranks_and_compare(tmp_path, ranks, precision, boundary)


def test_a_communicator_that_is_not_the_world_is_refused():
    mpi4py = pytest.importorskip("mpi4py.MPI")
    with pytest.raises(TypeError, match="comm: expected an mpi4py communicator"):
        gs.Simulation(rows=8, cols=8, comm="world")
    # Alone, COMM_WORLD has one rank: the simulation is the one-process one.
    sim = gs.Simulation(rows=8, cols=8, comm=mpi4py.COMM_WORLD)
    assert sim.block == (slice(0, 8), slice(0, 8))
    volume = gs.Simulation(depth=3, rows=8, cols=5, comm=mpi4py.COMM_WORLD)
    assert volume.block == (slice(0, 3), slice(0, 8), slice(0, 5))
    assert volume.v[volume.block].shape == volume.v.shape == (3, 8, 5)
    # A decomposition on one rank is checked as `mpirun -n 1 grayscott run` checks it.
    for decomposition in ("2x1", "abc", "1x1x1"):
        with pytest.raises(ValueError, match=f"decomposition.*{decomposition}|ROWSxCOLS"):
            gs.Simulation(rows=8, cols=8, comm=mpi4py.COMM_WORLD, decomposition=decomposition)
    gs.Simulation(rows=8, cols=8, comm=mpi4py.COMM_WORLD, decomposition="1x1")
    gs.Simulation(depth=3, rows=8, cols=5, comm=mpi4py.COMM_WORLD, decomposition="1x1x1")


@pytest.mark.parametrize("ranks, tuning, said", [
    (2, dict(halo_depth=4, overlap_writes="on"), "halo depth 4: .* images written while stepping"),
    (3, dict(halo_depth=2, overlap_writes="off", gpu_aware_mpi="off", decomposition="3x1"),
     "decomposition 3x1 over 3 ranks on cpu, halo depth 2: .* images written between steps"),
])
def test_the_exchanges_are_tuned_as_the_command_line_tunes_them(tmp_path, ranks, tuning, said):
    # halo_depth, overlap_writes and gpu_aware_mpi are `mpirun grayscott run`'s options: the run
    # says what it did as the command line says it, and the states and the file are those of one
    # process whatever the depth (37 steps are not a whole number of exchanges of 4 or 2).
    import re
    stderr = run_over_ranks_and_compare(tmp_path, ranks, "single", "periodic", tuning)
    assert re.search(said, stderr), stderr[-3000:]


def test_the_exchanges_options_are_checked_as_the_command_lines(tmp_path):
    mpi4py = pytest.importorskip("mpi4py.MPI")
    # Without a communicator they split nothing: refused, not ignored (at their defaults they
    # ask for nothing).
    for tuning in (dict(halo_depth=2), dict(overlap_writes="on"), dict(gpu_aware_mpi="off"),
                   dict(decomposition="2x1")):
        keyword = next(iter(tuning))
        with pytest.raises(ValueError, match=f"^{keyword}: an option of a grid split over MPI "
                                             "ranks; give comm=MPI.COMM_WORLD too"):
            gs.Simulation(rows=8, cols=8, **tuning)
    gs.Simulation(rows=8, cols=8, halo_depth=0, overlap_writes="auto", gpu_aware_mpi="auto")
    # Their values are checked with or without one, in the command line's words.
    for comm in (None, mpi4py.COMM_WORLD):
        with pytest.raises(ValueError, match="^halo_depth must be 0 \\(automatic\\) or a whole "
                                             "number from 1 to 1048576, got -1$"):
            gs.Simulation(rows=8, cols=8, halo_depth=-1, comm=comm)
        with pytest.raises(ValueError, match="^overlap_writes: expected auto, on or off, got "
                                             "'sometimes'$"):
            gs.Simulation(rows=8, cols=8, overlap_writes="sometimes", comm=comm)
        with pytest.raises(TypeError, match="^halo_depth: expected an int"):
            gs.Simulation(rows=8, cols=8, halo_depth="2", comm=comm)
        with pytest.raises(TypeError, match="^gpu_aware_mpi: expected a str"):
            gs.Simulation(rows=8, cols=8, gpu_aware_mpi=True, comm=comm)
    # One rank is one process: the options of the exchanges have nothing to do, as under
    # `mpirun -n 1 grayscott run`, and change nothing.
    tuned = gs.Simulation(rows=16, cols=16, init="noise", comm=mpi4py.COMM_WORLD, halo_depth=3,
                          overlap_writes="on")
    plain = gs.Simulation(rows=16, cols=16, init="noise")
    tuned.advance(10)
    plain.advance(10)
    assert np.array_equal(tuned.v, plain.v)
    # Simulation.resume takes them too.
    plain.reset()

    def stop(index, step, time, image):
        if index == 1:
            raise RuntimeError("stopped here")

    with pytest.raises(RuntimeError, match="stopped here"):
        plain.run(images=3, steps_per_image=4, output=tmp_path / "run.h5", quiet=True,
                  on_image=stop)
    with pytest.raises(ValueError, match="^halo_depth: an option of a grid split over MPI ranks"):
        gs.Simulation.resume(tmp_path / "run.h5", halo_depth=2)


CUSTOM_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from mpi4py import MPI
    import grayscott as gs

    output, depth = sys.argv[1], int(sys.argv[2])
    shape = dict(rows=21, cols=34) if depth == 1 else dict(depth=depth, rows=9, cols=11)
    sim = gs.Simulation(**shape, boundary="periodic", backend="cpu", threads=1,
                        comm=MPI.COMM_WORLD)
    rng = np.random.default_rng(3)
    u, v = rng.random(sim.shape), rng.random(sim.shape)  # the same on every rank
    sim.u[...] = u[sim.block]
    sim.v[...] = v[sim.block]
    sim.run(images=3, steps_per_image=7, output=output, quiet=True)
""")


@pytest.mark.parametrize("ranks, depth", [(2, 1), (3, 1), (2, 6)])
def test_a_state_written_into_each_ranks_block_is_the_runs_start(tmp_path, ranks, depth):
    # Over ranks the run's engine is the pipeline's: each rank's block of the written state is
    # handed to it (it was silently replaced by the generated start) and stored in the file.
    launcher = mpirun()
    script = tmp_path / "script.py"
    script.write_text(CUSTOM_SCRIPT)
    done = subprocess.run([launcher, "-n", str(ranks), "--oversubscribe", sys.executable,
                           str(script), str(tmp_path / "ranks.h5"), str(depth)],
                          capture_output=True, text=True, timeout=300, env=mpi_environment())
    assert done.returncode == 0, done.stderr[-3000:]
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "alone.h5"), str(depth)],
                          capture_output=True, text=True, timeout=300, env=mpi_environment())
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_run_file(tmp_path / "ranks.h5", tmp_path / "alone.h5")
    with h5py.File(tmp_path / "ranks.h5", "r") as a, h5py.File(tmp_path / "alone.h5", "r") as b:
        assert a.attrs["init"] == "custom"
        assert np.array_equal(a["initial_state"][...], b["initial_state"][...])


def test_a_grid_over_ranks_is_memory_checked_by_its_blocks(tmp_path):
    # Each rank's block (with its halo) is what it holds, the node's ranks sharing its memory:
    # refused in one line as a MemoryError on every rank, before anything is allocated.
    lines = what_each_rank_said(tmp_path, """
        try:
            gs.Simulation(rows=3000000, cols=60000, backend="cpu", decomposition="2x1",
                          comm=MPI.COMM_WORLD)
        except MemoryError as e:
            said = str(e)
    """)
    # 1500000x60000 and the halo on every side (its depth the engine's choice).
    pattern = (r"the states of the blocks of 2 ranks on this node, each of up to 1500\d{3}x600\d{2} "
               r"cells \(single precision\), need 2\.6 TiB of host memory, and")
    assert len(lines) == 2 and all(re.search(pattern, line) for line in lines), lines


def test_a_refusal_over_ranks_keeps_its_kind(tmp_path):
    # Agreed on by every rank, an output that exists is a FileExistsError on each (not a
    # ValueError), as in one process.
    (tmp_path / "exists.h5").write_bytes(b"")
    lines = what_each_rank_said(tmp_path, f"""
        sim = gs.Simulation(rows=32, cols=32, backend="cpu", comm=MPI.COMM_WORLD)
        try:
            sim.run(images=1, output={str(tmp_path / "exists.h5")!r}, quiet=True)
        except FileExistsError as e:
            said = "FileExistsError " + str(e)
    """)
    assert len(lines) == 2 and all(line.startswith("FileExistsError output ") and
                                   "already exists (use overwrite=True" in line
                                   for line in lines), lines


def test_a_failure_over_ranks_is_in_pythons_words_after_its_rank(tmp_path):
    # A failure that is not bad input names the rank that met it first; the words after it are
    # Python's, as in one process ("backend='cuda': ...", not "backend cuda: ...").
    lines = what_each_rank_said(tmp_path, f"""
        try:
            sim = gs.Simulation(rows=32, cols=32, backend="cuda", comm=MPI.COMM_WORLD)
            sim.run(images=1, output={str(tmp_path / "cuda.h5")!r}, quiet=True)
            said = "ran"
        except RuntimeError as e:
            said = "RuntimeError " + str(e)
    """)
    if lines == ["ran", "ran"]:
        pytest.skip("CUDA runs here: no failure to word")
    assert all(re.match(r"RuntimeError rank [01]: backend='cuda': ", line) and "--" not in line
               for line in lines), lines
    # The rewriting itself: the rank kept, the rest as one process words it.
    assert (_core._python_words("rank 1: steps-per-image must be at least 1 (--force)")
            == "rank 1: steps_per_image must be at least 1 (overwrite=True)")


def test_a_custom_start_continues_over_ranks_from_its_stored_state(tmp_path, grayscott_bin):
    # A one-process custom run killed before its first checkpoint, continued by `mpirun grayscott
    # run --resume`: each rank reads its block of /initial_state.
    script = tmp_path / "script.py"
    script.write_text(CUSTOM_SCRIPT.replace(
        "sim.run(images=3, steps_per_image=7, output=output, quiet=True)",
        "import os, signal\n"
        "def die(index, step, time, image):\n"
        "    if len(sys.argv) > 3 and index == 1: os.kill(os.getpid(), signal.SIGKILL)\n"
        "sim.run(images=3, steps_per_image=7, output=output, quiet=True, on_image=die,\n"
        "        checkpoint_every=1000)"))
    env = mpi_environment()
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "full.h5"), "1"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    killed = tmp_path / "killed.h5"
    done = subprocess.run([sys.executable, str(script), str(killed), "1", "kill"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == -9, done.stderr[-3000:]
    subprocess.run([grayscott_bin, "repair", str(killed)], check=True, capture_output=True)
    done = subprocess.run([mpirun(), "-n", "2", "--oversubscribe", grayscott_bin, "run",
                           "--resume", str(killed), "--quiet"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_run_file(killed, tmp_path / "full.h5")


SWEEP_SCRIPT = textwrap.dedent("""
    import json
    import sys
    from mpi4py import MPI
    import grayscott as gs

    comm = MPI.COMM_WORLD
    folder, sweep = sys.argv[1], json.loads(sys.argv[2])
    said = {"sweep": gs.sweep(f"{folder}/ranks.h5", **sweep, comm=comm),
            "resume_sweep": gs.resume_sweep(f"{folder}/stopped.h5", quiet=True, comm=comm)}
    try:
        gs.sweep(f"{folder}/never.h5", **sweep, comm=comm, progress=print)
    except ValueError as e:
        said["progress"] = str(e)
    with open(f"{folder}/rank{comm.rank}.json", "w") as out:
        json.dump(said, out)
""")


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_sweep_script_on_more_ranks_writes_the_one_process_file(tmp_path, ranks):
    # gs.sweep and gs.resume_sweep with comm= split the members over the ranks as `mpirun
    # grayscott sweep` does: the file is the one process's, bitwise, and a stopped one-process
    # sweep is continued on any number of ranks.
    sweep = dict(feed=[0.03, 0.04, 0.05], kill=[0.06, 0.062], rows=24, cols=20, images=4,
                 steps_per_image=15, init="noise", seeds=[3], stats=True, backend="cpu",
                 threads=1, quiet=True)
    gs.sweep(tmp_path / "alone.h5", **sweep)

    def enough(done, total):
        if done >= 5:
            raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        gs.sweep(tmp_path / "stopped.h5", **sweep, checkpoint_every=1, progress=enough)
    script = tmp_path / "script.py"
    script.write_text(SWEEP_SCRIPT)
    done = subprocess.run([mpirun(), "-n", str(ranks), "--oversubscribe", sys.executable,
                           str(script), str(tmp_path), json.dumps(sweep)], capture_output=True,
                          text=True, timeout=300, env=mpi_environment())
    assert done.returncode == 0, done.stderr[-3000:]
    for rank in range(ranks):
        said = json.loads((tmp_path / f"rank{rank}.json").read_text())
        for call in ("sweep", "resume_sweep"):
            assert said[call]["status"] == "complete" and said[call]["members"] == 6, said
        assert said["progress"].startswith("progress: a sweep over MPI ranks calls no Python "
                                           "callback"), said
    assert not (tmp_path / "never.h5").exists()
    for path in ("ranks.h5", "stopped.h5"):
        with h5py.File(tmp_path / "alone.h5", "r") as a, h5py.File(tmp_path / path, "r") as b:
            assert b.attrs["status"] == "complete"
            for name in ("v", "images_written", "stats/v_mean", "stats/v_histogram",
                         "checkpoint/images"):
                assert np.array_equal(a[name][...], b[name][...]), f"{path}: /{name}"


def test_a_sweep_in_memory_or_with_something_else_than_a_communicator_is_refused():
    from mpi4py import MPI

    with pytest.raises(TypeError, match=r"^Sweep\(\) takes no comm: a Sweep in memory runs in "
                                        r"one process; gs\.sweep\(output, \.\.\., comm=comm\)"):
        gs.Sweep(feed=[0.03], kill=[0.06], comm=MPI.COMM_WORLD)
    with pytest.raises(TypeError, match="^comm: expected an mpi4py communicator, got int$"):
        gs.resume_sweep("never.h5", comm=1)
    assert not os.path.exists("never.h5")
