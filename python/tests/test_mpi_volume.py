"""A volume over MPI ranks from Python: under `mpirun -n P python script.py`,
Simulation(depth=..., comm=MPI.COMM_WORLD) splits the volume into blocks of planes, rows and
columns as `mpirun grayscott run` does; sim.u and sim.v are the rank's block, (planes, rows, cols),
sim.block its (planes, rows, cols) slices; run() writes the one-process file bitwise, and
run(stats=True) the statistics `mpirun grayscott run --stats` writes. Real mpirun, P = 2..4."""

import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import grayscott as gs
from conftest import run_cli
from test_mpi import mpirun, mpi_environment
from test_run import assert_same_run_file

RATES = dict(feed=0.03, kill=0.06, init="noise", seed=5)

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from mpi4py import MPI
    import grayscott as gs

    comm = MPI.COMM_WORLD
    output, stats_output, gathered, precision, boundary = sys.argv[1:6]
    shape = tuple(int(n) for n in sys.argv[6].split("x"))
    settings = dict(depth=shape[0], rows=shape[1], cols=shape[2], feed=0.03, kill=0.06,
                    init="noise", seed=5, precision=precision, boundary=boundary, backend="cpu",
                    threads=1)
    sim = gs.Simulation(**settings, comm=comm)
    assert sim.shape == shape
    assert sim.v.shape == sim.u.shape == tuple(s.stop - s.start for s in sim.block), sim.block
    assert sim.v.shape != shape  # a block, not the whole volume
    v = sim.v
    sim.advance(11)
    assert np.array_equal(v, sim.v)  # the view stays current
    # The block of the same simulation in one process, on this rank.
    alone = gs.Simulation(**settings)
    alone.advance(11)
    assert np.array_equal(sim.v, alone.v[sim.block]) and np.array_equal(sim.u, alone.u[sim.block])
    blocks = comm.gather((sim.block, np.array(sim.u), np.array(sim.v)), root=0)
    if comm.rank == 0:
        whole = np.full((2,) + shape, np.nan, dtype=np.array(sim.v).dtype)
        for where, u, v in blocks:
            assert np.isnan(whole[(0,) + where]).all()  # the blocks do not overlap
            whole[(0,) + where], whole[(1,) + where] = u, v
        starts = [[axis.start for axis in where] for where, _, _ in blocks]
        np.savez(gathered, whole=whole, starts=np.array(starts))
    sim.reset()
    summary = sim.run(images=3, steps_per_image=4, fields="u,v", output=output, quiet=True)
    assert summary["status"] == "complete", summary
    assert sim.step == 12
    # After the run, the simulation holds the run's last state, its block of it.
    alone.reset()
    alone.advance(12)
    assert np.array_equal(sim.v, alone.v[sim.block])
    sim.reset()
    sim.run(images=2, steps_per_image=5, output=stats_output, stats=True, quiet=True)
""")


def on_ranks(ranks, *command):
    """`command` under mpirun on `ranks` ranks; it must succeed."""
    done = subprocess.run([mpirun(), "-n", str(ranks), "--oversubscribe", *map(str, command)],
                          capture_output=True, text=True, timeout=300, env=mpi_environment())
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def cli_run(shape, precision, boundary, *more):
    depth, rows, cols = shape
    return ["run", "--depth", depth, "--rows", rows, "--cols", cols, "--feed", 0.03, "--kill",
            0.06, "--init", "noise", "--seed", 5, "--precision", precision, "--boundary",
            boundary, "--backend", "cpu", "--threads", 1, "--quiet", *more]


# The split is the command line's, the fewest cells on the cuts: shapes chosen so that the cases
# cut planes, rows and columns between them.
@pytest.mark.parametrize("ranks, shape, split, precision, boundary", [
    (2, (12, 6, 10), (2, 1, 1), "single", "zero-flux"),
    (3, (6, 10, 12), (1, 1, 3), "double", "periodic"),
    (4, (12, 6, 10), (2, 1, 2), "single", "periodic"),
    (4, (6, 10, 12), (1, 2, 2), "double", "zero-flux"),
])
def test_a_volume_over_ranks_steps_its_blocks_and_writes_the_one_process_file(
        tmp_path, grayscott_bin, ranks, shape, split, precision, boundary):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    on_ranks(ranks, sys.executable, script, tmp_path / "ranks.h5", tmp_path / "stats.h5",
             tmp_path / "whole.npz", precision, boundary, "x".join(map(str, shape)))

    depth, rows, cols = shape
    alone = gs.Simulation(depth=depth, rows=rows, cols=cols, **RATES, precision=precision,
                          boundary=boundary, backend="cpu", threads=1)
    alone.advance(11)
    gathered = np.load(tmp_path / "whole.npz")
    whole = gathered["whole"]
    assert np.array_equal(whole[0], alone.u) and np.array_equal(whole[1], alone.v)
    # As many blocks along each axis as the split has.
    assert tuple(len(set(axis)) for axis in gathered["starts"].T) == split

    # The file is the command line's, of one process and of the same ranks.
    run = cli_run(shape, precision, boundary, "--images", 3, "--steps-per-image", 4, "--fields",
                  "u,v")
    run_cli(grayscott_bin, *run, "-o", tmp_path / "alone.h5")
    assert_same_run_file(tmp_path / "ranks.h5", tmp_path / "alone.h5")
    on_ranks(ranks, grayscott_bin, *run, "-o", tmp_path / "cli-ranks.h5")
    assert_same_run_file(tmp_path / "ranks.h5", tmp_path / "cli-ranks.h5")
    with h5py.File(tmp_path / "ranks.h5", "r") as f:
        assert f["v"].shape == (3, *shape)
        assert np.isfinite(f["u"][...]).all() and np.isfinite(f["v"][...]).all()

    # Statistics over ranks: those of `mpirun grayscott run --stats` on as many ranks, and the
    # extremes and histogram counts exactly one process's (sums differ in their rounding).
    stats_run = cli_run(shape, precision, boundary, "--images", 2, "--steps-per-image", 5,
                        "--stats")
    on_ranks(ranks, grayscott_bin, *stats_run, "-o", tmp_path / "cli-stats.h5")
    run_cli(grayscott_bin, *stats_run, "-o", tmp_path / "alone-stats.h5")
    with h5py.File(tmp_path / "stats.h5", "r") as py, \
            h5py.File(tmp_path / "cli-stats.h5", "r") as cli, \
            h5py.File(tmp_path / "alone-stats.h5", "r") as one:
        assert set(py["stats"]) == set(cli["stats"]) == set(one["stats"])
        for name in py["stats"]:
            assert np.array_equal(py["stats/" + name][...], cli["stats/" + name][...]), name
        for name in ("u_min", "u_max", "v_min", "v_max", "v_histogram"):
            assert np.array_equal(py["stats/" + name][...], one["stats/" + name][...]), name
        for name in ("u_mean", "v_mean"):
            assert np.allclose(py["stats/" + name][...], one["stats/" + name][...], rtol=1e-5)


REFUSALS = textwrap.dedent("""
    from mpi4py import MPI
    import grayscott as gs

    comm = MPI.COMM_WORLD

    def refused(make, error, words):
        try:
            make()
        except error as e:
            assert words in str(e), str(e)
            assert "\\n" not in str(e), str(e)
        else:
            raise AssertionError(f"not refused: {words}")

    # Three ranks cannot split a volume two cells across along every axis.
    refused(lambda: gs.Simulation(depth=2, rows=2, cols=2, backend="cpu", comm=comm), ValueError,
            "volume is too small for 3 ranks")
    sim = gs.Simulation(depth=6, rows=5, cols=4, backend="cpu", threads=1, comm=comm)
    # What a rank cannot do with its block alone, as for a plane.
    refused(sim.stats, ValueError, "over MPI ranks each rank holds a block of the grid")
    def change_feed():
        sim.feed = 0.03
    refused(change_feed, ValueError, "rates of a grid split over MPI ranks cannot change")
    sim.advance(2)
    print("refusals: ok", comm.rank, flush=True)
""")


def test_over_ranks_what_a_volume_cannot_do_is_refused_in_one_line(tmp_path):
    script = tmp_path / "refusals.py"
    script.write_text(REFUSALS)
    done = on_ranks(3, sys.executable, script)
    assert done.stdout.count("refusals: ok") == 3, done.stdout


RESUME = textwrap.dedent("""
    import sys
    import numpy as np
    from mpi4py import MPI
    import grayscott as gs

    comm = MPI.COMM_WORLD
    path, depth = sys.argv[1], int(sys.argv[2])
    resumed = gs.Simulation.resume(path, quiet=True, comm=comm, backend="cpu", threads=1)
    settings = dict(rows=14, cols=18, feed=0.03, kill=0.06, init="noise", seed=5, backend="cpu",
                    threads=1, depth=depth)
    alone = gs.Simulation(**settings)
    alone.advance(30)
    assert resumed.step == 30, resumed.step
    assert np.array_equal(resumed.v, alone.v[resumed.block]), resumed.block
    print("resumed: ok", comm.rank, flush=True)
""")


# A run stopped in one process continues over ranks from Python, as `mpirun grayscott run
# --resume` continues it: each rank then holds its block of the final state, and the file is the
# uninterrupted run's.
@pytest.mark.parametrize("ranks, depth", [(2, 1), (3, 6)])
def test_resume_continues_a_run_over_ranks(tmp_path, ranks, depth):
    settings = dict(rows=14, cols=18, feed=0.03, kill=0.06, init="noise", seed=5, backend="cpu",
                    threads=1, depth=depth)
    stopped = tmp_path / "stopped.h5"

    def stop_at_image_2(index, step, time, image):
        if index == 2:
            raise ValueError("stopped here")

    with pytest.raises(ValueError, match="stopped here"):
        gs.Simulation(**settings).run(images=6, steps_per_image=5, output=stopped, quiet=True,
                                      on_image=stop_at_image_2)
    script = tmp_path / "resume.py"
    script.write_text(RESUME)
    done = on_ranks(ranks, sys.executable, script, stopped, depth)
    assert done.stdout.count("resumed: ok") == ranks, done.stdout
    whole = tmp_path / "whole.h5"
    gs.Simulation(**settings).run(images=6, steps_per_image=5, output=whole, quiet=True)
    assert_same_run_file(stopped, whole)


DECOMPOSITION = textwrap.dedent("""
    import sys
    import numpy as np
    from mpi4py import MPI
    import grayscott as gs

    comm = MPI.COMM_WORLD
    output, depth, split = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    settings = dict(depth=depth, rows=12, cols=10, feed=0.03, kill=0.06, init="noise", seed=5,
                    backend="cpu", threads=1)
    sim = gs.Simulation(**settings, comm=comm, decomposition=split)
    alone = gs.Simulation(**settings)
    sim.advance(7)
    alone.advance(7)
    assert np.array_equal(sim.v, alone.v[sim.block]), sim.block
    starts = comm.gather([axis.start for axis in sim.block], root=0)
    if comm.rank == 0:
        counts = "x".join(str(len(set(axis))) for axis in zip(*starts))
        assert counts == split, (counts, split)
    sim.reset()
    summary = sim.run(images=2, steps_per_image=3, fields="u,v", output=output, quiet=True)
    assert summary["status"] == "complete", summary
    try:
        gs.Simulation(**settings, comm=comm, decomposition="3x1x1" if depth > 1 else "3x1")
    except ValueError as e:
        assert "3" in str(e) and "\\n" not in str(e), str(e)
    else:
        raise AssertionError("a split for 3 ranks was accepted on 2")
    print("decomposition: ok", comm.rank, flush=True)
""")


# decomposition= splits the grid as asked (the command line's --decomposition): the blocks lie
# along the axes named, each rank's block is the one-process simulation's, the file is the
# one-process file; a split for another number of ranks is refused on every rank in one line.
@pytest.mark.parametrize("depth, split", [(1, "1x2"), (1, "2x1"), (6, "1x1x2"), (6, "2x1x1")])
def test_decomposition_splits_the_grid_as_asked(tmp_path, grayscott_bin, depth, split):
    script = tmp_path / "decomposition.py"
    script.write_text(DECOMPOSITION)
    done = on_ranks(2, sys.executable, script, tmp_path / "ranks.h5", depth, split)
    assert done.stdout.count("decomposition: ok") == 2, done.stdout
    run = ["run", "--depth", depth, "--rows", 12, "--cols", 10, "--feed", 0.03, "--kill", 0.06,
           "--init", "noise", "--seed", 5, "--backend", "cpu", "--threads", 1, "--quiet",
           "--images", 2, "--steps-per-image", 3, "--fields", "u,v"]
    run_cli(grayscott_bin, *run, "-o", tmp_path / "alone.h5")
    assert_same_run_file(tmp_path / "ranks.h5", tmp_path / "alone.h5")


def test_decomposition_needs_a_communicator():
    with pytest.raises(ValueError, match="decomposition: an option of a grid split over MPI ranks"):
        gs.Simulation(rows=8, cols=8, decomposition="2x1")
    with pytest.raises(TypeError, match="decomposition: expected a str"):
        gs.Simulation(rows=8, cols=8, decomposition=2)
